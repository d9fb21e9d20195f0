// Package apisuite checks a running doclib read API purely over HTTP, against
// docs/api.md and the demo data set, so that the same suite runs
// against the local server and against the deployed stack (API Gateway and
// Lambda, or a stand-in of it). Expected answers are computed from demo.json;
// nothing is compared with answers copied from a past run.
//
// The suite assumes the target serves the demo data set and that nobody else
// uses the demo keys or the client's address while it runs (it counts on their
// rate-limit windows). It sends about 180 requests before its destructive
// subtests, which run last: with the spec's limits (100 per key, 300 per IP a
// minute) the per-key check then fits in what is left of the per-IP limit.
package apisuite

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/data/dataset"
)

// Target is a running API to check, and what it is allowed to do differently.
type Target struct {
	// Name labels the target in messages.
	Name string
	// URL is the base URL, no trailing slash; it may include a stage path
	// (http://127.0.0.1:1234/v1).
	URL string
	// Client sends the requests; nil means http.DefaultClient. The per-IP
	// limit counts the client's address, so give each suite run its own.
	Client *http.Client

	// GatewayErrors is true behind API Gateway, where the gateway itself may
	// answer a request with no key (401, or 403, with a {"message": ...} body)
	// or an unknown path or method (403 {"message": "Missing Authentication
	// Token"}) before any function runs. Only those cases accept the gateway's
	// form, and only when this is set.
	GatewayErrors bool
	// RoutesBeforeAuth is true behind API Gateway whose gateway responses
	// speak the API's error shape (doclib's stack): the gateway matches the
	// path before it calls the authorizer, so a path the API does not have
	// is 404 not_found, in the API's shape, whatever the key, and without
	// X-RateLimit-* (no key has been identified; it does not count against
	// one). Locally authentication comes first (docs/api.md's order of
	// checks); docs/standin.md records the difference.
	RoutesBeforeAuth bool

	// KeyLimit is the target's requests per key per window (0: the spec's
	// 100); X-RateLimit-Limit must equal it.
	KeyLimit int
	// IPLimit is the target's requests per client IP per window (0: the spec's
	// 300). The suite keeps its destructive subtests within what is left of it.
	IPLimit int
	// Window is the length of a rate-limit window (0: the spec's one minute).
	Window time.Duration

	// SpendCredit runs a subtest that spends all the AI credit of the
	// Individual-plan demo workspace and then expects 402
	// insufficient_ai_credit. It leaves that workspace without credit, so set
	// it only on a target whose data is fresh for this run (it expects exactly
	// the demo's credit less the suite's own searches to succeed). It needs a
	// KeyLimit above that workspace's credit (demo: 100), or it skips.
	SpendCredit bool
	// Settle, when set, is called once before the first request: a target
	// that indexes its data asynchronously (the stand-in's table stream into
	// search) catches up there. The suite itself changes no data but AI
	// credit, so nothing needs settling afterwards.
	Settle func(ctx context.Context) error

	// CheckIPLimit runs, last of all, a subtest that exhausts the per-IP
	// limit with requests that carry wrong keys (401 until the limit, then
	// 429 rate_limited: the IP limit comes before authentication). The
	// client's address is then refused until the window ends.
	CheckIPLimit bool
}

// Run checks target with subtests of t: every endpoint, every error code,
// scope, billing, and last the destructive rate-limit and credit checks.
func Run(t *testing.T, target Target) {
	t.Helper()
	m, err := loadModel()
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{Target: target, m: m, start: time.Now(), spent: map[string]int{}, answers: map[string]answer{}}
	if s.Client == nil {
		s.Client = http.DefaultClient
	}
	s.URL = strings.TrimRight(s.URL, "/")
	if s.KeyLimit <= 0 {
		s.KeyLimit = 100
	}
	if s.IPLimit <= 0 {
		s.IPLimit = 300
	}
	if s.Window <= 0 {
		s.Window = time.Minute
	}
	if s.Settle != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err := s.Settle(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: settle: %v", s.Name, err)
		}
	}
	// In order: the read-only checks, then billing, then what spends credit
	// or quota for the rest of the window.
	for _, st := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"conventions", s.testConventions},
		{"authentication", s.testAuthentication},
		{"libraries", s.testLibraries},
		{"labels", s.testLabels},
		{"graph", s.testGraph},
		{"documents-list", s.testDocumentsList},
		{"document", s.testDocument},
		{"traverse", s.testTraverse},
		{"source-recordings", s.testSourceRecordings},
		{"search", s.testSearch},
		{"scope", s.testScope},
		{"billing", s.testBilling},
		{"conditional", s.testConditional},
		{"credit-exhaustion", s.testCreditExhaustion},
		{"key-rate-limit", s.testKeyRateLimit},
		{"ip-rate-limit", s.testIPRateLimit},
	} {
		before := s.sent.Load()
		t.Run(st.name, st.f)
		t.Logf("%s: %s sent %d requests", s.Name, st.name, s.sent.Load()-before)
	}
	t.Logf("%s: %d requests in %s", s.Name, s.sent.Load(), time.Since(s.start).Round(time.Millisecond))
}

type suite struct {
	Target
	m     *model
	start time.Time
	sent  atomic.Int64
	turn  atomic.Int64

	mu sync.Mutex
	// times are when each request was sent, for the per-IP budget.
	times []time.Time
	// spent counts the searches answered 200 per workspace: the AI credit
	// the suite has spent.
	spent map[string]int
	// answers are the last 200 of each path the suite asked with get.
	answers map[string]answer
}

// reader returns one of the working keys that see every library of the full
// key's workspace, in turn, so that the read-only checks spread over their
// per-key quotas. Use it only where recording details do not matter.
func (s *suite) reader() *dataset.APIKey {
	if s.turn.Add(1)%2 == 0 {
		return s.m.fullNoRec
	}
	return s.m.full
}

// response is one exchange.
type response struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
	// gateway is true when the body is API Gateway's own {"message": ...}
	// form (only recognised when GatewayErrors is set).
	gateway bool
	// unrouted is true when the gateway answered an unknown path itself,
	// before authentication (only recognised when RoutesBeforeAuth is set).
	unrouted bool
}

// at names the request, for messages about the body's content.
func (r *response) at() string { return r.method + " " + r.path }

// String names the request and shows the status and the start of the body.
func (r *response) String() string {
	b := r.body
	if len(b) > 300 {
		b = append(b[:300:300], "..."...)
	}
	return r.method + " " + r.path + ": " + strconv.Itoa(r.status) + " " + strings.TrimSpace(string(b))
}

// get sends GET path with key (nil: no Authorization header).
func (s *suite) get(t testing.TB, key *dataset.APIKey, path string) *response {
	t.Helper()
	auth := ""
	if key != nil {
		auth = "Bearer " + key.Secret
	}
	r := s.do(t, http.MethodGet, auth, path, key != nil && s.m.works(key))
	if key != nil && r.status == http.StatusOK {
		s.countSearch(key, path)
		s.mu.Lock()
		s.answers[path] = answer{key, r}
		s.mu.Unlock()
	}
	return r
}

// answer is a 200 the suite got, kept for the conditional requests that
// revalidate it (testConditional) without asking for it again.
type answer struct {
	key *dataset.APIKey
	r   *response
}

// countSearch counts a search answered 200 or 304 as the AI credit it spent
// (docs/design.md: a search that revalidates is billed again).
func (s *suite) countSearch(key *dataset.APIKey, path string) {
	if strings.HasPrefix(path, "/search/documents") {
		s.mu.Lock()
		s.spent[key.WorkspaceID]++
		s.mu.Unlock()
	}
}

// ipUsed is how many requests the suite sent in the last window: at least
// what the target counts against the client's address now.
func (s *suite) ipUsed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	since := time.Now().Add(-s.Window)
	n := 0
	for _, at := range s.times {
		if at.After(since) {
			n++
		}
	}
	return n
}

var requestTimeout = 30 * time.Second

// do sends one request and checks what every response carries (docs/api.md,
// Wire conventions): X-Request-Id, the JSON content type, the error shape for
// errors, and X-RateLimit-* once authenticated (authenticated says the key works).
func (s *suite) do(t testing.TB, method, auth, path string, authenticated bool) *response {
	t.Helper()
	r, err := s.send(method, auth, path)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	s.checkCommon(t, r, authenticated)
	return r
}

// send is do without the checks, safe for concurrent use.
func (s *suite) send(method, auth, path string) (*response, error) {
	return s.sendWith(method, auth, path, nil)
}

// sendWith is send with extra request headers.
func (s *suite) sendWith(method, auth, path string, h http.Header) (*response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	s.sent.Add(1)
	s.mu.Lock()
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	resp, err := s.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	r := &response{method: method, path: path, status: resp.StatusCode, header: resp.Header, body: body}
	if s.RoutesBeforeAuth && r.status == http.StatusNotFound && r.header.Get("X-RateLimit-Limit") == "" {
		r.unrouted = errorCode(r) == "not_found"
	}
	if s.GatewayErrors && (r.status == 401 || r.status == 403) {
		if method == http.MethodHead && len(body) == 0 {
			r.gateway = true // no body to tell by; HEAD is judged where it is sent
		}
		var g map[string]any
		if json.Unmarshal(body, &g) == nil && len(g) == 1 {
			_, r.gateway = g["message"].(string)
		}
	}
	return r, nil
}

func (s *suite) checkCommon(t testing.TB, r *response, authenticated bool) {
	t.Helper()
	if r.gateway {
		return // the gateway's own answer: judged where it is allowed
	}
	if r.header.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id header", r)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("%s: Content-Type %q, want application/json; charset=utf-8", r, ct)
	}
	if r.status == http.StatusOK {
		checkCacheHeaders(t, r)
	}
	if r.method != http.MethodHead {
		if !json.Valid(r.body) {
			t.Errorf("%s: body is not JSON", r)
		} else if r.status >= 400 {
			checkErrorShape(t, r)
		}
	}
	// Every response that passed authentication carries the key's quota; a
	// 429 is checked by the rate-limit subtests (the IP limit's has its own).
	if authenticated && r.status != http.StatusTooManyRequests && !r.unrouted {
		s.checkQuotaHeaders(t, r, s.KeyLimit)
	}
}

func checkErrorShape(t testing.TB, r *response) {
	t.Helper()
	var e map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &e); err != nil || len(e) != 1 || e["error"] == nil {
		t.Errorf("%s: error body is not exactly {\"error\": {...}}", r)
		return
	}
	var d map[string]any
	if err := json.Unmarshal(e["error"], &d); err != nil || len(d) != 2 {
		t.Errorf("%s: error is not exactly {code, message}", r)
		return
	}
	code, ok1 := d["code"].(string)
	msg, ok2 := d["message"].(string)
	if !ok1 || !ok2 || code == "" || strings.TrimSpace(msg) == "" {
		t.Errorf("%s: error code and message must be non-empty strings", r)
	}
	for _, leak := range []string{"goroutine", ".go:", "panic", "dynamodb", "DynamoDB", "arn:aws", "opensearch"} {
		if strings.Contains(msg, leak) {
			t.Errorf("%s: error message leaks %q", r, leak)
		}
	}
}

// checkQuotaHeaders checks X-RateLimit-Limit (limit, when > 0), -Remaining
// and -Reset (Unix seconds within a window from now).
func (s *suite) checkQuotaHeaders(t testing.TB, r *response, limit int) (remaining int, reset int64) {
	t.Helper()
	l, err1 := strconv.Atoi(r.header.Get("X-RateLimit-Limit"))
	rem, err2 := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
	res, err3 := strconv.ParseInt(r.header.Get("X-RateLimit-Reset"), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Errorf("%s: X-RateLimit-Limit %q, -Remaining %q, -Reset %q: want whole numbers", r,
			r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Reset"))
		return -1, 0
	}
	if limit > 0 && l != limit {
		t.Errorf("%s: X-RateLimit-Limit %d, want %d", r, l, limit)
	}
	if rem < 0 || rem > l {
		t.Errorf("%s: X-RateLimit-Remaining %d outside 0..%d", r, rem, l)
	}
	// Clocks may differ a little between the suite and the target.
	const skew = 5 * time.Second
	now := time.Now()
	if at := time.Unix(res, 0); at.Before(now.Add(-skew)) || at.After(now.Add(s.Window+skew)) {
		t.Errorf("%s: X-RateLimit-Reset %d (%s) is not within a window from now (%s)", r, res, at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return rem, res
}

// errorCode is the code of an error body ("" when there is none).
func errorCode(r *response) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// expectError checks an error answer. gatewayStatuses are the statuses at
// which API Gateway's own answer is allowed instead (only with GatewayErrors).
func (s *suite) expectError(t testing.TB, r *response, status int, code string, gatewayStatuses ...int) {
	t.Helper()
	if r.gateway {
		for _, g := range gatewayStatuses {
			if r.status == g {
				return
			}
		}
		t.Errorf("%s: an answer of API Gateway itself, where the API must answer %d %s", r, status, code)
		return
	}
	if r.status != status || errorCode(r) != code {
		t.Errorf("%s: want %d %s", r, status, code)
	}
}

// ok decodes a 200 answer into v and returns the body as generic JSON for
// shape checks; it fails the test on another status.
func ok(t testing.TB, r *response, v any) any {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: want 200", r)
	}
	var generic any
	if err := json.Unmarshal(r.body, &generic); err != nil {
		t.Fatalf("%s: %v", r, err)
	}
	if v != nil {
		dec := json.NewDecoder(bytes.NewReader(r.body))
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: decode: %v", r, err)
		}
	}
	return generic
}

// q builds a query string from name-value pairs.
func q(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add(pairs[i], pairs[i+1])
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

func esc(s string) string { return url.PathEscape(s) }

// Shapes: the JSON kinds a field may have.
type kind int

const (
	kString kind = iota
	kInt
	kNumber
	kBool
	kTime       // RFC 3339 UTC with a Z suffix
	kStrings    // array of strings, never null
	kArray      // array, never null
	kObject     // object, never null
	kNullString // string or null
)

var timePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$`)

// shape checks that v is an object with exactly the given fields, of the given
// kinds. Extra fields are errors too: nothing beyond the contract leaves the API.
func shape(t testing.TB, where string, v any, fields map[string]kind) map[string]any {
	t.Helper()
	obj, isObj := v.(map[string]any)
	if !isObj {
		t.Errorf("%s: not an object: %v", where, v)
		return nil
	}
	for name, k := range fields {
		x, present := obj[name]
		if !present {
			t.Errorf("%s: field %s missing", where, name)
			continue
		}
		if !isKind(x, k) {
			t.Errorf("%s: field %s = %v has the wrong type", where, name, x)
		}
	}
	for name := range obj {
		if _, known := fields[name]; !known {
			t.Errorf("%s: unexpected field %s", where, name)
		}
	}
	return obj
}

func isKind(x any, k kind) bool {
	switch k {
	case kString:
		_, ok := x.(string)
		return ok
	case kNullString:
		_, ok := x.(string)
		return ok || x == nil
	case kInt:
		f, ok := x.(float64)
		return ok && f == float64(int64(f))
	case kNumber:
		_, ok := x.(float64)
		return ok
	case kBool:
		_, ok := x.(bool)
		return ok
	case kTime:
		s, ok := x.(string)
		return ok && timePattern.MatchString(s)
	case kStrings:
		a, ok := x.([]any)
		if !ok {
			return false
		}
		for _, e := range a {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	case kArray:
		_, ok := x.([]any)
		return ok
	case kObject:
		_, ok := x.(map[string]any)
		return ok
	}
	return false
}

// items returns the array field of an object (nil when absent or not an array).
func items(obj map[string]any, field string) []any {
	a, _ := obj[field].([]any)
	return a
}

// concurrently runs f(i) for i in [0, n) on a few goroutines.
func concurrently(n, workers int, f func(i int)) {
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
