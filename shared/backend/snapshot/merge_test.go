package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/backend/localsearch"
)

// TestMergesKeepEveryChange commits random batches (documents added,
// written again and deleted) through a writer that merges every 3 segments,
// and after each checks that a follower lists exactly the live documents,
// that the segments stay few, and that merged segments are read back from
// the store when not cached.
func TestMergesKeepEveryChange(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	w.Policy = MergePolicy{Factor: 3, MinDocuments: 4, CacheDocuments: 10}
	f := newFollower(t, m, &clock{})
	rng := rand.New(rand.NewPCG(4, 4))
	live := map[string]bool{}
	next := 0
	merges := 0
	for round := range 80 {
		var add []string
		for range 1 + rng.IntN(6) {
			if len(live) > 0 && rng.IntN(3) == 0 { // a document written again
				add = append(add, someKey(rng, live))
				continue
			}
			add = append(add, fmt.Sprintf("d%04d", next))
			next++
		}
		if err := w.Upsert(ctx, docs(add...)); err != nil {
			t.Fatal(err)
		}
		for _, id := range add {
			live[id] = true
		}
		for range rng.IntN(3) {
			if len(live) == 0 {
				break
			}
			id := someKey(rng, live)
			if err := w.Delete(ctx, []string{id}); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
		}
		before := m.Versions(ManifestKey)
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		merges += m.Versions(ManifestKey) - before - 1
		if err := f.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		want := make([]string, 0, len(live))
		for id := range live {
			want = append(want, id)
		}
		slices.Sort(want)
		got, err := searchIDs(t, f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: the follower lists %d documents, %d are live", round, len(got), len(want))
		}
		if n := f.Current().Segments; n > 12 {
			t.Fatalf("round %d: %d segments", round, n)
		}
	}
	if merges < 10 {
		t.Errorf("%d merges in 80 commits", merges)
	}
	t.Logf("%d merges; %d segments in service, %d objects written", merges, f.Current().Segments, len(segmentKeys(m)))
}

func someKey(rng *rand.Rand, m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}

// TestChangeDuringMergeIsKept lets another writer publish a batch between a
// merge's segment and its manifest: the merge loses the race and is given
// up, and the batch, like every earlier one, is served once.
func TestChangeDuringMergeIsKept(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	w.Policy = MergePolicy{Factor: 3, MinDocuments: 1, CacheDocuments: 100}
	for i := range 2 {
		if err := w.Upsert(ctx, docs(fmt.Sprintf("a%d", i))); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	other := newWriter(m)
	var manifestPuts, raced atomic.Int32
	m.SetFailPut(func(key string) error {
		if key != ManifestKey {
			return nil
		}
		// The third commit's first manifest publishes its batch; the second
		// is its merge's: another writer publishes just before it.
		if manifestPuts.Add(1) == 2 && raced.Add(1) == 1 {
			if err := other.Upsert(ctx, docs("during")); err != nil {
				t.Error(err)
			}
			if err := other.Commit(ctx); err != nil {
				t.Error(err)
			}
		}
		return nil
	})
	var logs bytes.Buffer
	w.Logger = slogTo(&logs)
	if err := w.Upsert(ctx, docs("a2")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("the batch's commit failed because its merge lost a race: %v", err)
	}
	m.SetFailPut(nil)
	if raced.Load() != 1 {
		t.Fatal("the merge did not run")
	}
	if !strings.Contains(logs.String(), "a merge failed") {
		t.Errorf("the lost merge was not logged:\n%s", logs.String())
	}
	f := newFollower(t, m, &clock{})
	wantIDs(t, f, "a0", "a1", "a2", "during")
	// The next commit merges again, over the other writer's segment.
	if err := w.Upsert(ctx, docs("a3")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "a0", "a1", "a2", "a3", "during")
	if n := f.Current().Segments; n >= 5 {
		t.Errorf("%d segments after the merge", n)
	}
}

// TestSingleSnapshotIsMigrated publishes in the single-snapshot format of
// earlier versions: a follower serves it as it is, and the writer's first
// use publishes it as the first segment, its batch on top.
func TestSingleSnapshotIsMigrated(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	var b bytes.Buffer
	sum, err := encode(&b, Header{Embedder: testEmbedder, Dimensions: dims, Sequence: 7}, docs("old1", "old2"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := m.Put(ctx, SnapshotKey, bytes.NewReader(b.Bytes()), int64(b.Len()), Condition{})
	if err != nil {
		t.Fatal(err)
	}
	p := Pointer{Key: SnapshotKey, Version: obj.Version, Sequence: 7, Embedder: testEmbedder, Dimensions: dims, Documents: 2,
		Bytes: int64(b.Len()), Checksum: checksumPrefix + sum}
	if _, err := writePointer(ctx, m, p, ""); err != nil {
		t.Fatal(err)
	}
	c := &clock{}
	f := newFollower(t, m, c)
	wantIDs(t, f, "old1", "old2")
	if st := f.Current(); !st.Legacy || st.Sequence != 7 {
		t.Errorf("in service: %+v", st)
	}
	w := newWriter(m)
	if err := w.Upsert(ctx, docs("new")); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(ctx, []string{"old1"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c.Add(f.every())
	wantIDs(t, f, "new", "old2")
	if st := f.Current(); st.Legacy || st.Sequence != 9 || st.Segments != 2 {
		t.Errorf("in service: %+v", st)
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// TestMergePolicy checks the policy's choices on lists of segment sizes.
func TestMergePolicy(t *testing.T) {
	p := MergePolicy{Factor: 3, MinDocuments: 10, MaxMergeDocuments: 1000}
	refs := func(sizes ...int) []SegmentRef {
		out := make([]SegmentRef, len(sizes))
		for i, n := range sizes {
			out[i] = SegmentRef{Documents: n}
		}
		return out
	}
	for _, tc := range []struct {
		sizes    []int
		from, to int
		ok       bool
	}{
		{[]int{5, 5}, 0, 0, false},
		{[]int{5, 5, 1}, 0, 3, true},                  // all at the floor: one band
		{[]int{300, 5, 5}, 0, 0, false},               // the small ones are a band of their own, too few
		{[]int{300, 5, 5, 8}, 1, 4, true},             // now three
		{[]int{300, 280, 5, 290}, 0, 3, true},         // the small one joins the band of the larger one after it
		{[]int{5000, 300, 280, 290}, 1, 4, true},      // the largest is alone in its band
		{[]int{5000, 4000, 3000}, 0, 0, false},        // each over MaxMergeDocuments
		{[]int{300, 5000, 280, 290, 270}, 2, 5, true}, // a window with a segment too large is skipped
	} {
		from, to, ok := p.next(refs(tc.sizes...))
		if from != tc.from || to != tc.to || ok != tc.ok {
			t.Errorf("%v: merge %d to %d (%v), want %d to %d (%v)", tc.sizes, from, to, ok, tc.from, tc.to, tc.ok)
		}
	}
}

// TestRetiredSegmentsAreDeleted merges and reindexes, and checks that the
// segments no manifest names any more are deleted once RetireAfter has
// passed, and not before (a search instance that read an older manifest
// must still find what it named).
func TestRetiredSegmentsAreDeleted(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	w := newWriter(m)
	w.Now, w.Policy = c.Now, MergePolicy{Factor: 3, MinDocuments: 1, CacheDocuments: 100}
	commit := func(ids ...string) {
		t.Helper()
		if err := w.Upsert(ctx, docs(ids...)); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	commit("a")
	commit("b")
	commit("c") // the third: merged with the other two
	if n := len(segmentKeys(m)); n != 4 {
		t.Fatalf("%d segments in the bucket after a merge of 3; want them and the merged one", n)
	}
	man, _, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Segments) != 1 || len(man.Retired) != 3 {
		t.Fatalf("manifest %+v", man)
	}
	c.Add(DefaultRetireAfter - time.Second)
	commit("d")
	if n := len(segmentKeys(m)); n != 5 {
		t.Fatalf("%d segments before RetireAfter passed; none may be deleted yet", n)
	}
	c.Add(2 * time.Second)
	commit("e")
	if got := segmentKeys(m); len(got) != 3 {
		t.Fatalf("after RetireAfter: %v; want the merged segment and the two after it", got)
	}
	// A reindex retires every segment; later publishes delete them.
	if err := w.Publish(ctx, docs("x")); err != nil {
		t.Fatal(err)
	}
	c.Add(DefaultRetireAfter)
	commit("y")
	if got := segmentKeys(m); len(got) != 2 {
		t.Fatalf("after a reindex and RetireAfter: %v; want its segment and the one after it", got)
	}
	wantIDs(t, newFollower(t, m, c), "x", "y")
}

// TestRetiredListIsChecked refuses a manifest that would make a writer
// delete what is not a retired segment.
func TestRetiredListIsChecked(t *testing.T) {
	for _, retired := range []string{ManifestKey, "snapshots/current.json", "elsewhere/x.seg"} {
		m := Manifest{Format: ManifestFormat, SegmentFormat: localsearch.SegmentFormat, Retired: []Retired{{Key: retired}}}
		if err := m.check(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("retiring %q: %v, want ErrCorrupt", retired, err)
		}
	}
	live := SegmentPrefix + "a.seg"
	m := Manifest{Format: ManifestFormat, SegmentFormat: localsearch.SegmentFormat,
		Segments: []SegmentRef{{Key: live, Bytes: 1}}, Retired: []Retired{{Key: live}}}
	if err := m.check(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("retiring a live segment: %v, want ErrCorrupt", err)
	}
}
