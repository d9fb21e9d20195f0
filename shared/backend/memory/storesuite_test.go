package memory_test

import (
	"testing"

	"github.com/doclib/doclib/internal/storetest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
)

func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t testing.TB, d *dataset.Data) doclib.Store { return memory.New(d) })
}
