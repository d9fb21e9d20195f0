package memory_test

import (
	"testing"

	"github.com/doclib/doclib/internal/suites/storetest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
)

func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t testing.TB, d *doclib.DataSet) doclib.Store { return memory.New(d) })
}
