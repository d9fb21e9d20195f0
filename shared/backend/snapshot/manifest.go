package snapshot

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

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
	Source   string       `json:"source,omitempty"`
	Segments []SegmentRef `json:"segments"`
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
	data, err := io.ReadAll(io.LimitReader(body, maxManifest+1))
	if err != nil {
		return Manifest{}, Object{}, fmt.Errorf("snapshot: read the manifest: %w", err)
	}
	if len(data) > maxManifest {
		return Manifest{}, obj, fmt.Errorf("snapshot: the manifest %s is over %d bytes: %w", ManifestKey, maxManifest, ErrCorrupt)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, obj, fmt.Errorf("snapshot: the manifest %s: %v: %w", ManifestKey, err, ErrCorrupt)
	}
	if err := m.check(); err != nil {
		return m, obj, err // its sequence, for the logs and the next publish
	}
	return m, obj, nil
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
		if !strings.HasPrefix(s.Key, SegmentPrefix) || seen[s.Key] || s.Bytes <= 0 || s.Documents < 0 || s.Deleted < 0 {
			return fmt.Errorf("snapshot: the manifest names segment %q of %d bytes: %w", s.Key, s.Bytes, ErrCorrupt)
		}
		seen[s.Key] = true
	}
	// A writer deletes what the list names: only segments, never one in use.
	if len(m.Retired) > maxSegments {
		return fmt.Errorf("snapshot: the manifest names %d retired segments, more than %d: %w", len(m.Retired), maxSegments, ErrCorrupt)
	}
	for _, r := range m.Retired {
		if !strings.HasPrefix(r.Key, SegmentPrefix) || seen[r.Key] {
			return fmt.Errorf("snapshot: the manifest retires %q: %w", r.Key, ErrCorrupt)
		}
	}
	return nil
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
	var sum uint32
	obj, err := b.PutStream(ctx, key, func(w io.Writer) error {
		var err error
		_, sum, err = localsearch.WriteSegment(w, x, deleted)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: write segment %s: %w", key, err)
	}
	ref := SegmentRef{Key: key, Bytes: obj.Size, CRC32C: fmt.Sprintf("%08x", sum), Documents: x.Stats().Documents, Deleted: len(deleted)}
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
