package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/demoapi"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/httpapi"
)

// server is the local server on the demo data, as doclib-server runs it.
func server(t *testing.T, cfg httpapi.Config) *httptest.Server {
	return demoapi.NewServer(t, cfg).Server
}

const full = "dlk_demo_full_scope"

func newClient(t *testing.T, url, key string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEveryEndpoint(t *testing.T) {
	srv := server(t, httpapi.Config{})
	c := newClient(t, srv.URL+"/", full) // a trailing slash, as ApiUrl has
	ctx := context.Background()
	libs, err := c.Libraries(ctx)
	if err != nil || len(libs.Libraries) == 0 {
		t.Fatalf("libraries: %v %v", libs, err)
	}
	lib, err := c.Library(ctx, "it-operations")
	if err != nil || lib.ID != "lib_it" || lib.EdgeCount == nil {
		t.Fatalf("library by slug: %+v %v", lib, err)
	}
	tags, err1 := c.Tags(ctx, "lib_it")
	cats, err2 := c.Categories(ctx, "lib_it")
	apps, err3 := c.Applications(ctx, "lib_it")
	if err := errors.Join(err1, err2, err3); err != nil || len(tags.Tags) == 0 || len(cats.Categories) == 0 || len(apps.Applications) == 0 {
		t.Fatalf("labels: %v", err)
	}
	g, err := c.Graph(ctx, "lib_it")
	if err != nil || len(g.Documents) == 0 || len(g.Schema.Sections) == 0 {
		t.Fatalf("graph: %v", err)
	}
	page, err := c.Documents(ctx, "lib_it", client.DocumentsParams{Page: client.Page{PageSize: 5}, Tag: tags.Tags[0].Name})
	if err != nil || len(page.Documents) == 0 || page.PageSize != 5 {
		t.Fatalf("documents: %+v %v", page, err)
	}
	doc, err := c.Document(ctx, page.Documents[0].ID)
	if err != nil || doc.Library.ID != "lib_it" || len(doc.Content) == 0 {
		t.Fatalf("document: %v", err)
	}
	tr, err := c.Traverse(ctx, doc.ID, client.TraverseParams{Direction: "outgoing", Depth: 2})
	if err != nil || tr.RootDocumentID != doc.ID || tr.MaxDepth != 2 || tr.Direction != "outgoing" {
		t.Fatalf("traverse: %+v %v", tr, err)
	}
	recs, err := c.SourceRecordings(ctx, doc.ID, client.Page{PageSize: 2})
	if err != nil || recs.LinkedTotal != doc.RecordingCount {
		t.Fatalf("recordings: %+v %v", recs, err)
	}
	res, err := c.Search(ctx, client.SearchParams{Query: "reset password", LibraryID: "lib_it", Page: client.Page{PageSize: 3}})
	if err != nil || len(res.Documents) == 0 || res.Documents[0].Library.ID != "lib_it" || len(res.Documents[0].Relevance.Signals) == 0 {
		t.Fatalf("search: %+v %v", res, err)
	}
}

func TestIteratorsWalkEveryPage(t *testing.T) {
	srv := server(t, httpapi.Config{})
	c := newClient(t, srv.URL, full)
	ctx := context.Background()
	first, err := c.Documents(ctx, "lib_it", client.DocumentsParams{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for d, err := range c.AllDocuments(ctx, "lib_it", client.DocumentsParams{Page: client.Page{PageSize: 7}}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[d.ID] {
			t.Fatalf("%s twice: pages overlap", d.ID)
		}
		seen[d.ID] = true
	}
	if len(seen) != first.Total {
		t.Errorf("walked %d of %d documents", len(seen), first.Total)
	}
	// Stopping early stops fetching.
	n := 0
	for range c.AllDocuments(ctx, "lib_it", client.DocumentsParams{Page: client.Page{PageSize: 2}}) {
		if n++; n == 3 {
			break
		}
	}
	hits := 0
	for _, err := range c.AllSearch(ctx, client.SearchParams{Query: "invoice", Page: client.Page{PageSize: 50}}) {
		if err != nil {
			t.Fatal(err)
		}
		hits++
	}
	res, _ := c.Search(ctx, client.SearchParams{Query: "invoice"})
	if hits != res.Total {
		t.Errorf("AllSearch gave %d hits of %d", hits, res.Total)
	}
	// An error ends the walk with that error.
	for _, err := range c.AllDocuments(ctx, "lib_nope", client.DocumentsParams{}) {
		if client.Code(err) != "not_found" {
			t.Errorf("error %v", err)
		}
	}
}

func TestAPIErrorsCarryTheirCode(t *testing.T) {
	srv := server(t, httpapi.Config{})
	ctx := context.Background()
	for _, c := range []struct {
		key  string
		call func(*client.Client) error
		code string
		st   int
	}{
		{"dlk_nope", func(c *client.Client) error { _, err := c.Libraries(ctx); return err }, "unauthorised", 401},
		{"dlk_demo_expired_key", func(c *client.Client) error { _, err := c.Libraries(ctx); return err }, "api_key_expired", 401},
		{full, func(c *client.Client) error { _, err := c.Document(ctx, "doc_missing"); return err }, "not_found", 404},
		{full, func(c *client.Client) error {
			_, err := c.Traverse(ctx, "doc_x", client.TraverseParams{Depth: 9})
			return err
		}, "bad_request", 400},
		{"dlk_demo_no_recordings", func(c *client.Client) error {
			_, err := c.SourceRecordings(ctx, "doc_it_001", client.Page{})
			return err
		}, "forbidden", 403},
		{"dlk_demo_no_ai_credit", func(c *client.Client) error {
			_, err := c.Search(ctx, client.SearchParams{Query: "stock"})
			return err
		}, "insufficient_ai_credit", 402},
	} {
		err := c.call(newClient(t, srv.URL, c.key))
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Code != c.code || apiErr.Status != c.st || apiErr.Message == "" || apiErr.RequestID == "" {
			t.Errorf("%s: %v, want %d %s with a message and request ID", c.key, err, c.st, c.code)
		}
		if strings.Contains(err.Error(), c.key) && c.key != "dlk_nope" {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	srv := server(t, httpapi.Config{Limiter: memory.NewLimiter(), KeyLimit: 2, Window: time.Minute})
	var waits []time.Duration
	c := newClient(t, srv.URL, full, client.WithRetries(1), client.WithSleep(func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}))
	ctx := context.Background()
	for range 2 {
		if _, err := c.Libraries(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Libraries(ctx) // over the limit: waits Retry-After once, then gives up (same window)
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Code != "rate_limited" || apiErr.RetryAfter < time.Second {
		t.Fatalf("error %v", err)
	}
	if len(waits) != 1 || waits[0] != apiErr.RetryAfter {
		t.Errorf("waited %v, want once for Retry-After %v", waits, apiErr.RetryAfter)
	}
	// A Retry-After longer than the client will wait comes back at once.
	waits = nil
	c = newClient(t, srv.URL, full, client.WithMaxRetryWait(0), client.WithSleep(func(context.Context, time.Duration) error {
		waits = append(waits, 0)
		return nil
	}))
	if _, err := c.Libraries(ctx); client.Code(err) != "rate_limited" || len(waits) != 0 {
		t.Errorf("%v after %d waits", err, len(waits))
	}
}

func TestRetriesBackOffOn5xxAndNetworkErrors(t *testing.T) {
	var calls atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+full {
			t.Errorf("Authorization %q", r.Header.Get("Authorization"))
		}
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"Retry in a few seconds."}}`))
			return
		}
		w.Write([]byte(`{"libraries":[]}`))
	}))
	defer flaky.Close()
	var waits []time.Duration
	sleep := client.WithSleep(func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil })
	c := newClient(t, flaky.URL, full, sleep)
	if _, err := c.Libraries(context.Background()); err != nil || calls.Load() != 3 {
		t.Fatalf("%v after %d calls", err, calls.Load())
	}
	if len(waits) != 2 || waits[1] <= waits[0]/2 || waits[0] <= 0 {
		t.Errorf("backoffs %v, want two growing waits", waits)
	}
	// 4xx is final.
	calls.Store(-100)
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(404)
		w.Write([]byte(`{"error":{"code":"not_found","message":"No."}}`))
	}))
	defer gone.Close()
	calls.Store(0)
	if _, err := newClient(t, gone.URL, full, sleep).Library(context.Background(), "x"); client.Code(err) != "not_found" || calls.Load() != 1 {
		t.Errorf("%v after %d calls", err, calls.Load())
	}
	// Nobody listening: a NetworkError after the retries, without the key.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	waits = nil
	_, err := newClient(t, down.URL, full, sleep, client.WithRetries(2)).Libraries(context.Background())
	var ne *client.NetworkError
	if !errors.As(err, &ne) || len(waits) != 2 || strings.Contains(err.Error(), full) {
		t.Errorf("%v after %d waits", err, len(waits))
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	// The server answers only when the client gives up, or after a minute
	// (an empty 200, which is no deadline error): the error alone tells
	// whether the 50 ms timeout ended the call, on a busy machine too.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	defer slow.Close()
	c := newClient(t, slow.URL, full, client.WithTimeout(50*time.Millisecond), client.WithRetries(0))
	start := time.Now()
	_, err := c.Libraries(context.Background())
	var ne *client.NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v after %s", err, time.Since(start))
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	for _, c := range []struct{ url, key string }{{"localhost:8080", "k"}, {"ftp://x", "k"}, {"http://x", " "}} {
		if _, err := client.New(c.url, c.key); err == nil {
			t.Errorf("%q %q accepted", c.url, c.key)
		}
	}
	c := newClient(t, "https://abc.execute-api.eu-west-1.amazonaws.com/api/", "dlk_secret")
	if strings.Contains(c.String(), "dlk_secret") || c.BaseURL() != "https://abc.execute-api.eu-west-1.amazonaws.com/api" {
		t.Errorf("%s / %s", c, c.BaseURL())
	}
}

func TestIDsAreEscaped(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.EscapedPath()
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	newClient(t, srv.URL+"/api", full).Library(context.Background(), "a b/c")
	if got != "/api/libraries/a%20b%2Fc" {
		t.Errorf("path %q", got)
	}
}

func TestKeysWithSpacesOrControlsAreRefused(t *testing.T) {
	for _, key := range []string{"# my key\ndlk_x", "dlk_x\r\nX-Other: 1", "dlk x", "dlk_\x1b[0m"} {
		if _, err := client.New("http://127.0.0.1:1", key); !errors.Is(err, client.ErrBadKey) {
			t.Errorf("%q: %v, want ErrBadKey", key, err)
		}
	}
	// Surrounding white space (a key file's newline) is not part of the key.
	if _, err := client.New("http://127.0.0.1:1", " dlk_x\n"); err != nil {
		t.Error(err)
	}
	if _, err := client.New("http://127.0.0.1:1", "\t"); !errors.Is(err, client.ErrNoKey) {
		t.Errorf("%v, want ErrNoKey", err)
	}
	if _, err := client.New("http://user:hunter2@/", "k"); !errors.Is(err, client.ErrBadURL) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("%v, want ErrBadURL without the password", err)
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"code":"rate_limited","message":"Slow down."}}`))
	}))
	defer limited.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(t, limited.URL, full, client.WithSleep(func(ctx context.Context, d time.Duration) error {
		cancel() // Ctrl-C during the wait
		<-ctx.Done()
		return ctx.Err()
	}))
	if _, err := c.Libraries(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled rather than the 429 it was waiting out", err)
	}
}

func TestRetryAfterAsAnHTTPDate(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", time.Now().Add(5*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{"libraries":[]}`))
	}))
	defer srv.Close()
	var waits []time.Duration
	c := newClient(t, srv.URL, full, client.WithSleep(func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }))
	if _, err := c.Libraries(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] < 3*time.Second || waits[0] > 6*time.Second {
		t.Errorf("waits %v, want about 5s", waits)
	}
}

func TestAnswersNotFromTheAPI(t *testing.T) {
	for _, c := range []struct {
		name, ct, body string
		want           []string
		not            string
	}{
		{"HTML page", "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>", []string{"Bad Gateway", "not an answer of the doclib API"}, "<html>"},
		{"text", "text/plain", "upstream connect error\r\n\x1b[31mreset\x1b[0m", []string{"upstream connect error", "reset"}, "\x1b"},
		{"empty", "", "", []string{"Bad Gateway"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.ct != "" {
					w.Header().Set("Content-Type", c.ct)
				}
				w.WriteHeader(http.StatusBadGateway)
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			_, err := newClient(t, srv.URL, full, client.WithRetries(0)).Libraries(context.Background())
			var e *client.Error
			if !errors.As(err, &e) || e.Code != "http_502" {
				t.Fatalf("%v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q lacks %q", e.Message, w)
				}
			}
			if c.not != "" && strings.Contains(e.Message, c.not) {
				t.Errorf("message %q holds %q", e.Message, c.not)
			}
		})
	}
}

func TestDotAndEmptyIDsStayInTheirSegment(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, full)
	ctx := context.Background()
	c.Documents(ctx, "..", client.DocumentsParams{})
	c.Traverse(ctx, ".", client.TraverseParams{})
	if want := []string{"/libraries/%2E%2E/documents", "/documents/%2E/traverse"}; !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	paths = nil
	if _, err := c.Library(ctx, ""); err == nil || !strings.Contains(err.Error(), "empty ID") || len(paths) != 0 {
		t.Errorf("%v after %q", err, paths)
	}
	if _, err := c.Graph(ctx, ""); err == nil || len(paths) != 0 {
		t.Errorf("%v after %q", err, paths)
	}
}

// TestAsksForCompressionAndDecodesIt: the client asks for gzip, then zstd,
// gets the function's gzip, decodes zstd too, and reads the same answer as
// uncompressed. (That a buffered API Gateway compresses for the same header
// is TestBufferedIntegrationFailsOnBigAnswers, internal/standin.)
func TestAsksForCompressionAndDecodesIt(t *testing.T) {
	var codings []string
	var mu sync.Mutex
	var preferZstd atomic.Bool
	inner, err := demoapi.Handler(httpapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept-Encoding"); got != client.AcceptEncoding {
			t.Errorf("Accept-Encoding %q, want %q", got, client.AcceptEncoding)
		}
		if preferZstd.Load() {
			r.Header.Set("Accept-Encoding", "zstd") // as a server that prefers zstd answers
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		mu.Lock()
		codings = append(codings, rec.Header().Get("Content-Encoding"))
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()
	ctx := context.Background()
	page, err := newClient(t, srv.URL, full).Documents(ctx, "lib_it", client.DocumentsParams{Page: client.Page{PageSize: 20}})
	if err != nil || len(page.Documents) != 20 || codings[len(codings)-1] != "gzip" {
		t.Fatalf("a page of 20: %v, %d documents, sent in %q", err, len(page.Documents), codings)
	}
	preferZstd.Store(true)
	inZstd, err := newClient(t, srv.URL, full).Documents(ctx, "lib_it", client.DocumentsParams{Page: client.Page{PageSize: 20}})
	if err != nil || codings[len(codings)-1] != "zstd" || !reflect.DeepEqual(inZstd, page) {
		t.Fatalf("the page in zstd: %v, sent in %q, the same page %v", err, codings, reflect.DeepEqual(inZstd, page))
	}
	plain, err := newClient(t, server(t, httpapi.Config{Uncompressed: true}).URL, full).Documents(ctx, "lib_it", client.DocumentsParams{Page: client.Page{PageSize: 20}})
	if err != nil || !reflect.DeepEqual(plain, page) {
		t.Errorf("the compressed answer decodes to another page than the uncompressed one (%v)", err)
	}
}

// TestCutAndOversizedAnswers: an answer cut short (a stream that failed
// midway) is a network error, retried; a coding the client did not ask for
// and an answer over MaxAnswerBytes are answer errors that say so.
func TestCutAndOversizedAnswers(t *testing.T) {
	var calls atomic.Int32
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte(`{"libraries":[`))
	}))
	defer cut.Close()
	sleep := client.WithSleep(func(context.Context, time.Duration) error { return nil })
	_, err := newClient(t, cut.URL, full, sleep, client.WithRetries(1)).Libraries(context.Background())
	var ne *client.NetworkError
	if !errors.As(err, &ne) || calls.Load() != 2 {
		t.Errorf("a cut answer: %v after %d calls; want a NetworkError after a retry", err, calls.Load())
	}
	brotli := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		w.Write([]byte{0x0b, 0x02})
	}))
	defer brotli.Close()
	var ae *client.AnswerError
	if _, err := newClient(t, brotli.URL, full, sleep).Libraries(context.Background()); !errors.As(err, &ae) || ae.TooLarge {
		t.Errorf("a coding not asked for: %v, want an AnswerError", err)
	}
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"libraries":[`))
		chunk := []byte(strings.Repeat(`{"id":"lib_x"},`, 4096))
		for sent := 0; sent <= client.MaxAnswerBytes; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	_, err = newClient(t, huge.URL, full, sleep).Libraries(context.Background())
	if !errors.As(err, &ae) || !ae.TooLarge || !strings.Contains(err.Error(), "ask for less") {
		t.Errorf("an answer over %d bytes: %v, want an AnswerError saying to ask for less", client.MaxAnswerBytes, err)
	}
}
