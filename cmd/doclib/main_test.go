package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/demoapi"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/httpapi"
)

// Demo keys (shared/data/demo).
const (
	full          = "dlk_demo_full_scope"
	oneLibrary    = "dlk_demo_one_library" // sees lib_finance only
	noRecordings  = "dlk_demo_no_recordings"
	noCredit      = "dlk_demo_no_ai_credit"
	suspended     = "dlk_demo_suspended"
	individual    = "dlk_demo_individual_plan"
	expired       = "dlk_demo_expired_key"
	unknownSecret = "dlk_not_a_real_key_4f9a"
)

// handler is the API as doclib-server serves it on the demo data: the real
// handler, the in-memory store and the embedded search.
func handler(cfg httpapi.Config) (http.Handler, error) { return demoapi.Handler(cfg) }

// apiSrv is the server most tests share; tests that need limits start their own.
var apiSrv *httptest.Server

func TestMain(m *testing.M) {
	h, err := handler(httpapi.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	apiSrv = httptest.NewServer(h)
	code := m.Run()
	apiSrv.Close()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func server(t *testing.T, cfg httpapi.Config) *httptest.Server {
	t.Helper()
	h, err := handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// cli runs the program in-process with its own environment and config
// directory, never the developer's.
type cli struct {
	t         *testing.T
	env       map[string]string
	configDir string
	stdin     io.Reader
	sleep     func(context.Context, time.Duration) error
	transport http.RoundTripper
	// secrets are extra strings that must never be printed.
	secrets []string
	// piped runs the program as if stdout were a pipe; by default it is a
	// terminal.
	piped bool
}

func newCLI(t *testing.T, url, key string) *cli {
	return &cli{t: t, env: map[string]string{"DOCLIB_URL": url, "DOCLIB_API_KEY": key}, configDir: t.TempDir(),
		sleep: func(context.Context, time.Duration) error { return nil }}
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func (c *cli) run(args ...string) result {
	return c.runCtx(context.Background(), args...)
}

func (c *cli) runCtx(ctx context.Context, args ...string) result {
	c.t.Helper()
	var out, errb syncBuffer
	a := &app{getenv: func(k string) string { return c.env[k] }, stdin: c.stdin, stdout: &out, stderr: &errb,
		userConfigDir: func() (string, error) { return c.configDir, nil }, sleep: c.sleep, transport: c.transport,
		isTerminal: func(io.Writer) bool { return !c.piped }}
	code := a.run(ctx, args)
	r := result{code, out.String(), errb.String()}
	noKeys(c.t, r, c.secrets...)
	return r
}

// noKeys fails when an output holds anything like an API key.
func noKeys(t *testing.T, r result, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, "dlk_") {
		if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
			t.Errorf("an output holds a key (%q):\n%s", s, r)
		}
	}
}

// ok runs a command that must succeed.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("doclib %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// every runs a command with --json and every field that --json alone lists,
// so its output is the API's items (or object) whole.
func (c *cli) every(args ...string) string {
	c.t.Helper()
	r := c.run(append(args, "--json")...)
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "doclib: Specify one or more comma-separated fields for --json:\n") {
		c.t.Fatalf("doclib %s --json does not list the fields: %s", strings.Join(args, " "), r)
	}
	var fields []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if f, ok := strings.CutPrefix(l, "  "); ok {
			fields = append(fields, f)
		}
	}
	return c.ok(append(args, "--json", strings.Join(fields, ","))...)
}

// syncBuffer is a buffer safe for a writer and a reader at once (the MCP
// server logs from its own goroutines).
type syncBuffer = demoapi.SyncBuffer

// decode reads --json output into v, refusing fields v does not have.
func decode(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("--json output does not decode into %T: %v\n%s", v, err, out)
	}
	if dec.More() {
		t.Fatalf("--json printed more than one value:\n%s", out)
	}
}

// same fails unless two API values encode to the same JSON.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil || !bytes.Equal(g, w) {
		t.Errorf("%s: the CLI's JSON differs from the client's answer:\n%s\n%s", what, g, w)
	}
}

func apiClient(t *testing.T, url, key string) *client.Client {
	t.Helper()
	c, err := client.New(url, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// counter counts the requests that reach the API, by path.
type counter struct {
	mu    sync.Mutex
	paths map[string]int
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.paths == nil {
		c.paths = map[string]int{}
	}
	c.paths[r.URL.Path]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *counter) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[path]
}
