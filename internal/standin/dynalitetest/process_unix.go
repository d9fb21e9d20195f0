//go:build unix

package dynalitetest

import (
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// watchdog runs as `sh -c watchdog sh <dynalite> <args...>`. It forks a
// subshell that polls the shell's parent (the test binary) once a second and,
// when it is gone, SIGKILLs the process group; then the shell execs dynalite,
// so dynalite keeps the shell's PID, which is also the group ID (Setpgid).
// The subshell stops by itself once dynalite is gone, and writes nowhere, so
// it never keeps the output pipe open.
const watchdog = `(
  while kill -0 "$PPID" 2>/dev/null; do
    kill -0 "$$" 2>/dev/null || exit 0
    sleep 1
  done
  kill -s KILL -- "-$$"
) </dev/null >/dev/null 2>&1 &
exec "$@"`

// process is a running dynalite with its watchdog, in their own process
// group.
type process struct {
	endpoint string
	cmd      *exec.Cmd
	out      *tailBuffer
	done     chan struct{} // closed when cmd.Wait returns
	waitErr  error         // valid after done is closed
}

// launch starts dynalite on port, keeping its tables in the folder dir
// (LevelDB on disk) or, when dir is "", in its memory.
func launch(bin string, port int, dir string) (*process, error) {
	p := &process{
		endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		out:      &tailBuffer{max: 64 << 10},
		done:     make(chan struct{}),
	}
	args := []string{"-c", watchdog, "dynalite-watchdog", bin,
		"--host", "127.0.0.1", "--port", strconv.Itoa(port),
		// Tables are ACTIVE at once, so the SDK's table waiters (which sleep
		// 20 s between polls) do not slow the tests down.
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"}
	if dir != "" {
		args = append(args, "--path", dir)
	}
	p.cmd = exec.Command("/bin/sh", args...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	// Own process group: Ctrl-C on go test does not reach it directly, and
	// kill can take dynalite and the watchdog down together.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Don't hang in Wait if some grandchild still holds the output pipe.
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill SIGKILLs the whole group (dynalite keeps everything in memory, or
// in a folder the caller throws away, so there is nothing to shut down
// gracefully) and waits for dynalite to be reaped.
func (p *process) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}
