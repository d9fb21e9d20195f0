package snapshot

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/doclib/doclib/shared/search"
)

// deadCounts counts the dead documents of each segment man names: those a
// later segment holds or deletes. It reads the segments, not the writer's
// ID lists, so that it checks them.
func deadCounts(t testing.TB, b Blobs, e search.Embedder, man Manifest, libs []string) []int {
	t.Helper()
	ids := make([][]string, len(man.Segments))
	deleted := make([][]string, len(man.Segments))
	for i, ref := range man.Segments {
		ids[i], deleted[i] = segmentIDs(t, b, e, ref, libs)
	}
	later := map[string]bool{}
	dead := make([]int, len(man.Segments))
	for i := len(man.Segments) - 1; i >= 0; i-- {
		for _, id := range ids[i] {
			if later[id] {
				dead[i]++
			}
		}
		for _, id := range slices.Concat(ids[i], deleted[i]) {
			later[id] = true
		}
	}
	return dead
}

// rewriting is a merging writer whose policy also rewrites segments of 10
// documents or more past a fifth of dead ones, taking in neighbours up to
// 50 live documents.
func rewriting(m Blobs) *Writer {
	w := merging(m)
	w.Policy.DeadShare, w.Policy.RewriteDocuments = 0.2, 50
	return w
}

// TestRewritesBoundTheDeadShare publishes 200 documents as a reindex does,
// then changes one document per commit, 600 times (a document written
// again, now and then one deleted or added): each document is replaced
// three times on average. After every commit, no segment of 10 documents
// or more holds more than a fifth of dead ones (a commit adds at most one
// dead document, and rewrites the segment that passes), the writer's own
// counts are those the segments give, and a follower lists exactly the
// live documents; the segments stay few.
func TestRewritesBoundTheDeadShare(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := rewriting(m)
	if err := w.Publish(ctx, docs(ids(0, 200)...)); err != nil {
		t.Fatal(err)
	}
	f := newFollower(t, m, &clock{})
	live := map[string]bool{}
	for _, id := range ids(0, 200) {
		live[id] = true
	}
	rng := rand.New(rand.NewPCG(39, 4))
	next, rewrites, maxSegs := 200, 0, 0
	for round := range 600 {
		switch r := rng.IntN(20); {
		case r == 0 && len(live) > 0:
			id := someKey(rng, live)
			if err := w.Delete(ctx, []string{id}); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
		case r == 1:
			id := ids(next, next+1)[0]
			next++
			if err := w.Upsert(ctx, docs(id)); err != nil {
				t.Fatal(err)
			}
			live[id] = true
		default:
			if err := w.Upsert(ctx, []search.IndexDoc{changed(someKey(rng, live), round)}); err != nil {
				t.Fatal(err)
			}
		}
		before := readMan(t, m).Segments
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		man := readMan(t, m)
		dead := deadCounts(t, m, testEmb, man, []string{"lib"})
		counts := w.lv.counts(man.Segments)
		for i, s := range man.Segments {
			if counts[i] != s.Documents-dead[i] {
				t.Fatalf("round %d: segment %d of %d documents has %d live, the writer counts %d", round, i, s.Documents, s.Documents-dead[i], counts[i])
			}
			if s.Documents >= 10 && float64(dead[i]) > 0.2*float64(s.Documents) {
				t.Fatalf("round %d: segment %d holds %d dead documents of %d", round, i, dead[i], s.Documents)
			}
		}
		rewrites += rewritten(before, man.Segments)
		maxSegs = max(maxSegs, len(man.Segments))
		if err := f.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := searchIDs(t, f)
		if err != nil {
			t.Fatal(err)
		}
		if want := sortedKeys(live); !slices.Equal(got, want) {
			t.Fatalf("round %d: the follower lists %d documents, %d are live", round, len(got), len(want))
		}
	}
	if rewrites < 10 {
		t.Errorf("%d segments of over 40 documents rewritten in 600 changes", rewrites)
	}
	if maxSegs > 20 { // the tail's 9 a level, and 200 documents in segments of 10 to 76
		t.Errorf("up to %d segments", maxSegs)
	}
	t.Logf("%d rewrites of segments over 40 documents, at most %d segments", rewrites, maxSegs)
}

// rewritten counts the segments of before too large for a log-structured
// merge (over 40 documents) that after no longer names: the rewrites.
func rewritten(before, after []SegmentRef) int {
	still := map[string]bool{}
	for _, s := range after {
		still[s.Key] = true
	}
	n := 0
	for _, s := range before {
		if s.Documents > 40 && !still[s.Key] {
			n++
		}
	}
	return n
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// gets counts the GETs of m by key.
type gets struct {
	mu   sync.Mutex
	keys []string
}

func (g *gets) count(m *Memory) {
	m.SetFailGet(func(key string, _ GetOptions) error {
		g.mu.Lock()
		g.keys = append(g.keys, key)
		g.mu.Unlock()
		return nil
	})
}

func (g *gets) of(suffix string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, k := range g.keys {
		if strings.HasSuffix(k, suffix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestNewWriterCountsFromIDLists: a writer started after the reindex (a
// new indexer instance) counts each segment's dead documents from the ID
// lists, reading no segment for it: its first commit that takes a
// segment past a fifth rewrites that one, and reads that one only. The
// batches and merges of another writer in between count too.
func TestNewWriterCountsFromIDLists(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	if err := rewriting(m).Publish(ctx, docs(ids(0, 200)...)); err != nil {
		t.Fatal(err)
	}
	commit := func(w *Writer, ds ...search.IndexDoc) {
		t.Helper()
		for try := 0; ; try++ { // as the indexer does, the batch again after a conflict
			if err := w.Upsert(ctx, ds); err != nil {
				t.Fatal(err)
			}
			err := w.Commit(ctx)
			if err == nil {
				return
			}
			if !errors.Is(err, search.ErrCommitConflict) || try > 0 {
				t.Fatal(err)
			}
		}
	}
	// The second segment holds d0050 to d0099: ten of them change, a
	// fifth, not more, over two writers' batches.
	second := readMan(t, m).Segments[1]
	a, b := rewriting(m), rewriting(m)
	for i := range 5 {
		commit(a, changed(ids(50+i, 51+i)[0], 1))
	}
	for i := range 5 {
		commit(b, changed(ids(55+i, 56+i)[0], 1))
	}
	for i := range 4 { // elsewhere, after b's merge of the ten batches so far
		commit(b, changed(ids(150+i, 151+i)[0], 1))
	}
	if !slices.ContainsFunc(readMan(t, m).Segments, func(s SegmentRef) bool { return s.Key == second.Key }) {
		t.Fatal("a segment of a fifth of dead documents was rewritten")
	}
	var g gets
	g.count(m)
	commit(a, changed("d0060", 1)) // a's first commit since b's: it reads b's lists
	m.SetFailGet(nil)
	man := readMan(t, m)
	if slices.ContainsFunc(man.Segments, func(s SegmentRef) bool { return s.Key == second.Key }) {
		t.Fatal("the segment past a fifth of dead documents is still in service")
	}
	if read := g.of(".seg"); len(read) > 1 || len(read) == 1 && read[0] != second.Key {
		t.Errorf("the writer read segments %v; want only the one it rewrote", read)
	}
	if len(g.of(idsSuffix)) == 0 {
		t.Error("the writer read no ID list")
	}
	// A writer that has never seen a batch counts them all the same.
	c := rewriting(m)
	g = gets{}
	g.count(m)
	commit(c, changed("d0100", 1))
	for i := range 10 {
		commit(c, changed(ids(101+i, 102+i)[0], 1))
	}
	m.SetFailGet(nil)
	dead := deadCounts(t, m, testEmb, readMan(t, m), []string{"lib"})
	for i, s := range readMan(t, m).Segments {
		if s.Documents >= 10 && float64(dead[i]) > 0.2*float64(s.Documents) {
			t.Errorf("segment %d: %d dead documents of %d", i, dead[i], s.Documents)
		}
	}
	wantIDs(t, newFollower(t, m, &clock{}), ids(0, 200)...)
}

// TestOneRewritePerCommit: when four segments pass a fifth of dead
// documents at once, each commit rewrites one of them, the one with the
// largest share first.
func TestOneRewritePerCommit(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := rewriting(m)
	if err := w.Publish(ctx, docs(ids(0, 200)...)); err != nil {
		t.Fatal(err)
	}
	reindex := readMan(t, m).Segments
	var batch []search.IndexDoc
	for s := range 4 {
		for i := range 11 + s { // 11 of the first 50, 12 of the next, ...
			batch = append(batch, changed(ids(50*s+i, 50*s+i+1)[0], 1))
		}
	}
	for round := range 5 {
		before := m.Versions(ManifestKey)
		if err := w.Upsert(ctx, batch[round:round+1]); err != nil { // a document changed again
			t.Fatal(err)
		}
		if round == 0 {
			if err := w.Upsert(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		segs := readMan(t, m).Segments
		left := 0
		for _, r := range reindex {
			if slices.ContainsFunc(segs, func(s SegmentRef) bool { return s.Key == r.Key }) {
				left++
			}
		}
		if want := max(3-round, 0); left != want {
			t.Fatalf("after commit %d: %d of the reindex's segments left, want %d", round, left, want)
		}
		if round < 4 && slices.ContainsFunc(segs, func(s SegmentRef) bool { return s.Key == reindex[3-round].Key }) {
			t.Errorf("commit %d did not rewrite segment %d, the one of most dead documents", round, 3-round)
		}
		if n := m.Versions(ManifestKey) - before; round < 4 && n != 2 {
			t.Errorf("commit %d published %d manifests; want its batch and one rewrite", round, n)
		}
	}
	wantIDs(t, newFollower(t, m, &clock{}), ids(0, 200)...)
}

// TestRewritePolicy checks the policy's choice of a rewrite on lists of
// segment sizes and live documents.
func TestRewritePolicy(t *testing.T) {
	p := MergePolicy{Factor: 3, MinDocuments: 10, DeadShare: 0.2, RewriteDocuments: 80}
	for _, tc := range []struct {
		name     string
		docs     []int
		live     []int
		from, to int
		ok       bool
	}{
		{"none past a fifth", []int{100, 100, 100}, []int{80, 81, 99}, 0, 0, false},
		{"the largest share", []int{100, 100, 100}, []int{70, 60, 75}, 1, 2, true},
		{"too small to count", []int{100, 9, 100}, []int{90, 0, 85}, 0, 0, false},
		{"unknown counts", []int{100, 100}, []int{-1, 10}, 1, 2, true},
		{"the smaller neighbour first", []int{45, 100, 40}, []int{45, 30, 40}, 1, 3, true},
		{"neighbours while they fit", []int{20, 100, 10, 100}, []int{20, 40, 10, 90}, 0, 3, true},
		{"at most Factor segments", []int{10, 10, 100, 10, 10}, []int{10, 10, 40, 10, 10}, 0, 3, true},
		{"no neighbour of unknown count", []int{10, 100, 10}, []int{-1, 50, -1}, 1, 2, true},
	} {
		segs := make([]SegmentRef, len(tc.docs))
		for i, n := range tc.docs {
			segs[i] = SegmentRef{Documents: n}
		}
		from, to, ok := p.rewrite(segs, tc.live)
		if from != tc.from || to != tc.to || ok != tc.ok {
			t.Errorf("%s: rewrite %d to %d (%v), want %d to %d (%v)", tc.name, from, to, ok, tc.from, tc.to, tc.ok)
		}
	}
	if _, _, ok := (MergePolicy{Factor: 3, MinDocuments: 10}).rewrite([]SegmentRef{{Documents: 100}}, []int{0}); ok {
		t.Error("a policy without DeadShare rewrote")
	}
}
