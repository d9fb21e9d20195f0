package lambdaemu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmpFiles lists an instance's temporary directory through the function.
func tmpFiles(t *testing.T, p *Pool) (string, map[string]int64, Result) {
	t.Helper()
	res := invoke(t, p, `{"op":"ls"}`)
	var got struct {
		Dir   string
		Files map[string]int64
	}
	if err := json.Unmarshal(res.Payload, &got); err != nil || res.FunctionError != "" {
		t.Fatalf("ls: %s %v", res.Payload, err)
	}
	return got.Dir, got.Files, res
}

// TestEphemeralStorage: each instance has a /tmp of its own (TMPDIR),
// bounded by EphemeralMB. A write that takes a file past the bound fails
// in the function (EFBIG; ENOSPC on Lambda), an invoke that takes the
// directory past it with several files fails, and what an invoke leaves
// is there for the next, also after a crash resets the instance. Close
// removes the directories.
func TestEphemeralStorage(t *testing.T) {
	p := start(t, "fn", Function{EphemeralMB: 2, Timeout: 10 * time.Second})
	for _, name := range []string{"a", "b"} {
		if res := invoke(t, p, `{"op":"write","name":"`+name+`","size":1024}`); res.FunctionError != "" {
			t.Fatalf("writing 1 MiB of a 2 MB /tmp: %s", res.Payload)
		}
	}
	dir, files, res := tmpFiles(t, p)
	if files["a"] != 1<<20 || files["b"] != 1<<20 || res.Instance != 1 {
		t.Fatalf("instance %d's /tmp %s holds %v; want a and b, 1 MiB each, kept from the invokes before", res.Instance, dir, files)
	}
	if rel, err := filepath.Rel(os.TempDir(), dir); err != nil || strings.HasPrefix(rel, "..") || dir == os.TempDir() {
		t.Errorf("TMPDIR %s is not a directory of its own", dir)
	}

	// One file past the bound: the write fails at the bound.
	res = invoke(t, p, `{"op":"write","name":"c","size":3072}`)
	if res.FunctionError == "" || !strings.Contains(string(res.Payload), "file too large") {
		t.Fatalf("writing 3 MiB to a 2 MB /tmp: %s; want the write refused", res.Payload)
	}
	if st, err := os.Stat(filepath.Join(dir, "c")); err != nil || st.Size() != 2<<20 {
		t.Errorf("c after the refused write: %v %v; want it cut at 2 MiB", st, err)
	}

	// A crash resets the instance; its /tmp stays.
	invoke(t, p, `{"op":"crash"}`)
	if d, files, res := tmpFiles(t, p); d != dir || len(files) != 3 || !res.Cold {
		t.Errorf("after a crash, a cold start lists %s %v; want %s with a, b and c", d, files, dir)
	}

	// Another instance has its own, empty /tmp.
	busy := make(chan Result)
	go func() { busy <- invoke(t, p, `{"op":"sleep","ms":1000}`) }()
	time.Sleep(200 * time.Millisecond)
	if d, files, res := tmpFiles(t, p); res.Instance != 2 || d == dir || len(files) != 0 {
		t.Errorf("instance %d: %s %v; want instance 2's own empty /tmp", res.Instance, d, files)
	}
	<-busy

	// Files under the bound each, over it together: the invoke fails.
	q := start(t, "fn", Function{Name: "doclib-test-tmp", EphemeralMB: 2})
	if res := invoke(t, q, `{"op":"write","name":"x","size":1536}`); res.FunctionError != "" {
		t.Fatalf("x: %s", res.Payload)
	}
	res = invoke(t, q, `{"op":"write","name":"y","size":1536}`)
	if res.FunctionError != "Unhandled" || !strings.Contains(string(res.Payload), "Lambdaemu.EphemeralStorageExceeded") ||
		!strings.Contains(string(res.Payload), "ENOSPC") {
		t.Errorf("3 MiB in two files of a 2 MB /tmp: %s; want the invoke failed", res.Payload)
	}
	// An invoke that writes nothing more is not failed for what is there.
	if _, _, res := tmpFiles(t, q); res.FunctionError != "" {
		t.Errorf("ls of a full /tmp failed: %s", res.Payload)
	}

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after Close: %v; want it removed", dir, err)
	}
}

// TestEphemeralStorageDefault: without EphemeralMB the bound is Lambda's
// default, and Validate holds the template to Lambda's range.
func TestEphemeralStorageDefault(t *testing.T) {
	p := Start(Function{Name: "f", Path: binaries["fn"]})
	defer p.Close()
	if p.fn.EphemeralMB != DefaultEphemeralMB || p.ephemeralBytes() != 512<<20 {
		t.Errorf("default bound %d MB", p.fn.EphemeralMB)
	}
	for size, ok := range map[int]bool{0: true, 512: true, 10240: true, 511: false, 10241: false} {
		err := Function{Name: "f", EphemeralMB: size}.Validate()
		if (err == nil) != ok {
			t.Errorf("Validate with EphemeralMB %d: %v", size, err)
		}
	}
}
