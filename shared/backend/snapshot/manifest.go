package snapshot

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/search"
)

// The embedded tier's index is a list of immutable segments (package
// localsearch's segment files), each written once under a key of its own,
// and a manifest that names the live ones, oldest first. The indexer writes
// each batch as a new segment, then publishes a manifest that adds it, with
// a conditional write (If-Match the manifest it read); merges replace runs of
// segments by one, published the same way. A search instance reads the
// manifest, and only the segments it does not hold yet.
const (
	// ManifestKey is the manifest: a small JSON object (Manifest).
	ManifestKey = "snapshots/manifest.json"
	// SegmentPrefix is where segments are written, each under a new key.
	SegmentPrefix = "snapshots/segments/"
	// ManifestFormat is the manifest format this program writes and reads.
	ManifestFormat = 1
	// maxManifest bounds the manifest read; maxSegments the segments it
	// may name (the merge policy keeps tens).
	maxManifest = 1 << 20
	maxSegments = 10_000
)

// Manifest is the content of ManifestKey, for example:
//
//	{"format":1,"sequence":42,"embedder":"bedrock/amazon.titan-embed-text-v2:0/1024",
//	 "dimensions":1024,"segment_format":2,"documents":100000,
//	 "segments":[{"key":"snapshots/segments/000000000040-3f9a1c0d.seg",
//	   "bytes":861000000,"crc32c":"9f86d081","documents":100000,"deleted":0},
//	  {"key":"snapshots/segments/000000000042-77e01b2a.seg","bytes":8610000,
//	   "crc32c":"0c4e1d9a","documents":100,"deleted":3}],
//	 "retired":[{"key":"snapshots/segments/000000000039-5b0e44f1.seg","at":"2026-11-27T11:58:00Z"}],
//	 "written_at":"2026-11-27T12:00:00Z"}
//
// Sequence grows by one at each publish; Documents is the number of
// documents held across the segments (live or replaced by a later one).
type Manifest struct {
	Format        int    `json:"format"`
	Sequence      uint64 `json:"sequence"`
	Embedder      string `json:"embedder"`
	Dimensions    int    `json:"dimensions"`
	SegmentFormat int    `json:"segment_format"`
	Documents     int    `json:"documents"`
	// Source, when set, names what the index was built from (doclib-server
	// --index-dir writes a digest of its data set), so that a reader can
	// tell an index of other data.
	Source string `json:"source,omitempty"`
	// EmbedderFile, when set, names the file of the embedder the queries
	// are embedded with: doclib-server --index-dir writes the offline
	// embedder fitted to its data there. A reader takes it only through
	// ReadFile, which checks its size and digest first. It was added after
	// format 1 was fixed: a reader that needs it and finds none builds the
	// index again, and readers that do not need it ignore it.
	EmbedderFile *FileRef `json:"embedder_file,omitempty"`
	// Calibration, when set, is what a whole publish (a reindex) measured
	// of the embedder on the documents (search.Calibrate): the search
	// instances take their thresholds from it. Later publishes carry it
	// over. Added after format 1 was fixed, as EmbedderFile was: a reader
	// that finds none keeps the embedder's default thresholds.
	Calibration *search.Calibration `json:"calibration,omitempty"`
	Segments    []SegmentRef        `json:"segments"`
	// Retired are segments that earlier manifests named and this one does
	// not (merged, or replaced by a reindex), with when they were dropped:
	// the writer deletes each once RetireAfter has passed, when a search
	// instance that read an older manifest has long read what it named.
	Retired   []Retired `json:"retired,omitempty"`
	WrittenAt time.Time `json:"written_at"`
}

// Retired is a segment no longer named, and since when.
type Retired struct {
	Key string    `json:"key"`
	At  time.Time `json:"at"`
}

// SegmentRef names one segment of a manifest.
type SegmentRef struct {
	Key       string `json:"key"`
	Bytes     int64  `json:"bytes"`
	CRC32C    string `json:"crc32c"`
	Documents int    `json:"documents"`
	Deleted   int    `json:"deleted"`
	// HotBytes and HotCRC32C name a segment's hot part (format 3 on), its
	// first HotBytes bytes: what a search instance reads at start. The hot
	// part holds the CRC-32C of every block of the rest, which the instance
	// reads by range, so that every byte it uses is checked though it never
	// reads the whole file that CRC32C sums. Added after format 1 was
	// fixed: a segment without them is read whole.
	HotBytes  int64  `json:"hot_bytes,omitempty"`
	HotCRC32C string `json:"hot_crc32c,omitempty"`
}

// FileRef names an object that an index needs besides its segments, with
// its size and its SHA-256 in hex, which ReadFile checks before the object
// is used: nothing is read from a bucket or an index directory unless a
// manifest names it and its digest.
type FileRef struct {
	Key    string `json:"key"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// maxFile bounds a FileRef's object, read whole into memory: a fitted
// embedder of 128 dimensions and two million features.
const maxFile = 1 << 30

// check refuses a reference that no writer writes: outside the snapshots'
// prefix, in the place of the manifest or of a segment, empty or over
// maxFile, or with a digest that is not one.
func (r *FileRef) check() error {
	if !strings.HasPrefix(r.Key, snapshotsPrefix) || strings.HasPrefix(r.Key, SegmentPrefix) || r.Key == ManifestKey ||
		r.Bytes <= 0 || r.Bytes > maxFile || !isHex(r.SHA256, sha256.Size) {
		return fmt.Errorf("snapshot: the manifest names file %s of %d bytes and digest %s: %w", quoteKey(r.Key), r.Bytes, quoteKey(r.SHA256), ErrCorrupt)
	}
	return nil
}

// snapshotsPrefix is where everything of the index is kept.
const snapshotsPrefix = "snapshots/"

// isHex says whether s is n bytes in lower-case hex, as writers write them.
func isHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// PutFile writes data under key, unconditionally, and returns the reference
// a manifest names it by.
func PutFile(ctx context.Context, b Blobs, key string, data []byte) (FileRef, error) {
	sum := sha256.Sum256(data)
	ref := FileRef{Key: key, Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	if err := ref.check(); err != nil {
		return FileRef{}, err
	}
	if _, err := b.Put(ctx, key, bytes.NewReader(data), int64(len(data)), Condition{}); err != nil {
		return FileRef{}, fmt.Errorf("snapshot: write %s: %w", key, err)
	}
	return ref, nil
}

// ReadFile reads the object ref names, if it is what ref says: its size is
// checked before anything is read (so a reference cannot make the reader
// allocate more than the object holds), and its SHA-256 before it is
// returned. Anything else is ErrCorrupt.
func ReadFile(ctx context.Context, b Blobs, ref FileRef) ([]byte, error) {
	if err := ref.check(); err != nil {
		return nil, err
	}
	body, obj, err := b.Get(ctx, ref.Key, GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: read %s: %w", ref.Key, err)
	}
	defer body.Close()
	if obj.Size != ref.Bytes {
		return nil, fmt.Errorf("snapshot: %s is %d bytes, the manifest says %d: %w", ref.Key, obj.Size, ref.Bytes, ErrCorrupt)
	}
	data := make([]byte, ref.Bytes)
	if _, err := io.ReadFull(body, data); err != nil {
		return nil, fmt.Errorf("snapshot: read %s: %v: %w", ref.Key, err, ErrCorrupt)
	}
	if n, _ := body.Read(make([]byte, 1)); n > 0 {
		return nil, fmt.Errorf("snapshot: %s is longer than the %d bytes the manifest says: %w", ref.Key, ref.Bytes, ErrCorrupt)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != ref.SHA256 {
		return nil, fmt.Errorf("snapshot: %s has digest %x, the manifest says %s: %w", ref.Key, sum, ref.SHA256, ErrCorrupt)
	}
	return data, nil
}

// ReadManifest reads the manifest unless its ETag is still ifNoneMatch
// (ErrNotModified then); ErrNotFound when nothing was published yet, and
// ErrCorrupt or ErrIncompatible when it is not one this program can use
// (with what was read of it).
func ReadManifest(ctx context.Context, b Blobs, ifNoneMatch string) (Manifest, Object, error) {
	body, obj, err := b.Get(ctx, ManifestKey, GetOptions{IfNoneMatch: ifNoneMatch})
	if err != nil {
		return Manifest{}, Object{}, err
	}
	defer body.Close()
	if obj.Size > maxManifest { // refused by its size, before a byte is read
		return Manifest{}, obj, fmt.Errorf("snapshot: the manifest %s is %d bytes, over %d: %w", ManifestKey, obj.Size, maxManifest, ErrCorrupt)
	}
	data, err := io.ReadAll(io.LimitReader(body, maxManifest+1))
	if err != nil {
		return Manifest{}, Object{}, fmt.Errorf("snapshot: read the manifest: %w", err)
	}
	if len(data) > maxManifest {
		return Manifest{}, obj, fmt.Errorf("snapshot: the manifest %s is over %d bytes: %w", ManifestKey, maxManifest, ErrCorrupt)
	}
	m, err := decodeManifest(data)
	if err != nil {
		return m, obj, err // its sequence, for the logs and the next publish
	}
	return m, obj, nil
}

// decodeManifest decodes and checks a manifest's bytes.
func decodeManifest(data []byte) (Manifest, error) {
	// Every manifest a writer writes is UTF-8 (encoding/json writes no
	// other): a byte of invalid UTF-8 would decode to three.
	if !utf8.Valid(data) {
		return Manifest{}, fmt.Errorf("snapshot: the manifest %s is not UTF-8: %w", ManifestKey, ErrCorrupt)
	}
	if d := nesting(data); d > maxNesting {
		return Manifest{}, fmt.Errorf("snapshot: the manifest %s nests %d deep, more than %d: %w", ManifestKey, d, maxNesting, ErrCorrupt)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("snapshot: the manifest %s: %v: %w", ManifestKey, err, ErrCorrupt)
	}
	return m, m.check()
}

// maxNesting bounds how deep a manifest's JSON nests: its lists of objects
// are 3 deep. encoding/json keeps a state per level open (up to 10,000), 8
// bytes each, in every pass over the bytes: 2,000 levels in 4 KB made
// decoding allocate 30 times the manifest's size.
const maxNesting = 32

// nesting is how deep the JSON data nests (strings skipped), counted
// without allocating, so that deep nesting is refused before it is decoded.
func nesting(data []byte) int {
	depth, most, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++ // the escaped byte
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			most = max(most, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return most
}

// UnmarshalJSON decodes a manifest with its lists of segments read entry by
// entry, each refused unless it names a segment key (as every entry of any
// format does) before the next is read: so a list grows only by entries
// that took at least the bytes of such a key, and a crafted manifest
// allocates a small multiple of its size (json.Unmarshal grew the list by
// 56 bytes for each "{}," of 3 bytes, and by as much for each "1,").
func (m *Manifest) UnmarshalJSON(data []byte) error {
	type fields Manifest // without this method
	var raw struct {
		fields
		Segments json.RawMessage `json:"segments"`
		Retired  json.RawMessage `json:"retired"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = Manifest(raw.fields)
	var err error
	if m.Segments, err = decodeList(raw.Segments, "segments", func(s *SegmentRef) string { return s.Key }); err != nil {
		return err
	}
	m.Retired, err = decodeList(raw.Retired, "retired", func(r *Retired) string { return r.Key })
	return err
}

// decodeList decodes the JSON array raw (null or absent: none) of at most
// maxSegments entries, each of which must name a key under SegmentPrefix.
func decodeList[T any](raw json.RawMessage, name string, key func(*T) string) ([]T, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("%q is not a list", name)
	}
	var out []T
	for dec.More() {
		if len(out) == maxSegments {
			return nil, fmt.Errorf("%q names more than %d segments", name, maxSegments)
		}
		var e T
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%q, entry %d: %v", name, len(out), err)
		}
		if k := key(&e); !strings.HasPrefix(k, SegmentPrefix) {
			return nil, fmt.Errorf("%q, entry %d: %s is not a segment's key", name, len(out), quoteKey(k))
		}
		out = append(out, e)
	}
	return out, nil
}

// check refuses a manifest this program cannot use: of another format
// (ErrIncompatible), or naming what no writer names (ErrCorrupt).
func (m *Manifest) check() error {
	// SegmentFormat is the newest format of its segments: a manifest of
	// format 1 segments, written before vectors were quantized, is read, and
	// its segments with it (a merge writes them again in this format).
	if m.Format != ManifestFormat || m.SegmentFormat < localsearch.MinSegmentFormat || m.SegmentFormat > localsearch.SegmentFormat {
		return fmt.Errorf("snapshot: the manifest is of format %d with segments of format %d; this program reads %d and %d to %d: %w",
			m.Format, m.SegmentFormat, ManifestFormat, localsearch.MinSegmentFormat, localsearch.SegmentFormat, ErrIncompatible)
	}
	if len(m.Segments) > maxSegments {
		return fmt.Errorf("snapshot: the manifest names %d segments, more than %d: %w", len(m.Segments), maxSegments, ErrCorrupt)
	}
	seen := make(map[string]bool, len(m.Segments))
	for _, s := range m.Segments {
		if !strings.HasPrefix(s.Key, SegmentPrefix) || seen[s.Key] || s.Bytes <= 0 || s.Documents < 0 || s.Deleted < 0 || !isHex(s.CRC32C, 4) ||
			s.HotBytes < 0 || s.HotBytes >= s.Bytes || (s.HotBytes > 0) != (s.HotCRC32C != "") || s.HotCRC32C != "" && !isHex(s.HotCRC32C, 4) {
			return fmt.Errorf("snapshot: the manifest names segment %s of %d bytes: %w", quoteKey(s.Key), s.Bytes, ErrCorrupt)
		}
		seen[s.Key] = true
	}
	// A writer deletes what the list names: only segments, never one in use.
	if len(m.Retired) > maxSegments {
		return fmt.Errorf("snapshot: the manifest names %d retired segments, more than %d: %w", len(m.Retired), maxSegments, ErrCorrupt)
	}
	for _, r := range m.Retired {
		if !strings.HasPrefix(r.Key, SegmentPrefix) || seen[r.Key] {
			return fmt.Errorf("snapshot: the manifest retires %s: %w", quoteKey(r.Key), ErrCorrupt)
		}
	}
	if m.Calibration != nil {
		if err := m.Calibration.Check(); err != nil {
			return fmt.Errorf("snapshot: the manifest's calibration: %v: %w", err, ErrCorrupt)
		}
	}
	if m.EmbedderFile != nil {
		return m.EmbedderFile.check()
	}
	return nil
}

// quoteKey quotes at most the first 80 bytes of a key a manifest names: a
// message that echoed a crafted key whole (invalid UTF-8 decodes to three
// bytes a byte, and quoting copies it again) made a refusal allocate more
// than 20 times the manifest's size.
func quoteKey(k string) string {
	const most = 80
	if len(k) <= most {
		return strconv.Quote(k)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(k[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(k[:cut]), len(k))
}

// compatible refuses a manifest of another embedder than e.
func (m *Manifest) compatible(embedder string, dims int) error {
	if m.Embedder != embedder || m.Dimensions != dims {
		return fmt.Errorf("snapshot: manifest %d holds vectors of embedder %q (%d dimensions), this program embeds with %q (%d dimensions): %w",
			m.Sequence, m.Embedder, m.Dimensions, embedder, dims, ErrIncompatible)
	}
	return nil
}

// writeManifest publishes m over the manifest whose ETag was etag (none
// when ""), and returns the new ETag.
func writeManifest(ctx context.Context, b Blobs, m Manifest, etag string) (string, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	cond := Condition{IfMatch: etag, IfNoneMatch: etag == ""}
	obj, err := b.Put(ctx, ManifestKey, bytes.NewReader(data), int64(len(data)), cond)
	if err != nil {
		if errors.Is(err, ErrConflict) {
			return "", fmt.Errorf("snapshot: another writer published since this one read the manifest: %w", err)
		}
		return "", fmt.Errorf("snapshot: write the manifest: %w", err)
	}
	return obj.ETag, nil
}

// segment is a segment read or written: its index and its deletions.
type segment struct {
	ref     SegmentRef
	x       *localsearch.Index
	deleted []string
}

// writeSegment writes x and its deletions as a new segment, under a key of
// its own (the manifest's sequence and random letters): a segment is never
// overwritten, so a search instance reading an older manifest still finds
// what it names.
func writeSegment(ctx context.Context, b Blobs, seq uint64, x *localsearch.Index, deleted []string) (*segment, error) {
	var salt [4]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s%012d-%s.seg", SegmentPrefix, seq, hex.EncodeToString(salt[:]))
	var info localsearch.SegmentInfo
	obj, err := b.PutStream(ctx, key, func(w io.Writer) error {
		var err error
		info, err = localsearch.WriteSegmentBlocks(w, x, deleted, localsearch.DefaultBlockSize)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: write segment %s: %w", key, err)
	}
	ref := SegmentRef{Key: key, Bytes: obj.Size, CRC32C: fmt.Sprintf("%08x", info.CRC), Documents: x.Stats().Documents, Deleted: len(deleted),
		HotBytes: info.HotBytes, HotCRC32C: fmt.Sprintf("%08x", info.HotCRC)}
	return &segment{ref: ref, x: x, deleted: deleted}, nil
}

// readSegment reads the segment ref names, for queries embedded by e.
func readSegment(ctx context.Context, b Blobs, ref SegmentRef, e search.Embedder) (*segment, error) {
	body, obj, err := b.Get(ctx, ref.Key, GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: read segment %s: %w", ref.Key, err)
	}
	defer body.Close()
	if obj.Size != 0 && obj.Size != ref.Bytes {
		return nil, fmt.Errorf("snapshot: segment %s is %d bytes, the manifest says %d: %w", ref.Key, obj.Size, ref.Bytes, ErrCorrupt)
	}
	crc := &lastBytes{}
	x, deleted, err := localsearch.ReadSegment(io.TeeReader(body, crc), ref.Bytes, e)
	switch {
	case errors.Is(err, localsearch.ErrSegmentIncompatible):
		return nil, fmt.Errorf("snapshot: segment %s: %v: %w", ref.Key, err, ErrIncompatible)
	case errors.Is(err, localsearch.ErrSegment):
		return nil, fmt.Errorf("snapshot: segment %s: %v: %w", ref.Key, err, ErrCorrupt)
	case err != nil:
		return nil, fmt.Errorf("snapshot: read segment %s: %w", ref.Key, err)
	}
	if got := crc.checksum(); got != ref.CRC32C {
		return nil, fmt.Errorf("snapshot: segment %s sums to %s, the manifest says %s: %w", ref.Key, got, ref.CRC32C, ErrCorrupt)
	}
	return &segment{ref: ref, x: x, deleted: deleted}, nil
}

// openSegment opens the segment ref names by range: it reads the hot part
// (one GET of its first HotBytes bytes), checks it against the manifest's
// CRC-32C, and reads the rest as queries need it, from the version it read
// (so that a segment deleted while the instance still serves it is still
// read), into cache.
func openSegment(ctx context.Context, b Blobs, ref SegmentRef, e search.Embedder, cache *localsearch.Cache) (*segment, error) {
	body, obj, err := b.Get(ctx, ref.Key, GetOptions{Length: ref.HotBytes})
	if err != nil {
		return nil, fmt.Errorf("snapshot: read the hot part of segment %s: %w", ref.Key, err)
	}
	defer body.Close()
	if obj.Size != ref.Bytes {
		return nil, fmt.Errorf("snapshot: segment %s is %d bytes, the manifest says %d: %w", ref.Key, obj.Size, ref.Bytes, ErrCorrupt)
	}
	hot := localsearch.HotBuffer(ref.HotBytes)
	if _, err := io.ReadFull(body, hot); err != nil {
		return nil, fmt.Errorf("snapshot: read the hot part of segment %s: %v: %w", ref.Key, err, ErrCorrupt)
	}
	if got := fmt.Sprintf("%08x", crc32.Checksum(hot, crc32.MakeTable(crc32.Castagnoli))); got != ref.HotCRC32C {
		return nil, fmt.Errorf("snapshot: the hot part of segment %s sums to %s, the manifest says %s: %w", ref.Key, got, ref.HotCRC32C, ErrCorrupt)
	}
	x, deleted, err := localsearch.OpenSegment(hot, ref.Bytes, e, &blobRange{b: b, key: ref.Key, version: obj.Version}, cache)
	switch {
	case errors.Is(err, localsearch.ErrSegmentIncompatible):
		return nil, fmt.Errorf("snapshot: segment %s: %v: %w", ref.Key, err, ErrIncompatible)
	case errors.Is(err, localsearch.ErrSegment):
		return nil, fmt.Errorf("snapshot: segment %s: %v: %w", ref.Key, err, ErrCorrupt)
	case err != nil:
		return nil, fmt.Errorf("snapshot: open segment %s: %w", ref.Key, err)
	}
	return &segment{ref: ref, x: x, deleted: deleted}, nil
}

// blobRange reads one version of a segment's object by range
// (localsearch.ColdSource).
type blobRange struct {
	b            Blobs
	key, version string
}

func (r *blobRange) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	body, _, err := r.b.Get(ctx, r.key, GetOptions{Version: r.version, Offset: off, Length: n})
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("snapshot: segment %s: %w: %w", r.key, localsearch.ErrSegmentGone, err)
	}
	return body, err
}

// lastBytes keeps the last 4 bytes written to it: a segment's CRC-32C.
type lastBytes struct{ b [4]byte }

func (l *lastBytes) Write(p []byte) (int, error) {
	if len(p) >= 4 {
		copy(l.b[:], p[len(p)-4:])
	} else {
		copy(l.b[:], append(l.b[len(p):], p...))
	}
	return len(p), nil
}

func (l *lastBytes) checksum() string {
	return fmt.Sprintf("%08x", uint32(l.b[0])|uint32(l.b[1])<<8|uint32(l.b[2])<<16|uint32(l.b[3])<<24)
}

// fold makes the index of segs, oldest first.
func fold(e search.Embedder, segs []*segment) (*localsearch.Segments, error) {
	s := localsearch.NewSegments(e)
	for _, sg := range segs {
		var err error
		if s, err = s.With(sg.x, sg.deleted); err != nil {
			return nil, err
		}
	}
	return s, nil
}
