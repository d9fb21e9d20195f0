package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The binary built once for the tests that send it signals or let --jq run
// away: a runaway in-process --jq could not be stopped if the fix were
// missing, a process can.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func doclibBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		// Removed by TestMain, as one test's t.TempDir would be too soon.
		binDir, binErr = os.MkdirTemp("", "doclib-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "doclib")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("go build: %v", binErr)
	}
	return binPath
}

// output counts what the binary prints, keeping only its end, so that a
// runaway --jq cannot fill the test's memory; started is closed at the
// first byte.
type output struct {
	mu      sync.Mutex
	n       int
	tail    []byte
	started chan struct{}
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 && len(p) > 0 {
		close(o.started)
	}
	o.n += len(p)
	o.tail = append(o.tail, p...)
	if len(o.tail) > 64 {
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-64:]...)
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprintf("%d bytes ending %q", o.n, o.tail)
}

// startDoclib starts the binary against the shared test API with its own
// config directory.
func startDoclib(t *testing.T, args ...string) (*exec.Cmd, *output, *syncBuffer) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("signals are POSIX")
	}
	cmd := exec.Command(doclibBinary(t), args...)
	dir := t.TempDir()
	cmd.Env = []string{"DOCLIB_URL=" + apiSrv.URL, "DOCLIB_API_KEY=" + full, "HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	stdout, stderr := &output{started: make(chan struct{})}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, stderr
}

// waitExit waits for the process to end by itself, and kills it and fails
// the test once it has used cpu of processor time: a --jq bound that does
// not work shows as a process that goes on computing. Processor time, not
// time on the clock, so that a busy machine does not fail the test: at low
// priority under a load of 30 on 2 cores, `range(infinite)` with
// --jq-max-output 1 took 5 s on the clock for 0.3 s of processor time.
// Where the system does not say (not Linux), or for a process that hangs
// without computing, hangTimeout on the clock is the bound.
func waitExit(t *testing.T, cmd *exec.Cmd, cpu time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	hung := time.After(hangTimeout)
	for {
		select {
		case <-done:
			return cmd.ProcessState.ExitCode()
		case <-tick.C:
			if used, ok := cpuTime(cmd.Process.Pid); !ok || used <= cpu {
				continue
			}
			cmd.Process.Kill()
			<-done
			t.Fatalf("doclib %s still ran after %s of processor time; killed", strings.Join(cmd.Args[1:], " "), cpu)
			return -1
		case <-hung:
			cmd.Process.Kill()
			<-done
			t.Fatalf("doclib %s still ran after %s; killed", strings.Join(cmd.Args[1:], " "), hangTimeout)
			return -1
		}
	}
}

// hangTimeout is how long on the clock a test waits for a doclib process
// that should end in under a second: only a hang takes this long, whatever
// the machine's load.
const hangTimeout = 3 * time.Minute

// cpuTime is the processor time a running process has used, user and
// system, from /proc/PID/stat (Linux); false where it cannot be read.
func cpuTime(pid int) (time.Duration, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: utime and stime are the 14th and 15th of the line.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	// USER_HZ is 100 on every Linux that Go runs on.
	return time.Duration(ticks) * 10 * time.Millisecond, true
}

func TestSignalsEndJQ(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitSignal}, {syscall.SIGTERM, exitTerm}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			cmd, stdout, stderr := startDoclib(t, "libraries", "--json", "id", "--jq", "range(infinite)")
			select {
			case <-stdout.started:
			case <-time.After(hangTimeout):
				waitExit(t, cmd, time.Second)
				t.Fatalf("no output\n%s", stderr)
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, 20*time.Second); code != c.code {
				t.Errorf("exit %d after %s, want %d\nstderr:\n%s", code, c.sig, c.code, stderr)
			}
			if !strings.Contains(stderr.String(), "doclib: interrupted") {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}

func TestJQBounds(t *testing.T) {
	t.Run("time", func(t *testing.T) {
		// def f: [f]; f never yields a value and grows until the memory
		// runs out: --jq-timeout must end it, from inside the evaluation.
		start := time.Now()
		cmd, stdout, stderr := startDoclib(t, "libraries", "--json", "id", "--jq", "def f: [f]; f", "--jq-timeout", "300ms")
		code := waitExit(t, cmd, 20*time.Second)
		if took := time.Since(start); code != exitUsage || stdout.n != 0 ||
			!strings.Contains(stderr.String(), `doclib: --jq "def f: [f]; f" ran longer than --jq-timeout 300ms and was stopped`) ||
			!strings.Contains(stderr.String(), "give a slow one more time with --jq-timeout") {
			t.Errorf("exit %d after %s\nstdout: %s\nstderr:\n%s", code, took, stdout, stderr)
		}
	})
	t.Run("memory", func(t *testing.T) {
		// The same recursion with time to spare: --jq-max-memory ends it
		// (it grows by tens of MiB a second), long before the timeout.
		cmd, stdout, stderr := startDoclib(t, "libraries", "--json", "id", "--jq", "def f: [f]; f", "--jq-max-memory", "32", "--jq-timeout", "2m")
		code := waitExit(t, cmd, time.Minute)
		if code != exitUsage || stdout.n != 0 ||
			!strings.Contains(stderr.String(), `doclib: --jq "def f: [f]; f" took more than --jq-max-memory 32 MiB and was stopped`) ||
			!strings.Contains(stderr.String(), "give a large one more with --jq-max-memory") {
			t.Errorf("exit %d\nstdout: %s\nstderr:\n%s", code, stdout, stderr)
		}
		if rss := maxRSS(cmd); rss > 512<<20 {
			t.Errorf("the process reached %d MiB; --jq-max-memory 32 should stop it near that", rss>>20)
		}
	})
	t.Run("output", func(t *testing.T) {
		cmd, stdout, stderr := startDoclib(t, "libraries", "--json", "id", "--jq", "range(infinite)", "--jq-max-output", "1")
		code := waitExit(t, cmd, 20*time.Second)
		if code != exitUsage || stdout.n > 1<<20 || stdout.n < 1<<20-20 || !bytes.HasSuffix(stdout.tail, []byte("\n")) ||
			!strings.Contains(stderr.String(), `doclib: --jq "range(infinite)" printed more than --jq-max-output 1 MiB and was stopped`) ||
			!strings.Contains(stderr.String(), "raise --jq-max-output") {
			t.Errorf("exit %d\nstdout: %s (at most 1 MiB, ending a line)\nstderr:\n%s", code, stdout, stderr)
		}
	})
}

// maxRSS is the peak resident memory of an ended process, in bytes, where the
// system says (0 elsewhere).
func maxRSS(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		if runtime.GOOS == "darwin" {
			return ru.Maxrss // bytes
		}
		return ru.Maxrss << 10 // KiB on Linux
	}
	return 0
}

// TestCPUTime: the processor time waitExit bounds a process by is read,
// and grows as the process computes (a cpuTime that always said 0 would
// let a runaway --jq run until hangTimeout).
func TestCPUTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	before, ok := cpuTime(os.Getpid())
	if !ok {
		t.Fatal("no processor time for the test's own process")
	}
	x := 0
	for deadline := time.Now().Add(hangTimeout); time.Now().Before(deadline); {
		for i := range 1 << 20 {
			x ^= i
		}
		if now, _ := cpuTime(os.Getpid()); now >= before+100*time.Millisecond {
			return
		}
	}
	t.Errorf("the processor time did not grow (%d)", x)
}
