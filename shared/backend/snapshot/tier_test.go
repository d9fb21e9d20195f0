package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedtest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

const dims = 4

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var testEmb = embedtest.Named{Name: testEmbedder, Dims: dims}

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
	return &Writer{Blobs: m, Embedder: testEmb, Logger: quiet}
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
	f := &Follower{Blobs: m, Embedder: testEmb, Every: 5 * time.Second, Now: c.Now, Logger: quiet}
	if err := f.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

// searchIDs returns the IDs of the documents f lists, sorted.
func searchIDs(t *testing.T, f *Follower) ([]string, error) {
	t.Helper()
	hits, total, err := f.MostActive(context.Background(), &search.Query{Vector: make([]float32, dims), Libraries: []string{"lib"}, Limit: 100_000}, search.Filter{})
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
	slices.Sort(ids)
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

func TestWriterPublishesOneSegmentPerCommit(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	if err := w.Commit(ctx); err != nil { // nothing to publish
		t.Fatal(err)
	}
	if n := m.Versions(ManifestKey); n != 0 {
		t.Fatalf("a clean commit wrote the manifest %d times", n)
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
	if s, p := len(segmentKeys(m)), m.Versions(ManifestKey); s != 1 || p != 1 {
		t.Errorf("one commit wrote %d segments and %d manifest versions, want 1 and 1", s, p)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if len(segmentKeys(m)) != 1 {
		t.Error("a commit with nothing new published again")
	}
	f := newFollower(t, m, &clock{})
	wantIDs(t, f, "a", "b")
	if st := f.Current(); st.Sequence != 1 || st.Documents != 2 || st.Segments != 1 || st.Err != nil {
		t.Errorf("in service: %+v", st)
	}

	// A new writer (a new indexer instance) starts from what is published,
	// and a change adds a segment: nothing published is written again.
	w2 := newWriter(m)
	if err := w2.Upsert(ctx, docs("d")); err != nil {
		t.Fatal(err)
	}
	if err := w2.Delete(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := w2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if s, p := len(segmentKeys(m)), m.Versions(ManifestKey); s != 2 || p != 2 {
		t.Errorf("two commits wrote %d segments and %d manifest versions, want 2 and 2", s, p)
	}
	if err := f.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "b", "d")
	if st := f.Current(); st.Sequence != 2 || st.Segments != 2 {
		t.Errorf("in service: %+v", st)
	}
	man, _, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Segments) != 2 || man.Segments[1].Documents != 1 || man.Segments[1].Deleted != 1 || man.Documents != 3 ||
		man.Embedder != testEmbedder || man.Dimensions != dims || man.Format != ManifestFormat || len(man.Segments[1].CRC32C) != 8 {
		t.Errorf("manifest %+v", man)
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
	if seq := f.Current().Sequence; seq != 3 {
		t.Errorf("sequence %d after three publishes", seq)
	}
}

// TestFailedPutLeavesLastGoodInService fails the segment's write, then the
// manifest's (the indexer crashing between the two): the index in service
// stays, and the batch delivered again is published whole.
func TestFailedPutLeavesLastGoodInService(t *testing.T) {
	ctx := context.Background()
	for _, which := range []string{SegmentPrefix, ManifestKey} {
		t.Run(which, func(t *testing.T) {
			m := NewMemory()
			w := newWriter(m)
			if err := w.Publish(ctx, docs("a")); err != nil {
				t.Fatal(err)
			}
			f := newFollower(t, m, &clock{})
			broken := errors.New("the store is down")
			m.SetFailPut(func(k string) error {
				if strings.HasPrefix(k, which) {
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
			if n := m.Versions(ManifestKey); n != 1 {
				t.Errorf("the manifest has %d versions after a failed commit", n)
			}
			if err := f.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			wantIDs(t, f, "a")
			if seq := f.Current().Sequence; seq != 1 {
				t.Errorf("sequence %d in service", seq)
			}
			// The writer forgot the failed batch; its redelivery publishes it.
			if err := w.Commit(ctx); err != nil || m.Versions(ManifestKey) != 1 {
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
			if seq := f.Current().Sequence; seq != 2 {
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
	otherEmb := embedtest.Named{Name: "other/4", Dims: dims}
	other := &Writer{Blobs: m, Embedder: otherEmb, Logger: quiet}
	var segmentGets atomic.Int32
	m.SetFailGet(func(key string, _ GetOptions) error {
		if strings.HasPrefix(key, SegmentPrefix) {
			segmentGets.Add(1)
		}
		return nil
	})
	for range 2 {
		err := other.Upsert(ctx, []search.IndexDoc{doc("b")})
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), `"test-embedder/4"`) || !strings.Contains(err.Error(), "reindex") {
			t.Fatalf("upsert over another embedder's manifest: %v", err)
		}
		if err := other.Delete(ctx, []string{"a"}); !errors.Is(err, ErrIncompatible) {
			t.Fatalf("delete over another embedder's manifest: %v", err)
		}
	}
	if n := segmentGets.Load(); n != 0 {
		t.Errorf("the refused segments were read %d times; the manifest says enough", n)
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
	f := &Follower{Blobs: m, Embedder: otherEmb, Logger: quiet}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	wantIDs(t, f, "x", "y", "z")
	if seq := f.Current().Sequence; seq != 3 {
		t.Errorf("sequence %d after three publishes", seq)
	}
}

// TestFollowerSeesChangeAfterEvery checks the manifest at most once per
// Every, and reads only the segments it lacks.
func TestFollowerSeesChangeAfterEvery(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	if err := w.Publish(ctx, docs("a")); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f := newFollower(t, m, c)
	var manifestGets, segmentGets atomic.Int32
	m.SetFailGet(func(key string, _ GetOptions) error {
		switch {
		case key == ManifestKey:
			manifestGets.Add(1)
		case strings.HasPrefix(key, SegmentPrefix):
			segmentGets.Add(1)
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
	if n := manifestGets.Load(); n != 0 {
		t.Errorf("%d manifest reads before Every passed", n)
	}
	c.Add(time.Second)
	wantIDs(t, f, "a", "b")
	wantIDs(t, f, "a", "b")
	if n, s := manifestGets.Load(), segmentGets.Load(); n != 1 || s != 1 {
		t.Errorf("%d manifest reads in one interval and %d segment reads for one new segment", n, s)
	}
	c.Add(5 * time.Second)
	wantIDs(t, f, "a", "b") // not modified
	if st := f.Current(); st.Sequence != 2 || st.Segments != 2 {
		t.Errorf("in service: %+v", st)
	}
}

func TestFollowerEmptyUntilPublished(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	var logs bytes.Buffer
	c := &clock{}
	f := &Follower{Blobs: m, Embedder: testEmb, Now: c.Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
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

// addRawSegment stores data as a segment and publishes a manifest that adds
// ref (its key and size set from data) to the one published.
func addRawSegment(t *testing.T, m *Memory, data []byte, ref SegmentRef, edit func(*Manifest)) {
	t.Helper()
	ctx := context.Background()
	ref.Key = fmt.Sprintf("%sraw-%d.seg", SegmentPrefix, rand.Int())
	if ref.Bytes == 0 {
		ref.Bytes = int64(len(data))
	}
	if _, err := m.Put(ctx, ref.Key, bytes.NewReader(data), int64(len(data)), Condition{}); err != nil {
		t.Fatal(err)
	}
	man, obj, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	man.Sequence++
	man.Segments = append(man.Segments, ref)
	if edit != nil {
		edit(&man)
	}
	if _, err := writeManifest(ctx, m, man, obj.ETag); err != nil {
		t.Fatal(err)
	}
}

func segmentFile(t *testing.T, e search.Embedder, ds []search.IndexDoc) ([]byte, SegmentRef) {
	t.Helper()
	x, err := localsearch.FromDocs(context.Background(), ds, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_, sum, err := localsearch.WriteSegment(&b, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), SegmentRef{CRC32C: fmt.Sprintf("%08x", sum), Documents: len(ds)}
}

// TestFollowerKeepsLastGoodOverBadSegments publishes manifests that name a
// segment that is flipped, truncated, missing, of another embedder, or whose
// checksum is not the manifest's, and a manifest of another format: each
// leaves the last good index in service, logged, and a good publish heals.
func TestFollowerKeepsLastGoodOverBadSegments(t *testing.T) {
	ctx := context.Background()
	good, ref := segmentFile(t, testEmb, docs("c"))
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	other, otherRef := segmentFile(t, embedtest.Named{Name: "other/4", Dims: dims}, docs("c"))
	for _, tc := range []struct {
		name string
		data []byte
		ref  SegmentRef
		edit func(*Manifest)
		is   error
	}{
		{"flipped", flipped, ref, nil, ErrCorrupt},
		{"truncated", good[:len(good)-10], SegmentRef{CRC32C: ref.CRC32C, Documents: 1, Bytes: int64(len(good))}, nil, ErrCorrupt},
		{"missing", good, ref, func(m *Manifest) { m.Segments[len(m.Segments)-1].Key += ".gone" }, ErrNotFound},
		{"another embedder's", other, otherRef, nil, ErrIncompatible},
		{"another checksum", good, SegmentRef{CRC32C: "00000000", Documents: 1}, nil, ErrCorrupt},
		{"another manifest format", good, ref, func(m *Manifest) { m.Format = 2 }, ErrIncompatible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory()
			if err := newWriter(m).Publish(ctx, docs("a", "b")); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			f := &Follower{Blobs: m, Embedder: testEmb, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if err := f.Load(ctx); err != nil {
				t.Fatal(err)
			}
			addRawSegment(t, m, tc.data, tc.ref, tc.edit)
			if err := f.Refresh(ctx); !errors.Is(err, tc.is) {
				t.Errorf("refresh: %v, want %v", err, tc.is)
			}
			wantIDs(t, f, "a", "b")
			if st := f.Current(); st.Sequence != 1 || st.Err != nil {
				t.Errorf("in service %+v", st)
			}
			if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "sequence=2") {
				t.Errorf("logged %s", l)
			}
			// A good publish heals it.
			if err := newWriter(m).Publish(ctx, docs("d")); err != nil {
				t.Fatal(err)
			}
			if err := f.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			wantIDs(t, f, "d")
		})
	}
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
			w := &Writer{Blobs: m, Embedder: embedtest.Named{Name: "other/8", Dims: 8}, Logger: quiet}
			d := search.IndexDoc{Doc: search.Doc{ID: "a", LibraryID: "lib"}, Vector: vec(8, 0)}
			if err := w.Publish(ctx, []search.IndexDoc{d}); err != nil {
				t.Fatal(err)
			}
		}, ErrIncompatible, `embedder "other/8" (8 dimensions), this program embeds with "test-embedder/4"`},
		{"corrupt", func(m *Memory) {
			if err := newWriter(m).Publish(ctx, docs("a")); err != nil {
				t.Fatal(err)
			}
			key := segmentKeys(m)[0]
			body, _, err := m.Get(ctx, key, GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(body)
			data[len(data)-1] ^= 1
			if _, err := m.Put(ctx, key, bytes.NewReader(data), int64(len(data)), Condition{}); err != nil {
				t.Fatal(err)
			}
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
			// A good index, published later, heals it at the next check.
			if err := newWriter(m).Publish(ctx, docs("good")); err != nil {
				t.Fatal(err)
			}
			c.Add(settings.DefaultSnapshotPoll)
			wantIDs(t, f, "good")
		})
	}
}

// TestNoMixedIndex publishes indexes of different documents while searches
// run: each search must see exactly the documents of one manifest.
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
		f := &Follower{Blobs: m, Embedder: testEmb, Every: time.Nanosecond, Logger: quiet}
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
			// Half the rounds replace everything, half delete the last
			// round's documents and add this one's as a segment.
			if r%2 == 0 {
				if err := w.Publish(ctx, round(r)); err != nil {
					t.Error(err)
					return
				}
				continue
			}
			var gone []string
			for _, d := range round(r - 1) {
				gone = append(gone, d.ID)
			}
			if err := w.Delete(ctx, gone); err != nil {
				t.Error(err)
				return
			}
			if err := w.Upsert(ctx, round(r)); err != nil {
				t.Error(err)
				return
			}
			if err := w.Commit(ctx); err != nil {
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
					t.Errorf("a search saw %v, round %d holds %v", ids, r, want)
					return
				}
				if r < last {
					t.Errorf("a search saw round %d after %d", r, last)
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
		if seq := f.Current().Sequence; seq != rounds+1 {
			t.Errorf("sequence %d in service after %d publishes", seq, rounds+1)
		}
	}
	t.Logf("%d searches saw %d index changes", searches.Load(), seen.Load())
}

// TestPublishWritesBoundedSegments: a whole publish writes segments of at
// most PublishDocuments documents, by ID, named by one manifest, that a
// follower reads (several at a time) as one index; a later publish retires
// them all.
func TestPublishWritesBoundedSegments(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	w.PublishDocuments = 3
	var ids []string
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("doc_%02d", 9-i)) // given out of order
	}
	if err := w.Publish(ctx, docs(ids...)); err != nil {
		t.Fatal(err)
	}
	man, _, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for _, s := range man.Segments {
		counts = append(counts, s.Documents)
	}
	if !slices.Equal(counts, []int{3, 3, 3, 1}) || man.Documents != 10 {
		t.Fatalf("segments of %v documents, %d in all; want 3, 3, 3, 1 and 10", counts, man.Documents)
	}
	f := newFollower(t, m, &clock{t: time.Unix(0, 0)})
	slices.Sort(ids)
	wantIDs(t, f, ids...)
	if st := f.Current(); st.Segments != 4 || st.Documents != 10 {
		t.Fatalf("the follower holds %+v; want 4 segments of 10 documents", st)
	}
	// The first segment holds the first IDs.
	sg, err := readSegment(ctx, m, man.Segments[0], testEmb)
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := sg.x.MostActive(ctx, &search.Query{Vector: make([]float32, dims), Libraries: []string{"lib"}}, search.Filter{}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range first {
		got = append(got, c.Doc.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"doc_00", "doc_01", "doc_02"}) {
		t.Errorf("the first segment holds %v", got)
	}
	if err := w.Publish(ctx, docs("doc_a")); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := ReadManifest(ctx, m, ""); len(again.Segments) != 1 || len(again.Retired) != 4 {
		t.Errorf("after a second publish: %d segments, %d retired; want 1 and 4", len(again.Segments), len(again.Retired))
	}
}

// TestUpgradeFromFormat1Segments: a bucket written before vectors were
// quantized has a manifest of segment format 1, naming segments of float32
// vectors (../localsearch/testdata/segment-v1.seg: 20 documents of the demo
// generator, offline hashing embedder). A follower serves it as it is; the
// writer's next batch publishes a manifest of format 2 beside it.
func TestUpgradeFromFormat1Segments(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("../localsearch/testdata/segment-v1.seg")
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemory()
	ref := SegmentRef{Key: SegmentPrefix + "000000000001-0badf00d.seg", Bytes: int64(len(data)),
		CRC32C: fmt.Sprintf("%08x", binary.LittleEndian.Uint32(data[len(data)-4:])), Documents: 20, Deleted: 1}
	if _, err := m.Put(ctx, ref.Key, bytes.NewReader(data), ref.Bytes, Condition{}); err != nil {
		t.Fatal(err)
	}
	old := Manifest{Format: ManifestFormat, Sequence: 1, Embedder: h.ID(), Dimensions: h.Dimensions(), SegmentFormat: 1,
		Documents: 20, Segments: []SegmentRef{ref}}
	if _, err := writeManifest(ctx, m, old, ""); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Unix(0, 0)}
	f := &Follower{Blobs: m, Embedder: h, Every: 5 * time.Second, Now: c.Now, Logger: quiet}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if st := f.Current(); st.Documents != 20 || st.Err != nil {
		t.Fatalf("the follower serves %+v; want the 20 documents of the format 1 segment", st)
	}

	w := &Writer{Blobs: m, Embedder: h, Logger: quiet}
	v := make([]float32, h.Dimensions())
	v[0] = 1
	if err := w.Upsert(ctx, []search.IndexDoc{{Doc: search.Doc{ID: "doc_new", LibraryID: "lib_new"}, Title: "a new document", Vector: v}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	man, _, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	if man.SegmentFormat != localsearch.SegmentFormat || len(man.Segments) != 2 || man.Segments[0] != ref {
		t.Fatalf("after a batch the manifest is %+v; want format %d, the format 1 segment and the batch's", man, localsearch.SegmentFormat)
	}
	c.Add(time.Minute)
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if st := f.Current(); st.Documents != 21 || st.Err != nil {
		t.Fatalf("the follower serves %+v; want 21 documents", st)
	}
}
