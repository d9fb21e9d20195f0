package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Dir is Blobs on a local directory, for doclib-server's --index-dir: the
// same segments and manifest as a stack's bucket, so that a restart reads
// the index rather than building it. A key is a file under the directory
// (its slashes, directories); a write goes to a temporary file first and is
// renamed into place, so that a reader never sees half of one. ETags are the
// SHA-256 of the content. There are no versions: Get of a version is
// ErrNotFound. Conditions hold among the users of one Dir; one process at a
// time is expected to write a directory.
type Dir struct {
	root string
	mu   sync.Mutex // conditional writes: the check and the rename at once
}

// NewDir returns the Blobs of directory root, which it creates if missing.
func NewDir(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot: the index directory: %w", err)
	}
	return &Dir{root: root}, nil
}

var _ Blobs = (*Dir)(nil)

// path is key's file, or an error for a key that would leave the directory.
func (d *Dir) path(key string) (string, error) {
	if key == "" || !filepath.IsLocal(filepath.FromSlash(key)) || strings.Contains(key, `\`) {
		return "", fmt.Errorf("snapshot: key %q is not a path inside the index directory", key)
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// Get implements Blobs.
func (d *Dir) Get(ctx context.Context, key string, opt GetOptions) (io.ReadCloser, Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, Object{}, err
	}
	p, err := d.path(key)
	if err != nil {
		return nil, Object{}, err
	}
	if opt.Version != "" {
		return nil, Object{}, fmt.Errorf("get %s version %s: a directory keeps no versions: %w", key, opt.Version, ErrNotFound)
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, Object{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Object{}, err
	}
	obj := Object{Size: st.Size()}
	if opt.IfNoneMatch != "" || key == ManifestKey { // small objects whose ETag is asked for
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, Object{}, err
		}
		obj.ETag = etagOf(data)
		if opt.IfNoneMatch != "" && opt.IfNoneMatch == obj.ETag {
			return nil, Object{}, ErrNotModified
		}
		return io.NopCloser(strings.NewReader(string(data))), obj, nil
	}
	return f, obj, nil
}

// Put implements Blobs.
func (d *Dir) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, cond Condition) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return Object{}, err
	}
	if int64(len(data)) != size {
		return Object{}, fmt.Errorf("put %s: a body of %d bytes, said %d", key, len(data), size)
	}
	p, err := d.path(key)
	if err != nil {
		return Object{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cond.IfMatch != "" || cond.IfNoneMatch {
		cur, err := os.ReadFile(p)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Object{}, err
		}
		if cond.IfNoneMatch && exists || cond.IfMatch != "" && (!exists || etagOf(cur) != cond.IfMatch) {
			return Object{}, fmt.Errorf("put %s: %w", key, ErrConflict)
		}
	}
	if err := d.write(p, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return Object{}, err
	}
	return Object{ETag: etagOf(data), Size: size}, nil
}

// PutStream implements Blobs: write writes a temporary file, renamed into
// place once whole.
func (d *Dir) PutStream(ctx context.Context, key string, write func(io.Writer) error) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	p, err := d.path(key)
	if err != nil {
		return Object{}, err
	}
	var n int64
	err = d.write(p, func(w io.Writer) error {
		c := &counter{w: w}
		err := write(c)
		n = c.n
		return err
	})
	if err != nil {
		return Object{}, err
	}
	return Object{Size: n}, nil
}

// Delete implements Blobs.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// write writes path's content through a temporary file in its directory.
func (d *Dir) write(path string, fill func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
