package openapicheck

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/api"
)

// recorder is a testing.TB that records Errorf and Fatalf instead of failing, so
// the tests can prove that Check catches drift.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.TB.FailNow()
}

func (r *recorder) text() string { return strings.Join(r.errs, "\n") }

// findings is the report without the echo of the body, which would mention
// every field name.
func (r *recorder) findings() string {
	var out []string
	for _, e := range r.errs {
		if !strings.Contains(e, ": body was: ") {
			out = append(out, e)
		}
	}
	return strings.Join(out, "\n")
}

// exchange is one request and response to check.
type exchange struct {
	method, target string
	auth           bool
	status         int
	header         http.Header
	body           []byte
}

func (e exchange) request() *http.Request {
	req := httptest.NewRequest(e.method, e.target, nil)
	if e.auth {
		req.Header.Set("Authorization", "Bearer dlk_test_a_full_scope_0001")
	}
	return req
}

// okHeader is the header of a successful response.
func okHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Request-Id", "req_0123456789")
	h.Set("X-RateLimit-Limit", "100")
	h.Set("X-RateLimit-Remaining", "99")
	h.Set("X-RateLimit-Reset", "1795000000")
	return h
}

// answerHeader is the header of a 200: okHeader's and the caching headers.
func answerHeader() http.Header {
	h := okHeader()
	h.Set("ETag", `"0123456789abcdef0123456789abcdef"`)
	h.Set("Cache-Control", "private, no-cache")
	h.Set("Vary", "Accept-Encoding")
	return h
}

// notModifiedHeader is the header of a 304: an answer's, without a body's.
func notModifiedHeader() http.Header {
	h := answerHeader()
	h.Del("Content-Type")
	return h
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// errHeader is the header of an error response before authentication.
func errHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Request-Id", "req_0123456789")
	return h
}

func withHeader(h http.Header, kv ...string) http.Header {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
		} else {
			h.Set(kv[i], kv[i+1])
		}
	}
	return h
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit decodes body, lets f change it and encodes it again.
func edit(t testing.TB, body []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	return mustJSON(t, m)
}

func errBody(code, msg string) []byte {
	b, _ := json.Marshal(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}})
	return b
}

var (
	t0 = api.Time{Time: time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)}
	t1 = api.Time{Time: time.Date(2026, 11, 21, 9, 30, 0, 500_000_000, time.UTC)}
)

func schemaV2() api.Schema {
	return api.Schema{Version: 2, Sections: []api.Section{
		{Key: "summary", Title: "Summary", Type: "text"},
		{Key: "prerequisites", Title: "Before you start", Type: "list"},
		{Key: "steps", Title: "Steps", Type: "steps"},
	}}
}

var content = json.RawMessage(`{"summary":"Reset a password.","prerequisites":["Admin rights"],"steps":["Open the console","Click Reset"]}`)

func library(edges bool) api.Library {
	l := api.Library{ID: "lib_a1", Name: "Operations", Description: "Runbooks", Categories: []string{"Accounts"},
		Tags: []string{"password"}, DocumentCount: 5, CreatedAt: t0, UpdatedAt: t1}
	if edges {
		n := 3
		l.EdgeCount = &n
	}
	return l
}

func graphEdge() api.GraphEdge {
	return api.GraphEdge{SourceDocumentID: "doc_a1_1", SourceDocumentTitle: "Reset a password",
		TargetDocumentID: "doc_a1_2", TargetDocumentTitle: "Unlock an account", Label: "often next",
		EdgeType: "data", RecordingCount: 7, Support: 2, LowConfidence: true}
}

func document() api.Document {
	return api.Document{DocumentItem: api.DocumentItem{ID: "doc_a1_1", Title: "Reset a password", Category: "Accounts", Tags: []string{"password"},
		Applications: []string{"Admin console"}, RecordingCount: 3, DeviceCount: 2, FirstSeen: t0, LastSeen: t1,
		CreatedAt: t0, UpdatedAt: t1, Content: content}, Schema: schemaV2(),
		Library: api.DocumentRef{ID: "lib_a1", Name: "Operations"},
		Edges: api.Edges{
			Outgoing: []api.OutgoingEdge{{TargetDocumentID: "doc_a2_1", TargetDocumentTitle: "Pay", TargetLibraryID: "lib_a2",
				Label: "often next", EdgeType: "data", RecordingCount: 7, Support: 5}},
			Incoming: []api.IncomingEdge{},
		}}
}

func traversal(label *string) api.Traversal {
	return api.Traversal{RootDocumentID: "doc_a1_1", Direction: "both", Label: label, MaxDepth: 2,
		Nodes: []api.TraverseNode{
			{ID: "doc_a1_1", Title: "Reset a password", Category: "Accounts", Tags: []string{}, Applications: []string{}, LibraryID: "lib_a1", Depth: 0, Content: content},
			{ID: "doc_a2_1", Title: "Pay", Category: "Billing", Tags: []string{"pay"}, Applications: []string{"Bank"}, LibraryID: "lib_a2", Depth: 1, Content: json.RawMessage(`{}`)},
		},
		Edges:   []api.GraphEdge{graphEdge()},
		Schemas: map[string]api.Schema{"lib_a1": schemaV2(), "lib_a2": {Version: 1, Sections: []api.Section{{Key: "summary", Title: "Summary", Type: "text"}}}},
	}
}

func recordings() api.SourceRecordings {
	return api.SourceRecordings{
		SourceRecordings: []api.SourceRecording{{ID: "rec_a1", Title: "Morning session", Status: "processed", ClientCreatedAt: t1,
			Questions: []api.Question{{ID: "ques_1", Question: "Why?", Response: "Because.", SequenceOrder: 1}},
			Steps:     []string{"Opened the console"}}},
		Total: 1, LinkedTotal: 3, PrivateTotal: 2, Guidance: "2 recordings are private.", Page: 1, PageSize: 50,
	}
}

func documentPage() api.DocumentPage {
	return api.DocumentPage{Documents: []api.DocumentItem{{ID: "doc_a1_1", Title: "Reset a password", Category: "Accounts",
		Tags: []string{"password"}, Applications: []string{}, RecordingCount: 3, DeviceCount: 2, FirstSeen: t0, LastSeen: t1,
		CreatedAt: t0, UpdatedAt: t1, Content: content}}, Total: 1, Page: 1, PageSize: 100, Schema: schemaV2()}
}

func graph() api.Graph {
	return api.Graph{Documents: []api.GraphDocument{{ID: "doc_a1_1", Title: "Reset a password", Category: "Accounts",
		Tags: []string{}, Applications: []string{}, RecordingCount: 3, LastSeen: t1}},
		Edges: []api.GraphEdge{graphEdge()}, Truncated: false, Schema: schemaV2()}
}

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	v := Load(t)
	if v.model.Version != "3.1.0" {
		t.Errorf("openapi version %q, want 3.1.0", v.model.Version)
	}
	ok, errs := v.lib.ValidateDocument()
	for _, e := range errs {
		t.Errorf("document: %s", describe(e))
	}
	if !ok && len(errs) == 0 {
		t.Errorf("document invalid without errors")
	}
	// Every path the API serves, each with a GET.
	want := []string{"/libraries", "/libraries/{id}", "/libraries/{id}/tags", "/libraries/{id}/categories",
		"/libraries/{id}/applications", "/libraries/{id}/graph", "/libraries/{id}/documents", "/documents/{id}",
		"/documents/{id}/traverse", "/documents/{id}/source-recordings", "/search/documents"}
	if n := v.model.Paths.PathItems.Len(); n != len(want) {
		t.Errorf("%d paths, want %d", n, len(want))
	}
	for _, p := range want {
		item := v.model.Paths.PathItems.GetOrZero(p)
		if item == nil || item.Get == nil {
			t.Errorf("no GET %s", p)
			continue
		}
		for _, code := range []string{"200", "400", "401", "404", "429", "500", "503"} {
			if item.Get.Responses.Codes.GetOrZero(code) == nil {
				t.Errorf("GET %s: no %s response", p, code)
			}
		}
	}
}

func TestDocumentValidationCatchesBrokenDocuments(t *testing.T) {
	broken := []byte(`openapi: 3.1.0
info: {title: x}
paths:
  /x:
    get:
      responses:
        "200": {descriptio: oops}
`)
	v, err := newValidator("broken.yaml", broken)
	if err != nil {
		return // refusing to build is also a catch
	}
	if ok, errs := v.lib.ValidateDocument(); ok || len(errs) == 0 {
		t.Errorf("a broken document validated")
	}
}

func TestLoadIsCached(t *testing.T) {
	if first, second := Load(t), Load(t); first != second {
		t.Errorf("Load built the validator twice")
	}
}

func TestValidExchangesPass(t *testing.T) {
	label := "often next"
	cases := map[string]exchange{
		"libraries empty":           {"GET", "/libraries", true, 200, answerHeader(), []byte(`{"libraries":[]}`)},
		"libraries":                 {"GET", "/libraries", true, 200, answerHeader(), mustJSON(t, api.LibraryList{Libraries: []api.Library{library(false)}})},
		"library by id":             {"GET", "/libraries/lib_a1", true, 200, answerHeader(), mustJSON(t, library(true))},
		"library by slug":           {"GET", "/libraries/operations", true, 200, answerHeader(), mustJSON(t, library(true))},
		"tags":                      {"GET", "/libraries/lib_a1/tags", true, 200, answerHeader(), mustJSON(t, api.Tags{Tags: []api.Label{{Name: "password", DocumentCount: 2}}})},
		"categories":                {"GET", "/libraries/lib_a1/categories", true, 200, answerHeader(), mustJSON(t, api.Categories{Categories: []api.Label{}})},
		"applications":              {"GET", "/libraries/lib_a1/applications", true, 200, answerHeader(), mustJSON(t, api.Applications{Applications: []api.Label{{Name: "Bank", DocumentCount: 0}}})},
		"graph":                     {"GET", "/libraries/lib_a1/graph", true, 200, answerHeader(), mustJSON(t, graph())},
		"documents capped":          {"GET", "/libraries/lib_a1/documents?pageSize=500&category=Accounts&search=reset&unknown=1", true, 200, answerHeader(), mustJSON(t, documentPage())},
		"document":                  {"GET", "/documents/doc_a1_1", true, 200, answerHeader(), mustJSON(t, document())},
		"traverse":                  {"GET", "/documents/doc_a1_1/traverse", true, 200, answerHeader(), mustJSON(t, traversal(nil))},
		"traverse label":            {"GET", "/documents/doc_a1_1/traverse?direction=outgoing&depth=3&label=often%20next", true, 200, answerHeader(), mustJSON(t, traversal(&label))},
		"recordings":                {"GET", "/documents/doc_a1_1/source-recordings?page=2&pageSize=80", true, 200, answerHeader(), mustJSON(t, recordings())},
		"head":                      {"HEAD", "/libraries", true, 200, answerHeader(), []byte(`{"libraries":[]}`)},
		"not modified":              {"GET", "/libraries", true, 304, notModifiedHeader(), nil},
		"gzip":                      {"GET", "/libraries", true, 200, withHeader(answerHeader(), "Content-Encoding", "gzip", "ETag", `"0123456789abcdef0123456789abcdef-gzip"`), gzipped(t, []byte(`{"libraries":[]}`))},
		"head no body":              {"HEAD", "/documents/doc_a1_1", true, 200, answerHeader(), nil},
		"bad page":                  {"GET", "/libraries/lib_a1/documents?page=0", true, 400, okHeader(), errBody("bad_request", "The parameter page must be 1 or more; got 0.")},
		"bad depth":                 {"GET", "/documents/doc_a1_1/traverse?depth=9", true, 400, okHeader(), errBody("bad_request", "The parameter depth must be a whole number from 1 to 3; got \"9\".")},
		"no key":                    {"GET", "/libraries", false, 401, withHeader(errHeader(), "WWW-Authenticate", `Bearer realm="doclib"`), errBody("unauthorised", "Send an API key.")},
		"expired key":               {"GET", "/documents/doc_a1_1", true, 401, withHeader(errHeader(), "WWW-Authenticate", `Bearer realm="doclib", error="invalid_token"`), errBody("api_key_expired", "The key expired.")},
		"forbidden":                 {"GET", "/documents/doc_a1_1/source-recordings", true, 403, okHeader(), errBody("forbidden", "No recording details.")},
		"document slug":             {"GET", "/documents/reset-password", true, 404, okHeader(), errBody("not_found", "No document reset-password.")},
		"rate limited":              {"GET", "/libraries", true, 429, withHeader(okHeader(), "Retry-After", "12", "X-RateLimit-Remaining", "0"), errBody("rate_limited", "Too many requests.")},
		"internal":                  {"GET", "/libraries", true, 500, errHeader(), errBody("internal", "Internal error.")},
		"unavailable":               {"GET", "/libraries/lib_a1", true, 503, okHeader(), errBody("unavailable", "Retry in a few seconds.")},
		"method not allowed":        {"POST", "/libraries", true, 405, withHeader(okHeader(), "Allow", "GET"), errBody("method_not_allowed", "POST is not allowed.")},
		"method not allowed, nokey": {"DELETE", "/documents/doc_a1_1", false, 401, withHeader(errHeader(), "WWW-Authenticate", `Bearer realm="doclib"`), errBody("unauthorised", "Send an API key.")},
		"unknown path":              {"GET", "/nope", true, 404, okHeader(), errBody("not_found", "No such path.")},
		"trailing slash":            {"GET", "/libraries/", true, 404, okHeader(), errBody("not_found", "No such path.")},
		"duplicate parameter":       {"GET", "/libraries?page=1&page=2", true, 400, okHeader(), errBody("bad_request", "The parameter page is given 2 times; give it once.")},
		"empty label":               {"GET", "/documents/doc_a1_1/traverse?label=", true, 200, answerHeader(), mustJSON(t, traversal(nil))},
		"unknown plural path":       {"GET", "/searches?q=reset", true, 404, okHeader(), errBody("not_found", "No such path.")},
	}
	v := Load(t)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{TB: t}
			v.Check(r, c.request(), c.status, c.header, c.body)
			if len(r.errs) > 0 {
				t.Errorf("a valid exchange failed:\n%s", r.text())
			}
		})
	}
}

func TestAbsoluteURLsPass(t *testing.T) {
	v := Load(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range answerHeader() {
			w.Header()[k] = vs
		}
		w.Write([]byte(`{"libraries":[]}`))
	}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/libraries", nil)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	r := &recorder{TB: t}
	v.CheckResponse(r, resp, body.Bytes())
	if len(r.errs) > 0 {
		t.Errorf("absolute URL failed:\n%s", r.text())
	}
	// And the same exchange with a body that breaks the schema is caught.
	r = &recorder{TB: t}
	v.CheckResponse(r, resp, []byte(`{"libraries":{}}`))
	if len(r.errs) == 0 {
		t.Errorf("a bad body behind an absolute URL passed")
	}
}

func TestInvalidExchangesFail(t *testing.T) {
	lib := mustJSON(t, api.LibraryList{Libraries: []api.Library{library(false)}})
	libs := func(f func(l map[string]any)) []byte {
		return edit(t, lib, func(m map[string]any) { f(m["libraries"].([]any)[0].(map[string]any)) })
	}
	doc := mustJSON(t, document())
	label := "often next"
	cases := []struct {
		name string
		x    exchange
		want string // a substring of the report
	}{
		{"extra top-level field", exchange{"GET", "/libraries", true, 200, answerHeader(), []byte(`{"libraries":[],"next":null}`)}, "next"},
		{"extra item field", exchange{"GET", "/libraries", true, 200, answerHeader(), libs(func(l map[string]any) { l["slug"] = "ops" })}, "slug"},
		{"edgeCount in the list", exchange{"GET", "/libraries", true, 200, answerHeader(), mustJSON(t, api.LibraryList{Libraries: []api.Library{library(true)}})}, "edgeCount"},
		{"edgeCount missing on one", exchange{"GET", "/libraries/lib_a1", true, 200, answerHeader(), mustJSON(t, library(false))}, "edgeCount"},
		{"missing required field", exchange{"GET", "/libraries", true, 200, answerHeader(), libs(func(l map[string]any) { delete(l, "createdAt") })}, "createdAt"},
		{"null array", exchange{"GET", "/libraries", true, 200, answerHeader(), libs(func(l map[string]any) { l["tags"] = nil })}, "tags"},
		{"timestamp without Z", exchange{"GET", "/libraries", true, 200, answerHeader(), libs(func(l map[string]any) { l["updatedAt"] = "2026-11-21T10:30:00+01:00" })}, "updatedAt"},
		{"timestamp not a date", exchange{"GET", "/libraries", true, 200, answerHeader(), libs(func(l map[string]any) { l["updatedAt"] = "2026-13-45T99:30:00Z" })}, "updatedAt"},
		{"bad library id", exchange{"GET", "/libraries", true, 200, answerHeader(), libs(func(l map[string]any) { l["id"] = "a1" })}, "id"},
		{"negative count", exchange{"GET", "/libraries", true, 200, answerHeader(), libs(func(l map[string]any) { l["documentCount"] = -1 })}, "documentCount"},
		{"wrong error code", exchange{"GET", "/documents/doc_x", true, 404, okHeader(), errBody("missing", "No document doc_x.")}, "code"},
		{"error code of another status", exchange{"GET", "/documents/doc_x", true, 404, okHeader(), errBody("bad_request", "No document doc_x.")}, "code"},
		{"error with extra field", exchange{"GET", "/documents/doc_x", true, 404, okHeader(), []byte(`{"error":{"code":"not_found","message":"No.","requestId":"x"}}`)}, "requestId"},
		{"error without message", exchange{"GET", "/documents/doc_x", true, 404, okHeader(), []byte(`{"error":{"code":"not_found"}}`)}, "message"},
		{"error body not an error", exchange{"GET", "/libraries", true, 500, errHeader(), []byte(`{"message":"boom"}`)}, "error"},
		{"undocumented status", exchange{"GET", "/libraries", true, 402, okHeader(), errBody("insufficient_ai_credit", "No credit.")}, "402"},
		{"403 outside source recordings", exchange{"GET", "/documents/doc_a1_1", true, 403, okHeader(), errBody("forbidden", "No.")}, "403"},
		{"no X-Request-Id", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "X-Request-Id", ""), []byte(`{"libraries":[]}`)}, "X-Request-Id"},
		{"no X-Request-Id on error", exchange{"GET", "/libraries", false, 401, withHeader(errHeader(), "X-Request-Id", ""), errBody("unauthorised", "No key.")}, "X-Request-Id"},
		{"no rate-limit header", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "X-RateLimit-Remaining", ""), []byte(`{"libraries":[]}`)}, "X-RateLimit-Remaining"},
		{"rate-limit header not a number", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "X-RateLimit-Reset", "soon"), []byte(`{"libraries":[]}`)}, "reset"},
		{"no ETag", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "ETag", ""), []byte(`{"libraries":[]}`)}, "ETag"},
		{"ETag not of the API's form", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "ETag", `W/"0123456789abcdef"`), []byte(`{"libraries":[]}`)}, "ETag"},
		{"public cache", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "Cache-Control", "public, max-age=60"), []byte(`{"libraries":[]}`)}, "Cache-Control"},
		{"304 without ETag", exchange{"GET", "/libraries", true, 304, withHeader(notModifiedHeader(), "ETag", ""), nil}, "ETag"},
		{"304 without rate-limit headers", exchange{"GET", "/libraries", true, 304, withHeader(notModifiedHeader(), "X-RateLimit-Limit", ""), nil}, "X-RateLimit-Limit"},
		{"gzip that is not", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "Content-Encoding", "gzip"), []byte(`{"libraries":[]}`)}, "decode"},
		{"coding the API does not send", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "Content-Encoding", "br"), []byte(`{"libraries":[]}`)}, "br"},
		{"429 without Retry-After", exchange{"GET", "/libraries", true, 429, okHeader(), errBody("rate_limited", "Slow down.")}, "Retry-After"},
		{"429 without rate-limit headers", exchange{"GET", "/libraries", true, 429, withHeader(errHeader(), "Retry-After", "3"), errBody("rate_limited", "Slow down.")}, "X-RateLimit-Limit"},
		{"wrong content type", exchange{"GET", "/libraries", true, 200, withHeader(answerHeader(), "Content-Type", "text/plain"), []byte(`{"libraries":[]}`)}, "text/plain"},
		{"empty body", exchange{"GET", "/libraries", true, 200, answerHeader(), nil}, "body"},
		{"empty error body", exchange{"GET", "/libraries/lib_x", true, 404, okHeader(), nil}, "body is empty"},
		{"no content type", exchange{"GET", "/libraries", true, 200, withHeader(okHeader(), "Content-Type", ""), []byte(`{"libraries":[]}`)}, "content type"},
		{"not JSON", exchange{"GET", "/libraries", true, 200, answerHeader(), []byte(`libraries`)}, "decoded"},
		{"request without a key answered 200", exchange{"GET", "/libraries", false, 200, answerHeader(), []byte(`{"libraries":[]}`)}, "Authorization"},
		{"depth out of range answered 200", exchange{"GET", "/documents/doc_a1_1/traverse?depth=4", true, 200, answerHeader(), mustJSON(t, traversal(nil))}, "depth"},
		{"direction out of enum answered 200", exchange{"GET", "/documents/doc_a1_1/traverse?direction=up", true, 200, answerHeader(), mustJSON(t, traversal(nil))}, "direction"},
		{"page 0 answered 200", exchange{"GET", "/libraries/lib_a1/documents?page=0", true, 200, answerHeader(), mustJSON(t, documentPage())}, "page"},
		{"slug as document id answered 200", exchange{"GET", "/documents/reset-password", true, 200, answerHeader(), doc}, "id"},
		{"traverse label absent", exchange{"GET", "/documents/doc_a1_1/traverse", true, 200, answerHeader(), edit(t, mustJSON(t, traversal(nil)), func(m map[string]any) { delete(m, "label") })}, "label"},
		{"traverse label a number", exchange{"GET", "/documents/doc_a1_1/traverse", true, 200, answerHeader(), edit(t, mustJSON(t, traversal(&label)), func(m map[string]any) { m["label"] = 3 })}, "label"},
		{"traverse schemas keyed by slug", exchange{"GET", "/documents/doc_a1_1/traverse", true, 200, answerHeader(), edit(t, mustJSON(t, traversal(nil)), func(m map[string]any) {
			m["schemas"] = map[string]any{"ops": map[string]any{"version": 1, "sections": []any{}}}
		})}, "schemas"},
		{"content value a number", exchange{"GET", "/documents/doc_a1_1", true, 200, answerHeader(), edit(t, doc, func(m map[string]any) { m["content"].(map[string]any)["summary"] = 3 })}, "summary"},
		{"content array of objects", exchange{"GET", "/documents/doc_a1_1", true, 200, answerHeader(), edit(t, doc, func(m map[string]any) { m["content"].(map[string]any)["steps"] = []any{map[string]any{"text": "x"}} })}, "steps"},
		{"schema version 0", exchange{"GET", "/documents/doc_a1_1", true, 200, answerHeader(), edit(t, doc, func(m map[string]any) { m["schema"].(map[string]any)["version"] = 0 })}, "version"},
		{"section type unknown", exchange{"GET", "/documents/doc_a1_1", true, 200, answerHeader(), edit(t, doc, func(m map[string]any) {
			m["schema"].(map[string]any)["sections"].([]any)[0].(map[string]any)["type"] = "table"
		})}, "type"},
		{"edges missing", exchange{"GET", "/documents/doc_a1_1", true, 200, answerHeader(), edit(t, doc, func(m map[string]any) { delete(m, "edges") })}, "edges"},
		{"edge type unknown", exchange{"GET", "/documents/doc_a1_1", true, 200, answerHeader(), edit(t, doc, func(m map[string]any) {
			m["edges"].(map[string]any)["outgoing"].([]any)[0].(map[string]any)["edgeType"] = "guess"
		})}, "edgeType"},
		{"incoming edge with target fields", exchange{"GET", "/documents/doc_a1_1", true, 200, answerHeader(), edit(t, doc, func(m map[string]any) {
			m["edges"].(map[string]any)["incoming"] = m["edges"].(map[string]any)["outgoing"]
		})}, "incoming"},
		{"pageSize above the cap", exchange{"GET", "/libraries/lib_a1/documents", true, 200, answerHeader(), edit(t, mustJSON(t, documentPage()), func(m map[string]any) { m["pageSize"] = 101 })}, "pageSize"},
		{"recordings pageSize above 50", exchange{"GET", "/documents/doc_a1_1/source-recordings", true, 200, answerHeader(), edit(t, mustJSON(t, recordings()), func(m map[string]any) { m["pageSize"] = 51 })}, "pageSize"},
		{"recording status unknown", exchange{"GET", "/documents/doc_a1_1/source-recordings", true, 200, answerHeader(), edit(t, mustJSON(t, recordings()), func(m map[string]any) {
			m["sourceRecordings"].([]any)[0].(map[string]any)["status"] = "done"
		})}, "status"},
		{"guidance null", exchange{"GET", "/documents/doc_a1_1/source-recordings", true, 200, answerHeader(), edit(t, mustJSON(t, recordings()), func(m map[string]any) { m["guidance"] = nil })}, "guidance"},
		{"graph without truncated", exchange{"GET", "/libraries/lib_a1/graph", true, 200, answerHeader(), edit(t, mustJSON(t, graph()), func(m map[string]any) { delete(m, "truncated") })}, "truncated"},
		{"200 on an unknown path", exchange{"GET", "/searches?q=reset", true, 200, answerHeader(), []byte(`{"documents":[]}`)}, "not in the document"},
		{"search without guidance at low confidence", exchange{"GET", "/search/documents?q=reset", true, 200, answerHeader(),
			[]byte(`{"documents":[],"schemas":{},"total":0,"matchedTotal":0,"page":1,"pageSize":20,"facets":{"categories":[],"tags":[],"applications":[],"libraries":[]},"lowConfidence":true}`)}, "guidance"},
		{"search with guidance when confident", exchange{"GET", "/search/documents?q=reset", true, 200, answerHeader(),
			[]byte(`{"documents":[],"schemas":{},"total":0,"matchedTotal":0,"page":1,"pageSize":20,"facets":{"categories":[],"tags":[],"applications":[],"libraries":[]},"lowConfidence":false,"guidance":["x"]}`)}, "not"},
		{"405 with another code", exchange{"POST", "/libraries", true, 405, withHeader(okHeader(), "Allow", "GET"), errBody("not_found", "No.")}, "code"},
		{"405 without Allow", exchange{"PUT", "/libraries/lib_a1", true, 405, okHeader(), errBody("method_not_allowed", "No.")}, "Allow"},
		{"unknown path 404 in another shape", exchange{"GET", "/nope", true, 404, withHeader(okHeader(), "Content-Type", "text/plain"), []byte("404 page not found\n")}, "text/plain"},
		{"HEAD without X-Request-Id", exchange{"HEAD", "/libraries", true, 200, withHeader(okHeader(), "X-Request-Id", ""), nil}, "X-Request-Id"},
	}
	v := Load(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{TB: t}
			v.Check(r, c.x.request(), c.x.status, c.x.header, c.x.body)
			if len(r.errs) == 0 {
				t.Fatalf("an invalid exchange passed")
			}
			if !strings.Contains(strings.ToLower(r.findings()), strings.ToLower(c.want)) {
				t.Errorf("the report does not mention %q:\n%s", c.want, r.text())
			}
		})
	}
}
