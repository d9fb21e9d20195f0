package dynamo_test

import (
	"context"
	"os"
	"testing"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/internal/suites/storetest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalitetest.Stop()
	os.Exit(code)
}

// newTable creates an empty table on dynalite.
func newTable(t testing.TB) *dynamo.Table {
	t.Helper()
	srv := dynalitetest.Start(t)
	return newTableVia(t, srv, srv.Client(t))
}

// newTableVia creates an empty table on srv, reached through client.
func newTableVia(t testing.TB, srv *dynalitetest.Server, client dynamo.Client) *dynamo.Table {
	t.Helper()
	tbl := &dynamo.Table{Client: client, Name: srv.TableName(t)}
	if err := tbl.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// imported returns a table holding d.
func imported(t testing.TB, d *doclib.DataSet) *dynamo.Table {
	t.Helper()
	tbl := newTable(t)
	if _, err := tbl.Import(context.Background(), d, "g1", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t testing.TB, d *doclib.DataSet) doclib.Store { return dynamo.NewStore(imported(t, d)) })
}

func TestLibraryDocumentIDs(t *testing.T) {
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	s := dynamo.NewStore(imported(t, d))
	ids, err := s.LibraryDocumentIDs(context.Background(), "lib_a1")
	if err != nil || len(ids) != 5 || ids[0] != "doc_a1_1" || ids[4] != "doc_a1_5" {
		t.Errorf("ids %v, %v", ids, err)
	}
}

// TestConsistentReads: the store works with strongly consistent reads (the
// indexer's), on the table and its local index.
func TestConsistentReads(t *testing.T) {
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	tbl := imported(t, d)
	tbl.ConsistentRead = true
	storetest.Run(t, func(testing.TB, *doclib.DataSet) doclib.Store { return dynamo.NewStore(tbl) })
	if _, err := tbl.Import(context.Background(), d, "g2", dynamo.ImportOptions{Prune: true}); err != nil {
		t.Fatalf("prune reads the global index, which has no consistent reads: %v", err)
	}
}
