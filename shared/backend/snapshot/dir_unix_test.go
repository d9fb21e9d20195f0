//go:build unix

package snapshot

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// returns runs read and returns its error, failing the test if read waits
// on the named pipe fifo for a writer. A Dir never opens what is not a
// regular file, so no reader ever holds the pipe open: a writer can open it
// without waiting (O_NONBLOCK) only while a read is waiting on it, which is
// the hang itself (start-up waited so for ever). That writer then lets the
// read go. Nothing here is timed: the read returns, or is seen waiting.
func returns(t *testing.T, fifo string, read func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read() }()
	for {
		select {
		case err := <-done:
			return err
		default:
		}
		if fifo != "" {
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				t.Errorf("the read waited on the named pipe %s for a writer", fifo)
				w.Close()
				return <-done
			}
		}
		time.Sleep(time.Millisecond) // a poll of a state, not a limit
	}
}

// TestDirRefusesWhatIsNotAFile: a named pipe, a socket, a directory or a
// symbolic link in the place of a segment or of the manifest is refused as
// ErrCorrupt, saying what it is, without waiting; a conditional write over
// it is refused the same way, and a follower serves nothing and says why.
func TestDirRefusesWhatIsNotAFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := newWriter(d).Publish(ctx, docs("a", "b")); err != nil {
		t.Fatal(err)
	}
	m, _, err := ReadManifest(ctx, d, "")
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]func(p string) error{
		"a named pipe":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a directory":     func(p string) error { return os.Mkdir(p, 0o700) },
		"a symbolic link": func(p string) error { return os.Symlink(outside, p) },
		"a socket": func(p string) error {
			// Bound at a short path (a socket's path is at most about 100
			// bytes), then moved into place.
			short, err := os.MkdirTemp("", "sock")
			if err != nil {
				return err
			}
			t.Cleanup(func() { os.RemoveAll(short) })
			l, err := net.Listen("unix", filepath.Join(short, "s"))
			if err != nil {
				return err
			}
			t.Cleanup(func() { l.Close() })
			return os.Rename(filepath.Join(short, "s"), p)
		},
	}
	for what, put := range kinds {
		for _, key := range []string{m.Segments[0].Key, ManifestKey} {
			t.Run(what+" at "+key, func(t *testing.T) {
				p := filepath.Join(root, filepath.FromSlash(key))
				keep, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := put(p); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := os.RemoveAll(p); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, keep, 0o600); err != nil {
						t.Fatal(err)
					}
				}()
				fifo := ""
				if what == "a named pipe" {
					fifo = p
				}
				refused := func(doing string, err error) {
					t.Helper()
					if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), what) {
						t.Errorf("%s: %v, want ErrCorrupt saying it is %s", doing, err, what)
					}
				}
				refused("get", returns(t, fifo, func() error {
					body, _, err := d.Get(ctx, key, GetOptions{})
					if err == nil {
						body.Close()
					}
					return err
				}))
				refused("a conditional put", returns(t, fifo, func() error {
					_, err := d.Put(ctx, key, strings.NewReader("{}"), 2, Condition{IfMatch: `"any"`})
					return err
				}))
				f := &Follower{Blobs: d, Embedder: testEmb, Every: time.Hour, Logger: quiet}
				if err := returns(t, fifo, func() error { return f.Load(ctx) }); err != nil {
					t.Fatalf("load: %v", err)
				}
				refused("the follower's state", f.Current().Err)
			})
		}
	}
	// Everything put back: the directory serves again.
	wantIDs(t, newFollower(t, d, &clock{}), "a", "b")
}

// TestDirManifestReadIsBounded: a manifest file of 64 MiB (sparse: it
// costs no disk) is refused by its size before it is read (the directory
// read it whole, 235 MB allocated, before the manifest's bound of 1 MB
// refused it), and a publish replaces it on condition, as it replaces any
// manifest it cannot use.
func TestDirManifestReadIsBounded(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, filepath.FromSlash(ManifestKey))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	n := allocated(func() { _, _, err = ReadManifest(ctx, d, "") })
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("a manifest of 64 MiB: %v, want ErrCorrupt", err)
	}
	if n > 64<<10 {
		t.Errorf("a manifest of 64 MiB was refused after allocating %d bytes", n)
	}
	t.Logf("refused after allocating %d bytes: %v", n, err)
	if err := newWriter(d).Publish(ctx, docs("a")); err != nil {
		t.Fatalf("a publish over it: %v", err)
	}
	wantIDs(t, newFollower(t, d, &clock{}), "a")
}
