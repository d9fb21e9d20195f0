package localsearch_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/search"
)

// newLive is a Live over the fixture, fitted as the local server fits it,
// with a searcher over it.
func newLive(t *testing.T) (*localsearch.Live, *search.Searcher, []search.IndexDoc) {
	t.Helper()
	ctx := context.Background()
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs, e, err := localsearch.IndexDocs(ctx, d, h, localsearch.Options{Fit: true})
	if err != nil {
		t.Fatal(err)
	}
	live, err := localsearch.NewLive(ctx, docs, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return live, &search.Searcher{Backend: search.Local{Retriever: live}, Embedder: search.Cached(e, 0), Rules: search.DefaultRules(e.ID())}, docs
}

// hits are the IDs of a search's word matches in lib_a1 and lib_a2.
func hits(t *testing.T, s *search.Searcher, q string) []string {
	t.Helper()
	res, err := s.Search(context.Background(), search.Request{Text: q, Libraries: []string{"lib_a1", "lib_a2"}, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		if slices.Contains(h.Signals, search.SignalLexical) {
			ids = append(ids, h.DocumentID)
		}
	}
	return ids
}

// TestLiveFollowsWrites: writes show only once committed, then all at once.
func TestLiveFollowsWrites(t *testing.T) {
	ctx := context.Background()
	live, s, docs := newLive(t)
	n := live.Len()
	var moved search.IndexDoc
	for _, d := range docs {
		if d.ID == "doc_a1_3" {
			moved = d
		}
	}
	moved.ID, moved.Title = "doc_a2_9", "Escrow ledger for a laptop"
	moved.LibraryID = "lib_a2"
	if err := live.Upsert(ctx, []search.IndexDoc{moved}); err != nil {
		t.Fatal(err)
	}
	if err := live.Delete(ctx, []string{"doc_a1_1"}); err != nil {
		t.Fatal(err)
	}
	if got := hits(t, s, "escrow"); len(got) != 0 {
		t.Errorf("before Commit: %v", got)
	}
	if got := hits(t, s, "reset password"); !slices.Contains(got, "doc_a1_1") {
		t.Errorf("before Commit, the deleted document went already: %v", got)
	}
	if err := live.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hits(t, s, "escrow"); !slices.Equal(got, []string{"doc_a2_9"}) {
		t.Errorf("after Commit: %v", got)
	}
	if got := hits(t, s, "reset password"); slices.Contains(got, "doc_a1_1") {
		t.Errorf("after Commit, the deleted document is still found: %v", got)
	}
	if live.Len() != n {
		t.Errorf("%d documents, want %d", live.Len(), n)
	}
}

// TestLiveKeepsLastGood: a Commit that cannot build keeps the engine in
// service, and the next one builds what is held; a vector the engine would
// refuse is refused at Upsert, so that it cannot block every later Commit.
func TestLiveKeepsLastGood(t *testing.T) {
	live, s, docs := newLive(t)
	d := docs[0]
	d.Title = "Escrow ledger"
	if err := live.Upsert(context.Background(), []search.IndexDoc{d}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := live.Commit(cancelled); err == nil {
		t.Fatal("a Commit that could not build: no error")
	}
	if got := hits(t, s, "escrow"); len(got) != 0 {
		t.Errorf("a failed Commit put something in service: %v", got)
	}
	if got := hits(t, s, "reset password"); len(got) == 0 {
		t.Error("a failed Commit took the last good index out of service")
	}
	if err := live.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := hits(t, s, "escrow"); !slices.Equal(got, []string{d.ID}) {
		t.Errorf("the next Commit: %v", got)
	}

	bad := docs[1]
	bad.Vector = slices.Clone(bad.Vector)
	bad.Vector[0] = float32(math.NaN())
	if err := live.Upsert(context.Background(), []search.IndexDoc{bad}); err == nil {
		t.Error("a NaN vector was held")
	}
	short := docs[1]
	short.Vector = short.Vector[:1]
	if err := live.Upsert(context.Background(), []search.IndexDoc{short}); err == nil {
		t.Error("a vector of the wrong length was held")
	}
}
