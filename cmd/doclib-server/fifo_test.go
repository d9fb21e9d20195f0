//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/snapshot"
)

// hang is how long a test waits for run to return before it says run hangs.
// What it waits for takes milliseconds; the minute only decides when a hang
// is reported, however loaded the machine, instead of the package's timeout.
const hang = time.Minute

// runInBackground runs run with args: done gets what it returns, and
// cancel ends its context, as SIGINT and SIGTERM do.
func runInBackground(t *testing.T, args ...string) (done <-chan error, out *syncBuffer, cancel func()) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	ch := make(chan error, 1)
	out = &syncBuffer{}
	go func() { ch <- run(ctx, args, func(string) string { return "" }, out, out) }()
	return ch, out, stop
}

// TestSignalEndsAStuckStartUp: a start-up that waits on its data file (a
// named pipe whose writer sends nothing) ends as soon as its context does,
// which is what SIGTERM and SIGINT do; it used to wait for the data, so
// that only SIGKILL ended it.
func TestSignalEndsAStuckStartUp(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "data.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done, out, cancel := runInBackground(t, "--addr", "127.0.0.1:0", "--data", fifo)
	// A writer opens the pipe without waiting only once a reader has it
	// open: then the server is reading its data, and waits while the
	// writer says nothing.
	var w *os.File
	for {
		var err error
		if w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("run ended before it read its data: %v\n%s", err, out)
		default:
		}
		time.Sleep(time.Millisecond) // a poll of a state, not a limit
	}
	defer w.Close()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped while starting") {
			t.Errorf("run returned %v, want it stopped while starting", err)
		}
	case <-time.After(hang):
		t.Errorf("run did not return within %s of its context's end, while its data file said nothing", hang)
		w.Close() // the end of the data: the load fails and run returns
		<-done
	}
}

// TestIndexDirOverWhatIsNotAFile: a named pipe in place of a segment or of
// the fitted embedder makes doclib-server build the index again (the
// directory's reader used to wait on it for ever); in place of the
// manifest, which a rebuild must replace on condition, start-up fails at
// once with a message that names it and says to remove it.
func TestIndexDirOverWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "data.json")
	b, _ := json.Marshal(fixture.File())
	if err := os.WriteFile(data, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--addr", "127.0.0.1:0", "--data", data, "--index-dir", dir}
	serveOnce := func(want string) {
		t.Helper()
		base, out, stop := start(t, args...)
		defer stop()
		if !strings.Contains(out.String(), "Search index "+want+" "+dir) {
			t.Fatalf("want the index %s %s:\n%s", want, dir, out)
		}
		if status, body := get(t, base+"/search/documents?q=password", fixture.KeyFull); status != 200 {
			t.Fatalf("search: %d %s", status, body)
		}
	}
	serveOnce("built and written to")
	blobs, err := snapshot.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := snapshot.ReadManifest(context.Background(), blobs, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.EmbedderFile == nil {
		t.Fatal("the manifest names no fitted embedder")
	}
	pipe := func(key string) string {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, key := range []string{m.Segments[0].Key, m.EmbedderFile.Key} {
		pipe(key)
		serveOnce("built and written to")
		serveOnce("read from")
	}
	p := pipe(snapshot.ManifestKey)
	done, out, cancel := runInBackground(t, args...)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), p+" is a named pipe") || !strings.Contains(err.Error(), "remove it") {
			t.Errorf("run returned %v, want an error naming %s and saying to remove it\n%s", err, p, out)
		}
	case <-time.After(hang):
		cancel()
		t.Errorf("start-up did not end within %s over a named pipe in place of the manifest: %v\n%s", hang, <-done, out)
	}
}
