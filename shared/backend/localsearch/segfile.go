package localsearch

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/doclib/doclib/shared/search"
)

// A segment file is an index ready to search: what a query reads is stored
// as the engine holds it, so that reading a segment is copying its arrays
// into memory, not analysing text. Every integer is little-endian. Format 3
// puts first, in its hot part, what every query needs, and after it, in its
// cold part, what a query reads only for the words and vectors it touches,
// so that a search instance reads the hot part at start and the cold part by
// range (OpenSegment, cold.go):
//
//	magic      "doclib-segment\n\x00" (16 bytes)
//	format     uint32: SegmentFormat
//	dims       uint32: the vectors' length
//	counts     14 uint64s: documents, recordings, recording links, terms,
//	           postings, forward entries, deletions, tags, applications,
//	           string bytes, embedder ID bytes, term-library entries,
//	           stop-word entries, block size
//	embedder   the embedder's ID
//	strings    every string, concatenated, then their lengths (uint32s):
//	           per document its ID, library and category; the tags, the
//	           applications, the recording IDs, the terms and the deleted
//	           document IDs
//	documents  per document: its tag count, application count (uint32s),
//	           recording count (uint32), last seen (int64 Unix nanoseconds,
//	           MinInt64 when never), title and content lengths (uint16s)
//	screens    the documents', then the recordings' vectors as the screen
//	           reads them (quant.go): scales and sign dot products
//	           (float32s), sign bits (padded/64 uint64s each; padded is the
//	           next power of two of dims, at least 64)
//	links      per document, the offset of its recordings (documents+1
//	           uint32s), then the recording numbers
//	terms      per term, the offset of its postings (terms+1 uint32s)
//	libraries  per term, the offset of its entries (terms+1 uint32s), then
//	           the entries: a library that holds the term (uint32) and
//	           where its postings begin in the term's list (uint32), in
//	           the order of the libraries
//	forward    per document, the offset of its words (documents+1 uint32s)
//	stops      per document, the offset of its stop-word terms (documents+1
//	           uint32s)
//	orders     the documents most active first, then by ID (uint32s)
//	slots      format 4: per document, then per recording, the place of
//	           its codes among the documents' or the recordings' codes
//	           (uint32s, a permutation; order.go)
//	blocks     the CRC-32C of each block of the cold part (uint32s)
//	-- the cold part, cut in blocks of the block size --
//	postings   per term, its postings (document uint32, title and content
//	           counts uint16)
//	words      per document, its words (term uint32, count uint16, zero
//	           uint16), stop words left out
//	stops      per document, the terms it holds only as a stop word
//	           (uint32s, by term), which its words leave out: a term of
//	           a stop word ("have") may also be the stem of another word
//	           ("haves"), and a count of the documents that hold a term
//	           from the words alone would miss them
//	codes      zeros to a multiple of padded, then the documents' and the
//	           recordings' int8 codes (padded each), each in the order of
//	           its slots (format 3: of the documents and recordings), near
//	           vectors together, so that a query that reads the codes of
//	           the vectors its screen passes reads a few runs of blocks
//	checksum   CRC-32C of everything before it (uint32)
//
// The block size is a power of two and a multiple of padded, so that no
// vector's codes and no entry straddles two blocks; a manifest names the
// hot part's size and CRC-32C, so that a reader that reads the hot part
// alone, and the blocks it needs, checks every byte it uses.
//
// Formats 1 and 2 held every section in one part, with 11 counts: strings,
// documents, vectors (format 1: float32s, dims each; format 2: codes,
// scales, sign dot products and sign bits), links, postings, words and
// orders. They are read whole, format 1's vectors quantized as they are
// read.
//
// The counts come first, and the size of every section follows from them,
// so a reader checks that they add up to the object's size before it
// allocates anything: an object allocates a small multiple of its size
// however it was crafted. Every number that indexes an array is checked
// against it, and the orders and offsets are checked, before the index is
// used. A segment stores no text: a merge copies its structures (Merge).

// SegmentFormat is the segment format this program writes; it reads every
// format from MinSegmentFormat (1: float32 vectors) to it. Format 3 is
// format 4 without the slots: its codes lie in the order of the documents
// and recordings.
const (
	SegmentFormat    = 4
	MinSegmentFormat = 1
)

// DefaultBlockSize is the size of the blocks a segment's cold part is cut
// in, each checked by its own CRC and read, cached and dropped whole
// (docs/search.md, "Read by range"): 16 KiB, so that a short list of
// postings or a document's words costs a small read (64 KiB blocks read
// 18.3 MB for the first search at 100,000 documents, 16 KiB ones 10.2 MB),
// at 0.25 bytes of CRC in the hot part per KiB of cold part.
const DefaultBlockSize = 16 << 10

const (
	segmentMagic   = "doclib-segment\n\x00"
	segmentCounts  = 11 // formats 1 and 2
	segmentCounts3 = 14
	segmentHeader  = 16 + 4 + 4 + 8*segmentCounts
	segmentHeader3 = 16 + 4 + 4 + 8*segmentCounts3
	// Bounds of a segment's vector length and embedder ID.
	maxSegmentDims = 1 << 16
	maxEmbedderID  = 1 << 10
	// Bounds of a block.
	minBlockSize = 4 << 10
	maxBlockSize = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrSegment wraps what is wrong with a segment file; ErrSegmentIncompatible
// is a well-formed segment of another format or embedder.
var (
	ErrSegment             = errors.New("localsearch: not a valid segment")
	ErrSegmentIncompatible = errors.New("localsearch: a segment of another format or embedder")
)

// littleEndian is whether this machine stores integers as segments do: the
// arrays are read and written as they lie in memory.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// asBytes is the memory of s as bytes.
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// counts are a segment's counts, by name.
type counts struct {
	docs, recs, links, terms, posts, fwd, dels, tags, apps, strBytes, embBytes uint64
	// Format 3.
	termLibs, stops, block uint64
}

func (c *counts) list() []*uint64 {
	return []*uint64{&c.docs, &c.recs, &c.links, &c.terms, &c.posts, &c.fwd, &c.dels, &c.tags, &c.apps, &c.strBytes, &c.embBytes,
		&c.termLibs, &c.stops, &c.block}
}

// layout is where a format 3 segment's parts and cold sections lie.
type layout struct {
	hot, cold   uint64 // the hot part's bytes, from the file's start; the cold part's, after it
	block       uint64
	blocks      uint64 // the cold part's blocks
	post, fwd   uint64 // where the sections start in the cold part
	stops       uint64
	docs, recs  uint64 // the documents' and the recordings' codes
	postEntries uint64
}

// layout3 is the layout of a segment of format 3 or, with slots, 4 of these
// counts, or false when it cannot be one: a count of 2^40 or more, or a
// block size that is not a power of two from minBlockSize to maxBlockSize
// and a multiple of padded. Below those bounds no sum overflows.
func layout3(dims uint64, c counts, slots bool) (layout, bool) {
	for _, v := range c.list() {
		if *v >= 1<<40 {
			return layout{}, false
		}
	}
	p := uint64(paddedDims(int(dims)))
	if c.block < minBlockSize || c.block > maxBlockSize || c.block&(c.block-1) != 0 || c.block%p != 0 {
		return layout{}, false
	}
	var l layout
	l.block, l.postEntries = c.block, c.posts
	l.post = 0
	l.fwd = 8 * c.posts
	l.stops = l.fwd + 8*c.fwd
	l.docs = (l.stops + 4*c.stops + p - 1) / p * p
	l.recs = l.docs + p*c.docs
	l.cold = l.recs + p*c.recs
	l.blocks = (l.cold + l.block - 1) / l.block
	l.hot = segmentHeader3 + pad8(c.embBytes) + pad8(c.strBytes) + pad8(4*(3*c.docs+c.tags+c.apps+c.recs+c.terms+c.dels)) +
		3*pad8(4*c.docs) + 8*c.docs + 2*pad8(2*c.docs) +
		2*pad8(4*c.docs) + c.docs*p/8 + 2*pad8(4*c.recs) + c.recs*p/8 +
		pad8(4*(c.docs+1)) + pad8(4*c.links) +
		pad8(4*(c.terms+1)) +
		pad8(4*(c.terms+1)) + 8*c.termLibs +
		2*pad8(4*(c.docs+1)) +
		2*pad8(4*c.docs) +
		pad8(4*l.blocks)
	if slots {
		l.hot += pad8(4*c.docs) + pad8(4*c.recs)
	}
	return l, true
}

// pad8 is n rounded up to a multiple of 8: each section of a hot part
// starts on a multiple of 8, so that a reader can use the arrays where
// they lie, without copying them.
func pad8(n uint64) uint64 { return (n + 7) &^ 7 }

// segmentSize is the size of a segment file of format 1 or 2 and these
// counts, or false when it overflows. It is how a reader checks the counts
// against the object.
func segmentSize(format uint32, dims uint64, c counts) (uint64, bool) {
	var total uint64 = segmentHeader
	ok := true
	add := func(count, size uint64) {
		hi, lo := bits.Mul64(count, size)
		if hi != 0 {
			ok = false
			return
		}
		var carry uint64
		total, carry = bits.Add64(total, lo, 0)
		if carry != 0 {
			ok = false
		}
	}
	add(c.embBytes, 1)
	add(c.strBytes, 1)
	add(c.docs, 3*4) // three string lengths
	add(c.tags+c.apps+c.recs+c.terms+c.dels, 4)
	add(c.docs, 4+4+4+8+2+2)
	vector := dims * 4
	if format >= 2 {
		p := uint64(paddedDims(int(dims)))
		vector = p + 4 + 4 + p/8
	}
	add(c.docs, vector)
	add(c.recs, vector)
	add(c.docs+1, 4)
	add(c.links, 4)
	add(c.terms+1, 4)
	add(c.posts, 8)
	add(c.docs+1, 4)
	add(c.fwd, 8)
	add(c.docs, 4+4)
	add(1, 4)
	// Sums of counts can overflow too: bound each by the object's size in
	// the caller; here each is below 2^62 or the total overflowed.
	for _, v := range c.list()[:segmentCounts] {
		if *v >= 1<<40 {
			ok = false
		}
	}
	return total, ok
}

// segWriter writes a segment's sections, summing their CRC, and the hot
// part's apart.
type segWriter struct {
	w        *bufio.Writer
	crc, hot hash.Hash32
	n        int64
	err      error
}

func (sw *segWriter) write(b []byte) {
	if sw.err != nil {
		return
	}
	sw.crc.Write(b)
	if sw.hot != nil {
		sw.hot.Write(b)
	}
	var n int
	n, sw.err = sw.w.Write(b)
	sw.n += int64(n)
}

// section writes a section of the hot part, and zeros to a multiple of 8.
func (sw *segWriter) section(b []byte) {
	sw.write(b)
	var zeros [8]byte
	sw.write(zeros[:pad8(uint64(len(b)))-uint64(len(b))])
}

// SegmentInfo describes a segment file written: its size and CRC-32C, and
// its hot part's (the first HotBytes bytes).
type SegmentInfo struct {
	Bytes    int64
	CRC      uint32
	HotBytes int64
	HotCRC   uint32
}

// WriteSegment writes x, with the documents it deletes from older segments,
// as a segment file of blocks of DefaultBlockSize. It returns the bytes
// written and their CRC-32C.
func WriteSegment(w io.Writer, x *Index, deleted []string) (int64, uint32, error) {
	info, err := WriteSegmentBlocks(w, x, deleted, DefaultBlockSize)
	return info.Bytes, info.CRC, err
}

// WriteSegmentBlocks is WriteSegment with the cold part cut in blocks of
// block bytes (at least the vectors' padded length, which it is raised
// to), and the hot part's size and CRC-32C, which a manifest names.
func WriteSegmentBlocks(w io.Writer, x *Index, deleted []string, block int) (SegmentInfo, error) {
	if !littleEndian {
		return SegmentInfo{}, errors.New("localsearch: segments are written on little-endian machines only")
	}
	if x.cold != nil {
		return SegmentInfo{}, errors.New("localsearch: a segment opened by range is written only once it is read whole")
	}
	padded := uint64(x.rot.padded)
	b := uint64(1) << bits.Len64(uint64(max(block, minBlockSize))-1)
	b = min(max(b, padded), maxBlockSize)
	sw := &segWriter{w: bufio.NewWriterSize(w, 1<<16), crc: crc32.New(castagnoli), hot: crc32.New(castagnoli)}
	var strs strings.Builder
	var lens []uint32
	str := func(s string) {
		strs.WriteString(s)
		lens = append(lens, uint32(len(s)))
	}
	n := len(x.docs)
	tagN, appN := make([]uint32, n), make([]uint32, n)
	recCount := make([]uint32, n)
	lastSeen := make([]int64, n)
	var nTags, nApps int
	for i := range x.docs {
		d := &x.docs[i]
		str(d.ID)
		str(d.LibraryID)
		str(d.Category)
		tagN[i], appN[i] = uint32(len(d.Tags)), uint32(len(d.Applications))
		nTags += len(d.Tags)
		nApps += len(d.Applications)
		recCount[i] = uint32(min(max(d.RecordingCount, 0), math.MaxUint32))
		lastSeen[i] = math.MinInt64
		if !d.LastSeen.IsZero() {
			lastSeen[i] = d.LastSeen.UnixNano()
		}
	}
	for i := range x.docs {
		for _, t := range x.docs[i].Tags {
			str(t)
		}
	}
	for i := range x.docs {
		for _, a := range x.docs[i].Applications {
			str(a)
		}
	}
	for _, id := range x.recIDs {
		str(id)
	}
	for _, t := range x.termName {
		str(t)
	}
	for _, id := range deleted {
		str(id)
	}
	if x.termLibOff == nil {
		x.setTermLibs()
	}
	stopOff, stops := x.stopOnly()
	c := counts{docs: uint64(n), recs: uint64(len(x.recIDs)), links: uint64(len(x.docRecs)), terms: uint64(len(x.termName)),
		posts: uint64(len(x.post)), fwd: uint64(len(x.fwd)), dels: uint64(len(deleted)), tags: uint64(nTags), apps: uint64(nApps),
		strBytes: uint64(strs.Len()), embBytes: uint64(len(x.embedderID)), termLibs: uint64(len(x.termLib)), stops: uint64(len(stops)), block: b}
	lay, ok := layout3(uint64(x.dims), c, true)
	if !ok {
		return SegmentInfo{}, fmt.Errorf("localsearch: a segment of %d documents and %d postings is too large to write", n, len(x.post))
	}
	// The cold part, as it will be written: its blocks' CRCs go in the hot
	// part before it.
	pad := make([]byte, lay.docs-(lay.stops+4*c.stops))
	docSlot, recSlot := clusterOrder(&x.docQ, int(padded)), clusterOrder(&x.recQ, int(padded))
	cold := [][]byte{asBytes(x.post), asBytes(x.fwd), asBytes(stops), pad,
		asBytes(inSlots(x.docQ.code, docSlot, int(padded))), asBytes(inSlots(x.recQ.code, recSlot, int(padded)))}
	blockCRC := make([]uint32, 0, lay.blocks)
	var sum uint32
	var in uint64
	for _, s := range cold {
		for len(s) > 0 {
			take := min(uint64(len(s)), b-in)
			sum = crc32.Update(sum, castagnoli, s[:take])
			s, in = s[take:], in+take
			if in == b {
				blockCRC, sum, in = append(blockCRC, sum), 0, 0
			}
		}
	}
	if in > 0 {
		blockCRC = append(blockCRC, sum)
	}
	var head []byte
	head = append(head, segmentMagic...)
	head = binary.LittleEndian.AppendUint32(head, SegmentFormat)
	head = binary.LittleEndian.AppendUint32(head, uint32(x.dims))
	for _, v := range c.list() {
		head = binary.LittleEndian.AppendUint64(head, *v)
	}
	sw.write(head)
	sw.section([]byte(x.embedderID))
	sw.section([]byte(strs.String()))
	for _, s := range [][]byte{asBytes(lens), asBytes(tagN), asBytes(appN), asBytes(recCount), asBytes(lastSeen),
		asBytes(x.titleLen), asBytes(x.bodyLen)} {
		sw.section(s)
	}
	for _, q := range []*quantized{&x.docQ, &x.recQ} {
		sw.section(asBytes(q.scale))
		sw.section(asBytes(q.signDot))
		sw.section(asBytes(q.sign))
	}
	for _, s := range [][]byte{asBytes(x.docRecOff), asBytes(x.docRecs), asBytes(x.postOff), asBytes(x.termLibOff), asBytes(x.termLib),
		asBytes(x.fwdOff), asBytes(stopOff), asBytes(x.activity), asBytes(x.byID), asBytes(docSlot), asBytes(recSlot), asBytes(blockCRC)} {
		sw.section(s)
	}
	info := SegmentInfo{HotBytes: sw.n, HotCRC: sw.hot.Sum32()}
	sw.hot = nil
	if sw.err == nil && uint64(sw.n) != lay.hot {
		sw.err = fmt.Errorf("wrote a hot part of %d bytes, its counts make %d", sw.n, lay.hot)
	}
	for _, s := range cold {
		sw.write(s)
	}
	info.CRC = sw.crc.Sum32()
	sw.write(binary.LittleEndian.AppendUint32(nil, info.CRC))
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	if sw.err != nil {
		return SegmentInfo{}, fmt.Errorf("localsearch: write a segment: %w", sw.err)
	}
	info.Bytes = sw.n
	return info, nil
}

// stopOnly lists, per document, the terms it holds only as a stop word
// (in its postings, not in its words): the offsets (documents+1) and the
// terms, each document's in the order of the vocabulary. Only a term that
// is itself a stop word can be one.
func (x *Index) stopOnly() ([]uint32, []uint32) {
	n := len(x.docs)
	off := make([]uint32, n+1)
	stopTerm := make([]bool, len(x.termName))
	var candidates []uint32
	for t, name := range x.termName {
		if isStopTerm(name) {
			stopTerm[t] = true
			candidates = append(candidates, uint32(t))
		}
	}
	if len(candidates) == 0 {
		return off, nil
	}
	// Documents whose words hold a stop word's term (rare: "haves" is
	// "have"): those are looked up in their words.
	wordsHold := make([]bool, n)
	for d := range n {
		for _, tc := range x.fwd[x.fwdOff[d]:x.fwdOff[d+1]] {
			if stopTerm[tc.term] {
				wordsHold[d] = true
				break
			}
		}
	}
	inWords := func(d, t uint32) bool {
		if !wordsHold[d] {
			return false
		}
		for _, tc := range x.fwd[x.fwdOff[d]:x.fwdOff[d+1]] {
			if tc.term == t {
				return true
			}
		}
		return false
	}
	perDoc := make([]uint32, n)
	for _, t := range candidates {
		for _, p := range x.post[x.postOff[t]:x.postOff[t+1]] {
			if !inWords(p.doc, t) {
				perDoc[p.doc]++
			}
		}
	}
	for d := range n {
		off[d+1] = off[d] + perDoc[d]
	}
	stops := make([]uint32, off[n])
	next := slices.Clone(off[:n])
	for _, t := range candidates {
		for _, p := range x.post[x.postOff[t]:x.postOff[t+1]] {
			if !inWords(p.doc, t) {
				stops[next[p.doc]] = t
				next[p.doc]++
			}
		}
	}
	return off, stops
}

// isStopTerm says whether term is a stop word as the analyser keeps one:
// the word as written.
func isStopTerm(term string) bool {
	toks := analyzer().Tokens(term)
	return len(toks) == 1 && toks[0].Stop && toks[0].Term == term
}

// segReader reads a segment's sections, summing their CRC. With pad set
// (a hot part of format 3), each section is followed by zeros to a
// multiple of 8.
type segReader struct {
	r   io.Reader
	crc hash.Hash32
	pad bool
}

func (sr *segReader) fill(b []byte) error {
	if _, err := io.ReadFull(sr.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: it ends early", ErrSegment)
		}
		return err
	}
	sr.crc.Write(b)
	return nil
}

// section reads the next section, of n bytes, into new memory aligned for
// any array.
func (sr *segReader) section(n uint64) ([]byte, error) {
	b := alignedBytes(n)
	if len(b) >= populateBytes {
		populate(b)
	}
	if err := sr.fill(b); err != nil {
		return nil, err
	}
	if sr.pad {
		var zeros [8]byte
		p := zeros[:pad8(n)-n]
		if err := sr.fill(p); err != nil {
			return nil, err
		}
		if p != nil && binary.LittleEndian.Uint64(append(p, make([]byte, 8-len(p))...)) != 0 {
			return nil, fmt.Errorf("%w: a section's padding is not zeros", ErrSegment)
		}
	}
	return b, nil
}

// hotBuffer is a hot part in memory, read section by section where it
// lies: a segment opened by range uses its arrays without copying them.
type hotBuffer struct {
	b  []byte // aligned as alignedBytes aligns
	at uint64
}

func (hb *hotBuffer) fill(b []byte) error {
	if uint64(len(b)) > uint64(len(hb.b))-hb.at {
		return fmt.Errorf("%w: its hot part ends early", ErrSegment)
	}
	hb.at += uint64(copy(b, hb.b[hb.at:]))
	return nil
}

func (hb *hotBuffer) section(n uint64) ([]byte, error) {
	if n > uint64(len(hb.b))-hb.at || pad8(n) > uint64(len(hb.b))-hb.at {
		return nil, fmt.Errorf("%w: its hot part ends early", ErrSegment)
	}
	b := hb.b[hb.at : hb.at+n : hb.at+n]
	for _, z := range hb.b[hb.at+n : hb.at+pad8(n)] {
		if z != 0 {
			return nil, fmt.Errorf("%w: a section's padding is not zeros", ErrSegment)
		}
	}
	hb.at += pad8(n)
	return b, nil
}

// sections is where readArray reads from: a stream, or a hot part in
// memory.
type sections interface {
	section(n uint64) ([]byte, error)
}

// alignedBytes is n bytes of new memory, 8-byte aligned.
func alignedBytes(n uint64) []byte {
	if n == 0 {
		return nil
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:n]
}

func readArray[T any](src sections, n uint64) ([]T, error) {
	size := uint64(unsafe.Sizeof(*new(T)))
	b, err := src.section(n * size)
	if err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// populateBytes is the size from which an array's pages are mapped in one
// call before it is read (populate): below it, the call costs more than
// the faults it saves.
const populateBytes = 1 << 20

// header is what a segment's first bytes say.
type header struct {
	format uint32
	dims   uint32
	c      counts
	lay    layout // format 3
}

// headerSource is where a header is read from: a stream (segReader) or a
// hot part in memory (hotBuffer).
type headerSource interface {
	sections
	fill(b []byte) error
}

// readHeader reads and checks a segment's header and embedder ID, for an
// object of size bytes (or, when hotOnly, of whatever size the counts
// make, which the caller checks; only a format 3 segment then).
func readHeader(src headerSource, size int64, hotOnly bool, e search.Embedder) (header, error) {
	var h header
	head := make([]byte, segmentHeader3)
	if err := src.fill(head[:segmentHeader]); err != nil {
		return h, err
	}
	if string(head[:16]) != segmentMagic {
		return h, fmt.Errorf("%w: it does not start as one", ErrSegment)
	}
	h.format = binary.LittleEndian.Uint32(head[16:])
	if h.format < MinSegmentFormat || h.format > SegmentFormat {
		return h, fmt.Errorf("%w: format %d, this program reads %d to %d", ErrSegmentIncompatible, h.format, MinSegmentFormat, SegmentFormat)
	}
	n := segmentCounts
	if h.format >= 3 {
		n = segmentCounts3
		if err := src.fill(head[segmentHeader:]); err != nil {
			return h, err
		}
		if sr, ok := src.(*segReader); ok {
			sr.pad = true // the hot part's sections
		}
	}
	h.dims = binary.LittleEndian.Uint32(head[20:])
	for i, v := range h.c.list()[:n] {
		*v = binary.LittleEndian.Uint64(head[24+8*i:])
	}
	c := &h.c
	if h.dims == 0 || h.dims > maxSegmentDims || c.embBytes > maxEmbedderID {
		return h, fmt.Errorf("%w: %d dimensions, an embedder ID of %d bytes", ErrSegment, h.dims, c.embBytes)
	}
	if h.format >= 3 {
		lay, ok := layout3(uint64(h.dims), *c, h.format >= 4)
		total := lay.hot + lay.cold + 4
		if !ok || size < 0 || total != uint64(size) {
			return h, fmt.Errorf("%w: its counts make %d bytes, the object has %d", ErrSegment, total, size)
		}
		h.lay = lay
	} else if total, ok := segmentSize(h.format, uint64(h.dims), *c); hotOnly || !ok || size < 0 || total != uint64(size) {
		return h, fmt.Errorf("%w: its counts make %d bytes, the object has %d", ErrSegment, total, size)
	}
	if c.docs > math.MaxUint32-1 || c.recs > math.MaxUint32 || c.terms > math.MaxUint32-1 || c.links > math.MaxUint32 ||
		c.posts > math.MaxUint32 || c.fwd > math.MaxUint32 || c.termLibs > math.MaxUint32 || c.stops > math.MaxUint32 {
		return h, fmt.Errorf("%w: counts past 2^32", ErrSegment)
	}
	emb, err := src.section(c.embBytes)
	if err != nil {
		return h, err
	}
	if string(emb) != e.ID() || int(h.dims) != e.Dimensions() {
		return h, fmt.Errorf("%w: its vectors are of embedder %q (%d dimensions), this program embeds with %q (%d dimensions)",
			ErrSegmentIncompatible, emb, h.dims, e.ID(), e.Dimensions())
	}
	return h, nil
}

// ReadSegment reads a segment file of size bytes: the index, for queries
// embedded by e, and the documents it deletes from older segments. A
// segment of another format or embedder is ErrSegmentIncompatible; one that
// is cut short, corrupt or inconsistent, ErrSegment. Nothing is allocated
// before the counts are found to add up to size.
func ReadSegment(r io.Reader, size int64, e search.Embedder) (*Index, []string, error) {
	if !littleEndian {
		return nil, nil, errors.New("localsearch: segments are read on little-endian machines only")
	}
	sr := &segReader{r: r, crc: crc32.New(castagnoli)}
	h, err := readHeader(sr, size, false, e)
	if err != nil {
		return nil, nil, err
	}
	x, deleted, cold, err := readParts(sr, h, e, sr)
	if err != nil {
		return nil, nil, err
	}
	want := sr.crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return nil, nil, fmt.Errorf("%w: it ends early", ErrSegment)
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != want {
		return nil, nil, fmt.Errorf("%w: checksum %08x, its content sums to %08x", ErrSegment, got, want)
	}
	if err := x.checkArrays(); err != nil {
		return nil, nil, err
	}
	if h.format >= 3 {
		// What a reader by range reads must be what this one reads.
		if err := x.checkTermLibs(); err != nil {
			return nil, nil, err
		}
		if off, stops := x.stopOnly(); !slices.Equal(off, cold.stopOff) || !slices.Equal(stops, cold.stops) {
			return nil, nil, fmt.Errorf("%w: its stop-word terms are not those of its postings", ErrSegment)
		}
	} else {
		x.setTermLibs()
	}
	if err := x.finish(); err != nil {
		return nil, nil, err
	}
	return x, deleted, nil
}

// hotExtra is what a format 3 segment's hot part holds beyond the index's
// fields, for its cold part.
type hotExtra struct {
	stopOff          []uint32
	stops            []uint32 // read whole only
	docSlot, recSlot []uint32 // format 4; nil: in order
	blockCRC         []uint32
}

// readParts reads what follows a header: the hot part's sections from
// sr, then, unless cold is nil (a segment opened by range), the cold
// part's from cold; and checks what can be checked of the documents and
// strings.
func readParts(sr sections, h header, e search.Embedder, cold *segReader) (*Index, []string, *hotExtra, error) {
	c := h.c
	blob, err := readArray[byte](sr, c.strBytes)
	if err != nil {
		return nil, nil, nil, err
	}
	lens, err := readArray[uint32](sr, 3*c.docs+c.tags+c.apps+c.recs+c.terms+c.dels)
	if err != nil {
		return nil, nil, nil, err
	}
	var a struct {
		tagN, appN, recCount []uint32
		lastSeen             []int64
	}
	x := &Index{embedder: e, embedderID: e.ID(), dims: int(h.dims), rot: rotationFor(int(h.dims)), libs: map[string]span{}}
	padded := uint64(x.rot.padded)
	nDocs, nRecs := c.docs, c.recs
	screen := func(q *quantized, n uint64) []func() error {
		return []func() error{
			func() (err error) {
				if q.scale, err = readArray[float32](sr, n); err != nil {
					return err
				}
				for _, f := range q.scale {
					if !(f >= 0 && f <= math.MaxFloat32) {
						return fmt.Errorf("%w: a vector's scale is %v", ErrSegment, f)
					}
				}
				return nil
			},
			func() (err error) {
				if q.signDot, err = readArray[float32](sr, n); err != nil {
					return err
				}
				for _, f := range q.signDot {
					if !(f >= 0 && f <= 1.01) { // at most the unit vector's length
						return fmt.Errorf("%w: a vector's sign dot product is %v", ErrSegment, f)
					}
				}
				return nil
			},
			func() (err error) { q.sign, err = readArray[uint64](sr, n*padded/64); return },
		}
	}
	codes := func(q *quantized, n uint64) func() error {
		return func() (err error) { q.code, err = readArray[int8](sr, n*padded); return }
	}
	vectors := func(q *quantized, n uint64) []func() error {
		if h.format == 1 {
			return []func() error{func() error {
				f, err := readArray[float32](sr, n*uint64(h.dims))
				if err != nil {
					return err
				}
				d := int(h.dims)
				for i := range int(n) {
					v, err := x.checkVector(f[i*d : (i+1)*d])
					if err != nil {
						return fmt.Errorf("%w: %w", ErrSegment, err)
					}
					copy(f[i*d:], v) // normalised where it was not
				}
				*q = x.rot.quantizeAll(int(n), func(i int) []float32 { return f[i*d : (i+1)*d] }, 0)
				return nil
			}}
		}
		return append([]func() error{codes(q, n)}, screen(q, n)...)
	}
	extra := &hotExtra{}
	steps := []func() error{
		func() (err error) { a.tagN, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { a.appN, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { a.recCount, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { a.lastSeen, err = readArray[int64](sr, nDocs); return },
		func() (err error) { x.titleLen, err = readArray[uint16](sr, nDocs); return },
		func() (err error) { x.bodyLen, err = readArray[uint16](sr, nDocs); return },
	}
	links := []func() error{
		func() (err error) { x.docRecOff, err = readArray[uint32](sr, nDocs+1); return },
		func() (err error) { x.docRecs, err = readArray[uint32](sr, c.links); return },
		func() (err error) { x.postOff, err = readArray[uint32](sr, c.terms+1); return },
	}
	orders := []func() error{
		func() (err error) { x.activity, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { x.byID, err = readArray[uint32](sr, nDocs); return },
	}
	if h.format < 3 {
		steps = append(steps, vectors(&x.docQ, nDocs)...)
		steps = append(steps, vectors(&x.recQ, nRecs)...)
		steps = append(steps, links...)
		steps = append(steps,
			func() (err error) { x.post, err = readArray[posting](sr, c.posts); return },
			func() (err error) { x.fwdOff, err = readArray[uint32](sr, nDocs+1); return },
			func() (err error) { x.fwd, err = readArray[termCount](sr, c.fwd); return })
		steps = append(steps, orders...)
	} else {
		steps = append(steps, screen(&x.docQ, nDocs)...)
		steps = append(steps, screen(&x.recQ, nRecs)...)
		steps = append(steps, links...)
		steps = append(steps,
			func() (err error) { x.termLibOff, err = readArray[uint32](sr, c.terms+1); return },
			func() (err error) { x.termLib, err = readArray[termLib](sr, c.termLibs); return },
			func() (err error) { x.fwdOff, err = readArray[uint32](sr, nDocs+1); return },
			func() (err error) { extra.stopOff, err = readArray[uint32](sr, nDocs+1); return })
		steps = append(steps, orders...)
		if h.format >= 4 {
			steps = append(steps,
				func() (err error) { extra.docSlot, err = readSlots(sr, nDocs); return },
				func() (err error) { extra.recSlot, err = readSlots(sr, nRecs); return })
		}
		steps = append(steps, func() (err error) { extra.blockCRC, err = readArray[uint32](sr, h.lay.blocks); return })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, nil, nil, err
		}
	}
	if h.format >= 3 && cold != nil {
		// The cold part, read whole: each block checked as it comes.
		cold.pad = false
		cr := &blockReader{sr: cold, sums: extra.blockCRC, size: h.lay.block}
		pad := uint64(0)
		for _, step := range []func() error{
			func() (err error) { x.post, err = readBlocks[posting](cr, c.posts); return },
			func() (err error) { x.fwd, err = readBlocks[termCount](cr, c.fwd); return },
			func() (err error) {
				extra.stops, err = readBlocks[uint32](cr, c.stops)
				pad = h.lay.docs - cr.at
				return
			},
			func() error { _, err := readBlocks[byte](cr, pad); return err },
			func() (err error) { x.docQ.code, err = readBlocks[int8](cr, nDocs*padded); return },
			func() (err error) { x.recQ.code, err = readBlocks[int8](cr, nRecs*padded); return },
		} {
			if err := step(); err != nil {
				return nil, nil, nil, err
			}
		}
		if err := cr.end(); err != nil {
			return nil, nil, nil, err
		}
		x.docQ.code = fromSlots(x.docQ.code, extra.docSlot, int(padded))
		x.recQ.code = fromSlots(x.recQ.code, extra.recSlot, int(padded))
	}
	deleted, err := x.setDocs(blob, lens, a.tagN, a.appN, a.recCount, a.lastSeen, c)
	if err != nil {
		return nil, nil, nil, err
	}
	return x, deleted, extra, nil
}

// blockReader reads a cold part whole, checking each block's CRC.
type blockReader struct {
	sr   *segReader
	sums []uint32
	size uint64
	at   uint64 // bytes read of the cold part
	crc  uint32 // of the block being read
	err  error  // the first block that did not sum to its CRC
}

func readBlocks[T any](br *blockReader, n uint64) ([]T, error) {
	s, err := readArray[T](&segReader{r: br.sr.r, crc: br}, n)
	if err == nil {
		err = br.err
	}
	return s, err
}

// Write is the hash.Hash32 that readArray sums the bytes it reads into:
// the file's CRC and their block's.
func (br *blockReader) Write(p []byte) (int, error) {
	br.sr.crc.Write(p)
	n := len(p)
	for len(p) > 0 {
		take := min(uint64(len(p)), br.size-br.at%br.size)
		br.crc = crc32.Update(br.crc, castagnoli, p[:take])
		p, br.at = p[take:], br.at+take
		if br.at%br.size == 0 {
			br.check()
		}
	}
	return n, nil
}

func (br *blockReader) check() {
	k := (br.at - 1) / br.size
	if br.err == nil && (k >= uint64(len(br.sums)) || br.sums[k] != br.crc) {
		br.err = fmt.Errorf("%w: block %d of the cold part does not sum to its CRC", ErrSegment, k)
	}
	br.crc = 0
}

// end checks the last block, if it is short.
func (br *blockReader) end() error {
	if br.at%br.size != 0 {
		br.check()
	}
	return br.err
}

func (br *blockReader) Sum(b []byte) []byte { return b }
func (br *blockReader) Reset()              {}
func (br *blockReader) Size() int           { return 4 }
func (br *blockReader) BlockSize() int      { return 1 }
func (br *blockReader) Sum32() uint32       { return br.crc }

// setDocs makes the documents from what a segment's hot part says of them,
// numbered library by library, and returns the deletions: every string is
// a slice of blob, and every count and order is checked.
func (x *Index) setDocs(blob []byte, lens, tagN, appN, recCount []uint32, lastSeen []int64, c counts) ([]string, error) {
	// The strings share the blob's memory: one string, sliced.
	all := unsafe.String(unsafe.SliceData(blob), len(blob))
	var at uint64
	bad := false
	next := func() string {
		l := uint64(lens[0])
		lens = lens[1:]
		if at+l > uint64(len(all)) {
			bad = true
			return ""
		}
		s := all[at : at+l]
		at += l
		return s
	}
	nDocs := c.docs
	x.docs = make([]search.Doc, nDocs)
	x.docLib = make([]uint16, nDocs)
	for i := range x.docs {
		d := &x.docs[i]
		d.ID, d.LibraryID, d.Category = next(), next(), next()
		d.RecordingCount = int(recCount[i])
		if ns := lastSeen[i]; ns != math.MinInt64 {
			d.LastSeen = time.Unix(0, ns).UTC()
		}
		if i == 0 || d.LibraryID != x.libIDs[len(x.libIDs)-1] {
			if i > 0 && d.LibraryID < x.libIDs[len(x.libIDs)-1] || len(x.libIDs) == math.MaxUint16 {
				return nil, fmt.Errorf("%w: the libraries are not in order, each together", ErrSegment)
			}
			if i > 0 {
				prev := x.libIDs[len(x.libIDs)-1]
				x.libs[prev] = span{x.libs[prev].start, uint32(i)}
			}
			x.libIDs = append(x.libIDs, d.LibraryID)
			x.libs[d.LibraryID] = span{uint32(i), uint32(i)}
		} else if d.ID <= x.docs[i-1].ID {
			return nil, fmt.Errorf("%w: document %q after %q", ErrSegment, d.ID, x.docs[i-1].ID)
		}
		x.docLib[i] = uint16(len(x.libIDs) - 1)
	}
	if len(x.libIDs) > 0 {
		last := x.libIDs[len(x.libIDs)-1]
		x.libs[last] = span{x.libs[last].start, uint32(nDocs)}
	}
	var tagSum, appSum uint64
	for i := range nDocs {
		tagSum += uint64(tagN[i])
		appSum += uint64(appN[i])
	}
	if tagSum != c.tags || appSum != c.apps {
		return nil, fmt.Errorf("%w: the documents' tags and applications do not add up", ErrSegment)
	}
	for i := range x.docs {
		if n := tagN[i]; n > 0 {
			x.docs[i].Tags = make([]string, n)
			for j := range x.docs[i].Tags {
				x.docs[i].Tags[j] = next()
			}
		}
	}
	for i := range x.docs {
		if n := appN[i]; n > 0 {
			x.docs[i].Applications = make([]string, n)
			for j := range x.docs[i].Applications {
				x.docs[i].Applications[j] = next()
			}
		}
	}
	x.recIDs = make([]string, c.recs)
	for i := range x.recIDs {
		x.recIDs[i] = next()
		if i > 0 && x.recIDs[i] <= x.recIDs[i-1] {
			return nil, fmt.Errorf("%w: recordings out of order", ErrSegment)
		}
	}
	x.termName = make([]string, c.terms)
	for i := range x.termName {
		x.termName[i] = next()
		if i > 0 && x.termName[i] <= x.termName[i-1] {
			return nil, fmt.Errorf("%w: terms out of order", ErrSegment)
		}
	}
	deleted := make([]string, c.dels)
	for i := range deleted {
		deleted[i] = next()
	}
	if bad || at != uint64(len(all)) {
		return nil, fmt.Errorf("%w: the string lengths do not add up", ErrSegment)
	}
	labels := search.NewLabelTable()
	for i := range x.docs {
		labels.Intern(&x.docs[i])
	}
	return deleted, nil
}

// finish makes what a read index derives from its arrays, once they are
// checked: the libraries' lengths and recordings, and the vocabulary.
func (x *Index) finish() error {
	x.libTitle = make([]float64, len(x.libIDs))
	x.libBody = make([]float64, len(x.libIDs))
	for i := range x.docs {
		x.libTitle[x.docLib[i]] += float64(x.titleLen[i])
		x.libBody[x.docLib[i]] += float64(x.bodyLen[i])
	}
	x.libRecs = make([][]uint32, len(x.libIDs))
	for i := range x.docs {
		li := x.docLib[i]
		x.libRecs[li] = append(x.libRecs[li], x.docRecs[x.docRecOff[i]:x.docRecOff[i+1]]...)
	}
	for li, rs := range x.libRecs {
		slices.Sort(rs)
		x.libRecs[li] = slices.Clip(slices.Compact(rs))
	}
	if err := x.setVocabulary(x.termName); err != nil {
		return err
	}
	x.whole = newSegment(x, nil)
	return nil
}

// offsets checks that off (of an array's entries, total of them) starts
// at 0, ends at total and never goes back.
func offsets(what string, off []uint32, total uint64) error {
	if off[0] != 0 || uint64(off[len(off)-1]) != total {
		return fmt.Errorf("%w: the %s offsets do not span their entries", ErrSegment, what)
	}
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return fmt.Errorf("%w: the %s offsets go back", ErrSegment, what)
		}
	}
	return nil
}

// checkHot checks that every offset, number and order of what a segment's
// hot part holds is in range, so that no query can index out of bounds.
func (x *Index) checkHot(c counts) error {
	n := uint32(len(x.docs))
	if err := offsets("recording", x.docRecOff, uint64(len(x.docRecs))); err != nil {
		return err
	}
	if err := offsets("posting", x.postOff, c.posts); err != nil {
		return err
	}
	if err := offsets("forward", x.fwdOff, c.fwd); err != nil {
		return err
	}
	nRecs := uint32(len(x.recIDs))
	for _, r := range x.docRecs {
		if r >= nRecs {
			return fmt.Errorf("%w: a recording number past the recordings", ErrSegment)
		}
	}
	for _, order := range [][]uint32{x.activity, x.byID} {
		seen := make([]bool, n)
		for _, o := range order {
			if o >= n || seen[o] {
				return fmt.Errorf("%w: an order that is not of every document once", ErrSegment)
			}
			seen[o] = true
		}
	}
	for i := 1; i < len(x.byID); i++ {
		if x.docs[x.byID[i]].ID <= x.docs[x.byID[i-1]].ID {
			return fmt.Errorf("%w: the documents by ID are out of order", ErrSegment)
		}
	}
	// Segments' lists are merged as they are (mostActive): one out of order
	// would list another order than the index their merge makes (FuzzFold).
	for i := 1; i < len(x.activity); i++ {
		if search.MoreActive(&x.docs[x.activity[i-1]], &x.docs[x.activity[i]]) >= 0 {
			return fmt.Errorf("%w: the documents by activity are out of order", ErrSegment)
		}
	}
	if x.termLibOff != nil {
		return x.checkTermLibShape()
	}
	return nil
}

// checkTermLibShape checks the term-library entries against the postings'
// offsets: per term, libraries in order, each with postings, the first
// from the list's start.
func (x *Index) checkTermLibShape() error {
	if err := offsets("term-library", x.termLibOff, uint64(len(x.termLib))); err != nil {
		return err
	}
	nLibs := uint32(len(x.libIDs))
	for t := 0; t+1 < len(x.termLibOff); t++ {
		es := x.termLib[x.termLibOff[t]:x.termLibOff[t+1]]
		count := x.postOff[t+1] - x.postOff[t]
		if (len(es) == 0) != (count == 0) {
			return fmt.Errorf("%w: a term's libraries do not match its postings", ErrSegment)
		}
		for j, e := range es {
			if e.lib >= nLibs || j == 0 && e.start != 0 || j > 0 && (e.lib <= es[j-1].lib || e.start <= es[j-1].start) || e.start >= count {
				return fmt.Errorf("%w: a term's libraries are out of order or range", ErrSegment)
			}
		}
	}
	return nil
}

// checkArrays checks a whole index: its hot part's arrays, and that every
// posting and word is in range and in order.
func (x *Index) checkArrays() error {
	c := counts{posts: uint64(len(x.post)), fwd: uint64(len(x.fwd))}
	if err := x.checkHot(c); err != nil {
		return err
	}
	n := uint32(len(x.docs))
	for t := 0; t+1 < len(x.postOff); t++ {
		prev := int64(-1)
		for _, p := range x.post[x.postOff[t]:x.postOff[t+1]] {
			if p.doc >= n || int64(p.doc) <= prev {
				return fmt.Errorf("%w: the postings of a term are not documents in order", ErrSegment)
			}
			prev = int64(p.doc)
		}
	}
	nTerms := uint32(len(x.postOff) - 1)
	for _, f := range x.fwd {
		if f.term >= nTerms {
			return fmt.Errorf("%w: a word past the vocabulary", ErrSegment)
		}
	}
	return nil
}

// checkTermLibs checks that the term-library entries read are those of the
// postings.
func (x *Index) checkTermLibs() error {
	off, entries := x.termLibOff, x.termLib
	x.setTermLibs()
	if !slices.Equal(off, x.termLibOff) || !slices.Equal(entries, x.termLib) {
		return fmt.Errorf("%w: its term-library entries are not those of its postings", ErrSegment)
	}
	return nil
}

// setTermLibs lists, per term, the libraries that hold it and where their
// postings begin in its list.
func (x *Index) setTermLibs() {
	x.termLibOff = make([]uint32, 1, len(x.postOff))
	x.termLib = nil
	for t := 0; t+1 < len(x.postOff); t++ {
		last := -1
		ps := x.post[x.postOff[t]:x.postOff[t+1]]
		for i, p := range ps {
			if l := int(x.docLib[p.doc]); l != last {
				x.termLib = append(x.termLib, termLib{lib: uint32(l), start: uint32(i)})
				last = l
			}
		}
		x.termLibOff = append(x.termLibOff, uint32(len(x.termLib)))
	}
}

// readSlots reads n slots, and checks that they are a permutation of
// [0, n): each vector's codes in a place of their own.
func readSlots(sr sections, n uint64) ([]uint32, error) {
	slots, err := readArray[uint32](sr, n)
	if err != nil {
		return nil, err
	}
	seen := make([]bool, n)
	for _, s := range slots {
		if uint64(s) >= n || seen[s] {
			return nil, fmt.Errorf("%w: the slots of its codes are not a permutation", ErrSegment)
		}
		seen[s] = true
	}
	return slots, nil
}

// inSlots is codes (padded each) with vector i's at slot[i].
func inSlots(codes []int8, slot []uint32, padded int) []int8 {
	out := make([]int8, len(codes))
	for i, s := range slot {
		copy(out[int(s)*padded:(int(s)+1)*padded], codes[i*padded:(i+1)*padded])
	}
	return out
}

// fromSlots is codes in slots back in the vectors' order (codes itself
// when slot is nil).
func fromSlots(codes []int8, slot []uint32, padded int) []int8 {
	if slot == nil {
		return codes
	}
	out := make([]int8, len(codes))
	for i, s := range slot {
		copy(out[i*padded:(i+1)*padded], codes[int(s)*padded:(int(s)+1)*padded])
	}
	return out
}
