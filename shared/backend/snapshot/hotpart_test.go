package snapshot

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"testing"
)

// TestManifestNamesHotParts: a published segment is named with its hot
// part's size and CRC-32C, which the segment's first bytes sum to; a
// manifest whose hot part is not within its segment, or half named, or
// whose checksum is not one, is refused.
func TestManifestNamesHotParts(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	if err := newWriter(m).Publish(ctx, docs("a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	man, _, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := man.Segments[0]
	if ref.HotBytes <= 0 || ref.HotBytes >= ref.Bytes {
		t.Fatalf("the manifest names a hot part of %d bytes of %d", ref.HotBytes, ref.Bytes)
	}
	body, _, err := m.Get(ctx, ref.Key, GetOptions{Length: ref.HotBytes})
	if err != nil {
		t.Fatal(err)
	}
	hot, _ := io.ReadAll(body)
	if got := fmt.Sprintf("%08x", crc32.Checksum(hot, crc32.MakeTable(crc32.Castagnoli))); got != ref.HotCRC32C || int64(len(hot)) != ref.HotBytes {
		t.Fatalf("the hot part sums to %s, the manifest says %s", got, ref.HotCRC32C)
	}
	for name, edit := range map[string]func(*SegmentRef){
		"past the segment": func(r *SegmentRef) { r.HotBytes = r.Bytes },
		"negative":         func(r *SegmentRef) { r.HotBytes = -1 },
		"without its sum":  func(r *SegmentRef) { r.HotCRC32C = "" },
		"a sum alone":      func(r *SegmentRef) { r.HotBytes = 0 },
		"not a sum":        func(r *SegmentRef) { r.HotCRC32C = "0000000g" },
	} {
		bad := man
		bad.Segments = []SegmentRef{ref}
		edit(&bad.Segments[0])
		if err := bad.check(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a hot part %s: %v, want ErrCorrupt", name, err)
		}
	}
}
