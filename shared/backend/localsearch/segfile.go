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
// into memory, not analysing text. Every integer is little-endian.
//
//	magic      "doclib-segment\n\x00" (16 bytes)
//	format     uint32: SegmentFormat
//	dims       uint32: the vectors' length
//	counts     11 uint64s: documents, recordings, recording links, terms,
//	           postings, forward entries, deletions, tags, applications,
//	           string bytes, embedder ID bytes
//	embedder   the embedder's ID
//	strings    every string, concatenated, then their lengths (uint32s):
//	           per document its ID, library and category; the tags, the
//	           applications, the recording IDs, the terms and the deleted
//	           document IDs
//	documents  per document: its tag count, application count (uint32s),
//	           recording count (uint32), last seen (int64 Unix nanoseconds,
//	           MinInt64 when never), title and content lengths (uint16s)
//	vectors    the documents', then the recordings', each quantized
//	           (quant.go): their int8 codes (padded each, padded the next
//	           power of two of dims, at least 64), scales and sign dot
//	           products (float32s) and sign bits (padded/64 uint64s each).
//	           Format 1 stored float32s, dims each; it is read, and
//	           quantized as it is read.
//	links      per document, the offset of its recordings (documents+1
//	           uint32s), then the recording numbers
//	postings   per term, the offset of its postings (terms+1 uint32s), then
//	           the postings (document uint32, title and content counts uint16)
//	forward    per document, the offset of its words (documents+1 uint32s),
//	           then the words (term uint32, count uint16, zero uint16)
//	orders     the documents most active first, then by ID (uint32s)
//	checksum   CRC-32C of everything before it (uint32)
//
// The counts come first, and the size of every section follows from them,
// so a reader checks that they add up to the object's size before it
// allocates anything: an object allocates a small multiple of its size
// however it was crafted. Every number that indexes an array is checked
// against it, and the orders and offsets are checked, before the index is
// used. A segment stores no text: a merge copies its structures (Merge).

// SegmentFormat is the segment format this program writes; it reads every
// format from MinSegmentFormat (1: float32 vectors) to it.
const (
	SegmentFormat    = 2
	MinSegmentFormat = 1
)

const (
	segmentMagic  = "doclib-segment\n\x00"
	segmentCounts = 11
	segmentHeader = 16 + 4 + 4 + 8*segmentCounts
	// Bounds of a segment's vector length and embedder ID.
	maxSegmentDims = 1 << 16
	maxEmbedderID  = 1 << 10
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

// segWriter writes a segment's sections, summing their CRC.
type segWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
	err error
}

func (sw *segWriter) write(b []byte) {
	if sw.err != nil {
		return
	}
	sw.crc.Write(b)
	var n int
	n, sw.err = sw.w.Write(b)
	sw.n += int64(n)
}

func (sw *segWriter) u32(v uint32) { sw.write(binary.LittleEndian.AppendUint32(nil, v)) }

// WriteSegment writes x, with the documents it deletes from older segments,
// as a segment file. It returns the bytes written and their CRC-32C.
func WriteSegment(w io.Writer, x *Index, deleted []string) (int64, uint32, error) {
	if !littleEndian {
		return 0, 0, errors.New("localsearch: segments are written on little-endian machines only")
	}
	sw := &segWriter{w: bufio.NewWriterSize(w, 1<<16), crc: crc32.New(castagnoli)}
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
	var head []byte
	head = append(head, segmentMagic...)
	head = binary.LittleEndian.AppendUint32(head, SegmentFormat)
	head = binary.LittleEndian.AppendUint32(head, uint32(x.dims))
	for _, c := range []int{n, len(x.recIDs), len(x.docRecs), len(x.termName), len(x.post), len(x.fwd), len(deleted),
		nTags, nApps, strs.Len(), len(x.embedderID)} {
		head = binary.LittleEndian.AppendUint64(head, uint64(c))
	}
	sw.write(head)
	sw.write([]byte(x.embedderID))
	sw.write([]byte(strs.String()))
	sw.write(asBytes(lens))
	sw.write(asBytes(tagN))
	sw.write(asBytes(appN))
	sw.write(asBytes(recCount))
	sw.write(asBytes(lastSeen))
	sw.write(asBytes(x.titleLen))
	sw.write(asBytes(x.bodyLen))
	for _, q := range []*quantized{&x.docQ, &x.recQ} {
		sw.write(asBytes(q.code))
		sw.write(asBytes(q.scale))
		sw.write(asBytes(q.signDot))
		sw.write(asBytes(q.sign))
	}
	sw.write(asBytes(x.docRecOff))
	sw.write(asBytes(x.docRecs))
	sw.write(asBytes(x.postOff))
	sw.write(asBytes(x.post))
	sw.write(asBytes(x.fwdOff))
	sw.write(asBytes(x.fwd))
	sw.write(asBytes(x.activity))
	sw.write(asBytes(x.byID))
	sum := sw.crc.Sum32()
	sw.u32(sum)
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	if sw.err != nil {
		return sw.n, 0, fmt.Errorf("localsearch: write a segment: %w", sw.err)
	}
	return sw.n, sum, nil
}

// segmentSize is the size of a segment file of this format and these
// counts, or false when it overflows. It is how a reader checks the counts
// against the object.
func segmentSize(format uint32, dims uint64, c [segmentCounts]uint64) (uint64, bool) {
	docs, recs, links, terms, posts, fwd, dels, tags, apps, strBytes, embBytes := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]
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
	add(embBytes, 1)
	add(strBytes, 1)
	add(docs, 3*4) // three string lengths
	add(tags+apps+recs+terms+dels, 4)
	add(docs, 4+4+4+8+2+2)
	vector := dims * 4
	if format >= 2 {
		p := uint64(paddedDims(int(dims)))
		vector = p + 4 + 4 + p/8
	}
	add(docs, vector)
	add(recs, vector)
	add(docs+1, 4)
	add(links, 4)
	add(terms+1, 4)
	add(posts, 8)
	add(docs+1, 4)
	add(fwd, 8)
	add(docs, 4+4)
	add(1, 4)
	// Sums of counts can overflow too: bound each by the object's size in
	// the caller; here each is below 2^62 or the total overflowed.
	for _, v := range c {
		if v >= 1<<40 {
			ok = false
		}
	}
	return total, ok
}

// segReader reads a segment's sections, summing their CRC.
type segReader struct {
	r   io.Reader
	crc hash.Hash32
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

func readArray[T any](sr *segReader, n uint64) ([]T, error) {
	s := make([]T, n)
	b := asBytes(s)
	if len(b) >= populateBytes {
		populate(b)
	}
	return s, sr.fill(b)
}

// populateBytes is the size from which an array's pages are mapped in one
// call before it is read (populate): below it, the call costs more than
// the faults it saves.
const populateBytes = 1 << 20

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
	var head [segmentHeader]byte
	if err := sr.fill(head[:]); err != nil {
		return nil, nil, err
	}
	if string(head[:16]) != segmentMagic {
		return nil, nil, fmt.Errorf("%w: it does not start as one", ErrSegment)
	}
	format := binary.LittleEndian.Uint32(head[16:])
	if format < MinSegmentFormat || format > SegmentFormat {
		return nil, nil, fmt.Errorf("%w: format %d, this program reads %d to %d", ErrSegmentIncompatible, format, MinSegmentFormat, SegmentFormat)
	}
	dims := binary.LittleEndian.Uint32(head[20:])
	var c [segmentCounts]uint64
	for i := range c {
		c[i] = binary.LittleEndian.Uint64(head[24+8*i:])
	}
	if dims == 0 || dims > maxSegmentDims || c[10] > maxEmbedderID {
		return nil, nil, fmt.Errorf("%w: %d dimensions, an embedder ID of %d bytes", ErrSegment, dims, c[10])
	}
	if total, ok := segmentSize(format, uint64(dims), c); !ok || size < 0 || total != uint64(size) {
		return nil, nil, fmt.Errorf("%w: its counts make %d bytes, the object has %d", ErrSegment, total, size)
	}
	nDocs, nRecs, nLinks, nTerms, nPosts, nFwd, nDel, nTags, nApps, strBytes := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
	if nDocs > math.MaxUint32-1 || nRecs > math.MaxUint32 || nTerms > math.MaxUint32-1 || nLinks > math.MaxUint32 || nPosts > math.MaxUint32 || nFwd > math.MaxUint32 {
		return nil, nil, fmt.Errorf("%w: counts past 2^32", ErrSegment)
	}
	emb := make([]byte, c[10])
	if err := sr.fill(emb); err != nil {
		return nil, nil, err
	}
	if string(emb) != e.ID() || int(dims) != e.Dimensions() {
		return nil, nil, fmt.Errorf("%w: its vectors are of embedder %q (%d dimensions), this program embeds with %q (%d dimensions)",
			ErrSegmentIncompatible, emb, dims, e.ID(), e.Dimensions())
	}
	blob, err := readArray[byte](sr, strBytes)
	if err != nil {
		return nil, nil, err
	}
	lens, err := readArray[uint32](sr, 3*nDocs+nTags+nApps+nRecs+nTerms+nDel)
	if err != nil {
		return nil, nil, err
	}
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
	var a struct {
		tagN, appN, recCount []uint32
		lastSeen             []int64
	}
	x := &Index{embedder: e, embedderID: e.ID(), dims: int(dims), rot: rotationFor(int(dims)), libs: map[string]span{}}
	padded := uint64(x.rot.padded)
	vectors := func(q *quantized, n uint64) func() error {
		if format == 1 {
			return func() error {
				f, err := readArray[float32](sr, n*uint64(dims))
				if err != nil {
					return err
				}
				d := int(dims)
				for i := range int(n) {
					v, err := x.checkVector(f[i*d : (i+1)*d])
					if err != nil {
						return fmt.Errorf("%w: %w", ErrSegment, err)
					}
					copy(f[i*d:], v) // normalised where it was not
				}
				*q = x.rot.quantizeAll(int(n), func(i int) []float32 { return f[i*d : (i+1)*d] }, 0)
				return nil
			}
		}
		return func() (err error) {
			if q.code, err = readArray[int8](sr, n*padded); err != nil {
				return err
			}
			if q.scale, err = readArray[float32](sr, n); err != nil {
				return err
			}
			for _, f := range q.scale {
				if !(f >= 0 && f <= math.MaxFloat32) {
					return fmt.Errorf("%w: a vector's scale is %v", ErrSegment, f)
				}
			}
			if q.signDot, err = readArray[float32](sr, n); err != nil {
				return err
			}
			for _, f := range q.signDot {
				if !(f >= 0 && f <= 1.01) { // at most the unit vector's length
					return fmt.Errorf("%w: a vector's sign dot product is %v", ErrSegment, f)
				}
			}
			q.sign, err = readArray[uint64](sr, n*padded/64)
			return err
		}
	}
	steps := []func() error{
		func() (err error) { a.tagN, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { a.appN, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { a.recCount, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { a.lastSeen, err = readArray[int64](sr, nDocs); return },
		func() (err error) { x.titleLen, err = readArray[uint16](sr, nDocs); return },
		func() (err error) { x.bodyLen, err = readArray[uint16](sr, nDocs); return },
		vectors(&x.docQ, nDocs),
		vectors(&x.recQ, nRecs),
		func() (err error) { x.docRecOff, err = readArray[uint32](sr, nDocs+1); return },
		func() (err error) { x.docRecs, err = readArray[uint32](sr, nLinks); return },
		func() (err error) { x.postOff, err = readArray[uint32](sr, nTerms+1); return },
		func() (err error) { x.post, err = readArray[posting](sr, nPosts); return },
		func() (err error) { x.fwdOff, err = readArray[uint32](sr, nDocs+1); return },
		func() (err error) { x.fwd, err = readArray[termCount](sr, nFwd); return },
		func() (err error) { x.activity, err = readArray[uint32](sr, nDocs); return },
		func() (err error) { x.byID, err = readArray[uint32](sr, nDocs); return },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	want := sr.crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return nil, nil, fmt.Errorf("%w: it ends early", ErrSegment)
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != want {
		return nil, nil, fmt.Errorf("%w: checksum %08x, its content sums to %08x", ErrSegment, got, want)
	}

	// The documents, numbered library by library.
	x.docs = make([]search.Doc, nDocs)
	x.docLib = make([]uint16, nDocs)
	for i := range x.docs {
		d := &x.docs[i]
		d.ID, d.LibraryID, d.Category = next(), next(), next()
		d.RecordingCount = int(a.recCount[i])
		if ns := a.lastSeen[i]; ns != math.MinInt64 {
			d.LastSeen = time.Unix(0, ns).UTC()
		}
		if i == 0 || d.LibraryID != x.libIDs[len(x.libIDs)-1] {
			if i > 0 && d.LibraryID < x.libIDs[len(x.libIDs)-1] || len(x.libIDs) == math.MaxUint16 {
				return nil, nil, fmt.Errorf("%w: the libraries are not in order, each together", ErrSegment)
			}
			if i > 0 {
				prev := x.libIDs[len(x.libIDs)-1]
				x.libs[prev] = span{x.libs[prev].start, uint32(i)}
			}
			x.libIDs = append(x.libIDs, d.LibraryID)
			x.libs[d.LibraryID] = span{uint32(i), uint32(i)}
		} else if d.ID <= x.docs[i-1].ID {
			return nil, nil, fmt.Errorf("%w: document %q after %q", ErrSegment, d.ID, x.docs[i-1].ID)
		}
		x.docLib[i] = uint16(len(x.libIDs) - 1)
	}
	if len(x.libIDs) > 0 {
		last := x.libIDs[len(x.libIDs)-1]
		x.libs[last] = span{x.libs[last].start, uint32(nDocs)}
	}
	var tagSum, appSum uint64
	for i := range nDocs {
		tagSum += uint64(a.tagN[i])
		appSum += uint64(a.appN[i])
	}
	if tagSum != nTags || appSum != nApps {
		return nil, nil, fmt.Errorf("%w: the documents' tags and applications do not add up", ErrSegment)
	}
	for i := range x.docs {
		if n := a.tagN[i]; n > 0 {
			x.docs[i].Tags = make([]string, n)
			for j := range x.docs[i].Tags {
				x.docs[i].Tags[j] = next()
			}
		}
	}
	for i := range x.docs {
		if n := a.appN[i]; n > 0 {
			x.docs[i].Applications = make([]string, n)
			for j := range x.docs[i].Applications {
				x.docs[i].Applications[j] = next()
			}
		}
	}
	x.recIDs = make([]string, nRecs)
	for i := range x.recIDs {
		x.recIDs[i] = next()
		if i > 0 && x.recIDs[i] <= x.recIDs[i-1] {
			return nil, nil, fmt.Errorf("%w: recordings out of order", ErrSegment)
		}
	}
	vocab := make([]string, nTerms)
	for i := range vocab {
		vocab[i] = next()
		if i > 0 && vocab[i] <= vocab[i-1] {
			return nil, nil, fmt.Errorf("%w: terms out of order", ErrSegment)
		}
	}
	deleted := make([]string, nDel)
	for i := range deleted {
		deleted[i] = next()
	}
	if bad || at != uint64(len(all)) {
		return nil, nil, fmt.Errorf("%w: the string lengths do not add up", ErrSegment)
	}
	labels := search.NewLabelTable()
	for i := range x.docs {
		labels.Intern(&x.docs[i])
	}

	if err := x.checkArrays(); err != nil {
		return nil, nil, err
	}
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
	if err := x.setVocabulary(vocab); err != nil {
		return nil, nil, err
	}
	x.whole = newSegment(x, nil)
	return x, deleted, nil
}

// checkArrays checks that every offset, number and order of a read segment
// is in range, so that no query can index out of bounds.
func (x *Index) checkArrays() error {
	n := uint32(len(x.docs))
	offsets := func(what string, off []uint32, total int) error {
		if off[0] != 0 || off[len(off)-1] != uint32(total) {
			return fmt.Errorf("%w: the %s offsets do not span their entries", ErrSegment, what)
		}
		for i := 1; i < len(off); i++ {
			if off[i] < off[i-1] {
				return fmt.Errorf("%w: the %s offsets go back", ErrSegment, what)
			}
		}
		return nil
	}
	if err := offsets("recording", x.docRecOff, len(x.docRecs)); err != nil {
		return err
	}
	if err := offsets("posting", x.postOff, len(x.post)); err != nil {
		return err
	}
	if err := offsets("forward", x.fwdOff, len(x.fwd)); err != nil {
		return err
	}
	nRecs := uint32(len(x.recIDs))
	for _, r := range x.docRecs {
		if r >= nRecs {
			return fmt.Errorf("%w: a recording number past the recordings", ErrSegment)
		}
	}
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
	return nil
}
