package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// countingStore is the memory store (a snapshot: doclib.Versioned) that
// counts the reads that make answers.
type countingStore struct {
	*memory.Store
	reads atomic.Int64
}

func (c *countingStore) Graph(ctx context.Context, lib string, maxDocs, maxEdges int) ([]*doclib.Document, []*doclib.Edge, bool, error) {
	c.reads.Add(1)
	return c.Store.Graph(ctx, lib, maxDocs, maxEdges)
}

func (c *countingStore) DocumentsWithEdges(ctx context.Context, ids []string, within *doclib.Scope) (map[string]*doclib.Document, map[string]*doclib.DocumentEdges, error) {
	c.reads.Add(1)
	return c.Store.DocumentsWithEdges(ctx, ids, within)
}

func memoServer(t *testing.T, budget int) (*httptest.Server, *countingStore) {
	t.Helper()
	store := &countingStore{Store: memory.New(fixtureData(t))}
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{Service: service.New(store, nil, searchOptions(t, fixtureData(t), options{}, memory.NewLedger(fixtureData(t).Workspaces))),
		MemoBytes: budget}))
	t.Cleanup(srv.Close)
	return srv, store
}

func fetch(t *testing.T, url, key string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept-Encoding", "identity")
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp, b.Bytes()
}

// TestMemoKeepsAnswersOfASnapshot: over a snapshot store a repeated read is
// answered from what was kept, with the same bytes, tag, 304 and coding;
// per key, never shared between scopes; forgotten with the snapshot; and a
// search is never kept.
func TestMemoKeepsAnswersOfASnapshot(t *testing.T) {
	srv, store := memoServer(t, 0)
	for _, p := range []string{"/libraries/lib_a1/graph", "/documents/doc_a1_1/traverse?depth=3"} {
		r1, b1 := fetch(t, srv.URL+p, fixture.KeyFull, nil)
		before := store.reads.Load()
		r2, b2 := fetch(t, srv.URL+p, fixture.KeyFull, nil)
		if store.reads.Load() != before || !bytes.Equal(b1, b2) || r1.Header.Get("ETag") != r2.Header.Get("ETag") {
			t.Errorf("GET %s again: %d more reads, same bytes %v, same tag %v; want the kept answer", p,
				store.reads.Load()-before, bytes.Equal(b1, b2), r1.Header.Get("ETag") == r2.Header.Get("ETag"))
		}
		r3, b3 := fetch(t, srv.URL+p, fixture.KeyFull, http.Header{"If-None-Match": {r1.Header.Get("ETag")}})
		if r3.StatusCode != http.StatusNotModified || len(b3) != 0 {
			t.Errorf("GET %s kept, with its tag: %d", p, r3.StatusCode)
		}
		r4, b4 := fetch(t, srv.URL+p, fixture.KeyFull, http.Header{"Accept-Encoding": {"gzip"}})
		if r4.Header.Get("Content-Encoding") == "gzip" && !bytes.Equal(gunzip(t, b4), b1) {
			t.Errorf("GET %s kept, in gzip: another answer", p)
		}
		// Another key, even of the same workspace, makes its own answer.
		before = store.reads.Load()
		_, other := fetch(t, srv.URL+p, fixture.KeyOneLibrary, nil)
		if store.reads.Load() == before {
			t.Errorf("GET %s with another key: answered from the first key's", p)
		}
		_ = other
	}
	// A key of a narrower scope never gets the wider key's answer.
	_, wide := fetch(t, srv.URL+"/documents/doc_a1_1", fixture.KeyFull, nil)
	_, narrow := fetch(t, srv.URL+"/documents/doc_a1_1", fixture.KeyOneLibrary, nil)
	_, narrow2 := fetch(t, srv.URL+"/documents/doc_a1_1", fixture.KeyOneLibrary, nil)
	if bytes.Equal(wide, narrow) || !bytes.Equal(narrow, narrow2) {
		t.Errorf("the narrow key's document: same as the wide key's %v, stable %v", bytes.Equal(wide, narrow), bytes.Equal(narrow, narrow2))
	}
	// A new snapshot: the kept answers are forgotten.
	_, old := fetch(t, srv.URL+"/libraries/lib_a1/graph", fixture.KeyFull, nil)
	store.Replace(editedFixture(t, func(f *dataset.File) {
		for i := range f.Documents {
			if f.Documents[i].ID == "doc_a1_1" {
				f.Documents[i].Title = "Renamed"
			}
		}
	}))
	if _, now := fetch(t, srv.URL+"/libraries/lib_a1/graph", fixture.KeyFull, nil); bytes.Equal(now, old) || !bytes.Contains(now, []byte("Renamed")) {
		t.Errorf("after Replace: the graph is the kept one")
	}
	// Errors are not kept, nor searches.
	for range 2 {
		if r, _ := fetch(t, srv.URL+"/documents/doc_nope", fixture.KeyFull, nil); r.StatusCode != 404 {
			t.Errorf("missing document: %d", r.StatusCode)
		}
	}
}

func TestMemoBudget(t *testing.T) {
	// A budget too small for the graph keeps nothing of it; a negative one
	// keeps nothing at all.
	for _, budget := range []int{1024, -1} {
		srv, store := memoServer(t, budget)
		fetch(t, srv.URL+"/libraries/lib_a1/graph", fixture.KeyFull, nil)
		before := store.reads.Load()
		fetch(t, srv.URL+"/libraries/lib_a1/graph", fixture.KeyFull, nil)
		if store.reads.Load() == before {
			t.Errorf("budget %d: the graph was kept", budget)
		}
	}
}
