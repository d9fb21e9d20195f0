package opensearch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// TestCheckedChecksBeforeTheFirstSearch: a search-only program checks the
// index behind the alias before it searches, never creates it, answers 503
// with the cure while it is missing or of another embedder, and checks again
// only once Every has passed.
func TestCheckedChecksBeforeTheFirstSearch(t *testing.T) {
	const embedder = "hash-v1/256"
	ctx := context.Background()
	newChecked := func(t *testing.T, cluster *fakeopensearch.Cluster, now func() time.Time) *Checked {
		b, err := New(Config{URL: cluster.URL, Dimensions: 256, Embedder: embedder})
		if err != nil {
			t.Fatal(err)
		}
		return &Checked{Backend: b, Recheck: search.Recheck{Every: time.Minute, Now: now}}
	}
	q := &search.Query{Text: "invoice", Libraries: []string{"lib_a"}, Limit: 10}
	for _, c := range []struct {
		name string
		meta map[string]any
		want string
	}{
		{"another embedder", map[string]any{"embedder": "bedrock/amazon.titan-embed-text-v2:0/1024", "schema": schemaVersion}, `holds vectors of embedder "bedrock/amazon.titan-embed-text-v2:0/1024"`},
		{"another mapping version", map[string]any{"embedder": embedder, "schema": 0}, "mapping version 0"},
		{"no _meta", nil, "mapping version 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cluster := fakeopensearch.Start(t)
			cluster.CreateIndex("doclib-documents-1", settings.DefaultOpenSearchAlias, c.meta)
			_, err := newChecked(t, cluster, nil).Match(ctx, q)
			if !errors.Is(err, ErrIncompatible) || doclib.ErrorCode(err) != doclib.EUnavailable ||
				!strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "doclib-admin reindex") {
				t.Errorf("search error %v: want unavailable, naming the mismatch (%s) and the cure", err, c.want)
			}
		})
	}
	t.Run("no index yet", func(t *testing.T) {
		cluster := fakeopensearch.Start(t)
		_, _, err := newChecked(t, cluster, nil).MostActive(ctx, q, search.Filter{})
		if !errors.Is(err, ErrNoIndex) || doclib.ErrorCode(err) != doclib.EUnavailable {
			t.Errorf("search error %v: want unavailable, no index", err)
		}
		if reqs := cluster.Requests(); !slices.Equal(reqs, []string{"GET /" + settings.DefaultOpenSearchAlias + "/_mapping"}) {
			t.Errorf("requests %v: a search-only program must not create the index", reqs)
		}
	})
	t.Run("this embedder's index", func(t *testing.T) {
		cluster := fakeopensearch.Start(t)
		cluster.CreateIndex("doclib-documents-1", settings.DefaultOpenSearchAlias, map[string]any{"embedder": embedder, "schema": schemaVersion})
		now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		c := newChecked(t, cluster, func() time.Time { return now })
		mappings := func() int {
			n := 0
			for _, r := range cluster.Requests() {
				if strings.HasSuffix(r, "/_mapping") {
					n++
				}
			}
			return n
		}
		for range 3 {
			if _, _, err := c.MostActive(ctx, q, search.Filter{}); err != nil {
				t.Fatal(err)
			}
		}
		if n := mappings(); n != 1 {
			t.Errorf("%d reads of the mapping for 3 searches within Every, want 1", n)
		}
		now = now.Add(time.Minute)
		if _, _, err := c.MostActive(ctx, q, search.Filter{}); err != nil {
			t.Fatal(err)
		}
		if n := mappings(); n != 2 {
			t.Errorf("%d reads of the mapping once Every passed, want 2", n)
		}
	})
}

// TestReindexCalibratesTheIndex: a reindex with the documents' embedder
// records the calibration in the new index's _meta, a search-only program
// reads it with the check it makes before its first search, and that
// search already runs with the calibrated thresholds. An index no reindex
// calibrated keeps the embedder's defaults.
func TestReindexCalibratesTheIndex(t *testing.T) {
	ctx := context.Background()
	cluster := fakeopensearch.Start(t)
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{URL: cluster.URL, Dimensions: e.Dimensions(), Embedder: e.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.ReindexData(ctx, d, e, nil); err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{URL: cluster.URL, Dimensions: e.Dimensions(), Embedder: e.ID()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := settings.Rules{}.Searcher(&Checked{Backend: r}, e)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Calibration(); c != nil {
		t.Fatalf("a calibration before the first check: %+v", c)
	}
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	if _, err := s.Search(ctx, search.Request{Text: "reset a password", Libraries: libs, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	c := s.Calibration()
	if c == nil || c.Embedder != e.ID() || c.Documents.Pairs == 0 {
		t.Fatalf("after the first search, calibration %+v: want the reindex's, of %s", c, e.ID())
	}
	want := search.DefaultRules(e.ID()).Calibrated(c, e.ID(), 0)
	if got := s.EffectiveRules(); got.SemanticThreshold != want.SemanticThreshold || got.SemanticThreshold == search.DefaultRules(e.ID()).SemanticThreshold {
		t.Errorf("semantic threshold %g, want the calibrated %g (the default is %g)", got.SemanticThreshold, want.SemanticThreshold, search.DefaultRules(e.ID()).SemanticThreshold)
	}
	for _, req := range cluster.Refused() {
		t.Errorf("the fake refused %s", req)
	}
}
