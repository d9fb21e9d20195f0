package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// faulty is Blobs whose ranged reads of segments fail, lie or hang as a
// test says, and are counted.
type faulty struct {
	Blobs
	mu     sync.Mutex
	fail   error                            // a ranged read of a segment fails with it
	lie    bool                             // a ranged read of a segment returns other bytes
	hang   bool                             // a ranged read of a segment waits for its context
	ranged atomic.Int64                     // ranged reads of segments
	hook   func(key string, opt GetOptions) // asked before each Get
}

func (f *faulty) Get(ctx context.Context, key string, opt GetOptions) (io.ReadCloser, Object, error) {
	f.mu.Lock()
	fail, lie, hang, hook := f.fail, f.lie, f.hang, f.hook
	f.mu.Unlock()
	if hook != nil {
		hook(key, opt)
	}
	cold := strings.HasPrefix(key, SegmentPrefix) && opt.Offset > 0
	if cold {
		f.ranged.Add(1)
		switch {
		case fail != nil:
			return nil, Object{}, fail
		case hang:
			<-ctx.Done()
			return nil, Object{}, ctx.Err()
		}
	}
	body, obj, err := f.Blobs.Get(ctx, key, opt)
	if err != nil || !cold || !lie {
		return body, obj, err
	}
	data, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		return nil, Object{}, err
	}
	data[len(data)/2] ^= 1
	return io.NopCloser(bytes.NewReader(data)), obj, nil
}

func (f *faulty) set(do func(f *faulty)) {
	f.mu.Lock()
	do(f)
	f.mu.Unlock()
}

// demoIndex publishes n demo documents embedded by the offline embedder
// (128 dimensions) in m, in segments of at most per documents, and returns
// the embedder, the libraries and the documents.
func demoIndex(t *testing.T, m Blobs, n, per int) (search.Embedder, []string, []search.IndexDoc) {
	t.Helper()
	ctx := context.Background()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: n}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs, e, err := localsearch.IndexDocs(ctx, d, h, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := &Writer{Blobs: m, Embedder: e, Logger: quiet, PublishDocuments: per}
	if err := w.Publish(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	return e, libs, docs
}

var openedQueries = []string{"reset password", "new starter laptop", "pasword resett", "quarterly close", "expense report", ""}

// answers are what a searcher over b answers to openedQueries, in every
// library and in the first.
func answers(t *testing.T, b search.Backend, e search.Embedder, libs []string) ([]string, error) {
	t.Helper()
	s := &search.Searcher{Backend: b, Embedder: search.Cached(e, 0), Rules: search.DefaultRules(e.ID())}
	var out []string
	for _, text := range openedQueries {
		for _, scope := range [][]string{libs, libs[:1]} {
			res, err := s.Search(context.Background(), search.Request{Text: text, Libraries: scope, Limit: 10})
			if err != nil {
				return nil, err
			}
			out = append(out, fmt.Sprintf("%+v", *res))
		}
	}
	return out, nil
}

// wholeAnswers are the answers of a follower that reads every segment of
// m whole.
func wholeAnswers(t *testing.T, m Blobs, e search.Embedder, libs []string) []string {
	t.Helper()
	whole := &Follower{Blobs: m, Embedder: e, Logger: quiet, ReadWholeBelow: 1 << 40}
	if err := whole.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := whole.Current(); st.Opened != 0 || st.Err != nil {
		t.Fatalf("read whole: %+v", st)
	}
	want, err := answers(t, whole, e, libs)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// TestFollowerOpensSegmentsByRange: a follower opens segments of format 3
// on by range, reading their hot parts at load (one ranged GET each) and
// nothing more until a query; it answers as a follower that reads them
// whole, before and after its prefetch (which begins after the first
// answer) has read every cold part; once the prefetch is done, queries
// read nothing.
func TestFollowerOpensSegmentsByRange(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	e, libs, _ := demoIndex(t, m, 900, 300)
	want := wholeAnswers(t, m, e, libs)

	fb := &faulty{Blobs: m}
	var gets atomic.Int64
	fb.hook = func(string, GetOptions) { gets.Add(1) }
	f := &Follower{Blobs: fb, Embedder: e, Logger: quiet, ReadWholeBelow: -1, NoPrefetch: true}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if st := f.Current(); st.Opened != 3 || st.HotBytes <= 0 || gets.Load() != 4 || fb.ranged.Load() != 0 {
		t.Fatalf("opened: %+v after %d GETs, %d of cold parts; want 3 segments opened by a GET each and the manifest's", st, gets.Load(), fb.ranged.Load())
	}
	got, err := answers(t, f, e, libs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("opened by range, cold, the follower answers\n%v\nread whole\n%v", got, want)
	}
	if fb.ranged.Load() == 0 {
		t.Fatal("the queries read no cold part")
	}

	// With the prefetch: nothing read before the first answer, then every
	// cold part read, then no read.
	f = &Follower{Blobs: fb, Embedder: e, Logger: quiet, ReadWholeBelow: -1}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if st := f.Cache.Stats(); st.Reads != 0 {
		t.Fatalf("before any search, the prefetch read %d ranges", st.Reads)
	}
	if got, err = answers(t, f, e, libs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("with the prefetch, the follower answers\n%v (%v)\nread whole\n%v", got, err, want)
	}
	<-f.Prefetched()
	before := fb.ranged.Load()
	if got, err = answers(t, f, e, libs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("prefetched, the follower answers\n%v (%v)\nread whole\n%v", got, err, want)
	}
	if n := fb.ranged.Load() - before; n != 0 {
		t.Errorf("after the prefetch, queries read %d ranges", n)
	}
	man, _, _ := ReadManifest(ctx, m, "")
	var cold int64
	for _, s := range man.Segments {
		cold += s.Bytes - s.HotBytes - 4
	}
	if held := f.Cache.Stats().Held; held != cold {
		t.Errorf("the prefetch holds %d bytes of %d", held, cold)
	}
}

// TestFollowerColdReadFaults: a cold read that fails, returns other bytes
// than the hot part's CRCs promise, or never answers within the request's
// deadline fails the search with a 503, never a wrong answer; healed, the
// same search answers as before. The hot part is checked against the
// manifest: one that is not what it says leaves the last good index in
// service.
func TestFollowerColdReadFaults(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	e, libs, _ := demoIndex(t, m, 600, 300)
	fb := &faulty{Blobs: m}
	f := &Follower{Blobs: fb, Embedder: e, Logger: quiet, ReadWholeBelow: -1, NoPrefetch: true, CacheBytes: 1}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	want, err := answers(t, f, e, libs)
	if err != nil {
		t.Fatal(err)
	}
	s := &search.Searcher{Backend: f, Embedder: search.Cached(e, 0), Rules: search.DefaultRules(e.ID())}
	for name, fault := range map[string]func(*faulty){
		"fails":         func(f *faulty) { f.fail = errors.New("connection reset by peer") },
		"other bytes":   func(f *faulty) { f.lie = true },
		"never answers": func(f *faulty) { f.hang = true },
	} {
		fb.set(fault)
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond) // the request's deadline, for the one that hangs
		res, err := s.Search(short, search.Request{Text: "reset password", Libraries: libs, Limit: 10})
		cancel()
		if doclib.ErrorCode(err) != doclib.EUnavailable {
			t.Errorf("a cold read that %s: %+v, %v; want a 503", name, res, err)
		}
		fb.set(func(f *faulty) { f.fail, f.lie, f.hang = nil, false, false })
		if got, err := answers(t, f, e, libs); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("healed after a read that %s: %v", name, err)
		}
	}

	// A hot part that is not what the manifest says.
	man, obj, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	man.Sequence++
	man.Segments[0].HotCRC32C = "00000000"
	if _, err := writeManifest(ctx, m, man, obj.ETag); err != nil {
		t.Fatal(err)
	}
	if err := f.Refresh(ctx); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a hot part of another CRC: %v, want ErrCorrupt", err)
	}
	if st := f.Current(); st.Err != nil || st.Sequence != man.Sequence-1 {
		t.Errorf("in service after a bad hot part: %+v", st)
	}
}

// TestFollowerReadsDeletedSegments: a segment the writer deletes (15
// minutes after a newer manifest dropped it) while an instance still
// serves it is read from the version the instance opened; once even that
// is gone (the lifecycle's day), a search reads the manifest again and
// answers from the segments it names.
func TestFollowerReadsDeletedSegments(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	e, libs, docs := demoIndex(t, m, 600, 300)
	fb := &faulty{Blobs: m}
	c := &clock{t: time.Unix(0, 0)}
	f := &Follower{Blobs: fb, Embedder: e, Logger: quiet, Every: time.Hour, Now: c.Now, ReadWholeBelow: -1, NoPrefetch: true, CacheBytes: 1}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	want, err := answers(t, f, e, libs)
	if err != nil {
		t.Fatal(err)
	}
	old := m.Keys(SegmentPrefix)
	// A reindex of the same documents replaces every segment; its writer
	// deletes the old ones.
	if err := (&Writer{Blobs: m, Embedder: e, Logger: quiet, PublishDocuments: 200}).Publish(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, key := range old {
		if err := m.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := answers(t, f, e, libs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("deleted, read by version: %v", err)
	}
	if st := f.Current(); st.Sequence != 1 {
		t.Fatalf("the follower moved to %d before Every", st.Sequence)
	}
	// The versions expire.
	fb.set(func(b *faulty) {
		b.hook = nil
		b.Blobs = expired{m, old}
	})
	if got, err := answers(t, f, e, libs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("expired: %v", err)
	}
	if st := f.Current(); st.Sequence != 2 || st.Segments != 3 {
		t.Fatalf("after a segment was gone, in service: %+v; want the reindex's 3 segments", st)
	}
}

// expired is Blobs where keys have no versions left.
type expired struct {
	*Memory
	keys []string
}

func (x expired) Get(ctx context.Context, key string, opt GetOptions) (io.ReadCloser, Object, error) {
	for _, k := range x.keys {
		if k == key {
			return nil, Object{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
		}
	}
	return x.Memory.Get(ctx, key, opt)
}

// TestFollowerCacheBudget: with a budget below the cold parts, the
// prefetch fills it and stops; the queries read what it lacks, dropping
// blocks to stay within it, and answer as ever.
func TestFollowerCacheBudget(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	e, libs, _ := demoIndex(t, m, 900, 300)
	want := wholeAnswers(t, m, e, libs)
	const budget = 256 << 10
	f := &Follower{Blobs: m, Embedder: e, Logger: quiet, ReadWholeBelow: -1, CacheBytes: budget}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := answers(t, f, e, libs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("within a budget: %v", err)
	}
	<-f.Prefetched() // begun after the first answer
	if held := f.Cache.Stats().Held; held > budget || held < budget/2 {
		t.Errorf("the prefetch holds %d bytes within a budget of %d", held, budget)
	}
	if got, err := answers(t, f, e, libs); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("within a budget: %v", err)
	}
	if st := f.Cache.Stats(); st.Held > budget || st.Dropped == 0 {
		t.Errorf("after the queries: %+v; want within %d, and blocks dropped", st, budget)
	}
}

// TestCacheBudget: what the cache of cold parts may hold, by the rule
// cacheBudget states, at the memory sizes docs/search.md and infra/README.md
// give: a Go memory limit at nine tenths of the function's memory lets the
// cache hold three quarters of that limit (less the hot parts and the
// reserve) rather than half the memory.
func TestCacheBudget(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		cache, memory, limit, hot, want int64
	}{
		{cache: 300 * mb, memory: 2048 * mb, hot: 400 * mb, want: 300 * mb}, // set: as set
		{want: 0}, // outside Lambda: no bound
		{memory: 2048 * mb, limit: math.MaxInt64, hot: 40 * mb, want: 1024*mb - 40*mb - cacheReserve}, // no Go limit: half
		{memory: 2048 * mb, limit: 2048 * mb / 10 * 9, hot: 40 * mb, want: 2048*mb/10*9/4*3 - 40*mb - cacheReserve},
		{memory: 6144 * mb, limit: 6144 * mb / 10 * 9, hot: 405 * mb, want: 6144*mb/10*9/4*3 - 405*mb - cacheReserve},
		{memory: 512 * mb, limit: 512 * mb / 10 * 9, hot: 400 * mb, want: 64 * mb},                // never under 64 MB
		{memory: 2048 * mb, limit: 4096 * mb, hot: 40 * mb, want: 1024*mb - 40*mb - cacheReserve}, // a limit over the memory: half
	} {
		if got := cacheBudget(c.cache, c.memory, c.limit, c.hot); got != c.want {
			t.Errorf("cacheBudget(%d, %d, %d, %d) = %d MB, want %d MB", c.cache/mb, c.memory/mb, c.limit/mb, c.hot/mb, got/mb, c.want/mb)
		}
	}
	// A million documents (3.6 GB, 405 MB of hot parts, docs/performance.md)
	// keep every cold part at 6,144 MB, not at 3,008.
	cold := int64(3600-405) * mb
	if b := cacheBudget(0, 6144*mb, 6144*mb/10*9, 405*mb); b < cold {
		t.Errorf("6,144 MB holds %d MB of the cold parts, want all %d", b/mb, cold/mb)
	}
	if b := cacheBudget(0, 3008*mb, 3008*mb/10*9, 405*mb); b >= cold {
		t.Errorf("3,008 MB holds %d MB of the cold parts, which cannot fit", b/mb)
	}
}

// TestGCPercent: the collector's percentage leaves about the headroom
// between collections, whatever the index holds, within Go's 1 to 100.
func TestGCPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		held, headroom int64
		want           int
	}{
		{held: 0, headroom: 128 * mb, want: 100},
		{held: 128 * mb, headroom: 128 * mb, want: 50},
		{held: 374 * mb, headroom: 128 * mb, want: 26},    // 100,000 documents, all held
		{held: 3745 * mb, headroom: 128 * mb, want: 4},    // a million
		{held: 500_000 * mb, headroom: 128 * mb, want: 1}, // never 0, which would collect without end
		{held: 374 * mb, headroom: 0, want: 100},          // off
	} {
		got := gcPercent(c.held, c.headroom)
		if got != c.want {
			t.Errorf("gcPercent(%d MB, %d MB) = %d, want %d", c.held/mb, c.headroom/mb, got, c.want)
		}
		if c.headroom > 0 && c.held > 0 && c.want > 1 {
			// What a heap of held and headroom bytes may grow by.
			room := float64(c.held+c.headroom) * float64(got) / 100
			if room < float64(c.headroom) || room > 1.05*float64(c.headroom)+float64(c.held+c.headroom)/100 {
				t.Errorf("held %d MB: GOGC %d lets the heap grow %.0f MB, want about %d", c.held/mb, got, room/mb, c.headroom/mb)
			}
		}
	}
}

// gcPercentNow is the collector's percentage in force.
func gcPercentNow() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestFollowerSizesTheCollector: a follower given a headroom sets GOGC
// from what it holds, the hot parts at load and the blocks as queries and
// the prefetch read them; without one it leaves GOGC alone.
func TestFollowerSizesTheCollector(t *testing.T) {
	ctx := context.Background()
	defer debug.SetGCPercent(gcPercentNow())
	m := NewMemory()
	e, libs, _ := demoIndex(t, m, 900, 300)

	debug.SetGCPercent(77)
	f := &Follower{Blobs: m, Embedder: e, Logger: quiet, ReadWholeBelow: -1}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := answers(t, f, e, libs); err != nil {
		t.Fatal(err)
	}
	if p := gcPercentNow(); p != 77 {
		t.Fatalf("without a headroom, GOGC became %d", p)
	}

	const headroom = 64 << 10
	f = &Follower{Blobs: m, Embedder: e, Logger: quiet, ReadWholeBelow: -1, GCHeadroom: headroom}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	hot := f.Current().HotBytes
	if p, want := gcPercentNow(), gcPercent(hot, headroom); p != want || want == 100 {
		t.Fatalf("at load, holding %d bytes of hot parts: GOGC %d, want %d", hot, p, want)
	}
	if _, err := answers(t, f, e, libs); err != nil {
		t.Fatal(err)
	}
	<-f.Prefetched()
	held := hot + f.Cache.Stats().Held
	if p, want := gcPercentNow(), gcPercent(held, headroom); p != want || held < hot+headroom {
		t.Errorf("holding %d bytes, hot parts and prefetched blocks: GOGC %d, want %d", held, p, want)
	}
}
