package opensearch_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/searchtest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/search"
)

var aliases atomic.Int64

// TestSuiteOnARealCluster runs the backend-neutral search suite on OpenSearch
// 2.19+ or 3.x when DOCLIB_TEST_OPENSEARCH_URL points at one (README: how to run
// one). Each case gets its own alias and index, deleted afterwards.
func TestSuiteOnARealCluster(t *testing.T) {
	url := os.Getenv("DOCLIB_TEST_OPENSEARCH_URL")
	if url == "" {
		t.Skip("set DOCLIB_TEST_OPENSEARCH_URL (and DOCLIB_TEST_OPENSEARCH_USER/PASSWORD if needed) to run the search suite on OpenSearch")
	}
	searchtest.Run(t, func(t testing.TB, d *doclib.DataSet, e search.Embedder) search.Backend {
		alias := fmt.Sprintf("doclib-test-%d-%d", time.Now().UnixNano(), aliases.Add(1))
		b, err := opensearch.New(opensearch.Config{URL: url, Alias: alias, Dimensions: e.Dimensions(),
			Username: os.Getenv("DOCLIB_TEST_OPENSEARCH_USER"), Password: os.Getenv("DOCLIB_TEST_OPENSEARCH_PASSWORD")})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := b.Reindex(ctx, nil, len(d.Documents), func(yield func([]search.IndexDoc) error) error {
			return search.DocsFromData(ctx, d, e, 100, yield)
		}, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			req, _ := http.NewRequest(http.MethodDelete, strings.TrimRight(url, "/")+"/"+alias+"-*", nil)
			if u := os.Getenv("DOCLIB_TEST_OPENSEARCH_USER"); u != "" {
				req.SetBasicAuth(u, os.Getenv("DOCLIB_TEST_OPENSEARCH_PASSWORD"))
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
		return b
	})
}
