package memory_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
)

func load(t *testing.T, f *dataset.File) *memory.Store {
	t.Helper()
	d, err := dataset.Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	return memory.New(d)
}

// chain adds a library of n documents whose i-th has i recordings' worth of
// activity and an edge to the next, with support i.
func chain(n int) *dataset.File {
	f := fixture.File()
	f.Libraries = append(f.Libraries, dataset.Library{ID: "lib_big", WorkspaceID: "ws_a", Name: "Big", Slug: "big",
		CreatedAt: "2025-01-01T00:00:00Z", UpdatedAt: "2025-01-01T00:00:00Z",
		Schema: dataset.Schema{Version: 1, Sections: []dataset.Section{{Key: "summary", Title: "Summary", Type: "text"}}}})
	for i := 0; i < n; i++ {
		f.Documents = append(f.Documents, dataset.Document{ID: fmt.Sprintf("doc_big_%04d", i), LibraryID: "lib_big",
			Slug: fmt.Sprintf("d-%d", i), Title: fmt.Sprintf("Doc %d", i), Category: "c", Tags: []string{}, Applications: []string{},
			FirstSeen: "2025-01-01T00:00:00Z", LastSeen: fmt.Sprintf("2025-01-01T00:%02d:00Z", i%60),
			CreatedAt: "2025-01-01T00:00:00Z", UpdatedAt: "2025-01-01T00:00:00Z", Content: map[string]any{"summary": "s"}})
		if i > 0 {
			f.Edges = append(f.Edges, dataset.Edge{SourceDocumentID: fmt.Sprintf("doc_big_%04d", i-1), TargetDocumentID: fmt.Sprintf("doc_big_%04d", i),
				Label: "often next", EdgeType: "data", Support: i})
		}
	}
	return f
}

func TestGraphCapsAndOrder(t *testing.T) {
	s := load(t, chain(10))
	ctx := context.Background()
	docs, edges, truncated, err := s.Graph(ctx, "lib_big", 100, 100)
	if err != nil || truncated || len(docs) != 10 || len(edges) != 9 {
		t.Fatalf("uncapped: %d docs %d edges truncated %v err %v", len(docs), len(edges), truncated, err)
	}
	if edges[0].Support != 9 || edges[8].Support != 1 {
		t.Errorf("edges not by support desc: first %d last %d", edges[0].Support, edges[8].Support)
	}
	// All have 0 recordings: lastSeen desc decides (doc 9 is the latest), then id.
	if docs[0].ID != "doc_big_0009" {
		t.Errorf("most active first: %s", docs[0].ID)
	}
	// Document cap: only edges whose two ends are kept survive.
	docs, edges, truncated, _ = s.Graph(ctx, "lib_big", 5, 100)
	kept := map[string]bool{}
	for _, d := range docs {
		kept[d.ID] = true
	}
	if !truncated || len(docs) != 5 {
		t.Fatalf("doc cap: %d docs truncated %v", len(docs), truncated)
	}
	for _, e := range edges {
		if !kept[e.SourceID] || !kept[e.TargetID] {
			t.Errorf("edge %s -> %s has an end outside the returned documents", e.SourceID, e.TargetID)
		}
	}
	// Edge cap alone.
	_, edges, truncated, _ = s.Graph(ctx, "lib_big", 100, 4)
	if !truncated || len(edges) != 4 || edges[0].Support != 9 {
		t.Errorf("edge cap: %d edges truncated %v", len(edges), truncated)
	}
	// Exactly at the caps is not truncated.
	_, _, truncated, _ = s.Graph(ctx, "lib_big", 10, 9)
	if truncated {
		t.Error("a graph exactly at its caps is not truncated")
	}
	if _, _, _, err := s.Graph(ctx, "lib_gone", 1, 1); err != doclib.ErrNotFound {
		t.Errorf("missing library: %v", err)
	}
}

func TestListDocumentsUsesIndexesConsistently(t *testing.T) {
	s := load(t, fixture.File())
	ctx := context.Background()
	for _, f := range []doclib.DocumentFilter{
		{}, {Category: "Accounts"}, {Tag: "security"}, {Application: "Okta"}, {Category: "Accounts", Tag: "security", Application: "Slack"},
		{Search: "okta"}, {Category: "Devices", Search: "okta"}, {Tag: "nope"},
	} {
		all, total, err := s.ListDocuments(ctx, lib(t, s, "lib_a1"), f, 0, 100)
		if err != nil || len(all) != total {
			t.Fatalf("%+v: %d of %d, %v", f, len(all), total, err)
		}
		// Paging one by one gives the same sequence.
		for i := range total {
			one, n, _ := s.ListDocuments(ctx, lib(t, s, "lib_a1"), f, i, 1)
			if n != total || len(one) != 1 || one[0].ID != all[i].ID {
				t.Errorf("%+v: item %d by paging differs", f, i)
			}
		}
	}
}

func TestReplaceIsAtomic(t *testing.T) {
	s := load(t, fixture.File())
	other := fixture.File()
	other.Documents = other.Documents[:0]
	other.Edges = nil
	other.Recordings = nil
	d, err := dataset.Validate(other)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			libs, _ := s.Libraries(context.Background(), "ws_a")
			docs, total, _ := s.ListDocuments(context.Background(), lib(t, s, "lib_a1"), doclib.DocumentFilter{}, 0, 100)
			if len(libs) != 3 || len(docs) != total {
				t.Errorf("torn read: %d libraries, %d of %d documents", len(libs), len(docs), total)
				return
			}
		}
	}()
	for range 50 {
		s.Replace(d)
		s.Replace(mustValidate(t))
	}
	close(stop)
	wg.Wait()
}

func mustValidate(t *testing.T) *doclib.DataSet {
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLimiterWindows(t *testing.T) {
	l := memory.NewLimiter()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 59, 0, time.UTC)
	for i := 0; i < 2; i++ {
		q, _ := l.Take(ctx, "k", 2, time.Minute, t0)
		if !q.Allowed || q.Remaining != 1-i || !q.Reset.Equal(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)) {
			t.Fatalf("take %d: %+v", i, q)
		}
	}
	if q, _ := l.Take(ctx, "k", 2, time.Minute, t0); q.Allowed || q.Remaining != 0 {
		t.Fatalf("third take allowed: %+v", q)
	}
	if q, _ := l.Take(ctx, "other", 2, time.Minute, t0); !q.Allowed {
		t.Fatal("buckets are independent")
	}
	// A new window starts fresh, and old windows are swept.
	if q, _ := l.Take(ctx, "k", 2, time.Minute, t0.Add(time.Second)); !q.Allowed || q.Remaining != 1 {
		t.Fatalf("new window: %+v", q)
	}
}

func TestLimiterRelease(t *testing.T) {
	l := memory.NewLimiter()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	l.Take(ctx, "k", 2, time.Minute, t0)
	l.Take(ctx, "k", 2, time.Minute, t0)
	if err := l.Release(ctx, "k", time.Minute, t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if q, _ := l.Take(ctx, "k", 2, time.Minute, t0); !q.Allowed || q.Remaining != 0 {
		t.Fatalf("after a release one more is allowed: %+v", q)
	}
	// A release in another window, or of a bucket never taken, changes nothing.
	l.Release(ctx, "k", time.Minute, t0.Add(time.Minute))
	l.Release(ctx, "never", time.Minute, t0)
	if q, _ := l.Take(ctx, "k", 2, time.Minute, t0); q.Allowed {
		t.Fatalf("a release of the next window freed this one: %+v", q)
	}
	// Never below zero: releases beyond the takes do not create credit.
	l.Take(ctx, "z", 1, time.Minute, t0)
	for i := 0; i < 3; i++ {
		l.Release(ctx, "z", time.Minute, t0)
	}
	if q, _ := l.Take(ctx, "z", 1, time.Minute, t0); !q.Allowed {
		t.Fatal("take after release refused")
	}
	if q, _ := l.Take(ctx, "z", 1, time.Minute, t0); q.Allowed {
		t.Fatal("extra releases created quota")
	}
}

// lib returns a library of the fixture's ws_a as the store holds it.
func lib(t testing.TB, s *memory.Store, id string) *doclib.Library {
	t.Helper()
	l, err := s.Library(context.Background(), "ws_a", id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
