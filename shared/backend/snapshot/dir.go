package snapshot

import (
	"bytes"
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
// SHA-256 of the content; of a file over 1 MB, which no manifest or pointer
// is, its size and modification time, so that it is never read whole to
// compute one. There are no versions: Get of a version is
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

// Get implements Blobs. Only regular files are read: anything else in a
// key's place (a named pipe, whose open would wait for a writer for ever, a
// device, a socket, a directory, a symbolic link) is refused as ErrCorrupt
// at once (openRegular).
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
	if opt.IfNoneMatch != "" || key == ManifestKey { // small objects whose ETag is asked for
		body, obj, err := readETagged(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Object{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
		}
		if err != nil {
			return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
		}
		if opt.IfNoneMatch != "" && opt.IfNoneMatch == obj.ETag {
			body.Close()
			return nil, Object{}, ErrNotModified
		}
		return ranged(key, body, obj, opt)
	}
	f, st, err := openRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	return ranged(key, f, Object{Size: st.Size()}, opt)
}

// ranged is what body, the whole of obj (an open file, or the bytes of a
// small one), holds of opt's range.
func ranged(key string, body io.ReadCloser, obj Object, opt GetOptions) (io.ReadCloser, Object, error) {
	if opt.Length <= 0 {
		return body, obj, nil
	}
	if opt.Offset < 0 || opt.Offset >= obj.Size {
		body.Close()
		return nil, Object{}, fmt.Errorf("get %s: bytes %d to %d of %d: %w", key, opt.Offset, opt.Offset+opt.Length-1, obj.Size, ErrRange)
	}
	if f, ok := body.(io.ReaderAt); ok {
		return sectionFile{io.NewSectionReader(f, opt.Offset, opt.Length), body}, obj, nil
	}
	if _, err := io.CopyN(io.Discard, body, opt.Offset); err != nil {
		body.Close()
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	return sectionFile{io.LimitReader(body, opt.Length), body}, obj, nil
}

// sectionFile reads a range of a file, and closes the file.
type sectionFile struct {
	io.Reader
	io.Closer
}

// maxSmall bounds what is read whole to compute an ETag: the manifest and
// the pointer are each at most 1 MB.
const maxSmall = maxManifest

// readETagged opens the regular file p and returns its content and ETag.
// A file of at most maxSmall bytes is read whole and digested. A larger one
// is not read: its ETag is its size and modification time, and its body the
// open file, so that a reader refuses it by its size without holding it
// (ReadManifest reads at most 1 MB and a byte; a manifest file of 64 MiB
// was read whole, twice over, 235 MB), and a writer can still replace it on
// condition.
func readETagged(p string) (io.ReadCloser, Object, error) {
	f, st, err := openRegular(p)
	if err != nil {
		return nil, Object{}, err
	}
	if st.Size() > maxSmall {
		return f, Object{ETag: fmt.Sprintf(`"%d-bytes-modified-%d"`, st.Size(), st.ModTime().UnixNano()), Size: st.Size()}, nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSmall+1))
	if err != nil {
		return nil, Object{}, err
	}
	if len(data) > maxSmall { // written in place since it was looked at: no writer of this program does
		return nil, Object{}, fmt.Errorf("snapshot: %s grew while it was read: %w", p, ErrCorrupt)
	}
	return io.NopCloser(bytes.NewReader(data)), Object{ETag: etagOf(data), Size: int64(len(data))}, nil
}

// openRegular opens p for reading if it is a regular file, and never waits
// to: opening a named pipe for reading waits for a writer, for ever if none
// comes, and opening a device may do anything. So it looks first (Lstat:
// what is not a regular file is never opened, a symbolic link included),
// then opens without waiting and without following a link (openFlags), and
// checks what it opened (fstat), since another process may have put
// something else in the file's place in between. What is not a regular file
// is ErrCorrupt: no writer of this program puts it there.
func openRegular(p string) (*os.File, fs.FileInfo, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, notRegular(p, st.Mode())
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = notRegular(p, st.Mode())
		}
		return nil, nil, err
	}
	return f, st, nil
}

func notRegular(p string, m fs.FileMode) error {
	what := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeDir != 0:
		what = "a directory"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link"
	}
	return &notFileError{path: p, what: what}
}

// notFileError is ErrCorrupt, with a message of its own: the path, what is
// there, and the cure.
type notFileError struct{ path, what string }

func (e *notFileError) Error() string {
	return fmt.Sprintf("snapshot: %s is %s, where this program writes a file: remove it", e.path, e.what)
}

func (e *notFileError) Is(target error) bool { return target == ErrCorrupt }

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
		body, cur, err := readETagged(p)
		exists := err == nil
		if exists {
			body.Close()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Object{}, fmt.Errorf("put %s: %w", key, err)
		}
		if cond.IfNoneMatch && exists || cond.IfMatch != "" && (!exists || cur.ETag != cond.IfMatch) {
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
