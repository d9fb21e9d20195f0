package wiring

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// TestIndexDirReadsOnlyWhatTheManifestNames: an index directory whose
// fitted embedder is not the one its manifest names, by size, digest or
// content, or whose manifest names none (an earlier version's, which read
// the file on trust), is built again, and answers as the first build did;
// the next start reads what the rebuild wrote.
func TestIndexDirReadsOnlyWhatTheManifestNames(t *testing.T) {
	ctx := context.Background()
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	e, err := Embedder(ctx, settings.Embedder{})
	if err != nil {
		t.Fatal(err)
	}
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := func(dir string) (string, bool) {
		t.Helper()
		s, read, err := IndexDir(ctx, dir, d, e, settings.Rules{}, quiet, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := s.Search(ctx, search.Request{Text: "reset a password", Libraries: libs, Limit: 10})
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		answer := ""
		for _, h := range resp.Hits {
			answer += fmt.Sprintf("%s %.6f %v\n", h.DocumentID, h.Score, h.Signals)
		}
		return answer, read
	}
	want, _ := open(t.TempDir())
	if want == "" {
		t.Fatal("the search found nothing to compare")
	}
	file := func(dir, key string) string { return filepath.Join(dir, filepath.FromSlash(key)) }
	editManifest := func(t *testing.T, dir string, edit func(m map[string]any)) {
		t.Helper()
		p := file(dir, "snapshots/manifest.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// replaceEmbedder writes data as the embedder's file, and names it in
	// the manifest with its size and digest.
	replaceEmbedder := func(t *testing.T, dir string, data []byte) {
		t.Helper()
		if err := os.WriteFile(file(dir, embedderKey), data, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		editManifest(t, dir, func(m map[string]any) {
			m["embedder_file"] = map[string]any{"key": embedderKey, "bytes": len(data), "sha256": hex.EncodeToString(sum[:])}
		})
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := offline.FitCorpus(ctx, h, []string{"order a laptop", "approve an invoice", "reset a password"}, offline.CorpusDimensions)
	if err != nil {
		t.Fatal(err)
	}
	otherFile, err := other.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for name, tamper := range map[string]func(t *testing.T, dir string){
		"a manifest that names no embedder file": func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { delete(m, "embedder_file") })
		},
		"a byte of the embedder changed": func(t *testing.T, dir string) {
			b, err := os.ReadFile(file(dir, embedderKey))
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-1] ^= 1
			if err := os.WriteFile(file(dir, embedderKey), b, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"the embedder cut short": func(t *testing.T, dir string) {
			if err := os.Truncate(file(dir, embedderKey), 100); err != nil {
				t.Fatal(err)
			}
		},
		"the embedder gone": func(t *testing.T, dir string) {
			if err := os.Remove(file(dir, embedderKey)); err != nil {
				t.Fatal(err)
			}
		},
		"another fit's embedder, named by its size and digest": func(t *testing.T, dir string) {
			replaceEmbedder(t, dir, otherFile)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, read := open(dir); read {
				t.Fatal("an empty directory was read")
			}
			tamper(t, dir)
			got, read := open(dir)
			if read {
				t.Error("the index was read, not built again")
			}
			if got != want {
				t.Errorf("answers\n%s\nwhere the first build answered\n%s", got, want)
			}
			if again, read := open(dir); !read || again != want {
				t.Errorf("after the rebuild: read %v, answers\n%s", read, again)
			}
		})
	}
}
