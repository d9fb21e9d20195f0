package indexer_test

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/indexer"
)

// scanned is a table's digests as a Poller's Scan returns them: one per
// document of world(), and the workspaces' plans.
type scanned struct {
	items map[indexer.Item]string
	err   error
}

func (s *scanned) scan(context.Context) (map[indexer.Item]string, error) {
	if s.err != nil {
		return nil, s.err
	}
	return maps.Clone(s.items), nil
}

func docItem(id string) indexer.Item { return indexer.Item{PK: "DOC#" + id, SK: "A"} }

func newPoller(t *testing.T) (*indexer.Poller, *scanned, *fakeSource, *fakeIndex) {
	t.Helper()
	src, idx := world(), newFakeIndex()
	tbl := &scanned{items: map[indexer.Item]string{
		{PK: "WS#ws_acme", SK: "WS"}: "team", {PK: "WS#ws_solo", SK: "WS"}: "individual"}}
	for id := range src.docs {
		tbl.items[docItem(id)] = "v1"
	}
	p := &indexer.Poller{Indexer: newIndexer(t, src, idx), Scan: tbl.scan}
	if err := p.Baseline(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p, tbl, src, idx
}

func poll(t *testing.T, p *indexer.Poller, wantChanged, wantFailed int) {
	t.Helper()
	changed, failed, err := p.Poll(context.Background())
	if err != nil || changed != wantChanged || failed != wantFailed {
		t.Fatalf("Poll: %d changed, %d failed, %v; want %d, %d", changed, failed, err, wantChanged, wantFailed)
	}
}

// TestPollerIndexesWhatChanged: a written, a changed and a deleted document
// reach the index, once; an unchanged table touches nothing.
func TestPollerIndexesWhatChanged(t *testing.T) {
	p, tbl, src, idx := newPoller(t)
	poll(t, p, 0, 0)
	src.docs["doc_it_009"] = document("doc_it_009", "lib_it", "ws_acme", "Renew the TLS certificate", 0)
	tbl.items[docItem("doc_it_009")] = "v1"
	tbl.items[docItem("doc_it_002")] = "v2"
	delete(src.docs, "doc_fin_001")
	delete(tbl.items, docItem("doc_fin_001"))
	poll(t, p, 3, 0)
	if got := idx.upserted(); !reflect.DeepEqual(got, []string{"doc_it_002", "doc_it_009"}) {
		t.Errorf("upserted %v", got)
	}
	if !reflect.DeepEqual(idx.deletes, [][]string{{"doc_fin_001"}}) {
		t.Errorf("deleted %v", idx.deletes)
	}
	poll(t, p, 0, 0)
}

// TestPollerPlanChange: a workspace's new plan re-indexes its documents.
func TestPollerPlanChange(t *testing.T) {
	p, tbl, _, idx := newPoller(t)
	tbl.items[indexer.Item{PK: "WS#ws_acme", SK: "WS"}] = "enterprise"
	poll(t, p, 1, 0)
	if got := idx.upserted(); !reflect.DeepEqual(got, []string{"doc_fin_001", "doc_it_001", "doc_it_002", "doc_it_007"}) {
		t.Errorf("upserted %v", got)
	}
}

// TestPollerRetriesFailures: a document that failed to index is handed over
// again by the next poll until it succeeds; a failed scan changes nothing and
// the next one finds the change.
func TestPollerRetriesFailures(t *testing.T) {
	p, tbl, _, idx := newPoller(t)
	p.Indexer.Embedder = failingEmbedder{Embedder: hashing(t), fail: "Onboard"}
	tbl.items[docItem("doc_it_002")] = "v2"
	tbl.items[docItem("doc_it_007")] = "v2"
	poll(t, p, 2, 1)
	if got := idx.upserted(); !reflect.DeepEqual(got, []string{"doc_it_007"}) {
		t.Errorf("upserted %v", got)
	}
	poll(t, p, 1, 1) // still failing: tried again
	tbl.err = errors.New("dynamo: scan: connection refused")
	if _, _, err := p.Poll(context.Background()); err == nil {
		t.Fatal("a failed scan: no error")
	}
	tbl.err = nil
	p.Indexer.Embedder = hashing(t)
	poll(t, p, 1, 0)
	if got := idx.upserted(); !slices.Contains(got, "doc_it_002") {
		t.Errorf("upserted %v", got)
	}
	poll(t, p, 0, 0)
}

// TestPollerRunStops: Run polls until its context ends, then returns.
func TestPollerRunStops(t *testing.T) {
	p, tbl, _, _ := newPoller(t)
	var scans atomic.Int32
	p.Scan = func(ctx context.Context) (map[indexer.Item]string, error) {
		scans.Add(1)
		return tbl.scan(ctx)
	}
	p.Every = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	// Two minutes: only a poller that stopped scanning, or a Run that
	// does not return, takes that long, however busy the machine.
	for deadline := time.Now().Add(2 * time.Minute); scans.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d scans in 2 minutes", scans.Load())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Run did not return after its context ended")
	}
}
