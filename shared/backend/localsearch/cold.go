package localsearch

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
)

// A segment opened by range (OpenSegment) holds its hot part in memory and
// reads its cold part (postings, words, int8 codes) in blocks, when a query
// needs them, through a ColdSource; the blocks read stay in a Cache, within
// its budget, for the next queries, and a prefetch (Cache.Prefetch) reads
// the rest while no query runs. docs/search.md, "The embedded tier on
// Lambda", says what a query reads and when.

// ColdSource reads bytes of a segment file by range: the n bytes from off.
// Package snapshot's reads a bucket's object.
type ColdSource interface {
	ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error)
}

// ErrSegmentGone is a cold read that found the segment's object gone: a
// newer manifest replaced it and its writer deleted it. The index that
// names it is out of date.
var ErrSegmentGone = errors.New("localsearch: the segment's object is gone")

// Reads by range. A query's reads of one step go out at once, up to
// queryReads at a time: a GET from S3 waits tens of milliseconds for its
// first byte whatever its size, so the reads of a step (a few terms in a
// few segments, the runs of codes its screen passes: at 100,000 documents
// 10 to 50) each get a connection of their own and the step waits about
// one first byte, not one per 16 reads (BenchmarkColdFirstQuery: 131 ms of
// S3 for the first search at 64, 151 at 32, 193 at 16). A read is of a run of
// blocks, at most maxRun bytes (longer runs are cut, so that they too go
// in parallel), and runs with at most mergeGap blocks between them are read
// as one: a few blocks more cost less than another first byte.
const (
	queryReads   = 64
	prefetchRead = 2 // the prefetch's reads in flight
	maxRun       = 8 << 20
	mergeGap     = 4
	// readTimeout bounds one attempt at a read; a read is tried twice.
	readTimeout = 5 * time.Second
	readTries   = 2
)

// block is one block of a cold part, in memory aligned for the entries it
// holds.
type block struct{ b []byte }

func newBlock(n int) *block {
	words := make([]uint64, (n+7)/8)
	return &block{b: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:n]}
}

// coldPart is the cold part of a segment opened by range.
type coldPart struct {
	x       *Index
	src     ColdSource
	cache   *Cache
	at      uint64 // the cold part's offset in the file
	lay     layout
	crc     []uint32
	stopOff []uint32
	libSpan []span                  // by library number
	blocks  []atomic.Pointer[block] // the blocks the cache holds
	used    []atomic.Bool           // a query used the block since the cache's hand last passed it
	dropped atomic.Bool             // no longer in service: its blocks are not kept
	// The slots of the documents' and the recordings' codes (nil: in
	// their order, format 3).
	docSlot, recSlot []uint32

	mu      sync.Mutex
	flights map[uint32]*flight // blocks being read
}

// flight is a read of blocks in progress, which other queries wait for,
// unless it is the prefetch's: a query reads those blocks itself rather
// than wait behind the prefetch. Its reader may give up for its own
// reasons (a query's request ended, the prefetch stopped): abandoned then,
// and a query that waited for it reads the blocks itself rather than fail
// with that.
type flight struct {
	done      chan struct{}
	err       error
	prefetch  bool
	abandoned bool // the reader's context ended
}

// OpenSegment opens a segment of format 3 or 4 from its hot part, the first
// bytes of the file of size bytes, which the caller checked (a manifest
// names its CRC-32C): the index, for queries embedded by e, and the
// documents it deletes from older segments. The index uses the hot part's
// arrays where they lie (8-byte aligned; hot is copied first when it is
// not), so hot must not change after. Its cold part is read from src
// as queries need it, and kept in cache. It refuses what ReadSegment
// refuses of a hot part; each block is checked as it is read.
func OpenSegment(hot []byte, size int64, e search.Embedder, src ColdSource, cache *Cache) (*Index, []string, error) {
	if !littleEndian {
		return nil, nil, errors.New("localsearch: segments are read on little-endian machines only")
	}
	hb := &hotBuffer{b: hot}
	if uintptr(unsafe.Pointer(unsafe.SliceData(hot)))%8 != 0 {
		hb.b = alignedBytes(uint64(len(hot)))
		copy(hb.b, hot)
	}
	h, err := readHeader(hb, size, true, e)
	if err != nil {
		return nil, nil, err
	}
	if h.lay.hot != uint64(len(hot)) {
		return nil, nil, fmt.Errorf("%w: a hot part of %d bytes, its counts make %d", ErrSegment, len(hot), h.lay.hot)
	}
	x, deleted, extra, err := readParts(hb, h, e, nil)
	if err != nil {
		return nil, nil, err
	}
	if err := x.checkHot(h.c); err != nil {
		return nil, nil, err
	}
	if err := offsets("stop-word", extra.stopOff, h.c.stops); err != nil {
		return nil, nil, err
	}
	if err := x.finish(); err != nil {
		return nil, nil, err
	}
	c := &coldPart{x: x, src: src, cache: cache, at: h.lay.hot, lay: h.lay, crc: extra.blockCRC, stopOff: extra.stopOff,
		docSlot: extra.docSlot, recSlot: extra.recSlot,
		blocks: make([]atomic.Pointer[block], h.lay.blocks), used: make([]atomic.Bool, h.lay.blocks), flights: map[uint32]*flight{}}
	for _, id := range x.libIDs {
		c.libSpan = append(c.libSpan, x.libs[id])
	}
	x.cold = c
	return x, deleted, nil
}

// docCodeAt and recCodeAt are where the codes of document i and recording
// r lie in the cold part.
func (c *coldPart) docCodeAt(i uint32) uint64 { return c.codeAt(c.lay.docs, c.docSlot, i) }

func (c *coldPart) recCodeAt(r uint32) uint64 { return c.codeAt(c.lay.recs, c.recSlot, r) }

func (c *coldPart) codeAt(at uint64, slot []uint32, i uint32) uint64 {
	if slot != nil {
		i = slot[i]
	}
	return at + uint64(i)*uint64(c.x.rot.padded)
}

// blockLen is the length of block k.
func (c *coldPart) blockLen(k uint32) int {
	return int(min(c.lay.block, c.lay.cold-uint64(k)*c.lay.block))
}

// blocksOf are the blocks that hold bytes [off, off+n) of the cold part.
func (c *coldPart) blocksOf(off, n uint64) (first, last uint32) {
	return uint32(off / c.lay.block), uint32((off + n - 1) / c.lay.block)
}

// get gives the blocks of held a query holds, the bytes [off, off+n) of
// the cold part: a slice of one block, or a copy of several; false when a
// block is missing.
func (c *coldPart) get(held []*block, off, n uint64) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	first, last := c.blocksOf(off, n)
	if first == last {
		b := held[first]
		if b == nil {
			return nil, false
		}
		in := off - uint64(first)*c.lay.block
		return b.b[in : in+n], true
	}
	out := newBlock(int(n)).b[:0]
	for k := first; k <= last; k++ {
		b := held[k]
		if b == nil {
			return nil, false
		}
		start := uint64(k) * c.lay.block
		from := max(off, start) - start
		to := min(off+n, start+uint64(len(b.b))) - start
		out = append(out, b.b[from:to]...)
	}
	return out, true
}

// coldArray is the entries [i, i+count) of the cold section at, as T.
func coldArray[T any](c *coldPart, held []*block, at, i, count uint64) ([]T, bool) {
	size := uint64(unsafe.Sizeof(*new(T)))
	b, ok := c.get(held, at+i*size, count*size)
	if !ok || count == 0 {
		return nil, ok
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), count), true
}

// check checks block k's bytes: its CRC, and that every posting, word and
// stop-word term in it is in range, so that no query indexes out of
// bounds or reads outside the libraries a posting's entry says.
func (c *coldPart) check(k uint32, b []byte) error {
	if crc32.Checksum(b, castagnoli) != c.crc[k] {
		return fmt.Errorf("%w: block %d of the cold part does not sum to its CRC", ErrSegment, k)
	}
	start := uint64(k) * c.lay.block
	end := start + uint64(len(b))
	section := func(from, to, size uint64) (uint64, uint64, []byte) { // entries [i, j) of a section in this block
		lo, hi := max(from, start), min(to, end)
		if lo >= hi {
			return 0, 0, nil
		}
		return (lo - from) / size, (hi - from) / size, b[lo-start : hi-start]
	}
	x := c.x
	if i, j, raw := section(c.lay.post, c.lay.fwd, 8); j > i {
		if !c.checkPostings(unsafe.Slice((*posting)(unsafe.Pointer(unsafe.SliceData(raw))), j-i), uint32(i)) {
			return fmt.Errorf("%w: block %d holds a posting outside its term's library", ErrSegment, k)
		}
	}
	nTerms := uint32(len(x.termName))
	if i, j, raw := section(c.lay.fwd, c.lay.stops, 8); j > i {
		for _, tc := range unsafe.Slice((*termCount)(unsafe.Pointer(unsafe.SliceData(raw))), j-i) {
			if tc.term >= nTerms {
				return fmt.Errorf("%w: block %d holds a word past the vocabulary", ErrSegment, k)
			}
		}
	}
	if i, j, raw := section(c.lay.stops, c.lay.stops+4*uint64(c.stopOff[len(c.stopOff)-1]), 4); j > i {
		for _, t := range unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(raw))), j-i) {
			if t >= nTerms {
				return fmt.Errorf("%w: block %d holds a stop word past the vocabulary", ErrSegment, k)
			}
		}
	}
	return nil
}

// checkPostings says whether every posting of ps, the postings from
// number first on, is a document of the library its term's entry says
// (and so in range), and follows the one before it in its library.
func (c *coldPart) checkPostings(ps []posting, first uint32) bool {
	x := c.x
	t := sort.Search(len(x.postOff)-1, func(t int) bool { return x.postOff[t+1] > first }) // the term of posting first
	var j, jEnd uint32                                                                     // its library entry
	var sp span
	prev := int64(-1)
	for i := range ps {
		at := first + uint32(i)
		for t < len(x.postOff)-1 && at >= x.postOff[t+1] {
			t++
		}
		if t >= len(x.postOff)-1 {
			return false
		}
		es := x.termLib[x.termLibOff[t]:x.termLibOff[t+1]]
		in := at - x.postOff[t]
		e := sort.Search(len(es), func(e int) bool { return es[e].start > in }) - 1
		if e < 0 {
			return false
		}
		if i == 0 || uint32(e) != j || x.termLibOff[t] != jEnd {
			j, jEnd, prev = uint32(e), x.termLibOff[t], -1
			sp = c.libSpan[es[e].lib]
		}
		d := ps[i].doc
		if d < sp.start || d >= sp.end || int64(d) <= prev {
			return false
		}
		prev = int64(d)
	}
	return true
}

// run is blocks [first, last] of a cold part, read in one GET, and the
// flight that other queries wait on.
type run struct {
	c           *coldPart
	first, last uint32
	f           *flight
}

// plan cuts the blocks ks of c (sorted, distinct) into runs: blocks with
// at most mergeGap blocks between them are read together, up to maxRun
// bytes.
func (c *coldPart) plan(ks []uint32) []run {
	var out []run
	for _, k := range ks {
		if n := len(out); n > 0 && k <= out[n-1].last+mergeGap+1 && uint64(k-out[n-1].first+1)*c.lay.block <= maxRun {
			out[n-1].last = k
			continue
		}
		out = append(out, run{c: c, first: k, last: k})
	}
	return out
}

// fetch reads the runs, up to parallel at a time, installing each block in
// its part's cache (unless it is the prefetch's and the cache is full) and
// giving it to give. It waits for the blocks other reads are reading. The
// first error is returned, as doclib's unavailable error: the query cannot
// be answered exactly.
func fetch(ctx context.Context, needs map[*coldPart][]uint32, parallel int, prefetch bool, give func(*coldPart, uint32, *block)) error {
	type wait struct {
		c *coldPart
		k uint32
		f *flight
	}
	var runs []run
	var waits []wait
	for c, ks := range needs {
		slices.Sort(ks)
		ks = slices.Compact(ks)
		var mine []uint32
		c.mu.Lock()
		for _, k := range ks {
			if b := c.blocks[k].Load(); b != nil {
				c.used[k].Store(true)
				give(c, k, b)
			} else if f := c.flights[k]; f != nil && (prefetch || !f.prefetch) {
				waits = append(waits, wait{c, k, f})
			} else {
				mine = append(mine, k)
			}
		}
		rs := c.plan(mine)
		for i := range rs {
			rs[i].f = &flight{done: make(chan struct{}), prefetch: prefetch}
			for k := rs[i].first; k <= rs[i].last; k++ {
				if f := c.flights[k]; (f == nil || f.prefetch && !prefetch) && c.blocks[k].Load() == nil {
					c.flights[k] = rs[i].f // a query's, in place of the prefetch's
				}
			}
		}
		c.mu.Unlock()
		runs = append(runs, rs...)
	}
	if len(runs) > 0 && !prefetch {
		runs[0].c.cache.stats.rounds.Add(1)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(runs))
	sem := make(chan struct{}, parallel)
	for i, r := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = r.read(ctx, prefetch, give)
		}()
	}
	wg.Wait()
	err := errors.Join(errs...)
	for _, w := range waits {
		select {
		case <-w.f.done:
		case <-ctx.Done():
			return doclib.Unavailable(ctx.Err())
		}
		if b := w.c.blocks[w.k].Load(); b != nil {
			give(w.c, w.k, b)
		} else if w.f.err != nil && !w.f.abandoned {
			err = errors.Join(err, w.f.err)
		} else { // read, but not kept (a full cache, or a segment dropped), or its reader gave up: read it again
			err = errors.Join(err, fetch(ctx, map[*coldPart][]uint32{w.c: {w.k}}, 1, prefetch, give))
		}
	}
	if err != nil {
		if errors.Is(err, ErrSegmentGone) {
			return err
		}
		return doclib.Unavailable(err)
	}
	return nil
}

// read reads the run, trying twice, and ends its flights.
func (r run) read(ctx context.Context, prefetch bool, give func(*coldPart, uint32, *block)) error {
	c := r.c
	var err error
	for try := 0; try < readTries; try++ {
		if err = r.readOnce(ctx, prefetch, give); err == nil || errors.Is(err, ErrSegmentGone) || ctx.Err() != nil {
			break
		}
	}
	c.mu.Lock()
	for k := r.first; k <= r.last; k++ {
		if c.flights[k] == r.f {
			delete(c.flights, k)
		}
	}
	r.f.err, r.f.abandoned = err, err != nil && ctx.Err() != nil
	c.mu.Unlock()
	close(r.f.done)
	if err != nil {
		return fmt.Errorf("localsearch: read blocks %d to %d of a segment's cold part: %w", r.first, r.last, err)
	}
	return nil
}

func (r run) readOnce(ctx context.Context, prefetch bool, give func(*coldPart, uint32, *block)) error {
	c := r.c
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	off := uint64(r.first) * c.lay.block
	n := uint64(r.last)*c.lay.block + uint64(c.blockLen(r.last)) - off
	body, err := c.src.ReadRange(ctx, int64(c.at+off), int64(n))
	if err != nil {
		return err
	}
	defer body.Close()
	c.cache.stats.reads.Add(1)
	c.cache.stats.bytes.Add(int64(n))
	for k := r.first; k <= r.last; k++ {
		b := newBlock(c.blockLen(k))
		if _, err := io.ReadFull(body, b.b); err != nil {
			return err
		}
		if err := c.check(k, b.b); err != nil {
			return err
		}
		if c.blocks[k].Load() == nil {
			c.cache.add(c, k, b, prefetch)
		}
		give(c, k, b)
	}
	return nil
}

// Cache holds the cold blocks of the segments opened by range within a
// budget, for every query after the one that read them. Past the budget
// it drops blocks by CLOCK (second chance): a hand sweeps the blocks in
// the order they came; one a query used since the hand last passed is
// spared once, the first unused one is dropped. A query holds what it
// reads until it ends, whatever the cache drops. It is safe for concurrent
// use.
type Cache struct {
	budget int64

	mu   sync.Mutex
	held int64
	ring []slot
	hand int
	dead int // ring slots of dropped segments

	// Queries in progress: the prefetch waits for none.
	active atomic.Int64
	idle   *sync.Cond
	imu    sync.Mutex

	stats cacheStats
}

type slot struct {
	c *coldPart
	k uint32
}

type cacheStats struct {
	rounds, reads, bytes, dropped atomic.Int64
}

// NewCache returns a cache of at most budget bytes of blocks (no bound
// when budget <= 0).
func NewCache(budget int64) *Cache {
	c := &Cache{budget: budget}
	c.idle = sync.NewCond(&c.imu)
	return c
}

// CacheStats are a cache's counts since it was made.
type CacheStats struct {
	// Rounds are the rounds of reads queries made (each waits about one
	// read); Reads and Bytes the ranged reads made, the prefetch's too,
	// and their bytes; Held the bytes held now; Dropped the blocks dropped
	// for the budget.
	Rounds, Reads, Bytes, Held, Dropped int64
}

// Stats returns the cache's counts.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	return CacheStats{Rounds: c.stats.rounds.Load(), Reads: c.stats.reads.Load(), Bytes: c.stats.bytes.Load(), Held: held, Dropped: c.stats.dropped.Load()}
}

// add keeps block k of p. Past the budget it drops others first, unless
// the block is the prefetch's, which is then not kept (the prefetch stops
// when the cache is full: it never drops what queries read).
func (c *Cache) add(p *coldPart, k uint32, b *block, prefetch bool) {
	if p.dropped.Load() {
		return
	}
	size := int64(len(b.b))
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.blocks[k].Load() != nil {
		return
	}
	if c.budget > 0 && c.held+size > c.budget {
		if prefetch {
			return
		}
		c.evict(c.held + size - c.budget)
		if c.held+size > c.budget {
			return // larger than what can be dropped: the query keeps it alone
		}
	}
	p.blocks[k].Store(b)
	c.held += size
	c.ring = append(c.ring, slot{p, k})
}

// evict drops blocks of at least need bytes, by CLOCK. Called with c.mu.
func (c *Cache) evict(need int64) {
	for pass := 0; need > 0 && len(c.ring) > 0 && pass < 2*len(c.ring)+1; pass++ {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		s := c.ring[c.hand]
		b := s.c.blocks[s.k].Load()
		if b == nil || s.c.dropped.Load() { // dropped with its segment
			c.ring = slices.Delete(c.ring, c.hand, c.hand+1)
			continue
		}
		if s.c.used[s.k].Swap(false) {
			c.hand++
			continue
		}
		s.c.blocks[s.k].Store(nil)
		size := int64(len(b.b))
		c.held -= size
		need -= size
		c.stats.dropped.Add(1)
		c.ring = slices.Delete(c.ring, c.hand, c.hand+1)
	}
}

// Drop lets go of the blocks of x, a segment no longer in service: queries
// that still read it keep what they hold, and read what they lack, but the
// cache keeps nothing more of it.
func (c *Cache) Drop(x *Index) {
	p := x.cold
	if p == nil || p.dropped.Swap(true) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range p.blocks {
		if b := p.blocks[k].Swap(nil); b != nil {
			c.held -= int64(len(b.b))
			c.dead++
		}
	}
	if c.dead > len(c.ring)/2 {
		c.ring = slices.DeleteFunc(c.ring, func(s slot) bool { return s.c.dropped.Load() })
		c.hand, c.dead = 0, 0
	}
}

// begin and end bracket a query: the prefetch waits while one runs.
func (c *Cache) begin() { c.active.Add(1) }

func (c *Cache) end() {
	if c.active.Add(-1) == 0 {
		c.imu.Lock()
		c.idle.Broadcast()
		c.imu.Unlock()
	}
}

// waitIdle waits until no query runs, or ctx ends.
func (c *Cache) waitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		c.imu.Lock()
		c.idle.Broadcast()
		c.imu.Unlock()
	})
	defer stop()
	c.imu.Lock()
	defer c.imu.Unlock()
	for c.active.Load() > 0 && ctx.Err() == nil {
		c.idle.Wait()
	}
	return ctx.Err()
}

// prefetchRun is what the prefetch reads at once, of one segment: 4 MiB,
// so that reading a million documents' 3.6 GB costs about 900 GETs
// (S3 bills each GET, ranged or not: docs/costs.md), not 3,600 at 1 MiB,
// while a query shares the bandwidth with at most 8 MiB in flight.
const prefetchRun = 4 << 20

// Prefetch reads the cold parts of segs that the cache does not hold, in
// the background of the queries: it reads only while no query runs, and
// stops when the cache is full, when ctx ends or when a read fails
// (queries then read what they need). It returns when it is done. A read
// it has begun is let finish (at most prefetchRead reads of prefetchRun
// bytes), but no query waits for it: a query that needs a block the
// prefetch is reading reads it too, so a query shares the bandwidth with
// at most those reads (8 MiB: 56 ms at 150 MB/s) and never waits behind
// one.
func (c *Cache) Prefetch(ctx context.Context, segs []*Index) error {
	for _, x := range segs {
		p := x.cold
		if p == nil || p.cache != c {
			continue
		}
		per := uint32(max(prefetchRun/p.lay.block, 1))
		for k := uint32(0); k < uint32(len(p.blocks)); {
			if err := c.waitIdle(ctx); err != nil {
				return err
			}
			if p.dropped.Load() {
				break
			}
			needs := map[*coldPart][]uint32{}
			room := c.room()
			for n := 0; n < prefetchRead && k < uint32(len(p.blocks)); n++ {
				for end := min(k+per, uint32(len(p.blocks))); k < end; k++ {
					if p.blocks[k].Load() == nil {
						if room < int64(p.blockLen(k)) {
							break
						}
						room -= int64(p.blockLen(k))
						needs[p] = append(needs[p], k)
					}
				}
			}
			if len(needs[p]) == 0 {
				if room < int64(p.lay.block) {
					return nil // full
				}
				continue
			}
			if err := fetch(ctx, needs, prefetchRead, true, func(*coldPart, uint32, *block) {}); err != nil {
				return err
			}
		}
	}
	return nil
}

// room is how many more bytes the budget allows.
func (c *Cache) room() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.budget <= 0 {
		return math.MaxInt64
	}
	return c.budget - c.held
}

// SetBudget bounds the cache to budget bytes (none when budget <= 0),
// dropping blocks past it.
func (c *Cache) SetBudget(budget int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget = budget
	if budget > 0 && c.held > budget {
		c.evict(c.held - budget)
	}
}

// Opened says whether x was opened by range (OpenSegment).
func (x *Index) Opened() bool { return x.cold != nil }

// HotBuffer is memory for a hot part of n bytes, aligned as OpenSegment
// uses it in place, its pages mapped ahead of the write (populate).
func HotBuffer(n int64) []byte {
	b := alignedBytes(uint64(max(n, 0)))
	if len(b) >= populateBytes {
		populate(b)
	}
	return b
}
