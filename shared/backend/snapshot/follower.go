package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// Follower is the search function's side of the embedded tier: a
// search.Backend over the segments the manifest names. Load, at init, reads
// the manifest and its segments; then each search, at most once per Every,
// reads the manifest on condition that it changed (one small GET, answered
// "not modified" in the common case), and when it changed, reads the
// segments it does not hold yet, puts them in service with those it holds,
// and drops those no longer named. A search always runs on the segments of
// one manifest: the one in service when it started.
//
// A segment of format 3 or 4 of at least ReadWholeBelow bytes is opened by
// range (localsearch.OpenSegment): one GET of its hot part, what every
// query needs, at load; its cold part (postings, words, int8 codes) is read
// in blocks as queries need them, kept in Cache, and read whole in the
// background by a prefetch while no query runs, so that a warm instance
// holds what one that read every segment whole would. Smaller segments
// (a stream batch) and those of earlier formats are read whole: copying
// their arrays, not building an index (localsearch.ReadSegment), so that a
// change of a hundred documents costs the request that notices it one GET
// of a few hundred KB. The request that notices a new manifest reads the
// hot parts and small segments itself, synchronously: in Lambda an
// instance is frozen between requests, and a background read progresses
// only while requests run (the prefetch does, and queries read what it has
// not). Loads are single-flight: where requests run concurrently (a
// long-running server), the others keep searching the index in service.
//
// A manifest or segment that fails to load (unreadable, corrupt, of another
// embedder or format) is logged at error level and the last good index
// stays in service; the next check tries again. A block of a cold part
// that cannot be read, or is not what its CRC says, fails the query that
// needs it with doclib's unavailable error (503), never a wrong answer; a
// segment whose object is gone (its lifecycle expired a deleted one) makes
// the query read the manifest again and answer from the segments it names. With no good index at all
// (a refused manifest at init), searches fail with doclib's unavailable
// error (503) saying what cures it, until a good one is published. When
// nothing was published yet, the index is empty.
//
// A stack upgraded from the single-snapshot format, whose bucket holds a
// pointer and no manifest, is served from that snapshot (read and built as
// before) until the indexer's first use publishes it as segments.
type Follower struct {
	Blobs Blobs
	// Embedder embeds the queries; the segments' vectors must be its.
	Embedder search.Embedder
	// Every is the interval between manifest checks (settings.DefaultSnapshotPoll when 0).
	Every time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger gets the loads and their failures (slog.Default when nil).
	Logger *slog.Logger
	// Cache keeps what queries read of the cold parts (one without a bound,
	// when nil at Load). Its budget is CacheBytes when set, else derived
	// from MemoryBytes, the hot parts held and the Go memory limit
	// (cacheBudget), else none.
	Cache                   *localsearch.Cache
	CacheBytes, MemoryBytes int64
	// ReadWholeBelow is the size under which a segment is read whole
	// (DefaultReadWholeBelow when 0; every segment of format 3 on is opened by
	// range when negative).
	ReadWholeBelow int64
	// NoPrefetch turns the prefetch off: the cold parts are read only as
	// queries need them.
	NoPrefetch bool
	// GCHeadroom, when above 0, has the follower set the Go collector's
	// percentage (GOGC) so that the heap grows by about GCHeadroom bytes
	// between collections, not by as much as the index it holds (gcPercent).
	// 0 leaves GOGC as it is.
	GCHeadroom int64

	cur     atomic.Pointer[serving]
	checked atomic.Pointer[time.Time] // when the manifest was last checked; nil: never
	loading sync.Mutex                // held by the one request checking or loading
	warned  bool                      // "nothing published yet" was logged (under loading)

	gcHeld atomic.Int64 // the bytes held when GOGC was last set (0: never, or none held)

	pmu          sync.Mutex
	stopPrefetch context.CancelFunc
	prefetched   chan struct{}
	answered     chan struct{} // closed by the first search answered
	answerOnce   sync.Once
}

// DefaultReadWholeBelow: segments under 4 MiB are read whole, in the one
// GET that their hot part alone would take about as long to answer.
const DefaultReadWholeBelow = 4 << 20

// cacheReserve is what the budget leaves the rest of the process: the
// queries' working memory, the SDK's, the request's.
const cacheReserve = 128 << 20

// DefaultGCHeadroom is the search function's GCHeadroom, 256 MB. In
// BenchmarkEmbeddedTier at 100,000 documents (374 MB held), GOGC's default
// peaked at 819-825 MB; 128 MB of headroom at 534 MB, with the engine's p99
// 5 to 10 ms slower (a collection every few searches); 256 MB at 590-595 MB,
// with the engine's p50 and p99 as with the default (docs/performance.md).
const DefaultGCHeadroom = 256 << 20

// cacheBudget is what the cache may hold of the cold parts (0: no bound),
// with hot bytes of hot parts held: cacheBytes when set; else, of a
// function of memoryBytes, what the Go heap may hold less the hot parts
// and cacheReserve. The heap may hold three quarters of a Go memory limit
// under the function's memory (goLimit; wiring.SnapshotFollower sets one
// at nine tenths of it): the collector then works harder near the limit
// instead of letting the heap grow to twice what it holds. Without such a
// limit it may hold half the function's memory. Never under 64 MB.
func cacheBudget(cacheBytes, memoryBytes, goLimit, hot int64) int64 {
	var heap int64
	switch {
	case cacheBytes > 0:
		return cacheBytes
	case memoryBytes <= 0:
		return 0
	case goLimit > 0 && goLimit < memoryBytes:
		heap = goLimit / 4 * 3
	default:
		heap = memoryBytes / 2
	}
	return max(heap-hot-cacheReserve, 64<<20)
}

// gcPercent is the collector's percentage (GOGC) for a heap that holds
// held bytes of index (hot parts and cached blocks) and about headroom
// bytes of everything else: the percentage of the heap that headroom is,
// at least 1 and at most Go's default of 100. The collector lets a heap
// grow by GOGC percent of what it held live before it collects again; at
// the default, a search instance holding a 400 MB index grew to twice
// that between collections (maxmem 822 MB at 100,000 documents), though
// all it allocates is a query's working memory. The index is arrays of
// bytes and numbers, which the collector does not scan, so a collection
// costs about as much with a small GOGC as with the default: what grows
// is how often it runs, once per headroom of allocation, as in a process
// that held no index.
func gcPercent(held, headroom int64) int {
	if headroom <= 0 || held < 0 {
		return 100
	}
	return int(min(max((100*headroom+held+headroom-1)/(held+headroom), 1), 100))
}

// tuneGC sets GOGC from what the follower holds now (gcPercent), when it
// has changed by more than a quarter of the headroom since it was last
// set.
func (f *Follower) tuneGC() {
	if f.GCHeadroom <= 0 {
		return
	}
	var held int64
	if cur := f.cur.Load(); cur != nil {
		held = cur.HotBytes
	}
	if f.Cache != nil {
		held += f.Cache.Stats().Held
	}
	last := f.gcHeld.Load()
	if last > 0 && held > last-f.GCHeadroom/4 && held < last+f.GCHeadroom/4 || !f.gcHeld.CompareAndSwap(last, held) {
		return
	}
	debug.SetGCPercent(gcPercent(held, f.GCHeadroom))
}

// State is what a Follower has in service.
type State struct {
	// Sequence and Documents are the manifest's (zero when the index is
	// empty), Segments its segment count.
	Sequence  uint64
	Documents int
	Segments  int
	// Legacy is set when the index is a single-format snapshot's.
	Legacy bool
	// Opened is how many segments are opened by range, and HotBytes
	// their hot parts' bytes, held in memory.
	Opened   int
	HotBytes int64
	// Err is why there is no index in service, nil when there is one.
	Err error
}

type serving struct {
	State
	etag    string              // the manifest's ETag
	segs    map[string]*segment // by key
	backend search.Backend
}

var _ search.Backend = (*Follower)(nil)

// Current returns what is in service.
func (f *Follower) Current() State {
	if s := f.cur.Load(); s != nil {
		return s.State
	}
	return State{Err: errors.New("snapshot: the follower was not loaded")}
}

// Load reads the manifest and its segments, at init. A manifest or segment
// that is corrupt or of another embedder is not an error of Load: searches
// then fail with 503 until a good one is published. Other failures (the
// store unreachable) are returned, and searches fail with 503 until a check
// succeeds.
func (f *Follower) Load(ctx context.Context) error {
	f.loading.Lock()
	defer f.loading.Unlock()
	f.markChecked()
	err := f.refresh(ctx)
	if errors.Is(err, ErrIncompatible) || errors.Is(err, ErrCorrupt) {
		return nil
	}
	return err
}

// Refresh checks the manifest now, and reads what changed, whatever the time
// since the last check.
func (f *Follower) Refresh(ctx context.Context) error {
	f.loading.Lock()
	defer f.loading.Unlock()
	f.markChecked()
	return f.refresh(ctx)
}

// Match implements search.Backend.
func (f *Follower) Match(ctx context.Context, q *search.Query) (*search.Matches, error) {
	var m *search.Matches
	err := f.search(ctx, func(b search.Backend) (err error) {
		m, err = b.Match(ctx, q)
		return err
	})
	return m, err
}

// MostActive implements search.Backend.
func (f *Follower) MostActive(ctx context.Context, q *search.Query, fl search.Filter) ([]search.Hit, int, error) {
	var hits []search.Hit
	var total int
	err := f.search(ctx, func(b search.Backend) (err error) {
		hits, total, err = b.MostActive(ctx, q, fl)
		return err
	})
	return hits, total, err
}

// search runs do on the index in service. A segment found gone (a newer
// manifest replaced it, and its deleted object expired) makes it read the
// manifest now and run do again, once, on what that names.
func (f *Follower) search(ctx context.Context, do func(search.Backend) error) error {
	b, err := f.backend(ctx)
	if err != nil {
		return err
	}
	err = do(b)
	f.tuneGC() // what the query read, and the prefetch since
	f.answerOnce.Do(func() { close(f.answeredChan()) })
	if !errors.Is(err, localsearch.ErrSegmentGone) {
		return err
	}
	f.logger().Warn("snapshot: a segment in service is gone; reading the manifest again", "error", err)
	f.loading.Lock()
	f.markChecked()
	rerr := f.refresh(ctx)
	f.loading.Unlock()
	if rerr != nil {
		return doclib.Unavailable(errors.Join(err, rerr))
	}
	if b, err = f.backend(ctx); err != nil {
		return err
	}
	if err = do(b); errors.Is(err, localsearch.ErrSegmentGone) {
		return doclib.Unavailable(err)
	}
	return err
}

// Prefetched is closed when the prefetch of the index in service has read
// every cold part, or stopped (the cache full, a read failed, a newer
// index in service); nil when none was started. It starts after the first
// search answered.
func (f *Follower) Prefetched() <-chan struct{} {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	return f.prefetched
}

// answeredChan is closed once the follower has answered a search.
func (f *Follower) answeredChan() chan struct{} {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	if f.answered == nil {
		f.answered = make(chan struct{})
	}
	return f.answered
}

// prefetch reads, in the background, the cold parts of xs that the cache
// does not hold, in place of the prefetch of the index no longer in
// service. It begins once the follower has answered its first search: at
// a cold start, the first search's reads (what the user waits for) have
// the bandwidth to themselves. In Lambda, an instance is frozen between
// requests, so the prefetch reads only while a request runs and no query
// does (while the next request embeds its query, say): a warm instance
// fills its cache over its first requests, not while it idles.
func (f *Follower) prefetch(xs []*localsearch.Index) {
	f.pmu.Lock()
	defer f.pmu.Unlock()
	if f.stopPrefetch != nil {
		f.stopPrefetch()
		f.stopPrefetch, f.prefetched = nil, nil
	}
	if f.NoPrefetch || len(xs) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	f.stopPrefetch, f.prefetched = cancel, done
	if f.answered == nil {
		f.answered = make(chan struct{})
	}
	answered := f.answered
	go func() {
		defer close(done)
		select {
		case <-answered:
		case <-ctx.Done():
			return
		}
		start := time.Now()
		if err := f.Cache.Prefetch(ctx, xs); err != nil && ctx.Err() == nil {
			f.logger().Warn("snapshot: the prefetch stopped; queries read what they need", "error", err)
			return
		}
		f.tuneGC()
		st := f.Cache.Stats()
		f.logger().Info("snapshot: prefetched", "took", time.Since(start), "held_bytes", st.Held, "read_bytes", st.Bytes, "reads", st.Reads)
	}()
}

func (f *Follower) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Follower) every() time.Duration {
	if f.Every > 0 {
		return f.Every
	}
	return settings.DefaultSnapshotPoll
}

func (f *Follower) logger() *slog.Logger {
	if f.Logger != nil {
		return f.Logger
	}
	return slog.Default()
}

func (f *Follower) markChecked() {
	t := f.now()
	f.checked.Store(&t)
}

// Calibration implements search.Calibrated: the calibration of the
// manifest in service (nil when it has none, or nothing is in service).
func (f *Follower) Calibration() *search.Calibration {
	if s := f.cur.Load(); s != nil && s.Err == nil {
		if c, ok := s.backend.(search.Calibrated); ok {
			return c.Calibration()
		}
	}
	return nil
}

// Prepare implements search.Preparer: a newer manifest, when one is due to
// be looked for, is in service before the searcher settles the rules.
func (f *Follower) Prepare(ctx context.Context) error {
	f.maybeRefresh(ctx)
	return nil
}

// backend checks the manifest if due, then returns the index in service.
func (f *Follower) backend(ctx context.Context) (search.Backend, error) {
	f.maybeRefresh(ctx)
	s := f.cur.Load()
	if s == nil {
		return nil, doclib.Unavailable(errors.New("snapshot: the follower was not loaded"))
	}
	if s.Err != nil {
		return nil, doclib.Unavailable(s.Err)
	}
	return s.backend, nil
}

func (f *Follower) maybeRefresh(ctx context.Context) {
	due := func() bool {
		last := f.checked.Load()
		return last == nil || f.now().Sub(*last) >= f.every()
	}
	if !due() || !f.loading.TryLock() {
		return // not due, or another request is checking: search what is in service
	}
	defer f.loading.Unlock()
	if !due() {
		return
	}
	f.markChecked()
	f.refresh(ctx) // logged; the index in service stays
}

// refresh reads the manifest and what it names unless it is in service.
// The caller holds f.loading.
func (f *Follower) refresh(ctx context.Context) error {
	cur := f.cur.Load()
	etag := ""
	if cur != nil && cur.Err == nil && !cur.Legacy {
		etag = cur.etag // a failed one is tried again
	}
	m, obj, err := ReadManifest(ctx, f.Blobs, etag)
	switch {
	case errors.Is(err, ErrNotModified):
		return nil
	case errors.Is(err, ErrNotFound):
		return f.legacy(ctx, cur)
	case err == nil:
		err = m.compatible(f.Embedder.ID(), f.Embedder.Dimensions())
	}
	if err != nil {
		return f.failed(cur, m, fmt.Errorf("snapshot: read the manifest: %w", err))
	}
	start := time.Now()
	if f.Cache == nil {
		f.Cache = localsearch.NewCache(0)
	}
	held := map[string]*segment{}
	if cur != nil && cur.segs != nil {
		held = cur.segs
	}
	segs := make([]*segment, len(m.Segments))
	var missing []int
	for i, ref := range m.Segments {
		if sg, ok := held[ref.Key]; ok && sg.ref == ref {
			segs[i] = sg
		} else {
			missing = append(missing, i)
		}
	}
	whole := f.ReadWholeBelow
	if whole == 0 {
		whole = DefaultReadWholeBelow
	}
	var read int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readers)
	for _, i := range missing {
		ref := m.Segments[i]
		g.Go(func() (err error) {
			if ref.HotBytes > 0 && ref.Bytes >= whole {
				segs[i], err = openSegment(gctx, f.Blobs, ref, f.Embedder, f.Cache)
			} else {
				segs[i], err = readSegment(gctx, f.Blobs, ref, f.Embedder)
			}
			return err
		})
		if ref.HotBytes > 0 && ref.Bytes >= whole {
			read += ref.HotBytes
		} else {
			read += ref.Bytes
		}
	}
	if err := g.Wait(); err != nil {
		for _, i := range missing { // opened, and not to be served
			if segs[i] != nil {
				f.Cache.Drop(segs[i].x)
			}
		}
		return f.failed(cur, m, err)
	}
	loaded := time.Since(start)
	index, err := fold(f.Embedder, segs)
	if err != nil {
		return f.failed(cur, m, err)
	}
	byKey := make(map[string]*segment, len(segs))
	var opened []*localsearch.Index
	var hot int64
	for _, sg := range segs {
		byKey[sg.ref.Key] = sg
		if sg.x.Opened() {
			opened = append(opened, sg.x)
			hot += sg.ref.HotBytes
		}
	}
	if b := cacheBudget(f.CacheBytes, f.MemoryBytes, debug.SetMemoryLimit(-1), hot); b > 0 {
		f.Cache.SetBudget(b)
	}
	f.cur.Store(&serving{State: State{Sequence: m.Sequence, Documents: index.Len(), Segments: len(segs), Opened: len(opened), HotBytes: hot},
		etag: obj.ETag, segs: byKey, backend: search.Local{Retriever: index, Cal: m.Calibration}})
	if cur != nil {
		for key, sg := range cur.segs {
			if byKey[key] != sg {
				f.Cache.Drop(sg.x)
			}
		}
	}
	f.tuneGC()
	f.prefetch(opened)
	f.logger().Info("snapshot: in service", "sequence", m.Sequence, "documents", index.Len(), "segments", len(segs),
		"read", len(missing), "opened_by_range", len(opened), "bytes_read", read, "load", loaded, "fold", time.Since(start)-loaded)
	return nil
}

// readers is how many segments a follower reads at once: every segment of
// a reindex at a million documents (40 of 25,000), whose hot parts are
// read at start, a GET each.
const readers = 16

// legacy serves the single-format snapshot the pointer names, when there is
// no manifest: a stack upgraded from that format, until its indexer
// publishes segments.
func (f *Follower) legacy(ctx context.Context, cur *serving) error {
	p, _, err := ReadPointer(ctx, f.Blobs, "")
	switch {
	case errors.Is(err, ErrNotFound):
		if cur != nil && cur.Err == nil {
			f.logger().Warn("snapshot: the manifest is gone; the index in service stays", "sequence", cur.Sequence)
			return nil
		}
		if !f.warned {
			f.logger().Warn("snapshot: nothing was published yet: searches find nothing until the indexer publishes", "key", ManifestKey)
			f.warned = true
		}
		f.cur.Store(&serving{backend: empty{}})
		return nil
	case err != nil:
		return f.failed(cur, Manifest{}, fmt.Errorf("snapshot: read the pointer: %w", err))
	}
	if cur != nil && cur.Err == nil && cur.Legacy && cur.Sequence == p.Sequence {
		return nil
	}
	h, docs, err := LoadSnapshot(ctx, f.Blobs, p, Expect{Embedder: f.Embedder.ID(), Dimensions: f.Embedder.Dimensions()})
	if err != nil {
		return f.failed(cur, Manifest{}, err)
	}
	x, err := localsearch.FromDocs(ctx, docs, f.Embedder, localsearch.Options{})
	if err != nil {
		return f.failed(cur, Manifest{}, fmt.Errorf("snapshot: build the index of snapshot %d: %w", p.Sequence, err))
	}
	f.cur.Store(&serving{State: State{Sequence: h.Sequence, Documents: len(docs), Segments: 1, Legacy: true},
		backend: search.Local{Retriever: x}})
	f.logger().Info("snapshot: in service (single-snapshot format, until the indexer publishes segments)", "sequence", h.Sequence,
		"documents", len(docs))
	return nil
}

// failed logs a failed check or load; with no good index in service, err
// becomes what searches answer.
func (f *Follower) failed(cur *serving, m Manifest, err error) error {
	args := []any{"sequence", m.Sequence, "error", err}
	if cur != nil && cur.Err == nil {
		f.logger().Error("snapshot: cannot load the index the manifest names; the last good one stays in service",
			append(args, "in_service", cur.Sequence)...)
		return err
	}
	f.logger().Error("snapshot: cannot load the index the manifest names; searches fail until a good one is published", args...)
	f.cur.Store(&serving{State: State{Err: err}})
	return err
}

// empty is the index before anything was published.
type empty struct{}

func (empty) Match(_ context.Context, q *search.Query) (*search.Matches, error) {
	return search.Evaluate(nil, q), nil
}

func (empty) MostActive(context.Context, *search.Query, search.Filter) ([]search.Hit, int, error) {
	return nil, 0, nil
}
