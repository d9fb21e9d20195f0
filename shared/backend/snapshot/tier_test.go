package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

const dims = 4

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// listRetriever lists every document as most active, in ID order; it
// matches nothing.
type listRetriever []search.IndexDoc

func (l listRetriever) Candidates(context.Context, *search.Query, func(search.Candidate)) error {
	return nil
}

func (l listRetriever) MostActive(_ context.Context, _ *search.Query, _ search.Filter, offset, limit int) ([]search.Candidate, int, error) {
	var out []search.Candidate
	for i := range l {
		out = append(out, search.Candidate{Doc: &l[i].Doc})
	}
	return out, len(out), nil
}

func build(_ context.Context, docs []search.IndexDoc) (search.Retriever, error) {
	return listRetriever(docs), nil
}

func doc(id string) search.IndexDoc {
	return search.IndexDoc{Doc: search.Doc{ID: id, LibraryID: "lib"}, Title: "title of " + id, Vector: vec(dims, 1),
		Recordings: []search.RecordingVector{{ID: "rec_" + id, Vector: vec(dims, 2)}}}
}

func docs(ids ...string) []search.IndexDoc {
	out := make([]search.IndexDoc, len(ids))
	for i, id := range ids {
		out[i] = doc(id)
	}
	return out
}

func newWriter(m Blobs) *Writer {
	return &Writer{Blobs: m, Embedder: testEmbedder, Dimensions: dims, Logger: quiet}
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newFollower(t *testing.T, m Blobs, c *clock) *Follower {
	t.Helper()
	f := &Follower{Blobs: m, Build: build, Embedder: testEmbedder, Dimensions: dims, Every: 5 * time.Second, Now: c.Now, Logger: quiet}
	if err := f.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

// searchIDs returns the IDs of the documents f lists.
func searchIDs(t *testing.T, f *Follower) ([]string, error) {
	t.Helper()
	hits, total, err := f.MostActive(context.Background(), &search.Query{Limit: 1000}, search.Filter{})
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, h := range hits {
		ids = append(ids, h.DocumentID)
	}
	if total != len(ids) {
		t.Errorf("total %d for %d hits", total, len(ids))
	}
	return ids, nil
}

func wantIDs(t *testing.T, f *Follower, want ...string) {
	t.Helper()
	got, err := searchIDs(t, f)
	if err != nil {
		t.Fatal(err)
	}
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the follower lists %v, want %v", got, want)
	}
}

func TestWriterPublishesOneVersionPerCommit(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	if err := w.Commit(ctx); err != nil { // nothing to publish
		t.Fatal(err)
	}
	if n := m.Versions(PointerKey); n != 0 {
		t.Fatalf("a clean commit wrote the pointer %d times", n)
	}
	if err := w.Upsert(ctx, docs("b", "a", "c")); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(ctx, []string{"c", "nonexistent"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if s, p := m.Versions(SnapshotKey), m.Versions(PointerKey); s != 1 || p != 1 {
		t.Errorf("one commit wrote %d snapshot and %d pointer versions, want 1 and 1", s, p)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if m.Versions(SnapshotKey) != 1 {
		t.Error("a commit with nothing new published again")
	}
	f := newFollower(t, m, &clock{})
	wantIDs(t, f, "a", "b")
	if st := f.Current(); st.Header.Sequence != 1 || st.Header.Documents != 2 || st.Version == "" || st.Err != nil {
		t.Errorf("in service: %+v", st)
	}

	// A new writer (a new indexer instance) starts from what is published.
	w2 := newWriter(m)
	if err := w2.Upsert(ctx, docs("d")); err != nil {
		t.Fatal(err)
	}
	if err := w2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if s, p := m.Versions(SnapshotKey), m.Versions(PointerKey); s != 2 || p != 2 {
		t.Errorf("two commits wrote %d snapshot and %d pointer versions, want 2 and 2", s, p)
	}
	if err := f.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "a", "b", "d")
	if seq := f.Current().Header.Sequence; seq != 2 {
		t.Errorf("sequence %d, want 2", seq)
	}
	// The full document round-trips through the store.
	p, _, err := ReadPointer(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := LoadSnapshot(ctx, m, p, Expect{})
	if err != nil {
		t.Fatal(err)
	}
	if want := docs("a", "b", "d"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("published %+v, want %+v", got, want)
	}
	if p.Documents != 3 || p.Sequence != 2 || p.Embedder != testEmbedder || p.Dimensions != dims || !strings.HasPrefix(p.Checksum, "sha256:") || p.Bytes <= 0 {
		t.Errorf("pointer %+v", p)
	}
}

func TestWritersRace(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	base := newWriter(m)
	if err := base.Publish(ctx, docs("a")); err != nil {
		t.Fatal(err)
	}
	w1, w2 := newWriter(m), newWriter(m)
	if err := w1.Upsert(ctx, docs("one")); err != nil {
		t.Fatal(err)
	}
	if err := w2.Upsert(ctx, docs("two")); err != nil {
		t.Fatal(err)
	}
	if err := w1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err := w2.Commit(ctx)
	if !errors.Is(err, ErrConflict) || !errors.Is(err, search.ErrCommitConflict) {
		t.Fatalf("the second writer's commit: %v, want ErrConflict as search.ErrCommitConflict (the indexer redoes its batch)", err)
	}
	f := newFollower(t, m, &clock{})
	wantIDs(t, f, "a", "one")
	// The stream delivers w2's batch again: it reloads and applies it.
	if err := w2.Upsert(ctx, docs("two")); err != nil {
		t.Fatal(err)
	}
	if err := w2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "a", "one", "two")
	if seq := f.Current().Header.Sequence; seq != 3 {
		t.Errorf("sequence %d after three publishes", seq)
	}
}

func TestFailedPutLeavesLastGoodInService(t *testing.T) {
	ctx := context.Background()
	for _, key := range []string{SnapshotKey, PointerKey} {
		t.Run(key, func(t *testing.T) {
			m := NewMemory()
			w := newWriter(m)
			if err := w.Publish(ctx, docs("a")); err != nil {
				t.Fatal(err)
			}
			f := newFollower(t, m, &clock{})
			broken := errors.New("the store is down")
			m.SetFailPut(func(k string) error {
				if k == key {
					return broken
				}
				return nil
			})
			if err := w.Upsert(ctx, docs("b")); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(ctx); !errors.Is(err, broken) {
				t.Fatalf("commit: %v", err)
			}
			m.SetFailPut(nil)
			if n := m.Versions(PointerKey); n != 1 {
				t.Errorf("the pointer has %d versions after a failed commit", n)
			}
			if err := f.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			wantIDs(t, f, "a")
			if seq := f.Current().Header.Sequence; seq != 1 {
				t.Errorf("sequence %d in service", seq)
			}
			// The writer forgot the failed batch; its redelivery publishes it.
			if err := w.Commit(ctx); err != nil || m.Versions(PointerKey) != 1 {
				t.Fatalf("a commit after a failed one published: %v", err)
			}
			if err := w.Upsert(ctx, docs("b")); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := f.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			wantIDs(t, f, "a", "b")
			if seq := f.Current().Header.Sequence; seq != 2 {
				t.Errorf("sequence %d in service", seq)
			}
		})
	}
}

func TestWriterRefusesOtherEmbedder(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	if err := newWriter(m).Publish(ctx, docs("a")); err != nil {
		t.Fatal(err)
	}
	other := &Writer{Blobs: m, Embedder: "other/4", Dimensions: dims, Logger: quiet}
	var snapshotGets atomic.Int32
	m.SetFailGet(func(key string, _ GetOptions) error {
		if key == SnapshotKey {
			snapshotGets.Add(1)
		}
		return nil
	})
	for range 2 {
		err := other.Upsert(ctx, []search.IndexDoc{doc("b")})
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), `"test-embedder/4"`) || !strings.Contains(err.Error(), "reindex") {
			t.Fatalf("upsert over another embedder's snapshot: %v", err)
		}
		if err := other.Delete(ctx, []string{"a"}); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("delete over another embedder's snapshot: %v", err)
		}
	}
	if n := snapshotGets.Load(); n != 0 {
		t.Errorf("the refused snapshot was read %d times; its pointer says enough", n)
	}
	// A reindex with the other embedder cures it.
	if err := other.Publish(ctx, docs("x", "y")); err != nil {
		t.Fatal(err)
	}
	if err := other.Upsert(ctx, docs("z")); err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f := &Follower{Blobs: m, Build: build, Embedder: "other/4", Dimensions: dims, Logger: quiet}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "x", "y", "z")
	if seq := f.Current().Header.Sequence; seq != 3 {
		t.Errorf("sequence %d after three publishes", seq)
	}
}

func TestFollowerSeesChangeAfterEvery(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	if err := w.Publish(ctx, docs("a")); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := newFollower(t, m, c)
	var pointerGets atomic.Int32
	m.SetFailGet(func(key string, _ GetOptions) error {
		if key == PointerKey {
			pointerGets.Add(1)
		}
		return nil
	})
	if err := w.Upsert(ctx, docs("b")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "a")
	c.Add(4 * time.Second)
	wantIDs(t, f, "a")
	if n := pointerGets.Load(); n != 0 {
		t.Errorf("%d pointer reads before Every passed", n)
	}
	c.Add(time.Second)
	wantIDs(t, f, "a", "b")
	wantIDs(t, f, "a", "b")
	if n := pointerGets.Load(); n != 1 {
		t.Errorf("%d pointer reads in one interval", n)
	}
	c.Add(5 * time.Second)
	wantIDs(t, f, "a", "b") // not modified
	if seq := f.Current().Header.Sequence; seq != 2 {
		t.Errorf("sequence %d", seq)
	}
}

func TestFollowerEmptyUntilPublished(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	var logs bytes.Buffer
	c := &clock{}
	f := &Follower{Blobs: m, Build: build, Embedder: testEmbedder, Dimensions: dims, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, nil...)
	matches, err := f.Match(ctx, &search.Query{Text: "x", Limit: 10})
	if err != nil || matches.Total != 0 {
		t.Errorf("match over nothing: %+v, %v", matches, err)
	}
	c.Add(settings.DefaultSnapshotPoll)
	wantIDs(t, f, nil...)
	if n := strings.Count(logs.String(), "nothing was published yet"); n != 1 {
		t.Errorf("warned %d times:\n%s", n, logs.String())
	}
	if err := newWriter(m).Publish(ctx, docs("a")); err != nil {
		t.Fatal(err)
	}
	c.Add(settings.DefaultSnapshotPoll)
	wantIDs(t, f, "a")
}

// publishRaw publishes data as snapshot seq, whatever it holds.
func publishRaw(t *testing.T, m *Memory, data []byte, p Pointer) {
	t.Helper()
	ctx := context.Background()
	obj, err := m.Put(ctx, SnapshotKey, bytes.NewReader(data), int64(len(data)), Condition{})
	if err != nil {
		t.Fatal(err)
	}
	_, cur, err := ReadPointer(ctx, m, "")
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	p.Key, p.Version, p.Bytes = SnapshotKey, obj.Version, int64(len(data))
	if _, err := writePointer(ctx, m, p, cur.ETag); err != nil {
		t.Fatal(err)
	}
}

func TestFollowerKeepsLastGoodOverCorrupt(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	if err := newWriter(m).Publish(ctx, docs("a", "b")); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	f := &Follower{Blobs: m, Build: build, Embedder: testEmbedder, Dimensions: dims, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	var good bytes.Buffer
	sum, err := encode(&good, Header{Embedder: testEmbedder, Dimensions: dims, Sequence: 2}, docs("c"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good.Bytes())
	flipped[len(flipped)/2] ^= 1
	truncated := good.Bytes()[:good.Len()-10]
	for name, data := range map[string][]byte{"flipped": flipped, "truncated": truncated} {
		logs.Reset()
		publishRaw(t, m, data, Pointer{Sequence: 2, Embedder: testEmbedder, Dimensions: dims, Documents: 1, Checksum: "sha256:" + sum})
		if err := f.Refresh(ctx); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: refresh: %v", name, err)
		}
		wantIDs(t, f, "a", "b")
		if st := f.Current(); st.Header.Sequence != 1 || st.Err != nil {
			t.Errorf("%s: in service %+v", name, st)
		}
		l := logs.String()
		if !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "sequence=2") || !strings.Contains(l, "key="+SnapshotKey) {
			t.Errorf("%s: logged %s", name, l)
		}
	}
	// A good snapshot heals it.
	if err := newWriter(m).Publish(ctx, docs("d")); err != nil {
		t.Fatal(err)
	}
	if err := f.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "d")
}

func TestFollowerRefusesAtInit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		publish func(m *Memory)
		is      error
		says    string
	}{
		{"other embedder", func(m *Memory) {
			w := &Writer{Blobs: m, Embedder: "other/8", Dimensions: 8, Logger: quiet}
			d := search.IndexDoc{Doc: search.Doc{ID: "a"}, Vector: vec(8, 0)}
			if err := w.Publish(ctx, []search.IndexDoc{d}); err != nil {
				t.Fatal(err)
			}
		}, ErrIncompatible, `embedder "other/8" (8 dimensions), this program embeds with "test-embedder/4"`},
		{"corrupt", func(m *Memory) {
			var b bytes.Buffer
			if err := Encode(&b, Header{Embedder: testEmbedder, Dimensions: dims, Sequence: 1}, docs("a")); err != nil {
				t.Fatal(err)
			}
			publishRaw(t, m, b.Bytes()[:b.Len()-1], Pointer{Sequence: 1, Embedder: testEmbedder, Dimensions: dims, Documents: 1})
		}, ErrCorrupt, "reindex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory()
			tc.publish(m)
			c := &clock{}
			f := newFollower(t, m, c) // Load succeeds
			_, err := searchIDs(t, f)
			if doclib.ErrorCode(err) != doclib.EUnavailable || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("search: %v (code %s)", err, doclib.ErrorCode(err))
			}
			if !strings.Contains(err.Error(), "reindex") {
				t.Errorf("%q does not say what cures it", err)
			}
			if _, err := f.Match(ctx, &search.Query{Limit: 1}); doclib.ErrorCode(err) != doclib.EUnavailable {
				t.Errorf("match: %v", err)
			}
			// A good snapshot, published later, heals it at the next check.
			if err := newWriter(m).Publish(ctx, docs("good")); err != nil {
				t.Fatal(err)
			}
			c.Add(settings.DefaultSnapshotPoll)
			wantIDs(t, f, "good")
		})
	}
}

// TestNoMixedIndex publishes snapshots of different documents while
// searches run: each search must see exactly the documents of one snapshot.
func TestNoMixedIndex(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	round := func(r int) []search.IndexDoc {
		var ids []string
		for i := range r%5 + 1 {
			ids = append(ids, fmt.Sprintf("r%03d-%d", r, i))
		}
		return docs(ids...)
	}
	if err := w.Publish(ctx, round(0)); err != nil {
		t.Fatal(err)
	}
	readers := []*Follower{}
	for range 2 {
		f := &Follower{Blobs: m, Build: build, Embedder: testEmbedder, Dimensions: dims, Every: time.Nanosecond, Logger: quiet}
		if err := f.Load(ctx); err != nil {
			t.Fatal(err)
		}
		readers = append(readers, f)
	}
	const rounds = 30
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		for r := 1; r <= rounds; r++ {
			if err := w.Publish(ctx, round(r)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var searches, seen atomic.Int64
	for i := range 4 {
		f := readers[i%len(readers)]
		wg.Go(func() {
			last := -1
			for !done.Load() {
				ids, err := searchIDs(t, f)
				if err != nil {
					t.Error(err)
					return
				}
				searches.Add(1)
				var r int
				if _, err := fmt.Sscanf(ids[0], "r%03d-", &r); err != nil {
					t.Error(err)
					return
				}
				want := make([]string, 0, 5)
				for _, d := range round(r) {
					want = append(want, d.ID)
				}
				if !slices.Equal(ids, want) {
					t.Errorf("a search saw %v, snapshot %d holds %v", ids, r, want)
					return
				}
				if r < last {
					t.Errorf("a search saw snapshot %d after %d", r, last)
				}
				if r != last {
					seen.Add(1)
				}
				last = r
			}
		})
	}
	wg.Wait()
	for _, f := range readers {
		if err := f.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if seq := f.Current().Header.Sequence; seq != rounds+1 {
			t.Errorf("sequence %d in service after %d publishes", seq, rounds+1)
		}
	}
	t.Logf("%d searches saw %d snapshot changes", searches.Load(), seen.Load())
}
