package snapshot

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// TestPublishCalibrates: a whole publish (a reindex) measures the
// embedder's chance level on the documents and names it in the manifest;
// later commits and merges carry it over; a search instance takes it, and
// with it the calibrated thresholds. A manifest whose calibration no
// measure gives is refused, as anything else it names that is not whole.
func TestPublishCalibrates(t *testing.T) {
	ctx := context.Background()
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	var all []search.IndexDoc
	if err := search.DocsFromData(ctx, d, e, 0, func(b []search.IndexDoc) error { all = append(all, b...); return nil }); err != nil {
		t.Fatal(err)
	}
	m := NewMemory()
	w := &Writer{Blobs: m, Embedder: e, Logger: quiet, Policy: MergePolicy{Factor: 2, MinDocuments: 1, CacheDocuments: 1}}
	if err := w.Publish(ctx, all[1:]); err != nil {
		t.Fatal(err)
	}
	man, _, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	c := man.Calibration
	if c == nil || c.Embedder != e.ID() || c.Documents.Pairs == 0 || c.Documents.Gibberish == 0 {
		t.Fatalf("the manifest's calibration after a publish: %+v", c)
	}
	// A commit and its merges keep it.
	if err := w.Upsert(ctx, all[:1]); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if later, _, err := ReadManifest(ctx, m, ""); err != nil || !reflect.DeepEqual(later.Calibration, c) || later.Sequence <= man.Sequence {
		t.Errorf("after a commit, sequence %d: calibration %+v (%v), want the publish's %+v", later.Sequence, later.Calibration, err, c)
	}
	// A search instance serves with it.
	f := &Follower{Blobs: m, Embedder: e, Every: time.Hour, Logger: quiet}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.Calibration(); !reflect.DeepEqual(got, c) {
		t.Errorf("the follower's calibration %+v, want %+v", got, c)
	}
	s := &search.Searcher{Backend: f, Embedder: search.Cached(e, 0), Rules: search.DefaultRules(e.ID())}
	if got, want := s.EffectiveRules().SemanticThreshold, c.Documents.Threshold(); got != want {
		t.Errorf("semantic threshold %g in service, want the calibrated %g", got, want)
	}
	// A calibration no measure gives is refused.
	for _, bad := range []string{`"p50":0.9,"p90":0.1`, `"p95":2`, `"pairs":-1`} {
		raw := strings.Replace(`{"format":1,"sequence":3,"embedder":"e","dimensions":4,"segment_format":2,"documents":0,"segments":[],`+
			`"calibration":{"embedder":"e","documents":{X}},"written_at":"2026-01-02T03:04:05Z"}`, "X", bad, 1)
		if _, err := decodeManifest([]byte(raw)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a calibration with %s: %v, want ErrCorrupt", bad, err)
		}
	}
}
