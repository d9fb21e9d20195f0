package dataset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes a data-set file at path through write, whole or not at
// all: into a temporary file beside path (mode perm), then moved into place,
// so that a failed or interrupted run leaves the old file, or nothing, never
// half a file. With replace, it takes the place of a file at path; without,
// an existing path (a file, a folder or a link) is refused with an error
// that wraps fs.ErrExist, and the check and the move are one atomic step.
func WriteFile(path string, perm fs.FileMode, replace bool, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name()) // after a link, the name beside path; after a rename, nothing
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	if err := errors.Join(tmp.Chmod(perm), tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		err = os.Link(tmp.Name(), path) // refuses an existing path, atomically
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: %w", path, fs.ErrExist)
	}
	if err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	return nil
}
