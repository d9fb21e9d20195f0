package localsearch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
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

// source is a segment file read by range, as a bucket serves it, with the
// faults a test asks for.
type source struct {
	data  []byte
	reads atomic.Int64
	mu    sync.Mutex
	fault func(off, n int64) error  // asked before each read
	lie   func(off int64, b []byte) // may change what a read returns
}

func (s *source) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	s.reads.Add(1)
	s.mu.Lock()
	fault, lie := s.fault, s.lie
	s.mu.Unlock()
	if fault != nil {
		if err := fault(off, n); err != nil {
			return nil, err
		}
	}
	if off < 0 || off >= int64(len(s.data)) {
		return nil, errors.New("a range past the end")
	}
	b := bytes.Clone(s.data[off:min(off+n, int64(len(s.data)))])
	if lie != nil {
		lie(off, b)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (s *source) set(fault func(off, n int64) error, lie func(off int64, b []byte)) {
	s.mu.Lock()
	s.fault, s.lie = fault, lie
	s.mu.Unlock()
}

// opened is a segment file opened by range.
type opened struct {
	x       *localsearch.Index
	deleted []string
	src     *source
}

// openSegment writes x as a segment of blocks of block bytes and opens it
// by range, its cold part kept in cache.
func openSegment(t testing.TB, x *localsearch.Index, deleted []string, block int, cache *localsearch.Cache) opened {
	t.Helper()
	var buf bytes.Buffer
	info, err := localsearch.WriteSegmentBlocks(&buf, x, deleted, block)
	if err != nil {
		t.Fatal(err)
	}
	src := &source{data: buf.Bytes()}
	hot := src.data[:info.HotBytes]
	if crc32.Checksum(hot, crc32.MakeTable(crc32.Castagnoli)) != info.HotCRC {
		t.Fatal("the hot part does not sum to its CRC")
	}
	y, del, err := localsearch.OpenSegment(hot, info.Bytes, x.Embedder(), src, cache)
	if err != nil {
		t.Fatal(err)
	}
	return opened{y, del, src}
}

// lazySegments opens one segment per batch of h by range, in cache.
func lazySegments(t testing.TB, h history, e search.Embedder, block int, cache *localsearch.Cache) (*localsearch.Segments, []opened) {
	t.Helper()
	s := localsearch.NewSegments(e)
	var all []opened
	for _, b := range h.batches {
		x, err := localsearch.FromDocs(context.Background(), b.docs, e, localsearch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := openSegment(t, x, b.deleted, block, cache)
		if s, err = s.With(o.x, o.deleted); err != nil {
			t.Fatal(err)
		}
		all = append(all, o)
	}
	return s, all
}

// demoHistory is a random history of n demo documents in batches,
// embedded by the offline embedder, with the generator seeded by seed.
func demoHistory(t testing.TB, n int, seed uint64, batches int) (*doclib.DataSet, search.Embedder, history, *rand.Rand) {
	t.Helper()
	d, h := hashedData(t, n)
	e := &memoEmbedder{Embedder: h, m: map[string][]float32{}}
	rng := rand.New(rand.NewPCG(5, seed))
	return d, e, newHistory(rng, indexDocs(t, d, e), batches), rng
}

// TestSegmentsOpenedByRangeAnswerAsOneIndex is TestSegmentsAnswerAsOneIndex
// over segments opened by range, their codes in clusters of 16 (not in the
// documents' order), with a cache that keeps nothing (every
// query reads what it needs), one that keeps about half of what they hold
// (blocks dropped as queries read others), and one the prefetch filled:
// the same candidates, evidence and responses as one index of the live
// documents.
func TestSegmentsOpenedByRangeAnswerAsOneIndex(t *testing.T) {
	defer localsearch.SetClusterSize(16)() // codes in slots of their own
	ctx := context.Background()
	d, e, hist, rng := demoHistory(t, 1200, 9, 6)
	one, err := localsearch.FromDocs(ctx, hist.final, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cold int64
	for _, c := range []struct {
		name   string
		budget func() int64
		warm   bool
	}{
		{"cold", func() int64 { return 1 }, false},
		{"half-warm", func() int64 { return cold / 2 }, false},
		{"warm", func() int64 { return 0 }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := localsearch.NewCache(c.budget())
			segs, all := lazySegments(t, hist, e, 4096, cache)
			if cold == 0 {
				for _, o := range all {
					cold += int64(len(o.src.data))
				}
			}
			if c.warm {
				var xs []*localsearch.Index
				for _, o := range all {
					xs = append(xs, o.x)
				}
				if err := cache.Prefetch(ctx, xs); err != nil {
					t.Fatal(err)
				}
				before := cache.Stats().Reads
				compareRetrievers(t, d, e, one, segs, rng)
				if st := cache.Stats(); st.Reads != before || st.Rounds != 0 {
					t.Errorf("after the prefetch, queries read %d times in %d rounds", st.Reads-before, st.Rounds)
				}
				return
			}
			compareRetrievers(t, d, e, one, segs, rng)
			st := cache.Stats()
			if st.Rounds == 0 || c.name == "half-warm" && st.Dropped == 0 {
				t.Errorf("%+v: queries read nothing, or a cache of half the segments dropped nothing", st)
			}
			t.Logf("%+v", st)
		})
	}
}

// TestColdQueriesReadInFewRounds runs searches (words, typos, meaning, a
// part of the libraries; their fallback to the most active when nothing
// matches) each on a cold cache, over segments with dead documents: a
// search reads in at most four rounds (the terms' postings and the
// screen's codes; the best matches' words; the feedback terms' postings;
// the page's codes), and a list of the most active in one (none when its
// page is empty).
func TestColdQueriesReadInFewRounds(t *testing.T) {
	ctx := context.Background()
	d, e, hist, _ := demoHistory(t, 1500, 7, 4)
	cache := localsearch.NewCache(1) // keeps nothing: every query is cold
	segs, _ := lazySegments(t, hist, e, 4096, cache)
	rules := search.DefaultRules(e.ID())
	searcher := &search.Searcher{Backend: search.Local{Retriever: segs}, Embedder: search.Cached(e, 0), Rules: rules}
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	texts := []string{"reset password", "how do I get paid back for a trip", "new starter laptop", "pasword resett",
		"quarterly close", "onboarding checklist", "security review of access keys", "zzyzx qwertyuiop", ""}
	most := 0
	for i, text := range texts {
		for j, scope := range [][]string{libs, libs[:1+len(libs)/2], libs[len(libs)-1:]} {
			filter := search.Filter{}
			if (i+j)%3 == 2 {
				filter.Category = d.Documents[i].Category
			}
			before := cache.Stats().Rounds
			res, err := searcher.Search(ctx, search.Request{Text: text, Libraries: scope, Filter: filter, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if res.LowConfidence {
				most++
			}
			if r := cache.Stats().Rounds - before; r > 4 {
				t.Errorf("%q in %d libraries: %d rounds of reads, want at most 4", text, len(scope), r)
			}
			before = cache.Stats().Rounds
			vs, _ := e.Embed(ctx, []string{text})
			if _, _, err := segs.MostActive(ctx, &search.Query{Vector: vs[0], Libraries: scope, Rules: &rules}, filter, 3, 10); err != nil {
				t.Fatal(err)
			}
			if r := cache.Stats().Rounds - before; r > 1 {
				t.Errorf("the most active in %d libraries: %d rounds of reads, want at most 1", len(scope), r)
			}
		}
	}
	if most == 0 {
		t.Error("no search fell back to the most active")
	}
}

// TestColdQueryReadsWhatItTouches: a cold search reads what its words and
// vectors touch, not what the index holds. The same documents, alone and
// among nine times as many that hold none of the query's words, whose
// vectors are far from the query's and that are the least active: each
// query reads about as many bytes of both.
func TestColdQueryReadsWhatItTouches(t *testing.T) {
	ctx := context.Background()
	e, err := offline.NewHashing(1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 300}))
	if err != nil {
		t.Fatal(err)
	}
	base := indexDocs(t, d, e)
	rng := rand.New(rand.NewPCG(3, 3))
	word := func() string {
		b := make([]byte, 12)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	more := slices.Clone(base)
	for i := range 9 * len(base) {
		v := make([]float32, 1024)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		search.Normalize(v)
		more = append(more, search.IndexDoc{Doc: search.Doc{ID: fmt.Sprintf("doc_zz%05d", i), LibraryID: base[i%len(base)].LibraryID, Category: "Filler"},
			Title: word() + " " + word(), Body: []string{word() + " " + word() + " " + word()}, Vector: v})
	}
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	rules := search.DefaultRules(e.ID())
	read := map[int][]int64{}
	for _, docs := range [][]search.IndexDoc{base, more} {
		x, err := localsearch.FromDocs(ctx, docs, e, localsearch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cache := localsearch.NewCache(1)
		o := openSegment(t, x, nil, 4096, cache)
		searcher := &search.Searcher{Backend: search.Local{Retriever: o.x}, Embedder: search.Cached(e, 0), Rules: rules}
		for _, text := range []string{"reset password", "new starter laptop", "pasword resett", "quarterly close", "expense report"} {
			before := cache.Stats().Bytes
			if _, err := searcher.Search(ctx, search.Request{Text: text, Libraries: libs, Limit: 10}); err != nil {
				t.Fatal(err)
			}
			read[len(docs)] = append(read[len(docs)], cache.Stats().Bytes-before)
		}
		t.Logf("%d documents, %d bytes: %v bytes read a search", len(docs), len(o.src.data), read[len(docs)])
	}
	for i, small := range read[len(base)] {
		// Block rounding: a range of the larger index may straddle one more
		// block, and runs merge over other gaps.
		if big := read[len(more)][i]; big > small+small/2+64<<10 {
			t.Errorf("query %d reads %d bytes of %d documents, %d of %d", i, small, len(base), big, len(more))
		}
	}
}

// coldFixture is an index of 400 demo documents embedded by the offline
// embedder, their libraries, and its answer to "reset password" in all of
// them.
func coldFixture(t *testing.T) (*localsearch.Index, search.Embedder, []string, *search.Response) {
	t.Helper()
	ctx := context.Background()
	d, h, x := hashedDemo(t, 400)
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	want, err := (&search.Searcher{Backend: search.Local{Retriever: x}, Embedder: search.Cached(h, 0), Rules: search.DefaultRules(h.ID())}).Search(ctx,
		search.Request{Text: "reset password", Libraries: libs, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return x, h, libs, want
}

// TestColdReadFailures: a read that fails, that returns other bytes than
// the hot part's CRCs promise, or that never answers, fails the query with
// doclib's unavailable error (503), never a wrong answer; once the fault
// is gone the same query answers as before; a fault on the first try only
// is tried again; and what the cache holds answers whatever the store does.
func TestColdReadFailures(t *testing.T) {
	ctx := context.Background()
	x, h, libs, want := coldFixture(t)
	rules := search.DefaultRules(h.ID())
	cache := localsearch.NewCache(1)
	o := openSegment(t, x, nil, 4096, cache)
	searcher := &search.Searcher{Backend: search.Local{Retriever: o.x}, Embedder: search.Cached(h, 0), Rules: rules}
	ask := func() (*search.Response, error) {
		return searcher.Search(ctx, search.Request{Text: "reset password", Libraries: libs, Limit: 10})
	}
	var tries atomic.Int64
	for _, c := range []struct {
		name  string
		fault func(off, n int64) error
		lie   func(off int64, b []byte)
	}{
		{"fails", func(int64, int64) error { return errors.New("connection reset") }, nil},
		{"other bytes", nil, func(_ int64, b []byte) { b[len(b)/2] ^= 1 }},
		{"never answers", func(int64, int64) error { select {} }, nil},
	} {
		if c.name == "never answers" {
			short, cancel := context.WithTimeout(ctx, 50*1000*1000) // the request's deadline
			o.src.set(func(int64, int64) error { <-short.Done(); return short.Err() }, nil)
			_, err := searcher.Search(short, search.Request{Text: "reset password", Libraries: libs, Limit: 10})
			cancel()
			if doclib.ErrorCode(err) != doclib.EUnavailable {
				t.Errorf("%s: %v (code %s), want unavailable", c.name, err, doclib.ErrorCode(err))
			}
			continue
		}
		o.src.set(c.fault, c.lie)
		if res, err := ask(); doclib.ErrorCode(err) != doclib.EUnavailable {
			t.Errorf("%s: %+v, %v (code %s); want unavailable", c.name, res, err, doclib.ErrorCode(err))
		}
		o.src.set(nil, nil)
		if got, err := ask(); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s, then healed: %+v %v; want %+v", c.name, got, err, want)
		}
	}
	// A fault on the first try of each read only.
	seen := sync.Map{}
	o.src.set(func(off, n int64) error {
		tries.Add(1)
		if _, again := seen.LoadOrStore(off, true); !again {
			return errors.New("a first try fails")
		}
		return nil
	}, nil)
	if got, err := ask(); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("with a first try failing: %+v %v", got, err)
	}
	// Held, it answers with the store down.
	full := localsearch.NewCache(0)
	o = openSegment(t, x, nil, 4096, full)
	if err := full.Prefetch(ctx, []*localsearch.Index{o.x}); err != nil {
		t.Fatal(err)
	}
	o.src.set(func(int64, int64) error { return errors.New("the store is down") }, nil)
	searcher = &search.Searcher{Backend: search.Local{Retriever: o.x}, Embedder: search.Cached(h, 0), Rules: rules}
	if got, err := ask(); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("held, with the store down: %+v %v", got, err)
	}
}

// TestColdQueryOutlivesAnAbandonedRead: a query that waits for blocks
// another reader is reading, and that reader gives up (the prefetch,
// stopped because a newer index came into service; a query whose request
// ended), reads them itself and answers, rather than fail with the other's
// cancellation: under merges, a search instance stops a prefetch at every
// new manifest, and the queries then in flight answered 503.
func TestColdQueryOutlivesAnAbandonedRead(t *testing.T) {
	ctx := context.Background()
	x, h, libs, want := coldFixture(t)
	req := search.Request{Text: "reset password", Libraries: libs, Limit: 10}
	rules := search.DefaultRules(h.ID())
	cache := localsearch.NewCache(0)
	o := openSegment(t, x, nil, 4096, cache)
	// The prefetch's read hangs until the prefetch is stopped; later reads
	// (the query's own) are answered.
	prefetchCtx, stopPrefetch := context.WithCancel(ctx)
	inFlight := make(chan struct{})
	var first atomic.Bool
	o.src.set(func(int64, int64) error {
		if first.CompareAndSwap(false, true) {
			close(inFlight)
			<-prefetchCtx.Done()
			return prefetchCtx.Err()
		}
		return nil
	}, nil)
	prefetched := make(chan error, 1)
	go func() { prefetched <- cache.Prefetch(prefetchCtx, []*localsearch.Index{o.x}) }()
	<-inFlight
	answered := make(chan error, 1)
	var got *search.Response
	go func() {
		var err error
		got, err = (&search.Searcher{Backend: search.Local{Retriever: o.x}, Embedder: search.Cached(h, 0), Rules: rules}).Search(ctx, req)
		answered <- err
	}()
	time.Sleep(100 * time.Millisecond) // the query waits for the prefetch's blocks
	stopPrefetch()
	if err := <-prefetched; !errors.Is(err, context.Canceled) {
		t.Errorf("the stopped prefetch returned %v", err)
	}
	if err := <-answered; err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the query that waited for the stopped prefetch's read: %+v, %v; want %+v", got, err, want)
	}
	if n := o.src.reads.Load(); n < 2 {
		t.Errorf("%d reads: the query did not read what the prefetch gave up", n)
	}
}

// TestQueriesDoNotWaitForThePrefetch: a query that needs blocks the
// prefetch is reading (its reads stalled) reads them itself, and answers
// as ever without waiting for the prefetch's reads.
func TestQueriesDoNotWaitForThePrefetch(t *testing.T) {
	ctx := context.Background()
	d, h, x := hashedDemo(t, 400)
	rules := search.DefaultRules(h.ID())
	req := search.Request{Text: "reset password", Libraries: libraries(d), Limit: 10}
	want, err := (&search.Searcher{Backend: search.Local{Retriever: x}, Embedder: search.Cached(h, 0), Rules: rules}).Search(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// A block size of the whole cold part: the prefetch's first read
	// holds every block.
	cache := localsearch.NewCache(0)
	o := openSegment(t, x, nil, 64<<20, cache)
	stalled, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	o.src.set(func(int64, int64) error {
		if first.CompareAndSwap(false, true) { // the prefetch's
			close(stalled)
			<-release
		}
		return nil
	}, nil)
	pctx, stop := context.WithCancel(ctx)
	prefetched := make(chan error, 1)
	go func() { prefetched <- cache.Prefetch(pctx, []*localsearch.Index{o.x}) }()
	<-stalled
	searcher := &search.Searcher{Backend: search.Local{Retriever: o.x}, Embedder: search.Cached(h, 0), Rules: rules}
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	got, err := searcher.Search(short, req)
	cancel()
	close(release)
	stop()
	<-prefetched
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("with the prefetch's read stalled: %+v %v; want %+v", got, err, want)
	}
	if n := o.src.reads.Load(); n < 2 {
		t.Errorf("%d reads: the query read nothing of its own", n)
	}
}

// hashedDemo is the index of n demo documents, embedded by the offline
// hashing embedder.
func hashedDemo(t *testing.T, n int) (*doclib.DataSet, search.Embedder, *localsearch.Index) {
	t.Helper()
	d, h := hashedData(t, n)
	x, err := localsearch.FromDocs(context.Background(), indexDocs(t, d, h), h, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d, h, x
}

// hashedData is n demo documents and the offline hashing embedder.
func hashedData(t testing.TB, n int) (*doclib.DataSet, search.Embedder) {
	t.Helper()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: n}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d, h
}
