package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/search"
)

// The keys of the bucket.
const (
	// PointerKey is the pointer: a small JSON object (Pointer) naming the
	// snapshot in service. Writers replace it with conditional writes only.
	PointerKey = "snapshots/current.json"
	// SnapshotKey is the key every snapshot is written to, each as a new
	// version; the pointer names the version, so that a snapshot written
	// while another is read never mixes with it.
	SnapshotKey = "snapshots/index.snap"
)

// Pointer is the content of PointerKey, for example:
//
//	{"key":"snapshots/index.snap","version":"3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY",
//	 "sequence":42,"embedder":"bedrock/amazon.titan-embed-text-v2:0/1024",
//	 "dimensions":1024,"documents":100000,"bytes":520000000,
//	 "checksum":"sha256:9f86d0…","written_at":"2026-11-25T12:00:00Z"}
//
// Key and Version name the snapshot; Sequence, Embedder, Dimensions and
// Documents repeat its header, so that a reader can refuse it, or see it is
// the one it has, without reading it; Bytes is its size and Checksum its
// SHA-256, which the reader checks.
type Pointer struct {
	Key        string    `json:"key"`
	Version    string    `json:"version"`
	Sequence   uint64    `json:"sequence"`
	Embedder   string    `json:"embedder"`
	Dimensions int       `json:"dimensions"`
	Documents  int       `json:"documents"`
	Bytes      int64     `json:"bytes"`
	Checksum   string    `json:"checksum"`
	WrittenAt  time.Time `json:"written_at"`
}

const checksumPrefix = "sha256:"

// ReadPointer reads the pointer unless its ETag is still ifNoneMatch
// (ErrNotModified then); ErrNotFound when nothing was published yet.
func ReadPointer(ctx context.Context, b Blobs, ifNoneMatch string) (Pointer, Object, error) {
	body, obj, err := b.Get(ctx, PointerKey, GetOptions{IfNoneMatch: ifNoneMatch})
	if err != nil {
		return Pointer{}, Object{}, err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return Pointer{}, Object{}, fmt.Errorf("snapshot: read the pointer: %w", err)
	}
	var p Pointer
	if err := json.Unmarshal(data, &p); err != nil {
		return Pointer{}, obj, fmt.Errorf("snapshot: the pointer %s: %v: %w", PointerKey, err, ErrCorrupt)
	}
	if p.Key == "" || p.Version == "" {
		return Pointer{}, obj, fmt.Errorf("snapshot: the pointer %s names no snapshot version: %w", PointerKey, ErrCorrupt)
	}
	// What it names is read only with its size and digest to check it by,
	// as every writer wrote them.
	if p.Bytes <= 0 || !strings.HasPrefix(p.Checksum, checksumPrefix) || !isHex(p.Checksum[len(checksumPrefix):], sha256.Size) {
		return Pointer{}, obj, fmt.Errorf("snapshot: the pointer %s names a snapshot of %d bytes and checksum %q: %w", PointerKey, p.Bytes, p.Checksum, ErrCorrupt)
	}
	return p, obj, nil
}

// LoadSnapshot reads the snapshot p names and checks it against p and
// want (see DecodeExpect): its embedder is refused before its body is read.
func LoadSnapshot(ctx context.Context, b Blobs, p Pointer, want Expect) (Header, []search.IndexDoc, error) {
	if want.Embedder != "" && p.Embedder != want.Embedder || want.Dimensions != 0 && p.Dimensions != want.Dimensions {
		return Header{}, nil, fmt.Errorf("snapshot %d (%s version %s) holds vectors of embedder %q (%d dimensions), this program embeds with %q (%d dimensions): %w",
			p.Sequence, p.Key, p.Version, p.Embedder, p.Dimensions, want.Embedder, want.Dimensions, ErrIncompatible)
	}
	body, _, err := b.Get(ctx, p.Key, GetOptions{Version: p.Version})
	if err != nil {
		return Header{}, nil, fmt.Errorf("snapshot: read %s version %s: %w", p.Key, p.Version, err)
	}
	defer body.Close()
	want.Checksum, want.Size = trimChecksum(p.Checksum), p.Bytes
	h, docs, err := DecodeExpect(body, want)
	if err != nil {
		return Header{}, nil, fmt.Errorf("snapshot: %s version %s: %w", p.Key, p.Version, err)
	}
	if h.Sequence != p.Sequence || h.Documents != p.Documents {
		return Header{}, nil, fmt.Errorf("snapshot: %s version %s is snapshot %d of %d documents, its pointer says %d of %d: %w",
			p.Key, p.Version, h.Sequence, h.Documents, p.Sequence, p.Documents, ErrCorrupt)
	}
	return h, docs, nil
}

func trimChecksum(s string) string {
	if len(s) > len(checksumPrefix) && s[:len(checksumPrefix)] == checksumPrefix {
		return s[len(checksumPrefix):]
	}
	if s == "" {
		return ""
	}
	return "unknown checksum " + s // matches nothing: refused
}

// writePointer publishes p over the pointer whose ETag was etag (none when
// "").
func writePointer(ctx context.Context, b Blobs, p Pointer, etag string) (Object, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return Object{}, err
	}
	cond := Condition{IfMatch: etag, IfNoneMatch: etag == ""}
	obj, err := b.Put(ctx, PointerKey, bytes.NewReader(data), int64(len(data)), cond)
	if err != nil {
		if errors.Is(err, ErrConflict) {
			return Object{}, fmt.Errorf("snapshot: another writer published since this one read the pointer: %w", err)
		}
		return Object{}, fmt.Errorf("snapshot: write the pointer: %w", err)
	}
	return obj, nil
}
