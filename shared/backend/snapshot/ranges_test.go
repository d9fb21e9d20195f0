package snapshot

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestRangedReads reads byte ranges of a segment-sized object and of the
// manifest from each Blobs of this package: the bytes asked for, fewer at
// the end, the whole object's size, a version's bytes, and ErrRange past
// the end.
func TestRangedReads(t *testing.T) {
	dir, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]Blobs{"memory": NewMemory(), "dir": dir} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			big := bytes.Repeat([]byte("0123456789"), 300_000) // past the directory's 1 MB read whole
			key := SegmentPrefix + "000000000001-00000000.seg"
			if _, err := b.Put(ctx, key, bytes.NewReader([]byte("an older version")), 16, Condition{}); err != nil {
				t.Fatal(err)
			}
			obj, err := b.Put(ctx, key, bytes.NewReader(big), int64(len(big)), Condition{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Put(ctx, ManifestKey, strings.NewReader(`{"format":1}`), 12, Condition{}); err != nil {
				t.Fatal(err)
			}
			read := func(key string, opt GetOptions) (string, Object, error) {
				t.Helper()
				body, o, err := b.Get(ctx, key, opt)
				if err != nil {
					return "", o, err
				}
				defer body.Close()
				data, err := io.ReadAll(body)
				if err != nil {
					t.Fatal(err)
				}
				return string(data), o, nil
			}
			for _, tc := range []struct {
				key       string
				offset, n int64
				want      string
				size      int64
			}{
				{key, 3, 4, "3456", int64(len(big))},
				{key, 2_000_005, 3, "567", int64(len(big))},
				{key, int64(len(big)) - 2, 10, "89", int64(len(big))},
				{ManifestKey, 1, 6, `"forma`, 12},
				{ManifestKey, 10, 50, `1}`, 12},
			} {
				got, o, err := read(tc.key, GetOptions{Offset: tc.offset, Length: tc.n})
				if err != nil || got != tc.want || o.Size != tc.size {
					t.Errorf("%s bytes %d+%d: %q, size %d, %v; want %q and %d", tc.key, tc.offset, tc.n, got, o.Size, err, tc.want, tc.size)
				}
			}
			if _, _, err := read(key, GetOptions{Offset: int64(len(big)), Length: 1}); !errors.Is(err, ErrRange) {
				t.Errorf("a range past the end: %v, want ErrRange", err)
			}
			if obj.Version != "" { // a bucket keeps versions; a directory does not
				if got, _, err := read(key, GetOptions{Version: obj.Version, Offset: 1, Length: 2}); err != nil || got != "12" {
					t.Errorf("a range of the current version by ID: %q %v", got, err)
				}
				if err := b.Delete(ctx, key); err != nil {
					t.Fatal(err)
				}
				if got, _, err := read(key, GetOptions{Version: obj.Version, Offset: 1, Length: 2}); err != nil || got != "12" {
					t.Errorf("a range of a deleted key's version: %q %v", got, err)
				}
			}
		})
	}
}
