// Package dynalitetest gives tests a real DynamoDB API to talk to: one
// dynalite process (an in-memory DynamoDB written in Node.js) per test
// binary, started on first use.
//
// Sharing one process keeps the start-up cost (about a second) out of every
// test; tests stay independent by creating their own tables, named with
// [Server.TableName]. A package that uses it should stop the process from
// TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		dynalitetest.Stop()
//		os.Exit(code)
//	}
//
// If TestMain does not call [Stop], or the test binary is killed, a small
// shell watchdog started with dynalite kills it within about a second of the
// test binary's exit, so no process outlives the tests.
//
// dynalite is looked up in DOCLIB_DYNALITE (path to the executable), else in
// <module root>/.tools/dynalite/node_modules/.bin/dynalite, where
// ./scripts/test installs it. When it is missing or cannot start, tests are
// skipped, unless DOCLIB_REQUIRE_DYNALITE is set (./scripts/test sets it), in
// which case they fail.
package dynalitetest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/doclib/doclib/shared/settings"
)

// Environment variables read by this package, named in shared/settings.
const (
	// EnvDynalite overrides where the dynalite executable is.
	EnvDynalite = settings.EnvDynalite
	// EnvRequire turns "dynalite is unavailable" from a skip into a failure,
	// so that CI cannot pass by silently skipping the DynamoDB tests.
	EnvRequire = settings.EnvRequireDynalite
	// EnvPath, when set, is the folder where dynalite keeps its tables, on
	// disk, instead of in memory.
	EnvPath = settings.EnvDynalitePath
)

// Region is the region clients are configured with; dynalite accepts any,
// but the SDK needs one to sign requests.
const Region = "us-east-1"

const (
	startTimeout  = 15 * time.Second
	startAttempts = 3
	installHint   = "dynalite is not installed: run ./scripts/test, or npm install --prefix .tools/dynalite dynalite@4.0.0"
)

// errNotInstalled marks a start failure caused by a missing executable, which
// is skipped with an installation hint rather than reported as a crash.
var errNotInstalled = errors.New("dynalite executable not found")

// Server is the shared dynalite instance of this test binary.
type Server struct {
	// Endpoint is the base URL (http://127.0.0.1:N) to give an SDK client as
	// BaseEndpoint, or to put a proxy in front of.
	Endpoint string
}

var (
	once     sync.Once
	mu       sync.Mutex // guards proc
	proc     *process
	shared   *Server
	startErr error

	tableSeq atomic.Int64
)

// Start returns the shared dynalite server, starting it on the first call.
// It skips the test when dynalite is unavailable, or fails it if
// DOCLIB_REQUIRE_DYNALITE is set. The process is not tied to tb's lifetime:
// it serves the whole test binary until [Stop].
func Start(tb testing.TB) *Server {
	tb.Helper()
	once.Do(func() {
		p, err := launchWithRetry()
		if err != nil {
			startErr = err
			return
		}
		mu.Lock()
		proc = p
		mu.Unlock()
		shared = &Server{Endpoint: p.endpoint}
	})
	if startErr != nil {
		if required() {
			tb.Fatalf("dynalite is required (%s is set) but unavailable: %v", EnvRequire, startErr)
		}
		if errors.Is(startErr, errNotInstalled) {
			tb.Skipf("%s (%v)", installHint, startErr)
		}
		tb.Skipf("dynalite could not start (set %s=1 to fail instead of skipping): %v", EnvRequire, startErr)
	}
	return shared
}

// Stop kills the shared dynalite process. Call it from TestMain after m.Run;
// it is a no-op when no test started dynalite, and safe to call twice. Start
// does not restart a stopped server.
func Stop() {
	mu.Lock()
	p := proc
	proc = nil
	mu.Unlock()
	if p != nil {
		p.kill()
	}
}

func required() bool {
	v := strings.TrimSpace(os.Getenv(EnvRequire))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// Client returns an SDK client for the server with dummy static credentials
// (dynalite wants SigV4-signed requests but does not check the keys). The
// option funcs run last, so they can override anything, for example
// RetryMaxAttempts or BaseEndpoint (to go through a proxy). Idle connections
// are closed when tb ends, so tests do not leak keep-alive goroutines.
func (s *Server) Client(tb testing.TB, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tb.Cleanup(tr.CloseIdleConnections)
	return newClient(s.Endpoint, &http.Client{Transport: tr}, opts...)
}

func newClient(endpoint string, hc *http.Client, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
		HTTPClient:   hc,
	}, opts...)
}

// TableName returns a table name no other call in this test binary returns,
// derived from the test name so a failing test's tables are recognisable.
// Tests share one dynalite, so they must not share table names.
func (s *Server) TableName(tb testing.TB) string {
	const prefix = "t_"
	suffix := "_" + strconv.FormatInt(tableSeq.Add(1), 10)
	name := sanitize(tb.Name())
	if max := 255 - len(prefix) - len(suffix); len(name) > max {
		name = name[:max]
	}
	return prefix + name + suffix
}

// sanitize maps s onto the characters DynamoDB allows in table names.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// findDynalite returns the dynalite executable to run.
func findDynalite() (string, error) {
	if p := os.Getenv(EnvDynalite); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", errNotInstalled, EnvDynalite, p, err)
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNotInstalled, err)
	}
	p := filepath.Join(root, ".tools", "dynalite", "node_modules", ".bin", "dynalite")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w: %v", errNotInstalled, err)
	}
	return p, nil
}

// moduleRoot walks up from dir to the directory holding go.mod; go test runs
// each package in its own directory, so the working directory is inside the
// module.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod in %s or any parent", dir)
		}
		d = parent
	}
}

// launchWithRetry starts dynalite on a free port. Picking a port and handing
// it to another process is racy, so a process that exits early (most likely
// because the port was taken meanwhile) is retried on a new port.
func launchWithRetry() (*process, error) {
	bin, err := findDynalite()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for range startAttempts {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		p, err := launch(bin, port, os.Getenv(EnvPath))
		if err != nil {
			return nil, err
		}
		err = p.waitReady(startTimeout)
		if err == nil {
			return p, nil
		}
		exited := p.exited()
		p.kill()
		lastErr = fmt.Errorf("%s on port %d: %w\n--- dynalite output ---\n%s", bin, port, err, p.out.String())
		if !exited {
			break // it runs but does not answer: another port will not help
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls ListTables until dynalite answers, it exits, or timeout
// passes.
func (p *process) waitReady(timeout time.Duration) error {
	c := newClient(p.endpoint, &http.Client{Timeout: time.Second}, func(o *dynamodb.Options) {
		o.RetryMaxAttempts = 1
	})
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within %s: %w", timeout, err)
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before answering: %v", p.waitErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tailBuffer keeps the last max bytes written to it; safe for concurrent use
// because os/exec copies the child's output from its own goroutine.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Launch starts a dynalite process of the caller's own, for programs that are
// not tests (scripts/standin); stop ends it, and its watchdog ends it when
// the program exits.
func Launch() (srv *Server, stop func(), err error) {
	p, err := launchWithRetry()
	if err != nil {
		return nil, nil, err
	}
	return &Server{Endpoint: p.endpoint}, p.kill, nil
}
