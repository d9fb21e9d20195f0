package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/internal/suites/openapicheck"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
)

// testNow is the fixed clock of the tests: 30 s into a minute window.
var testNow = time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)

type testServer struct {
	*httptest.Server
	oapi *openapicheck.Validator
	// balance returns a workspace's AI credit in the server's ledger.
	balance func(ws string) int64
}

type options struct {
	keyLimit, ipLimit int
	noLimiter         bool
	clock             func() time.Time
	// edit changes the fixture before it is loaded (credits, plans...).
	edit func(*dataset.File)
	// backend and embedder replace the embedded engine and the offline embedder.
	backend  search.Backend
	embedder search.Embedder
	// wrap, when set, wraps the store (to inject failures).
	wrap func(doclib.Store) doclib.Store
	// log, when set, is the logger of both the handler and the service, given
	// unwrapped as a Lambda main or doclib-server gives it.
	log *slog.Logger
	// config, when set, changes the handler's configuration last.
	config func(*httpapi.Config)
}

func fixtureData(t testing.TB) *doclib.DataSet {
	t.Helper()
	return editedFixture(t, nil)
}

func editedFixture(t testing.TB, edit func(*dataset.File)) *doclib.DataSet {
	t.Helper()
	f := fixture.File()
	if edit != nil {
		edit(f)
	}
	d, err := dataset.Validate(f)
	if err != nil {
		t.Fatalf("fixture does not validate: %v", err)
	}
	return d
}

// backends are the store, limiter and ledger a test server runs on: the
// embedded ones, or DynamoDB through dynalite when DOCLIB_TEST_STORE=dynamodb
// (scripts/test runs this package both ways).
type backends struct {
	store   doclib.Store
	limiter doclib.Limiter
	ledger  doclib.Ledger
	balance func(ws string) int64
}

func newBackends(t testing.TB, d *doclib.DataSet) backends {
	t.Helper()
	if os.Getenv("DOCLIB_TEST_STORE") != "dynamodb" {
		l := memory.NewLedger(d.Workspaces)
		return backends{store: memory.New(d), limiter: memory.NewLimiter(), ledger: l, balance: l.Balance}
	}
	srv := dynalitetest.Start(t)
	tbl := &dynamo.Table{Client: srv.Client(t), Name: srv.TableName(t)}
	ctx := context.Background()
	if err := tbl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Import(ctx, d, "test", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	l := dynamo.NewLedger(tbl)
	return backends{store: dynamo.NewStore(tbl), limiter: dynamo.NewLimiter(tbl), ledger: l,
		balance: func(ws string) int64 {
			n, err := l.Balance(ctx, ws)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}}
}

// searchOptions wires search over d: the embedded engine with the offline
// embedder unless o says otherwise.
func searchOptions(t testing.TB, d *doclib.DataSet, o options, ledger doclib.Ledger) service.Option {
	t.Helper()
	var e search.Embedder = o.embedder
	if e == nil {
		h, err := offline.NewHashing(0, nil)
		if err != nil {
			t.Fatal(err)
		}
		e = h
	}
	backend := o.backend
	if backend == nil {
		h, _ := offline.NewHashing(0, nil)
		x, err := localsearch.Build(context.Background(), d, h, localsearch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		backend = search.Local{Retriever: x}
	}
	return service.WithSearch(&search.Searcher{Backend: backend, Embedder: search.Cached(e, 0), Rules: search.DefaultRules("hash-v1/256")}, ledger)
}

func newServer(t testing.TB, o options) *testServer {
	t.Helper()
	d := editedFixture(t, o.edit)
	b := newBackends(t, d)
	store := b.store
	if o.wrap != nil {
		store = o.wrap(store)
	}
	clock := o.clock
	if clock == nil {
		clock = func() time.Time { return testNow }
	}
	svcOpts := []service.Option{searchOptions(t, d, o, b.ledger)}
	if o.log != nil {
		svcOpts = append(svcOpts, service.WithLogger(o.log))
	}
	cfg := httpapi.Config{Service: service.New(store, clock, svcOpts...), KeyLimit: o.keyLimit, IPLimit: o.ipLimit, Now: clock, Logger: o.log}
	if !o.noLimiter {
		cfg.Limiter = b.limiter
	}
	if o.config != nil {
		o.config(&cfg)
	}
	srv := httptest.NewServer(httpapi.NewServer(cfg))
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, oapi: openapicheck.Load(t), balance: b.balance}
}

var hugeNumber = regexp.MustCompile(`=[0-9]{19,}`)

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request and validates the exchange against docs/openapi.yaml.
func (s *testServer) do(t testing.TB, method, key, path string) response {
	t.Helper()
	auth := ""
	if key != "" {
		auth = "Bearer " + key
	}
	return s.doAuth(t, method, auth, path)
}

// doAuth sends a request with a raw Authorization header (none when empty).
func (s *testServer) doAuth(t testing.TB, method, auth, path string) response {
	t.Helper()
	return s.doWith(t, method, auth, path, nil)
}

// doWith is doAuth with more request headers. Naming Accept-Encoding keeps
// the body as it was sent (Go's transport decodes only what it asked for).
func (s *testServer) doWith(t testing.TB, method, auth, path string, h http.Header) response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if hugeNumber.MatchString(req.URL.RawQuery) {
		// The validator reads integers as int64; the API accepts larger ones (a
		// page that far is past the end). Check the request with the value the
		// API reads them as.
		u := *req.URL
		u.RawQuery = hugeNumber.ReplaceAllString(u.RawQuery, "=9007199254740991")
		s.oapi.Check(t, &http.Request{Method: req.Method, URL: &u, Header: req.Header}, resp.StatusCode, resp.Header, body)
	} else {
		s.oapi.Check(t, req, resp.StatusCode, resp.Header, body)
	}
	checkCommon(t, method, path, resp, body)
	return response{resp.StatusCode, resp.Header, body}
}

func (s *testServer) get(t testing.TB, key, path string) response {
	t.Helper()
	return s.do(t, http.MethodGet, key, path)
}

// checkCommon asserts what every response carries: a request ID, JSON, and for
// errors exactly the error shape.
func checkCommon(t testing.TB, method, path string, resp *http.Response, body []byte) {
	t.Helper()
	if resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("%s %s: no X-Request-Id", method, path)
	}
	if resp.StatusCode == http.StatusNotModified {
		return // no body, hence no Content-Type
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if method == http.MethodHead {
		return
	}
	if resp.StatusCode >= 400 {
		var e map[string]map[string]any
		if err := json.Unmarshal(body, &e); err != nil || len(e) != 1 || len(e["error"]) != 2 ||
			e["error"]["code"] == nil || e["error"]["message"] == "" {
			t.Errorf("%s %s: %d body is not the error shape: %s", method, path, resp.StatusCode, body)
		}
	}
}

func decode[T any](t testing.TB, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %T: %v in %s", v, err, r.body)
	}
	return v
}

func errorCode(t testing.TB, r response) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// panicStore panics on document lookups, to prove that a panic becomes a clean 500.
type panicStore struct{ doclib.Store }

func (panicStore) Documents(context.Context, []string) (map[string]*doclib.Document, error) {
	panic("secret internal detail: table docs-prod at 10.0.0.7")
}

func (panicStore) DocumentsWithEdges(context.Context, []string, *doclib.Scope) (map[string]*doclib.Document, map[string]*doclib.DocumentEdges, error) {
	panic("secret internal detail: table docs-prod at 10.0.0.7")
}

func memoryStoreFrom(d *doclib.DataSet) *memory.Store { return memory.New(d) }

func TestMain(m *testing.M) {
	code := m.Run()
	dynalitetest.Stop()
	os.Exit(code)
}
