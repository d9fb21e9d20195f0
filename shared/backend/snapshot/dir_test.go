package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDir runs the tier on a directory: a writer's commits and merges, read
// back by a follower, a restart that reads the index again, conditional
// writes, and keys that would leave the directory.
func TestDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	w := newWriter(d)
	w.Policy = MergePolicy{Factor: 3, MinDocuments: 1, CacheDocuments: 1}
	if err := w.Publish(ctx, docs("a", "b")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c", "d", "e"} {
		if err := w.Upsert(ctx, docs(id)); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Delete(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// A new process: the same directory, read.
	again, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	f := newFollower(t, again, &clock{})
	wantIDs(t, f, "b", "c", "d", "e")
	if st := f.Current(); st.Segments >= 5 {
		t.Errorf("in service: %+v; a merge was expected", st)
	}
	if _, err := os.Stat(filepath.Join(root, "snapshots", "manifest.json")); err != nil {
		t.Fatalf("the manifest is not a file of the directory: %v", err)
	}
	// Not modified, then a conflict on a stale ETag.
	_, obj, err := ReadManifest(ctx, again, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadManifest(ctx, again, obj.ETag); !errors.Is(err, ErrNotModified) {
		t.Fatalf("manifest with its own ETag: %v", err)
	}
	if _, err := again.Put(ctx, ManifestKey, strings.NewReader("{}"), 2, Condition{IfMatch: `"stale"`}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a put on a stale ETag: %v", err)
	}
	if _, err := again.Put(ctx, ManifestKey, strings.NewReader("{}"), 2, Condition{IfNoneMatch: true}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a put if none over a manifest: %v", err)
	}
	for _, key := range []string{"../outside", "/etc/passwd", "snapshots/../../x", ""} {
		if _, err := again.Put(ctx, key, strings.NewReader("x"), 1, Condition{}); err == nil {
			t.Errorf("key %q was written", key)
		}
	}
	if err := again.Delete(ctx, SegmentPrefix+"never.seg"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	// No temporary file is left behind.
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}
