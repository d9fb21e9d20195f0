package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedtest"
	"github.com/doclib/doclib/shared/search"
)

const testModel = "test-embed"

// wireRequest is the request as the server sees it; Dimensions is a pointer
// to tell "absent" from 0.
type wireRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     *int     `json:"dimensions"`
}

// fakeServer speaks the embeddings wire format. It checks every request and
// hands it to handle, which writes the answer.
type fakeServer struct {
	*httptest.Server
	t        *testing.T
	requests atomic.Int64
	mu       sync.Mutex
	seen     []wireRequest
	auth     []string
	rawKeys  []map[string]json.RawMessage
}

func newFakeServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, req wireRequest)) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			t.Errorf("request %s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request: %v", err)
			return
		}
		var req wireRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Errorf("request body %q: %v", raw, err)
			return
		}
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(raw, &keys)
		if req.Model != testModel {
			t.Errorf("model %q, want %q", req.Model, testModel)
		}
		if req.EncodingFormat != "float" {
			t.Errorf("encoding_format %q, want float", req.EncodingFormat)
		}
		if len(req.Input) == 0 {
			t.Errorf("request without input")
		}
		for _, in := range req.Input {
			if in == "" {
				t.Errorf("an empty text was sent")
			}
		}
		f.mu.Lock()
		f.seen = append(f.seen, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.rawKeys = append(f.rawKeys, keys)
		f.mu.Unlock()
		handle(w, r, req)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) baseURL() string { return f.URL + "/v1" }

func (f *fakeServer) seenRequests() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

type item struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float64 `json:"embedding"`
}

// answer writes the embeddings of req.Input, shuffled when shuffle is set.
func answer(w http.ResponseWriter, req wireRequest, dims int, shuffle bool) {
	items := make([]item, len(req.Input))
	for i, in := range req.Input {
		items[i] = item{Object: "embedding", Index: i, Embedding: embedtest.RawVector(in, dims)}
	}
	if shuffle {
		rand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   items,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)},
	})
}

func fixed(dims int) func(http.ResponseWriter, *http.Request, wireRequest) {
	return func(w http.ResponseWriter, _ *http.Request, req wireRequest) { answer(w, req, dims, false) }
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil}})
}

// newTestEmbedder builds an Embedder whose sleeps are recorded, not slept, and
// whose jitter is fixed at half, then learns the dimensions like New.
func newTestEmbedder(t *testing.T, cfg Config) (*Embedder, *embedtest.Sleeps, error) {
	t.Helper()
	e, err := build(cfg)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	s := &embedtest.Sleeps{}
	e.pacer.Sleep = s.Sleep
	e.pacer.Random = func() float64 { return 0.5 }
	return e, s, e.learnDimensions(context.Background())
}

func checkVectors(t *testing.T, in []string, got [][]float32, dims int) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i, text := range in {
		want := embedtest.Unit(text, dims)
		if len(got[i]) != dims {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(got[i]), dims)
		}
		for j := range want {
			if math.Abs(float64(got[i][j]-want[j])) > 1e-5 {
				t.Fatalf("vector %d (%q) differs at %d: got %v, want %v", i, text, j, got[i][j], want[j])
			}
		}
	}
}

func TestNewLearnsDimensions(t *testing.T) {
	srv := newFakeServer(t, fixed(12))
	e, err := New(context.Background(), Config{BaseURL: srv.baseURL(), Model: testModel})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dimensions() != 12 {
		t.Errorf("Dimensions() = %d, want 12", e.Dimensions())
	}
	if e.ID() != "openai/"+testModel {
		t.Errorf("ID() = %q", e.ID())
	}
	if reqs := srv.seenRequests(); len(reqs) != 1 || len(reqs[0].Input) != 1 {
		t.Errorf("probe requests = %+v, want one request of one text", reqs)
	}
}

func TestNewSkipsProbeWhenDimensionsSet(t *testing.T) {
	srv := newFakeServer(t, fixed(12))
	e, err := New(context.Background(), Config{BaseURL: srv.baseURL() + "/", Model: testModel, Dimensions: 12})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.requests.Load(); n != 0 {
		t.Errorf("%d requests in New, want none", n)
	}
	// The trailing slash of the base URL must not double up in the path
	// (the server checks it).
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
}

func TestDimensionMismatch(t *testing.T) {
	srv := newFakeServer(t, fixed(8))
	e, err := New(context.Background(), Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 16})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a", "b"})
	if err == nil {
		t.Fatal("no error for 8-dimensional vectors when 16 are configured")
	}
	for _, want := range []string{"8 dimensions", "Config.Dimensions is 16"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if errors.Is(err, search.ErrEmbedder) {
		t.Errorf("a misconfiguration wraps ErrEmbedder: %v", err)
	}
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (a mismatch is not retried)", n)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no base URL", Config{Model: "m"}, "Config.BaseURL is empty"},
		{"relative base URL", Config{BaseURL: "localhost:11434/v1", Model: "m"}, "not an absolute http or https URL"},
		{"path only", Config{BaseURL: "/v1", Model: "m"}, "not an absolute http or https URL"},
		{"ftp", Config{BaseURL: "ftp://example.com/v1", Model: "m"}, "not an absolute http or https URL"},
		{"bad URL", Config{BaseURL: "http://[::1/v1", Model: "m"}, "Config.BaseURL does not parse"},
		{"no model", Config{BaseURL: "http://localhost/v1", Model: "  "}, "Config.Model is empty"},
		{"negative dimensions", Config{BaseURL: "http://localhost/v1", Model: "m", Dimensions: -1}, "Config.Dimensions is -1"},
		{"request dims without dims", Config{BaseURL: "http://localhost/v1", Model: "m", RequestDimensions: true}, "Config.RequestDimensions"},
		{"negative batch", Config{BaseURL: "http://localhost/v1", Model: "m", BatchSize: -1}, "Config.BatchSize"},
		{"negative concurrency", Config{BaseURL: "http://localhost/v1", Model: "m", Concurrency: -2}, "Config.Concurrency"},
		{"negative timeout", Config{BaseURL: "http://localhost/v1", Model: "m", Timeout: -time.Second}, "Config.Timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if errors.Is(err, search.ErrEmbedder) {
				t.Errorf("a config error wraps ErrEmbedder: %v", err)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	e, err := build(Config{BaseURL: "http://user:secret@localhost:11434/v1/?x=1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if l := e.pacer.Limits(); l.MaxBatch != DefaultBatchSize || l.MaxConcurrency != DefaultConcurrency || l.Timeout != DefaultTimeout || l.MaxRetries != DefaultMaxRetries {
		t.Errorf("defaults = %+v", l)
	}
	if e.endpoint != "http://user:secret@localhost:11434/v1/embeddings?x=1" {
		t.Errorf("endpoint = %q", e.endpoint)
	}
	if strings.Contains(e.shownURL, "secret") || strings.Contains(e.shownURL, "x=1") {
		t.Errorf("shown URL %q keeps credentials or query", e.shownURL)
	}
	if e, _ := build(Config{BaseURL: "http://localhost/v1", Model: "m", MaxRetries: -1}); e.pacer.Limits().MaxRetries != 0 {
		t.Errorf("MaxRetries -1 gives %d retries, want 0", e.pacer.Limits().MaxRetries)
	}
}

func TestEmbedBatchesInOrder(t *testing.T) {
	const dims = 8
	in := embedtest.Texts(150)
	var mu sync.Mutex
	var finished []string // first input of each request, in order of completion
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		// The first full batch answers last, so completion order is
		// not input order.
		if req.Input[0] == in[8] {
			time.Sleep(150 * time.Millisecond)
		}
		answer(w, req, dims, true)
		mu.Lock()
		finished = append(finished, req.Input[0])
		mu.Unlock()
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: dims, BatchSize: 64, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, dims)

	reqs := srv.seenRequests()
	var sizes []int
	var sent []string
	for _, r := range reqs {
		sizes = append(sizes, len(r.Input))
		sent = append(sent, r.Input...)
	}
	// StartBatch texts until the throughput is known; then BatchSize,
	// since a fast server answers 64 texts well within the pacer's Target.
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{8, 14, 64, 64}) {
		t.Errorf("batch sizes %v, want 8, 64, 64, 14", sizes)
	}
	slices.Sort(sent)
	if !slices.Equal(sent, in) {
		t.Errorf("the requests did not carry each text exactly once")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(finished) != 4 || finished[3] != in[8] {
		t.Errorf("completion order %v; the test meant the first full batch to finish last", finished)
	}
}

func TestEmbedConcurrencyBound(t *testing.T) {
	var inflight, peak atomic.Int64
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		inflight.Add(-1)
		answer(w, req, 4, false)
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4, BatchSize: 3, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	in := embedtest.Texts(30)
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 4)
	if n := srv.requests.Load(); n != 10 {
		t.Errorf("%d requests, want 10", n)
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("peak of %d requests in flight, want 2 (Concurrency)", p)
	}
}

func TestEmbedNormalises(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		w.Header().Set("Content-Type", "application/json")
		data := make([]map[string]any, len(req.Input))
		for i := range req.Input {
			data[i] = map[string]any{"index": i, "embedding": []float64{3, 0, -4, float64(i)}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if math.Abs(embedtest.Norm(v)-1) > 1e-6 {
			t.Errorf("vector %d has length %v, want 1", i, embedtest.Norm(v))
		}
	}
	if want := []float32{0.6, 0, -0.8, 0}; !slices.Equal(got[0], want) {
		t.Errorf("vector 0 = %v, want %v", got[0], want)
	}
}

func TestEmbedEmptyTexts(t *testing.T) {
	srv := newFakeServer(t, fixed(6))
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 6})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]string{nil, {}, {"", ""}} {
		got, err := e.Embed(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(in) {
			t.Fatalf("%d vectors for %d texts", len(got), len(in))
		}
		for _, v := range got {
			if len(v) != 6 || embedtest.Norm(v) != 0 {
				t.Errorf("empty text got %v, want 6 zeros", v)
			}
		}
	}
	if n := srv.requests.Load(); n != 0 {
		t.Fatalf("%d requests for empty input, want none", n)
	}
	in := []string{"", "alpha", "", "beta"}
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if reqs := srv.seenRequests(); len(reqs) != 1 || !slices.Equal(reqs[0].Input, []string{"alpha", "beta"}) {
		t.Errorf("requests %+v, want one with alpha and beta", reqs)
	}
	checkVectors(t, in[1:2], got[1:2], 6)
	checkVectors(t, in[3:], got[3:], 6)
	if embedtest.Norm(got[0]) != 0 || embedtest.Norm(got[2]) != 0 || len(got[0]) != 6 {
		t.Errorf("empty texts got %v and %v", got[0], got[2])
	}
}

func TestRequestDimensionsAndAuthorization(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		wantDims bool
		wantAuth string
		wantID   string
	}{
		{"plain", Config{Dimensions: 8}, false, "", "openai/" + testModel},
		{"request dimensions", Config{Dimensions: 8, RequestDimensions: true}, true, "", "openai/" + testModel + "/8"},
		{"api key", Config{Dimensions: 8, APIKey: "sk-test-123"}, false, "Bearer sk-test-123", "openai/" + testModel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, fixed(8))
			cfg := tc.cfg
			cfg.BaseURL, cfg.Model = srv.baseURL(), testModel
			e, _, err := newTestEmbedder(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Embed(context.Background(), []string{"q"}); err != nil {
				t.Fatal(err)
			}
			if e.ID() != tc.wantID {
				t.Errorf("ID() = %q, want %q", e.ID(), tc.wantID)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			raw, has := srv.rawKeys[0]["dimensions"]
			if has != tc.wantDims {
				t.Errorf("dimensions sent: %v, want %v", has, tc.wantDims)
			}
			if has && string(raw) != "8" {
				t.Errorf("dimensions = %s, want 8", raw)
			}
			if srv.auth[0] != tc.wantAuth {
				t.Errorf("Authorization %q, want %q", srv.auth[0], tc.wantAuth)
			}
		})
	}
}

func TestRetryAfter429(t *testing.T) {
	var calls atomic.Int64
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			writeError(w, http.StatusTooManyRequests, "Rate limit reached")
			return
		}
		answer(w, req, 4, false)
	})
	e, slept, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, []string{"a"}, got, 4)
	if n := calls.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
	if s := slept.All(); !slices.Equal(s, []time.Duration{2 * time.Second}) {
		t.Errorf("slept %v, want [2s] from Retry-After", s)
	}
}

func TestRetriesExhausted503(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
		writeError(w, http.StatusServiceUnavailable, "model is loading")
	})
	e, slept, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4, MaxRetries: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a", "b"})
	if !errors.Is(err, search.ErrEmbedder) {
		t.Fatalf("error %v does not wrap search.ErrEmbedder", err)
	}
	for _, want := range []string{"openai: embed batch of 2", "503", "model is loading", "4 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if n := srv.requests.Load(); n != 4 {
		t.Errorf("%d attempts, want 4 (MaxRetries+1)", n)
	}
	// Random is fixed at 0.5, so each wait is three quarters of 0.5 s × 2^n.
	want := []time.Duration{375 * time.Millisecond, 750 * time.Millisecond, 1500 * time.Millisecond}
	if s := slept.All(); !slices.Equal(s, want) {
		t.Errorf("slept %v, want %v", s, want)
	}
}

func TestNetworkErrorsRetried(t *testing.T) {
	// The first attempt's connection is dropped without an answer.
	var calls atomic.Int64
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		if calls.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
			return
		}
		answer(w, req, 4, false)
	})
	e, slept, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatalf("a dropped connection was not retried: %v", err)
	}
	if len(slept.All()) != 1 {
		t.Errorf("slept %v, want one backoff", slept.All())
	}

	// An unreachable server fails with ErrEmbedder after the retries.
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL + "/v1"
	down.Close()
	_, _, err = newTestEmbedder(t, Config{BaseURL: url, Model: testModel, MaxRetries: 2})
	if !errors.Is(err, search.ErrEmbedder) || !strings.Contains(err.Error(), "learn the dimensions") {
		t.Fatalf("probe of a closed server: %v, want an ErrEmbedder about the dimensions", err)
	}
}

func TestAttemptTimeoutRetried(t *testing.T) {
	var calls atomic.Int64
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, req wireRequest) {
		if calls.Add(1) == 1 {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		answer(w, req, 4, false)
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatalf("a timed-out attempt was not retried: %v", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

func TestNoRetryOn4xx(t *testing.T) {
	for _, tc := range []struct {
		status int
		apiKey string
		msg    string
		want   []string
	}{
		{400, "", "'$.input' is invalid. " + strings.Repeat("x", 10), []string{"400 Bad Request", "'$.input' is invalid"}},
		{401, "sk-secret-key-42", "Incorrect API key provided: sk-secret-key-42.", []string{"401", "Incorrect API key provided", "check the API key"}},
		{401, "", "missing bearer token", []string{"401", "set Config.APIKey"}},
		{403, "sk-secret-key-42", "forbidden", []string{"403", "check the API key"}},
		{404, "", `model "test-embed" not found, try pulling it first`, []string{"404", "not found", "check the base URL", `model name ("test-embed")`}},
		{422, "", "input too long", []string{"422", "input too long"}},
	} {
		t.Run(fmt.Sprint(tc.status, tc.apiKey != ""), func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
				writeError(w, tc.status, tc.msg)
			})
			e, slept, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4, APIKey: tc.apiKey})
			if err != nil {
				t.Fatal(err)
			}
			const secretText = "the confidential text to embed"
			_, err = e.Embed(context.Background(), []string{secretText})
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if tc.apiKey != "" && strings.Contains(err.Error(), tc.apiKey) {
				t.Errorf("error %q reveals the API key", err)
			}
			if strings.Contains(err.Error(), secretText) {
				t.Errorf("error %q quotes the request", err)
			}
			if errors.Is(err, search.ErrEmbedder) {
				t.Errorf("a %d wraps ErrEmbedder", tc.status)
			}
			if n := srv.requests.Load(); n != 1 || len(slept.All()) != 0 {
				t.Errorf("%d attempts and sleeps %v, want 1 and none", n, slept.All())
			}
		})
	}
}

func TestLongServerMessageTrimmed(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
		writeError(w, http.StatusBadRequest, "bad:\n"+strings.Repeat("é", 5000))
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a"})
	if err == nil || len([]rune(err.Error())) > 300 || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error of %d runes: %q", len([]rune(fmt.Sprint(err))), err)
	}
}

func TestMalformedResponses(t *testing.T) {
	ok := `{"object":"embedding","index":%d,"embedding":[1,2,3]}`
	for _, tc := range []struct {
		name        string
		contentType string
		body        string
		want        string
	}{
		{"missing index", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,{"embedding":[1,2,3]}]}`, "has no index"},
		{"duplicate index", "application/json", `{"data":[` + fmt.Sprintf(ok, 1) + `,` + fmt.Sprintf(ok, 1) + `]}`, "index 1 twice"},
		{"index out of range", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,` + fmt.Sprintf(ok, 2) + `]}`, "has index 2, outside 0..1"},
		{"too few", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `]}`, "1 embeddings for 2 texts"},
		{"too many", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,` + fmt.Sprintf(ok, 1) + `,` + fmt.Sprintf(ok, 2) + `]}`, "3 embeddings for 2 texts"},
		{"no data", "application/json", `{"object":"list"}`, "0 embeddings for 2 texts"},
		{"string for NaN", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,{"index":1,"embedding":[1,"NaN",3]}]}`, "not an embeddings list"},
		{"null number", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,{"index":1,"embedding":[1,null,3]}]}`, "holds null at 1"},
		{"overflow", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,{"index":1,"embedding":[1,1e999,3]}]}`, "not a finite number"},
		{"uneven lengths", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,{"index":1,"embedding":[1,2]}]}`, "3 and 2 dimensions"},
		{"empty vector", "application/json", `{"data":[` + fmt.Sprintf(ok, 0) + `,{"index":1,"embedding":[]}]}`, "is empty"},
		{"base64", "application/json", `{"data":[{"index":0,"embedding":"AACAPw=="},{"index":1,"embedding":"AACAPw=="}]}`, "not an embeddings list"},
		{"not JSON", "text/plain", `hello`, "not JSON"},
		{"truncated JSON", "application/json", `{"data":[{"index":0,`, "not JSON"},
		{"HTML 200", "text/html", `<html><body>Welcome to nginx</body></html>`, "not JSON"},
		{"error in a 200", "application/json", `{"error":{"message":"model overloaded"}}`, "model overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			})
			e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 3})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "openai: embed batch of 2: ") {
				t.Errorf("error %q lacks the batch context", err)
			}
		})
	}
}

func TestHTML502(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>")
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 3, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a"})
	if !errors.Is(err, search.ErrEmbedder) {
		t.Fatalf("error %v does not wrap ErrEmbedder", err)
	}
	if !strings.Contains(err.Error(), "502 Bad Gateway: an HTML page instead of JSON") || strings.Contains(err.Error(), "<") {
		t.Errorf("error %q", err)
	}
	if n := srv.requests.Load(); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

func TestFirstErrorStopsOtherBatches(t *testing.T) {
	var calls atomic.Int64
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		if calls.Add(1) == 2 {
			writeError(w, http.StatusBadRequest, "batch two is bad")
			return
		}
		answer(w, req, 4, false)
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4, BatchSize: 2, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), embedtest.Texts(10))
	if err == nil || !strings.Contains(err.Error(), "batch two is bad") {
		t.Fatalf("error %v", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2: the batches after the failure must not be sent", n)
	}
}

func TestCancelStopsInFlight(t *testing.T) {
	var cancelled atomic.Int64
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request, _ wireRequest) {
		select {
		case <-r.Context().Done():
			cancelled.Add(1)
		case <-release:
		}
	})
	e, _, err := newTestEmbedder(t, Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4, BatchSize: 1, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	embedtest.CheckCancelStopsInFlight(t, e, srv.requests.Load, cancelled.Load)
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusTooManyRequests, "slow down")
	})
	// The real sleep, to check that it gives way to the context.
	e, err := New(context.Background(), Config{BaseURL: srv.baseURL(), Model: testModel, Dimensions: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = e.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Embed took %s, the backoff ignored the context", d)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		header, value string
		want          time.Duration
		ok            bool
	}{
		{"Retry-After", "2", 2 * time.Second, true},
		{"Retry-After", " 0 ", 0, true},
		{"Retry-After", "3600", maxRetryAfter, true},
		{"Retry-After", "99999999999999999", maxRetryAfter, true},
		{"Retry-After", "-1", 0, false},
		{"Retry-After", "soon", 0, false},
		{"Retry-After", now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second, true},
		{"Retry-After", now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"Retry-After-Ms", "1500", 1500 * time.Millisecond, true},
		{"Retry-After-Ms", "1e12", maxRetryAfter, true},
		{"X-Other", "5", 0, false},
	} {
		h := http.Header{}
		h.Set(tc.header, tc.value)
		got, ok := retryAfter(h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q = %s, %v; want %s, %v", tc.header, tc.value, got, ok, tc.want, tc.ok)
		}
	}
}

// TestLiveServer runs against a real OpenAI-compatible server, e.g.
//
//	DOCLIB_TEST_EMBED_URL=http://localhost:11434/v1 DOCLIB_TEST_EMBED_MODEL=nomic-embed-text go test -run Live ./shared/backend/openai
func TestLiveServer(t *testing.T) {
	base, model := os.Getenv("DOCLIB_TEST_EMBED_URL"), os.Getenv("DOCLIB_TEST_EMBED_MODEL")
	if base == "" || model == "" {
		t.Skip("set DOCLIB_TEST_EMBED_URL and DOCLIB_TEST_EMBED_MODEL (and DOCLIB_TEST_EMBED_API_KEY if needed) to test against a real server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := New(ctx, Config{BaseURL: base, Model: model, APIKey: os.Getenv("DOCLIB_TEST_EMBED_API_KEY")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d dimensions", e.ID(), e.Dimensions())
	embedtest.CheckLive(ctx, t, e)
}
