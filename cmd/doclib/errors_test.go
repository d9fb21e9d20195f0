package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/httpapi"
)

func TestExitCodes(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, c := range []struct {
		name string
		key  string
		args []string
		code int
		want []string // in stderr
	}{
		{"success", full, []string{"libraries"}, 0, nil},
		{"404 library", full, []string{"library", "lib_nope"}, 1, []string{"doclib: not_found: ", "request ID: ", "doclib libraries"}},
		{"404 document", full, []string{"document", "reset-password"}, 1, []string{"doclib: not_found: ", "starts with doc_"}},
		{"404 out of scope", oneLibrary, []string{"documents", "lib_it"}, 1, []string{"not_found"}},
		{"401", unknownSecret, []string{"libraries"}, 1, []string{"doclib: unauthorised: ", "request ID: ", "from DOCLIB_API_KEY was not accepted"}},
		{"401 expired", expired, []string{"libraries"}, 1, []string{"api_key_expired", "has expired"}},
		{"403", noRecordings, []string{"recordings", "doc_it_001"}, 1, []string{"doclib: forbidden: ", "recording-details access"}},
		{"402 credit", noCredit, []string{"search", "stock"}, 1, []string{"doclib: insufficient_ai_credit: ", "AI credit", "--search TEXT"}},
		{"402 suspended", suspended, []string{"search", "stock"}, 1, []string{"doclib: subscription_suspended: ", "suspended"}},
		// The API validates its parameters; the CLI passes them through.
		{"400 depth", full, []string{"traverse", "doc_it_001", "--depth", "9"}, 1, []string{"doclib: bad_request: ", "depth", "doclib traverse --help"}},
		{"400 direction", full, []string{"traverse", "doc_it_001", "--direction", "sideways"}, 1, []string{"bad_request", "direction"}},
		{"400 short query", full, []string{"search", "x"}, 1, []string{"bad_request"}},
		{"unknown library slug on search", full, []string{"search", "invoice", "--library", "no-such-library"}, 1, []string{"not_found", "it takes a lib_… ID or a slug"}},
		{"unknown flag", full, []string{"libraries", "--bogus"}, 2, []string{"unknown flag: --bogus", "Run 'doclib libraries --help'"}},
		{"bad flag value", full, []string{"traverse", "doc_it_001", "--depth", "two"}, 2, []string{"--depth"}},
		{"unknown command", full, []string{"librarys"}, 2, []string{"unknown command"}},
		{"missing argument", full, []string{"document"}, 2, []string{"document takes one argument"}},
		{"extra argument", full, []string{"libraries", "lib_it"}, 2, []string{"takes no arguments"}},
		{"no query", full, []string{"search"}, 2, []string{"needs a query"}},
		{"bad format", full, []string{"graph", "lib_it", "--format", "svg"}, 2, []string{"--format must be tree or dot"}},
		{"dot and json", full, []string{"graph", "lib_it", "--format", "dot", "--json", "edges"}, 2, []string{"not both"}},
		{"page 0", full, []string{"documents", "lib_it", "--page", "0"}, 2, []string{"--page starts at 1"}},
		{"all and page", full, []string{"documents", "lib_it", "--all", "--page", "2"}, 2, []string{"leave out --page"}},
		{"depth 0", full, []string{"traverse", "doc_it_001", "--depth", "0"}, 2, []string{"--depth must be 1 or more"}},
		{"timeout 0", full, []string{"libraries", "--timeout", "0s"}, 2, []string{"--timeout must be positive"}},
		{"jq timeout 0", full, []string{"libraries", "--json", "id", "--jq", ".", "--jq-timeout", "0s"}, 2, []string{"--jq-timeout must be positive"}},
		{"jq max output 0", full, []string{"libraries", "--json", "id", "--jq", ".", "--jq-max-output", "0"}, 2, []string{"--jq-max-output is a number of MiB, 1 or more"}},
		{"jq fails", full, []string{"libraries", "--json", "id", "--jq", "error(\"no\")"}, 2, []string{"failed on the output"}},
		{"404 wrong base URL", full, []string{"libraries", "--url", apiSrv.URL + "/api"}, 1, []string{"not_found", "check that the URL (from --url) is the API's base URL"}},
		{"404 search library", full, []string{"search", "invoice", "--library", "lib_nope"}, 1, []string{"not_found", "it takes a lib_… ID or a slug"}},
		{"empty ID", full, []string{"library", ""}, 1, []string{"empty ID"}},
		{"dot ID", full, []string{"documents", ".."}, 1, []string{"not_found"}},
		{"key with a line break", "# my key\n" + full, []string{"libraries"}, 2, []string{"the API key from DOCLIB_API_KEY holds a space, a line break or a control character"}},
		{"mcp on a bad address", full, []string{"mcp", "--http", "nonsense"}, 2, []string{"--http nonsense: cannot listen there"}},
		{"no key", "", []string{"libraries"}, 2, []string{"no API key", "export DOCLIB_API_KEY=", "--api-key-file FILE", `{"apiKey": "YOUR_KEY"}`, "go run ./cmd/doclib-server"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newCLI(t, apiSrv.URL, c.key)
			cl.secrets = []string{unknownSecret}
			r := cl.run(c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, c.code, r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("no %q in stderr:\n%s", w, r.stderr)
				}
			}
			if c.code != 0 && r.stdout != "" {
				t.Errorf("a failure wrote to stdout:\n%s", r.stdout)
			}
		})
	}

	t.Run("closed port", func(t *testing.T) {
		r := newCLI(t, closed.URL, full).run("libraries")
		if r.code != 3 || !strings.Contains(r.stderr, "cannot reach the API at "+closed.URL) || !strings.Contains(r.stderr, "check the URL (from DOCLIB_URL)") {
			t.Errorf("%s", r)
		}
	})
	t.Run("default URL not running", func(t *testing.T) {
		// Port 8080 may be in use on this machine: refuse the dial instead.
		c := newCLI(t, "", full)
		c.transport = refuse{}
		r := c.run("libraries")
		if r.code != 3 || !strings.Contains(r.stderr, "cannot reach the API at http://127.0.0.1:8080") ||
			!strings.Contains(r.stderr, "go run ./cmd/doclib-server") {
			t.Errorf("%s", r)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := newCLI(t, apiSrv.URL, full).runCtx(ctx, "libraries")
		if r.code != 130 || r.stderr != "doclib: interrupted\n" {
			t.Errorf("%s", r)
		}
	})
	t.Run("bad URL", func(t *testing.T) {
		r := newCLI(t, "localhost:8080", full).run("libraries")
		if r.code != 2 || !strings.Contains(r.stderr, `"localhost:8080" (from DOCLIB_URL) is not an http(s) URL`) {
			t.Errorf("%s", r)
		}
	})
}

// refuse fails every request as a refused connection would.
type refuse struct{}

func (refuse) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
}

// clock is the server's time in the rate-limit tests; the CLI's waits move it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestRateLimited(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 21, 9, 30, 0, 200e6, time.UTC)}
	srv := server(t, httpapi.Config{Limiter: memory.NewLimiter(), KeyLimit: 2, Window: 2 * time.Second, Now: clk.Now})
	c := newCLI(t, srv.URL, full)
	var waits []time.Duration
	c.sleep = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		clk.advance(d) // the wait takes as long as asked, on the server's clock
		return nil
	}
	c.ok("libraries")
	c.ok("libraries")
	// Over the limit: doclib waits Retry-After and succeeds in the next window.
	r := c.run("libraries")
	if r.code != 0 || len(waits) != 1 || waits[0] < time.Second || waits[0] > 2*time.Second {
		t.Fatalf("waits %v\n%s", waits, r)
	}
	if !strings.Contains(r.stderr, "waiting "+waits[0].String()+" before retrying") || !strings.Contains(r.stdout, "lib_it") {
		t.Errorf("%s", r)
	}

	// When the window does not move on (the wait is cut short), doclib gives up
	// after its retries with rate_limited.
	c.ok("libraries") // the second request of this window
	waits = nil
	c.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	r = c.run("libraries", "--retries", "2")
	if r.code != 1 || len(waits) != 2 || !strings.Contains(r.stderr, "doclib: rate_limited: ") ||
		!strings.Contains(r.stderr, "request ID: ") || !strings.Contains(r.stderr, "hint: too many requests for now: wait ") {
		t.Errorf("waits %v\n%s", waits, r)
	}
	// --retries 0 does not wait at all.
	waits = nil
	if r := c.run("libraries", "--retries", "0"); r.code != 1 || len(waits) != 0 || !strings.Contains(r.stderr, "rate_limited") {
		t.Errorf("waits %v\n%s", waits, r)
	}
}

// failWriter fails every write, as a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestOutputThatCannotBeWrittenFails(t *testing.T) {
	for _, args := range [][]string{{"document", "doc_it_001"}, {"graph", "lib_it"}, {"traverse", "doc_it_001"},
		{"search", "okta"}, {"recordings", "doc_it_001"}, {"libraries", "--json", "id"}} {
		var errb syncBuffer
		env := map[string]string{"DOCLIB_URL": apiSrv.URL, "DOCLIB_API_KEY": full}
		a := &app{getenv: func(k string) string { return env[k] }, stdout: failWriter{}, stderr: &errb,
			userConfigDir: func() (string, error) { return t.TempDir(), nil }}
		if code := a.run(context.Background(), args); code != 1 || !strings.Contains(errb.String(), "writing the output: no space left on device") {
			t.Errorf("%v: exit %d\n%s", args, code, errb.String())
		}
	}
}

func TestVerboseLinesWithoutHeaders(t *testing.T) {
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"libraries":[]}`))
	}))
	defer bare.Close()
	r := newCLI(t, bare.URL, full).run("-v", "libraries")
	if r.code != 0 || strings.Contains(r.stderr, "(request ,") || !strings.Contains(r.stderr, "/libraries → 200 in ") {
		t.Errorf("%s", r)
	}
}

func TestPasswordsInURLsAreNotPrinted(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	u := strings.Replace(closed.URL, "http://", "http://user:hunter2@", 1)
	r := newCLI(t, u, full).run("-v", "--retries", "0", "libraries")
	if r.code != 3 || strings.Contains(r.stdout+r.stderr, "hunter2") {
		t.Errorf("%s", r)
	}
}

// TestDataCannotDriveTheTerminal serves names and titles holding escape
// sequences, line breaks and tabs, as a data set may: the tables must show
// them inert, one row per item.
func TestDataCannotDriveTheTerminal(t *testing.T) {
	const evil = "Ops\u001b]0;hacked\u0007\u001b[31m\nsecond line\ttab\u202e"
	name, _ := json.Marshal(evil)
	lib := `{"id":"lib_x","name":` + string(name) + `,"description":` + string(name) + `,"documentCount":1,"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-02T00:00:00Z","categories":[` + string(name) + `],"tags":[]}`
	bodies := map[string]string{
		"/libraries":            `{"libraries":[` + lib + `]}`,
		"/libraries/lib_x":      lib,
		"/libraries/lib_x/tags": `{"tags":[{"name":` + string(name) + `,"documentCount":1}]}`,
		"/libraries/lib_x/documents": `{"documents":[{"id":"doc_x","title":` + string(name) + `,"category":` + string(name) +
			`,"tags":[],"applications":[],"updatedAt":"2026-01-02T00:00:00Z"}],"total":1,"page":1,"pageSize":20,"schema":{"version":1,"sections":[]}}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(b))
	}))
	defer srv.Close()
	c := newCLI(t, srv.URL, full)
	piped := newCLI(t, srv.URL, full)
	piped.piped = true
	for _, args := range [][]string{{"libraries"}, {"library", "lib_x"}, {"tags", "lib_x"}, {"documents", "lib_x"}} {
		out := c.ok(args...)
		// Piped, every row is one line whose values hold no tab of their own.
		for _, l := range strings.Split(strings.TrimSuffix(piped.ok(args...), "\n"), "\n") {
			if strings.ContainsAny(l, "\u001b\u0007\u202e") || strings.Contains(l, "tab\t") || strings.HasPrefix(l, "second line") {
				t.Errorf("%v piped printed control characters or broke a row:\n%q", args, l)
			}
		}
		// A description may span lines; a table row may not.
		if strings.ContainsAny(out, "\u001b\u0007\u202e") || (args[0] != "library" && strings.Contains(out, "\nsecond line")) {
			t.Errorf("%v printed control characters or broke a row:\n%q", args, out)
		}
		if !strings.Contains(out, "second line tab") {
			t.Errorf("%v lost the text around the controls:\n%q", args, out)
		}
	}
}
