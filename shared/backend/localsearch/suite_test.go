package localsearch_test

import (
	"context"
	"testing"

	"github.com/doclib/doclib/internal/suites/searchtest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/search"
)

// TestSuite runs the backend-neutral search suite on the embedded engine.
func TestSuite(t *testing.T) {
	searchtest.Run(t, func(t testing.TB, d *doclib.DataSet, e search.Embedder) search.Backend {
		x, err := localsearch.Build(context.Background(), d, e, localsearch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return search.Local{Retriever: x}
	})
}
