// Package inspector runs the MCP inspector (@modelcontextprotocol/inspector)
// in CLI mode: a real MCP client nobody here wrote, which the tests of the
// MCP server (shared/clients/mcpserver) and of the stack's /mcp (the
// stand-in) drive. ./scripts/test installs it into .tools/inspector and sets
// EnvPath and EnvRequire; without it a test skips, or fails when EnvRequire
// is set, so that CI cannot pass by skipping the real client.
package inspector

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/settings"
)

const (
	// EnvPath is the path of the inspector's executable
	// (node_modules/.bin/mcp-inspector).
	EnvPath = settings.EnvMCPInspector
	// EnvRequire turns a missing inspector from a skip into a failure.
	EnvRequire = settings.EnvRequireMCPInspector
	// Timeout bounds one run of the inspector: a Node.js program's start
	// is seconds on a busy 2-core machine.
	Timeout = 90 * time.Second
)

// Path returns the inspector's executable, or skips (or fails) the test.
func Path(t testing.TB) string {
	t.Helper()
	path := os.Getenv(EnvPath)
	if path == "" {
		path = filepath.Join(ModuleRoot(t), ".tools", "inspector", "node_modules", ".bin", "mcp-inspector")
	}
	if _, err := os.Stat(path); err != nil {
		Unavailable(t, "the MCP inspector is not installed ("+err.Error()+"): run ./scripts/test, or set "+EnvPath)
	}
	if _, err := exec.LookPath("node"); err != nil {
		Unavailable(t, "node is not on PATH: the MCP inspector is a Node.js program")
	}
	return path
}

// Unavailable skips the test for why, or fails it when EnvRequire is set.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequire) != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// ModuleRoot is the folder of go.mod above the test's folder.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// Result is one run of the inspector's CLI.
type Result struct {
	Exit   int
	Stdout []byte
	Stderr string
}

// Run runs `mcp-inspector --cli args...` with its own HOME (it keeps a
// catalog and client settings there) and none of our DOCLIB_ or MCP_
// variables, within Timeout, as a script runs it: no terminal. It fails
// the test if any of secrets (the API keys the run was given) appears in
// what the inspector prints.
func Run(t testing.TB, bin string, secrets []string, args ...string) Result {
	t.Helper()
	return run(t, bin, false, secrets, args...)
}

// RunAtTerminal is Run with the inspector's standard input and standard
// error on a terminal (a pseudo-terminal of the test's), as a person runs
// it: the inspector decides by them whether a person is there to sign in
// with OAuth. Standard output is still a pipe, and Result.Stderr holds what
// it wrote to the terminal.
func RunAtTerminal(t testing.TB, bin string, secrets []string, args ...string) Result {
	t.Helper()
	return run(t, bin, true, secrets, args...)
}

func run(t testing.TB, bin string, terminal bool, secrets []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--cli"}, args...)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "NO_COLOR=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, settings.EnvPrefix) && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "MCP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var read chan struct{}
	if terminal {
		ptm, pts, err := openPTY()
		if err != nil {
			Unavailable(t, "no pseudo-terminal for the inspector: "+err.Error())
		}
		defer ptm.Close()
		cmd.Stdin, cmd.Stderr = pts, pts
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		read = make(chan struct{})
		go func() {
			defer close(read)
			// Until the inspector's end closes the terminal (EIO on Linux).
			_, _ = io.Copy(&stderr, ptm)
		}()
		if err := cmd.Start(); err != nil {
			pts.Close()
			t.Fatalf("run the inspector: %v", err)
		}
		pts.Close()
	} else if err := cmd.Start(); err != nil {
		t.Fatalf("run the inspector: %v", err)
	}
	err := cmd.Wait()
	if read != nil {
		<-read
	}
	if ctx.Err() != nil {
		t.Fatalf("the inspector did not finish within %s: %v\nstderr:\n%s", Timeout, args, stderr.String())
	}
	r := Result{Stdout: stdout.Bytes(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Exit = exit.ExitCode()
	case err != nil:
		t.Fatalf("run the inspector: %v", err)
	}
	for _, out := range []string{stdout.String(), r.Stderr} {
		for _, key := range secrets {
			if strings.Contains(out, key) {
				t.Errorf("the API key appears in the inspector's output:\n%s", out)
			}
		}
	}
	return r
}
