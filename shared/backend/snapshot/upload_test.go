package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/embedtest"
	"github.com/doclib/doclib/shared/search"
)

// TestUploadPartsSizes: a body of up to one part goes in one put; a longer
// one as parts of PartSize and a last part of the rest, never empty.
func TestUploadPartsSizes(t *testing.T) {
	for _, tc := range []struct{ size, parts int }{
		{0, 0}, {1, 0}, {PartSize, 0}, {PartSize + 1, 2}, {2 * PartSize, 2}, {2*PartSize + 3, 3},
	} {
		m := NewMemory()
		data := bytes.Repeat([]byte("snapshot"), tc.size/8+1)[:tc.size]
		obj, err := m.PutStream(context.Background(), SnapshotKey, func(w io.Writer) error {
			// Writes of odd sizes, as an encoder makes them.
			for rest := data; len(rest) > 0; {
				n := min(len(rest), 1<<20+7)
				if _, err := w.Write(rest[:n]); err != nil {
					return err
				}
				rest = rest[n:]
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%d bytes: %v", tc.size, err)
		}
		begun, open := m.Uploads()
		suffix := fmt.Sprintf(`-%d"`, tc.parts)
		if tc.parts == 0 && (begun != 0 || strings.Contains(obj.ETag, "-")) ||
			tc.parts > 0 && (begun != 1 || !strings.HasSuffix(obj.ETag, suffix)) || open != 0 || obj.Size != int64(tc.size) {
			t.Errorf("%d bytes: %+v, %d uploads begun, %d open; want %d parts", tc.size, obj, begun, open, tc.parts)
		}
		body, _, err := m.Get(context.Background(), SnapshotKey, GetOptions{Version: obj.Version})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(body); !bytes.Equal(got, data) {
			t.Errorf("%d bytes: read back %d different ones", tc.size, len(got))
		}
	}
}

// bigDocs are n documents of 1024-dimension vectors (8 KiB each with its
// recording's), as the indexer holds them.
func bigDocs(n int) []search.IndexDoc {
	out := make([]search.IndexDoc, n)
	for i := range out {
		id := fmt.Sprintf("doc%05d", i)
		out[i] = search.IndexDoc{Doc: search.Doc{ID: id, LibraryID: "lib"}, Title: "title of " + id, Vector: vec(1024, float32(i)),
			Recordings: []search.RecordingVector{{ID: "rec_" + id, Vector: vec(1024, -float32(i))}}}
	}
	return out
}

// threePartDocs documents of bigDocs make a segment of more than two parts
// (each holds two quantized vectors of 1,156 bytes).
const threePartDocs = 15000

// noDisk points TMPDIR at a file, so that creating a temporary file fails:
// the writer must not touch the disk (a Lambda function's /tmp is 512 MB
// by default, smaller than the snapshot of 65,000 documents).
func noDisk(t *testing.T) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "not-a-directory")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", file)
	if f, err := os.CreateTemp("", "probe-*"); err == nil {
		f.Close()
		t.Fatalf("TMPDIR=%s still takes a temporary file (%s)", file, f.Name())
	}
}

// TestWriterStreamsSnapshot: a segment of three parts is published with
// no temporary file, as one multipart upload, and reads back whole.
func TestWriterStreamsSnapshot(t *testing.T) {
	noDisk(t)
	ctx := context.Background()
	m := NewMemory()
	w := &Writer{Blobs: m, Embedder: embedtest.Named{Name: "test-embedder/1024", Dims: 1024}, Logger: quiet}
	in := bigDocs(threePartDocs)
	if err := w.Publish(ctx, in); err != nil {
		t.Fatalf("publish of %d documents with no disk: %v", len(in), err)
	}
	if begun, open := m.Uploads(); begun != 1 || open != 0 {
		t.Errorf("%d multipart uploads begun, %d left open; want the one, completed", begun, open)
	}
	man, _, err := ReadManifest(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(man.Segments) != 1 || man.Segments[0].Bytes <= 2*PartSize {
		t.Fatalf("the index is %+v; the test wants one segment of more than two parts of %d", man.Segments, PartSize)
	}
	f := &Follower{Blobs: m, Embedder: w.Embedder, Logger: quiet}
	if err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if st := f.Current(); st.Documents != len(in) || st.Err != nil {
		t.Fatalf("read back %+v; want %d documents", st, len(in))
	}
}

// TestFailedPartAbortsUpload: an UploadPart that fails fails the Commit,
// aborts the upload (no parts left billed), and publishes nothing; the
// next Commit publishes the batch.
func TestFailedPartAbortsUpload(t *testing.T) {
	noDisk(t)
	ctx := context.Background()
	m := NewMemory()
	w := &Writer{Blobs: m, Embedder: embedtest.Named{Name: "test-embedder/1024", Dims: 1024}, Logger: quiet}
	if err := w.Publish(ctx, bigDocs(1)); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("UploadPart: connection reset")
	m.FailPart = func(key string, n int) error {
		if n == 2 {
			return broken
		}
		return nil
	}
	if err := w.Upsert(ctx, bigDocs(threePartDocs)); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); !errors.Is(err, broken) {
		t.Fatalf("commit with a failing part: %v; want its error", err)
	}
	if begun, open := m.Uploads(); begun != 1 || open != 0 {
		t.Errorf("%d multipart uploads begun, %d left open; want the one, aborted", begun, open)
	}
	if s, p := len(segmentKeys(m)), m.Versions(ManifestKey); s != 1 || p != 1 {
		t.Errorf("%d segments and %d manifest versions after the failed commit; want the first of each", s, p)
	}
	m.FailPart = nil
	if err := w.Upsert(ctx, bigDocs(threePartDocs)); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if p := m.Versions(ManifestKey); p != 2 {
		t.Errorf("%d manifest versions after the redone commit; want 2", p)
	}
}
