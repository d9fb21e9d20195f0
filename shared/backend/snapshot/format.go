package snapshot

import (
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"time"

	"github.com/doclib/doclib/shared/search"
)

// A snapshot is one binary object:
//
//	magic      "doclib-snapshot\n" (16 bytes)
//	format     uint32, little-endian: FormatVersion
//	header     uint32 length, then the Header as JSON
//	documents  uint8 compression (0 none, 1 DEFLATE), uint64 length, then
//	           every document's fields but its vectors (see appendDoc)
//	vectors    uint64 length, then every vector as Dimensions raw
//	           little-endian float32s: each document's Vector, then its
//	           Recordings' in order, document after document
//	checksum   SHA-256 of everything before it (32 bytes)
//
// Integers inside the documents section are varints. The text is compressed
// (DEFLATE at its fastest level) and the vectors are not. Measured on 10,000
// documents of the demo set's text with 1024-dimension vectors (a third with
// a recording): the text section shrinks from 11.1 MB to 2.3 MB, the whole
// object from 65.7 MB to 56.9 MB (13%), for about 60 ms more CPU to encode
// (145 against 82 ms) and 30 ms more to decode (124 against 95 ms); DEFLATE
// shrinks the vectors themselves by 7% only (54.6 to 50.7 MB), not worth
// decoding 55 MB through it. See BenchmarkEncode and BenchmarkDecode.
//
// The reader trusts no length or count before the checksum, which comes last:
// the documents section may inflate to maxInflate times its stored size (the
// writer stores it uncompressed past that), every document and recording
// must have its vector in the object (4×Dimensions bytes; with Expect.Size,
// checked before anything is allocated for it), and the header's document
// count only caps a first allocation. So an object allocates a bounded
// multiple of its size however it was crafted (FuzzDecode,
// TestCraftedObjectsAreBounded).

// FormatVersion is the version of the format this program writes. It reads
// only this one: a snapshot of another version is refused (ErrIncompatible).
const FormatVersion = 1

const (
	magic = "doclib-snapshot\n"
	// Bounds that keep a corrupt length from allocating much before the
	// checksum can refuse it.
	maxHeader     = 1 << 20
	maxDimensions = 1 << 16
	// maxInflate is how many times its stored size the documents section
	// may inflate to. Text like the demo set's inflates about 5 times; Encode
	// stores a section that would inflate more uncompressed, so that a
	// reader can refuse a DEFLATE bomb without refusing a real snapshot.
	maxInflate = 16
	// minDocBytes is the fewest bytes a document takes in the documents
	// section (eleven lengths or counts and the last-seen flag).
	minDocBytes = 12

	compressNone    = 0
	compressDeflate = 1
)

// compressDocs is the compression Encode applies to the documents section (a
// variable so that the benchmark can measure both).
var compressDocs byte = compressDeflate

// Header describes a snapshot.
type Header struct {
	// Format is the format version (FormatVersion when written by Encode).
	Format int `json:"format"`
	// Embedder is the ID of the embedder that made the vectors, and
	// Dimensions their length.
	Embedder   string `json:"embedder"`
	Dimensions int    `json:"dimensions"`
	// Sequence numbers the snapshots published under one pointer: each
	// publish adds one.
	Sequence uint64 `json:"sequence"`
	// Documents is the number of documents (Encode sets it).
	Documents int       `json:"documents"`
	WrittenAt time.Time `json:"written_at"`
}

// ErrIncompatible says a snapshot cannot be used by this program: written in
// a format it does not read, or with vectors of another embedder. Its text
// says what cures it.
var ErrIncompatible = errors.New("the snapshot is incompatible with this program: reindex (doclib-admin reindex) with this program's embedder and version, or deploy this program with the embedder and version the snapshot was written with")

// ErrCorrupt says a snapshot is truncated or damaged: nothing of it is used.
var ErrCorrupt = errors.New("the snapshot is truncated or corrupt: nothing of it is used; if reading it again does not cure it, reindex (doclib-admin reindex) to publish a whole new one")

// Expect is what DecodeExpect requires of a snapshot; zero fields require
// nothing.
type Expect struct {
	Embedder   string
	Dimensions int
	// Checksum is Sum's hex SHA-256 of the whole snapshot, as its pointer
	// names it.
	Checksum string
	// Size is the whole snapshot's length in bytes, as its pointer names it
	// (Pointer.Bytes); 0 when unknown. With it, every count that vectors
	// must back (documents, recordings) is checked against what the object
	// can hold, 4×Dimensions bytes a vector, before anything is allocated
	// for it, and a longer object is refused.
	Size int64
}

// Encode writes docs as a snapshot described by h; it sets h.Format and
// h.Documents. Every vector must have h.Dimensions values.
func Encode(w io.Writer, h Header, docs []search.IndexDoc) error {
	_, err := encode(w, h, docs)
	return err
}

// encode is Encode returning the snapshot's checksum (hex SHA-256).
func encode(w io.Writer, h Header, docs []search.IndexDoc) (string, error) {
	if h.Dimensions <= 0 || h.Dimensions > maxDimensions {
		return "", fmt.Errorf("snapshot: encode: dimensions %d out of range", h.Dimensions)
	}
	if h.Embedder == "" {
		return "", errors.New("snapshot: encode: no embedder")
	}
	h.Format = FormatVersion
	h.Documents = len(docs)
	vectors := 0
	for i := range docs {
		d := &docs[i]
		if len(d.Vector) != h.Dimensions {
			return "", fmt.Errorf("snapshot: encode: document %q has a vector of %d values, not %d", d.ID, len(d.Vector), h.Dimensions)
		}
		for _, r := range d.Recordings {
			if len(r.Vector) != h.Dimensions {
				return "", fmt.Errorf("snapshot: encode: recording %q of document %q has a vector of %d values, not %d", r.ID, d.ID, len(r.Vector), h.Dimensions)
			}
		}
		vectors += 1 + len(d.Recordings)
	}
	head, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("snapshot: encode the header: %w", err)
	}

	// The documents section is written whole first: its length precedes it.
	var raw bytes.Buffer
	var rec []byte
	for i := range docs {
		rec = appendDoc(rec[:0], &docs[i])
		raw.Write(rec)
	}
	comp, docBuf := compressDocs, &raw
	if comp == compressDeflate {
		var deflated bytes.Buffer
		fw, _ := flate.NewWriter(&deflated, flate.BestSpeed)
		if _, err := fw.Write(raw.Bytes()); err != nil {
			return "", err
		}
		if err := fw.Close(); err != nil {
			return "", err
		}
		// Past maxInflate a reader would take it for a DEFLATE bomb.
		if raw.Len() <= maxInflate*deflated.Len() {
			docBuf = &deflated
		} else {
			comp = compressNone
		}
	}

	sum := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 1<<20)
	var scratch [8]byte
	bw.WriteString(magic)
	bw.Write(binary.LittleEndian.AppendUint32(scratch[:0], FormatVersion))
	bw.Write(binary.LittleEndian.AppendUint32(scratch[:0], uint32(len(head))))
	bw.Write(head)
	bw.WriteByte(comp)
	bw.Write(binary.LittleEndian.AppendUint64(scratch[:0], uint64(docBuf.Len())))
	bw.Write(docBuf.Bytes())
	bw.Write(binary.LittleEndian.AppendUint64(scratch[:0], uint64(vectors)*uint64(h.Dimensions)*4))
	vec := make([]byte, 4*h.Dimensions)
	writeVec := func(v []float32) {
		for i, f := range v {
			binary.LittleEndian.PutUint32(vec[4*i:], math.Float32bits(f))
		}
		bw.Write(vec)
	}
	for i := range docs {
		writeVec(docs[i].Vector)
		for _, r := range docs[i].Recordings {
			writeVec(r.Vector)
		}
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("snapshot: write: %w", err)
	}
	s := sum.Sum(nil)
	if _, err := w.Write(s); err != nil {
		return "", fmt.Errorf("snapshot: write: %w", err)
	}
	return hex.EncodeToString(s), nil
}

// appendDoc appends d's fields but its vectors.
func appendDoc(b []byte, d *search.IndexDoc) []byte {
	b = appendString(b, d.ID)
	b = appendString(b, d.LibraryID)
	b = appendString(b, d.Category)
	b = appendStrings(b, d.Tags)
	b = appendStrings(b, d.Applications)
	b = binary.AppendVarint(b, int64(d.RecordingCount))
	if d.LastSeen.IsZero() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.AppendVarint(b, d.LastSeen.Unix())
		b = binary.AppendUvarint(b, uint64(d.LastSeen.Nanosecond()))
	}
	b = appendString(b, d.WorkspaceID)
	b = appendString(b, d.Title)
	b = appendStrings(b, d.Body)
	b = appendStrings(b, d.Labels)
	b = binary.AppendUvarint(b, uint64(len(d.Recordings)))
	for _, r := range d.Recordings {
		b = appendString(b, r.ID)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

// Decode reads a snapshot whole and checks it: its checksum, and that its
// documents and vectors are as many and as long as its header says. An
// error means nothing of it may be used: ErrCorrupt when it is truncated or
// damaged, ErrIncompatible when this program does not read its format.
func Decode(r io.Reader) (Header, []search.IndexDoc, error) {
	return DecodeExpect(r, Expect{})
}

// DecodeExpect is Decode that also refuses, with ErrIncompatible and before
// reading past the header, a snapshot of another embedder or dimensions than
// want's, and with ErrCorrupt one whose checksum is not want.Checksum.
func DecodeExpect(r io.Reader, want Expect) (Header, []search.IndexDoc, error) {
	if want.Size > 0 {
		r = io.LimitReader(r, want.Size+1) // one byte more: a longer object is refused below
	}
	d := decoder{src: bufio.NewReaderSize(r, 64<<10), sum: sha256.New(), vectors: -1}
	h, err := d.header()
	if err != nil {
		return Header{}, nil, err
	}
	if want.Embedder != "" && h.Embedder != want.Embedder || want.Dimensions != 0 && h.Dimensions != want.Dimensions {
		return h, nil, fmt.Errorf("snapshot %d holds vectors of embedder %q (%d dimensions), this program embeds with %q (%d dimensions): %w",
			h.Sequence, h.Embedder, h.Dimensions, want.Embedder, want.Dimensions, ErrIncompatible)
	}
	if want.Size > 0 {
		// Every document and recording has a vector of 4×Dimensions bytes
		// in the object.
		d.vectors = want.Size / (4 * int64(h.Dimensions))
		if int64(h.Documents) > d.vectors {
			return h, nil, corrupt("its header claims %d documents, more vectors than its %d bytes can hold", h.Documents, want.Size)
		}
	}
	docs, err := d.body(h)
	if err != nil {
		return h, nil, err
	}
	if size := d.n + sha256.Size; want.Size > 0 && size != want.Size {
		return h, nil, corrupt("it is %d bytes long, its pointer says %d", size, want.Size)
	}
	if want.Checksum != "" && d.checksum != want.Checksum {
		return h, nil, fmt.Errorf("snapshot %d has checksum %s, its pointer names %s: %w", h.Sequence, d.checksum, want.Checksum, ErrCorrupt)
	}
	return h, docs, nil
}

type decoder struct {
	src      *bufio.Reader
	sum      hash.Hash
	checksum string
	// vectors is how many vectors the object can hold (Expect.Size); -1
	// when its size is unknown.
	vectors int64
	n       int64 // bytes read so far, but the checksum
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("snapshot: "+format+": %w", append(args, ErrCorrupt)...)
}

// read fills p from the snapshot, adding it to the checksum.
func (d *decoder) read(p []byte) error {
	if _, err := io.ReadFull(d.src, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return corrupt("it ends early")
		}
		return fmt.Errorf("snapshot: read: %w", err)
	}
	d.n += int64(len(p))
	d.sum.Write(p)
	return nil
}

func (d *decoder) header() (Header, error) {
	var pre [len(magic) + 8]byte
	if err := d.read(pre[:len(magic)+4]); err != nil {
		return Header{}, err
	}
	if string(pre[:len(magic)]) != magic {
		return Header{}, corrupt("not a doclib snapshot")
	}
	if v := binary.LittleEndian.Uint32(pre[len(magic):]); v != FormatVersion {
		return Header{}, fmt.Errorf("snapshot: written in format %d, this program reads format %d only: %w", v, FormatVersion, ErrIncompatible)
	}
	if err := d.read(pre[:4]); err != nil {
		return Header{}, err
	}
	n := binary.LittleEndian.Uint32(pre[:4])
	if n > maxHeader {
		return Header{}, corrupt("a header of %d bytes", n)
	}
	// Read as it arrives: a header length the object does not hold must
	// not allocate it.
	var head bytes.Buffer
	if _, err := io.Copy(&head, io.LimitReader(readerFunc(d.read), int64(n))); err != nil {
		return Header{}, err
	}
	if head.Len() != int(n) {
		return Header{}, corrupt("it ends early")
	}
	var h Header
	if err := json.Unmarshal(head.Bytes(), &h); err != nil {
		return Header{}, corrupt("the header: %v", err)
	}
	if h.Format != FormatVersion || h.Dimensions <= 0 || h.Dimensions > maxDimensions || h.Documents < 0 {
		return Header{}, corrupt("a header out of range (format %d, %d dimensions, %d documents)", h.Format, h.Dimensions, h.Documents)
	}
	return h, nil
}

func (d *decoder) body(h Header) ([]search.IndexDoc, error) {
	var pre [9]byte
	if err := d.read(pre[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(pre[1:])
	// Read the section as it arrives rather than allocate n bytes: a corrupt
	// n must not allocate more than the object holds.
	var section bytes.Buffer
	if _, err := io.Copy(&section, io.LimitReader(readerFunc(d.read), int64(min(n, math.MaxInt64)))); err != nil {
		return nil, err
	}
	if uint64(section.Len()) != n {
		return nil, corrupt("it ends early")
	}
	raw := section.Bytes()
	switch pre[0] {
	case compressNone:
	case compressDeflate:
		var out bytes.Buffer
		limit := int64(maxInflate)*int64(len(raw)) + 1
		if _, err := io.Copy(&out, io.LimitReader(flate.NewReader(bytes.NewReader(raw)), limit)); err != nil {
			return nil, corrupt("the documents section: %v", err)
		}
		if int64(out.Len()) >= limit {
			return nil, corrupt("its documents section inflates to more than %d times its %d bytes", maxInflate, len(raw))
		}
		raw = out.Bytes()
	default:
		return nil, corrupt("an unknown compression %d", pre[0])
	}
	// The header's count only caps the first allocation: it may lie.
	docs := make([]search.IndexDoc, 0, min(h.Documents, len(raw)/minDocBytes))
	p := parser{b: raw, vectors: d.vectors}
	vectors := uint64(0)
	for len(p.b) > 0 && p.err == nil {
		docs = append(docs, p.doc())
		vectors += 1 + uint64(len(docs[len(docs)-1].Recordings))
	}
	if p.err != nil {
		return nil, p.err
	}
	if len(docs) != h.Documents {
		return nil, corrupt("%d documents, its header says %d", len(docs), h.Documents)
	}

	if err := d.read(pre[:8]); err != nil {
		return nil, err
	}
	dims := h.Dimensions
	if got := binary.LittleEndian.Uint64(pre[:8]); got != vectors*uint64(dims)*4 {
		return nil, corrupt("a vectors section of %d bytes, its documents need %d", got, vectors*uint64(dims)*4)
	}
	buf := make([]byte, 4*dims)
	for i := range docs {
		doc := &docs[i]
		// One slab per document for its vector and its recordings', grown
		// as the vectors arrive: an object that claims more than it holds
		// ends before its claim is allocated.
		n := 1 + len(doc.Recordings)
		slab := make([]float32, 0, dims*min(n, 4))
		for range n {
			if err := d.read(buf); err != nil {
				return nil, err
			}
			for k := range dims {
				slab = append(slab, math.Float32frombits(binary.LittleEndian.Uint32(buf[4*k:])))
			}
		}
		doc.Vector = slab[:dims:dims]
		for j := range doc.Recordings {
			doc.Recordings[j].Vector = slab[(j+1)*dims : (j+2)*dims : (j+2)*dims]
		}
	}

	want := d.sum.Sum(nil)
	var got [sha256.Size]byte
	if _, err := io.ReadFull(d.src, got[:]); err != nil {
		return nil, corrupt("it ends before its checksum")
	}
	if !bytes.Equal(got[:], want) {
		return nil, corrupt("its checksum does not match its content")
	}
	if _, err := d.src.ReadByte(); err != io.EOF {
		return nil, corrupt("bytes follow its checksum")
	}
	d.checksum = hex.EncodeToString(want)
	return docs, nil
}

type readerFunc func([]byte) error

// Read reads len(p) bytes or fails: the snapshot's reads are exact.
func (f readerFunc) Read(p []byte) (int, error) {
	if len(p) > 1<<16 {
		p = p[:1<<16]
	}
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// parser reads the documents section.
type parser struct {
	b   []byte
	err error
	// vectors is how many more vectors the object can hold: each document
	// and each recording takes one. Negative: unknown, not checked.
	vectors int64
}

func (p *parser) fail() {
	if p.err == nil {
		p.err = corrupt("a malformed document")
	}
	p.b = nil
}

func (p *parser) uvarint() uint64 {
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		p.fail()
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *parser) varint() int64 {
	v, n := binary.Varint(p.b)
	if n <= 0 {
		p.fail()
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *parser) string() string {
	n := p.uvarint()
	if n > uint64(len(p.b)) {
		p.fail()
		return ""
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}

// count reads the length of a list whose elements take a byte or more.
func (p *parser) count() int {
	n := p.uvarint()
	if n > uint64(len(p.b)) {
		p.fail()
		return 0
	}
	return int(n)
}

func (p *parser) strings() []string {
	n := p.count()
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = p.string()
	}
	return ss
}

func (p *parser) doc() search.IndexDoc {
	var d search.IndexDoc
	if p.vectors == 0 {
		p.fail()
		return d
	}
	p.vectors--
	d.ID = p.string()
	d.LibraryID = p.string()
	d.Category = p.string()
	d.Tags = p.strings()
	d.Applications = p.strings()
	d.RecordingCount = int(p.varint())
	if len(p.b) == 0 {
		p.fail()
		return d
	}
	seen := p.b[0]
	p.b = p.b[1:]
	switch seen {
	case 0:
	case 1:
		sec := p.varint()
		nsec := p.uvarint()
		if nsec >= 1e9 {
			p.fail()
		}
		d.LastSeen = time.Unix(sec, int64(nsec)).UTC()
	default:
		p.fail()
	}
	d.WorkspaceID = p.string()
	d.Title = p.string()
	d.Body = p.strings()
	d.Labels = p.strings()
	if n := p.count(); n > 0 {
		if p.vectors >= 0 {
			if int64(n) > p.vectors {
				p.fail()
				return d
			}
			p.vectors -= int64(n)
		}
		d.Recordings = make([]search.RecordingVector, n)
		for i := range d.Recordings {
			d.Recordings[i].ID = p.string()
		}
	}
	return d
}
