// Package embedcache keeps an embedder's vectors on disk, so that a second
// run over the same texts (doclib-admin eval with a model that embeds a few
// texts a second) embeds nothing. It wraps any search.Embedder.
//
// A directory holds one file per embedder ID, appended to and never
// rewritten: a header naming the ID and the dimensions, then one record per
// text, its SHA-256, its float32s and a CRC-32C of both. Records have one
// size per file, so a record that fails its checksum is skipped and the next
// one is still found; a torn tail (a run killed mid-write) is cut off when
// the file is opened. Nothing read is served unless its checksum holds, and
// nothing is read by a count the file gives. A file is served only to the
// embedder whose ID and dimensions its header names.
//
// A Cache is safe for concurrent use. One process at a time may write a
// directory's file of a given ID: two would each cut the other's torn tail
// and interleave their appends (the checksums then drop what they mixed).
package embedcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/search"
)

const (
	// magic begins a file: the format's name and version 1. The ID's length
	// (uint16) and the dimensions (uint32) follow, then the ID and a CRC-32C
	// of everything before it.
	magic = "dlvec\x00\x00\x01"
	// maxID and maxDims bound what a header may claim before anything is
	// allocated by it: IDs are a few dozen bytes, models a few thousand
	// dimensions.
	maxID   = 1024
	maxDims = 1 << 16
	// scanRecords is how many records a scan reads at a time.
	scanRecords = 256
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Stats count texts since the cache was opened; empty texts count in
// neither Hits nor Misses (they get a zero vector without a lookup).
type Stats struct {
	// Hits are texts served from the file; Misses, the texts sent to the
	// inner embedder (and then stored), each once however often a call
	// holds it.
	Hits, Misses int64
	// Records are the valid records found when the file was opened;
	// Dropped, those that failed their checksum then, and TornBytes the
	// bytes of an incomplete last record cut off.
	Records, Dropped, TornBytes int64
}

// Cache is a search.Embedder that serves the vectors of texts its inner
// embedder has embedded before, from a file, and embeds and stores the rest.
type Cache struct {
	inner search.Embedder
	path  string
	dims  int
	size  int64 // of one record

	mu    sync.RWMutex
	f     *os.File
	index map[[sha256.Size]byte]int64 // a text's hash → its record's offset
	end   int64                       // where the next record goes

	hits, misses                atomic.Int64
	records, dropped, tornBytes int64
}

var (
	_ search.Embedder    = (*Cache)(nil)
	_ embedcall.Streamer = (*Cache)(nil)
)

// FileName is the file of embedder id in a directory: the ID made safe for a
// file name, and a digest of it, so that two IDs that look alike once made
// safe still get files of their own.
func FileName(id string) string {
	safe := []byte(id)
	for i, c := range safe {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			safe[i] = '_'
		}
	}
	sum := sha256.Sum256([]byte(id))
	return string(safe[:min(len(safe), 64)]) + "-" + hex.EncodeToString(sum[:8]) + ".vec"
}

// Open returns a cache of inner's vectors in dir, made if missing. A file in
// dir that names another embedder, or whose header is corrupt, is an error
// that names it: it is never served, nor overwritten.
func Open(dir string, inner search.Embedder) (*Cache, error) {
	id, dims := inner.ID(), inner.Dimensions()
	if len(id) == 0 || len(id) > maxID || dims <= 0 || dims > maxDims {
		return nil, fmt.Errorf("embedcache: embedder %q of %d dimensions: want an ID of 1 to %d bytes and 1 to %d dimensions", id, dims, maxID, maxDims)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	c := &Cache{inner: inner, path: filepath.Join(dir, FileName(id)), dims: dims, size: int64(sha256.Size + 4*dims + 4),
		index: map[[sha256.Size]byte]int64{}}
	f, err := os.OpenFile(c.path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("embedcache: %w", err)
	}
	c.f = f
	if err := c.load(id); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// header is the file's header for embedder id.
func header(id string, dims int) []byte {
	h := append([]byte(magic), 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint16(h[len(magic):], uint16(len(id)))
	binary.LittleEndian.PutUint32(h[len(magic)+2:], uint32(dims))
	h = append(h, id...)
	return binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, castagnoli))
}

// load checks the header (writing it into an empty file), indexes every
// record whose checksum holds and cuts off a torn tail.
func (c *Cache) load(id string) error {
	st, err := c.f.Stat()
	if err != nil {
		return fmt.Errorf("embedcache: %w", err)
	}
	want := header(id, c.dims)
	got := make([]byte, min(st.Size(), int64(len(want))))
	if _, err := io.ReadFull(c.f, got); err != nil {
		return fmt.Errorf("embedcache: read %s: %w", c.path, err)
	}
	switch {
	case bytes.Equal(got, want):
	case bytes.HasPrefix(want, got):
		// Empty, or torn while its header was written: nothing was stored.
		if err := c.f.Truncate(0); err != nil {
			return fmt.Errorf("embedcache: %w", err)
		}
		if _, err := c.f.WriteAt(want, 0); err != nil {
			return fmt.Errorf("embedcache: write %s: %w", c.path, err)
		}
		st, err = c.f.Stat()
		if err != nil {
			return fmt.Errorf("embedcache: %w", err)
		}
	default:
		return fmt.Errorf("embedcache: %s is not a vector file of embedder %s with %d dimensions (another embedder's, or a corrupt header): remove it", c.path, id, c.dims)
	}
	start := int64(len(want))
	n := (st.Size() - start) / c.size
	c.end = start + n*c.size
	buf := make([]byte, scanRecords*c.size)
	for off := start; off < c.end; {
		chunk := buf[:min(int64(len(buf)), c.end-off)]
		if _, err := c.f.ReadAt(chunk, off); err != nil {
			return fmt.Errorf("embedcache: read %s: %w", c.path, err)
		}
		for r := int64(0); r < int64(len(chunk)); r += c.size {
			if rec := chunk[r : r+c.size]; c.valid(rec) {
				c.index[[sha256.Size]byte(rec)] = off + r
				c.records++
			} else {
				c.dropped++
			}
		}
		off += int64(len(chunk))
	}
	if c.tornBytes = st.Size() - c.end; c.tornBytes > 0 {
		if err := c.f.Truncate(c.end); err != nil {
			return fmt.Errorf("embedcache: cut the torn end of %s: %w", c.path, err)
		}
	}
	return nil
}

// valid reports whether a record's checksum holds.
func (c *Cache) valid(rec []byte) bool {
	body := rec[:len(rec)-4]
	return crc32.Checksum(body, castagnoli) == binary.LittleEndian.Uint32(rec[len(body):])
}

// ID is the inner embedder's: the vectors are its own.
func (c *Cache) ID() string { return c.inner.ID() }

// Dimensions is the inner embedder's.
func (c *Cache) Dimensions() int { return c.dims }

// Unwrap returns the inner embedder.
func (c *Cache) Unwrap() search.Embedder { return c.inner }

// Stats says what the cache served and found.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Records: c.records, Dropped: c.dropped, TornBytes: c.tornBytes}
}

// Path is the cache's file.
func (c *Cache) Path() string { return c.path }

// Close closes the file; the cache must not be used after.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Close()
}

// Embed serves what the file holds and sends the other texts, each once, to
// the inner embedder, storing what it returns.
func (c *Cache) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.EmbedEach(ctx, texts, nil)
}

// EmbedEach is Embed that tells each the vectors as they come: those from
// the file at once, the others as the inner embedder answers them. When the
// inner embedder is an embedcall.Streamer, each of its answers is stored as
// it comes, so that a call cut short keeps what it got.
func (c *Cache) EmbedEach(ctx context.Context, texts []string, each embedcall.Each) ([][]float32, error) {
	out := make([][]float32, len(texts))
	missing := map[[sha256.Size]byte][]int{} // a missing text's hash → where it goes in out
	var todo []string
	var hashes [][sha256.Size]byte
	var served []int
	for i, t := range texts {
		if t == "" {
			out[i] = make([]float32, c.dims)
			served = append(served, i)
			continue
		}
		h := sha256.Sum256([]byte(t))
		if v, ok := c.lookup(h); ok {
			out[i] = v
			served = append(served, i)
			c.hits.Add(1)
			continue
		}
		if _, ok := missing[h]; !ok {
			todo = append(todo, t)
			hashes = append(hashes, h)
		}
		missing[h] = append(missing[h], i)
	}
	if each != nil && len(served) > 0 {
		vs := make([][]float32, len(served))
		for k, i := range served {
			vs[k] = out[i]
		}
		each(served, vs)
	}
	if len(todo) == 0 {
		return out, nil
	}
	var stored error // the first failure to check or store an answer
	_, err := embedcall.EmbedEach(ctx, c.inner, todo, func(pos []int, vs [][]float32) {
		if stored != nil {
			return
		}
		if stored = c.check(len(pos), vs); stored != nil {
			return
		}
		hs := make([][sha256.Size]byte, len(pos))
		for k, j := range pos {
			hs[k] = hashes[j]
		}
		// Stored as returned, so that a run served from the file gets the
		// very bits a run without it would; the engine checks them either
		// way.
		if stored = c.store(hs, vs); stored != nil {
			return
		}
		c.misses.Add(int64(len(pos)))
		var at []int
		var got [][]float32
		for k, j := range pos {
			for n, i := range missing[hashes[j]] {
				v := vs[k]
				if n > 0 {
					v = append([]float32(nil), v...)
				}
				out[i] = v
				at, got = append(at, i), append(got, v)
			}
		}
		if each != nil {
			each(at, got)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("embedcache: %d texts not cached: %w", len(todo), err)
	}
	if stored != nil {
		return nil, stored
	}
	return out, nil
}

// check refuses an answer that is not n vectors of the cache's dimensions.
func (c *Cache) check(n int, vs [][]float32) error {
	if len(vs) != n {
		return fmt.Errorf("embedcache: %s returned %d vectors for %d texts", c.inner.ID(), len(vs), n)
	}
	for _, v := range vs {
		if len(v) != c.dims {
			return fmt.Errorf("embedcache: %s returned a vector of %d dimensions, want %d", c.inner.ID(), len(v), c.dims)
		}
	}
	return nil
}

// lookup reads the vector of the text of hash h, if the file holds it and
// its record still checks.
func (c *Cache) lookup(h [sha256.Size]byte) ([]float32, bool) {
	c.mu.RLock()
	off, ok := c.index[h]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	rec := make([]byte, c.size)
	if _, err := c.f.ReadAt(rec, off); err != nil || !c.valid(rec) || !bytes.Equal(rec[:sha256.Size], h[:]) {
		return nil, false // changed under us: embedded again, and stored anew
	}
	v := make([]float32, c.dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[sha256.Size+4*i:]))
	}
	return v, true
}

// store appends one record per vector, in one write.
func (c *Cache) store(hashes [][sha256.Size]byte, vs [][]float32) error {
	buf := make([]byte, 0, int64(len(vs))*c.size)
	for j, v := range vs {
		start := len(buf)
		buf = append(buf, hashes[j][:]...)
		for _, x := range v {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		}
		buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.WriteAt(buf, c.end); err != nil {
		// What was written in part is a torn tail: overwritten by the next
		// store, or cut off by the next Open.
		return fmt.Errorf("embedcache: write %s: %w", c.path, err)
	}
	for j, h := range hashes {
		c.index[h] = c.end + int64(j)*c.size
	}
	c.end += int64(len(buf))
	return nil
}

// Embedder is the cache as an engine takes it. When the inner embedder
// learns from its corpus (search.Fitter), so does the result: its Fit fits
// the inner embedder and returns the fitted one as it is, since a fitted
// embedder computes its vectors in process and a new fit makes new vectors.
func (c *Cache) Embedder() search.Embedder {
	if f, ok := c.inner.(search.Fitter); ok {
		return fitting{c, f}
	}
	return c
}

type fitting struct {
	*Cache
	f search.Fitter
}

func (f fitting) Fit(ctx context.Context, texts []string) (search.Embedder, error) {
	return f.f.Fit(ctx, texts)
}
