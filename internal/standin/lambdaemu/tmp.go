package lambdaemu

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Ephemeral storage. On Lambda each execution environment has its own /tmp
// of the function's EphemeralStorage.Size, 512 MB unless configured
// (512–10,240 MB; Lambda API reference, "EphemeralStorage"), the only
// writable place; it is shared across the invokes the environment serves
// and is not emptied between them (developer guide, "Lambda execution
// environment"), so a file one invoke leaves is there for the next, and a
// write past the size fails with ENOSPC.
//
// Here each instance gets a directory of its own, made when its first
// process starts and removed by Pool.Close, and its processes get it as
// TMPDIR (Go's os.TempDir, and most runtimes, take their temporary files
// there; Lambda sets no TMPDIR, /tmp being the default). It is kept across
// invokes and across a reset after a crash or a timeout: Lambda's guide
// does not say that a reset empties /tmp, and keeping it is the case a
// function must survive (a timed-out run's half-written file is still
// there). The bound is held two ways, since an unprivileged process on
// Linux cannot mount a file system of that size:
//
//   - RLIMIT_FSIZE of each process (prlimit(2), right after it starts) is
//     the bound, so that a write that takes one file past it fails at once,
//     as on Lambda, with EFBIG ("file too large") where Lambda answers
//     ENOSPC; a Go process ignores the SIGXFSZ that comes with it. It
//     bounds every file the process writes, which on Lambda are all under
//     /tmp anyway; pipes (its stdout and stderr) are not files.
//   - After each invoke the directory's allocated size is summed: if the
//     invoke took it past the bound (several files, none past it alone),
//     the invoke fails with an error that says so (the emulator's own
//     type, Lambdaemu.EphemeralStorageExceeded) unless the function failed
//     by itself: on Lambda one of its writes would have failed.
//
// What it does not copy: the rest of the file system is the host's, and
// writable, where Lambda's is read-only.

// DefaultEphemeralMB is /tmp's size when the template sets none.
const DefaultEphemeralMB = 512

// ephemeralBytes is the instances' bound in bytes.
func (p *Pool) ephemeralBytes() int64 { return int64(p.fn.EphemeralMB) << 20 }

// tmpDir makes the instance's directory unless it has one.
func (p *Pool) tmpDir(in *instance) (string, error) {
	p.mu.Lock()
	dir := in.tmp
	p.mu.Unlock()
	if dir != "" {
		return dir, nil
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("lambdaemu-%s-%d-", p.fn.Name, in.id))
	if err != nil {
		return "", fmt.Errorf("lambdaemu: %s: instance %d's /tmp: %w", p.fn.Name, in.id, err)
	}
	p.mu.Lock()
	in.tmp = dir
	p.mu.Unlock()
	return dir, nil
}

// tmpUsage is what the files under dir take on disk (st_blocks, so that a
// sparse file counts what it holds), or their sizes where the host does
// not say.
func tmpUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += int64(st.Blocks) * 512
		} else {
			n += info.Size()
		}
		return nil
	})
	return n
}

// tmpOverrun is the error an invoke ends with when it took the instance's
// directory from before bytes past the bound; nil if it did not.
func (p *Pool) tmpOverrun(in *instance, ev *event, before int64) *answer {
	if in.tmp == "" {
		return nil
	}
	after, limit := tmpUsage(in.tmp), p.ephemeralBytes()
	if after <= limit || after <= before {
		return nil
	}
	a := errorAnswer("Lambdaemu.EphemeralStorageExceeded", fmt.Sprintf(
		"RequestId: %s Error: the function's /tmp (TMPDIR %s) holds %d bytes, over its EphemeralStorage of %d MB: "+
			"on Lambda the write past it fails with ENOSPC (no space left on device)",
		ev.id, in.tmp, after, p.fn.EphemeralMB))
	return &a
}
