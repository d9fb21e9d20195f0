package dataset_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/doclib/doclib/shared/data/dataset"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.json")
	put := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	read := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := dataset.WriteFile(path, 0o600, false, put("one")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); read() != "one" || st.Mode().Perm() != 0o600 {
		t.Errorf("wrote %q, mode %v", read(), st.Mode())
	}
	// Without replace an existing file stays as it was.
	if err := dataset.WriteFile(path, 0o600, false, put("two")); !errors.Is(err, fs.ErrExist) || read() != "one" {
		t.Errorf("error %v, file %q: want fs.ErrExist and the old file", err, read())
	}
	// A write that fails leaves the old file, and no temporary file.
	boom := errors.New("disk full")
	if err := dataset.WriteFile(path, 0o600, true, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) || read() != "one" {
		t.Errorf("error %v, file %q: want the write's error and the old file", err, read())
	}
	if err := dataset.WriteFile(path, 0o644, true, put("three")); err != nil || read() != "three" {
		t.Errorf("replace: error %v, file %q", err, read())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d entries, want the file alone", len(entries))
	}
	// A link at the path is refused too, not followed.
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteFile(link, 0o600, false, put("x")); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a dangling link: error %v, want fs.ErrExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("the link was followed")
	}
}
