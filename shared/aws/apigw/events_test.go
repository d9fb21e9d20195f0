package apigw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/doclib/doclib/internal/suites/demoapi"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/clients/mcpserver"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

var update = flag.Bool("update", false, "rewrite the sample events in events/")

const eventsDir = "../../../events"

// now is the clock of every test here: after the demo's expired key expired.
var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// world is the demo data served two ways: by the local server (bearer keys
// checked by the handler) and as the functions serve it behind API Gateway
// (the authorizer checks the key, the handler trusts its context).
type world struct {
	data       *doclib.DataSet
	svc        *service.Service
	authorizer *apigw.Authorizer
}

func newWorld(t testing.TB) *world {
	t.Helper()
	d, svc, err := demoapi.Service(func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &world{data: d, svc: svc, authorizer: &apigw.Authorizer{Service: svc, Logger: quiet, Customer: "acme"}}
}

// handler is the API as one deployment serves it: local (bearer keys) or
// behind API Gateway (the authorizer's context). Each call gets a fresh
// limiter, so that both see the same quota.
func (w *world) handler(behindGateway bool) http.Handler {
	return w.server(behindGateway, false)
}

// server is handler, with POST /mcp served when mcp is set, as the mcp
// function (apigw.NewMCPFunction) and doclib-server serve it.
func (w *world) server(behindGateway, mcp bool) http.Handler {
	cfg := httpapi.Config{Service: w.svc, Limiter: memory.NewLimiter(), Now: func() time.Time { return now },
		RequestID: func(*http.Request) string { return "req-1" }}
	if behindGateway {
		cfg.Authenticate = apigw.Principal(func() time.Time { return now }, "")
		cfg.RequestID = apigw.RequestID
	}
	if mcp {
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.MCP = func(api http.Handler) http.Handler { return mcpserver.Handler(api, "", quiet) }
	}
	return httpapi.NewServer(cfg)
}

// sample is one request the events stand for.
type sample struct {
	name, method, path, resource, key string
	query                             url.Values
	body                              string // a JSON request body: /mcp's JSON-RPC message
}

// mcpCall is the JSON-RPC message of the mcp sample: a tools/call of
// search_documents, as an MCP client posts it once the session is set up
// (the server is stateless: any message may come first).
const mcpCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"reset password","pageSize":3}}}`

// samples lists the requests of events/: every route, and the errors that
// only the handler can give behind the gateway.
func samples(d *doclib.DataSet) []sample {
	doc := ""
	for _, x := range d.Documents {
		if x.LibraryID == "lib_it" && x.SharedRecordingCount > 0 && (doc == "" || x.ID < doc) {
			doc = x.ID
		}
	}
	full, one, noRec, noCredit := "dlk_demo_full_scope", "dlk_demo_one_library", "dlk_demo_no_recordings", "dlk_demo_no_ai_credit"
	return []sample{
		{"libraries", "GET", "/libraries", "/libraries", full, nil, ""},
		{"library", "GET", "/libraries/it-operations", "/libraries/{id}", full, nil, ""},
		{"library-tags", "GET", "/libraries/lib_it/tags", "/libraries/{id}/tags", full, nil, ""},
		{"library-categories", "GET", "/libraries/lib_it/categories", "/libraries/{id}/categories", full, nil, ""},
		{"library-applications", "GET", "/libraries/lib_it/applications", "/libraries/{id}/applications", full, nil, ""},
		{"library-graph", "GET", "/libraries/lib_it/graph", "/libraries/{id}/graph", full, nil, ""},
		{"library-documents", "GET", "/libraries/lib_it/documents", "/libraries/{id}/documents", full, url.Values{"pageSize": {"5"}, "tag": {"security"}}, ""},
		{"document", "GET", "/documents/" + doc, "/documents/{id}", full, nil, ""},
		{"document-traverse", "GET", "/documents/" + doc + "/traverse", "/documents/{id}/traverse", full, url.Values{"depth": {"2"}}, ""},
		{"document-source-recordings", "GET", "/documents/" + doc + "/source-recordings", "/documents/{id}/source-recordings", full, nil, ""},
		{"search", "GET", "/search/documents", "/search/documents", full, url.Values{"q": {"reset password"}, "pageSize": {"3"}}, ""},
		{"head-libraries", "HEAD", "/libraries", "/libraries", full, nil, ""},
		{"error-method-not-allowed", "POST", "/libraries", "/libraries", full, nil, ""},
		{"error-bad-request", "GET", "/libraries/lib_it/documents", "/libraries/{id}/documents", full, url.Values{"pageSize": {"lots"}}, ""},
		{"error-repeated-parameter", "GET", "/libraries/lib_it/documents", "/libraries/{id}/documents", full, url.Values{"page": {"1", "2"}}, ""},
		{"error-out-of-scope", "GET", "/libraries/lib_it", "/libraries/{id}", one, nil, ""},
		{"error-recordings-forbidden", "GET", "/documents/" + doc + "/source-recordings", "/documents/{id}/source-recordings", noRec, nil, ""},
		{"error-no-ai-credit", "GET", "/search/documents", "/search/documents", noCredit, url.Values{"q": {"stock"}}, ""},
		// The MCP endpoint, served by the mcp function: the one request with a body.
		{"mcp", "POST", httpapi.MCPPath, httpapi.MCPPath, full, nil, mcpCall},
	}
}

const (
	region, account, apiID, stage = "eu-west-1", "123456789012", "a1b2c3d4e5", "api"
	sourceIP                      = "203.0.113.7"
)

func methodArn(method, path string) string {
	return fmt.Sprintf("arn:aws:execute-api:%s:%s:%s/%s/%s%s", region, account, apiID, stage, method, path)
}

func headersOf(key string) map[string][]string {
	h := map[string][]string{
		"Accept":            {"application/json"},
		"Host":              {apiID + ".execute-api." + region + ".amazonaws.com"},
		"User-Agent":        {"curl/8.5.0"},
		"X-Amzn-Trace-Id":   {"Root=1-6740a0b0-3f1c2d4e5a6b7c8d9e0f1a2b"},
		"X-Forwarded-For":   {sourceIP},
		"X-Forwarded-Port":  {"443"},
		"X-Forwarded-Proto": {"https"},
	}
	if key != "" {
		h["Authorization"] = []string{"Bearer " + key}
	}
	return h
}

// headersFor is what a client sends for s: headersOf its key, and for a body
// its type and, to /mcp, what an MCP client sends with every message (the
// Accept both answers' types, the protocol's version). API Gateway passes
// them on as they came.
func headersFor(s sample) map[string][]string {
	h := headersOf(s.key)
	if s.body != "" {
		h["Content-Type"] = []string{"application/json"}
	}
	if s.path == httpapi.MCPPath {
		h["Accept"] = []string{"application/json, text/event-stream"}
		h["Mcp-Protocol-Version"] = []string{"2025-06-18"}
	}
	return h
}

func single(m map[string][]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, vs := range m {
		out[k] = vs[len(vs)-1] // API Gateway's single-value maps keep the last value
	}
	return out
}

func pathParameters(resource, path string) map[string]string {
	rs, ps := strings.Split(resource, "/"), strings.Split(path, "/")
	out := map[string]string{}
	for i, r := range rs {
		if strings.HasPrefix(r, "{") {
			out[strings.Trim(r, "{}")] = ps[i]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// authorizerEvent is what API Gateway sends the REQUEST authorizer for s.
func authorizerEvent(s sample, headers map[string][]string) events.APIGatewayCustomAuthorizerRequestTypeRequest {
	return events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type: "REQUEST", MethodArn: methodArn(s.method, s.path), Resource: s.resource, Path: s.path, HTTPMethod: s.method,
		Headers: single(headers), MultiValueHeaders: headers,
		QueryStringParameters: single(s.query), MultiValueQueryStringParameters: s.query,
		PathParameters: pathParameters(s.resource, s.path),
		RequestContext: events.APIGatewayCustomAuthorizerRequestTypeRequestContext{
			Path: "/" + stage + s.path, AccountID: account, ResourceID: "r3s0ur", Stage: stage,
			RequestID: "c0ffee00-" + s.name, ResourcePath: s.resource, HTTPMethod: s.method, APIID: apiID,
			Identity: events.APIGatewayCustomAuthorizerRequestTypeRequestIdentity{SourceIP: sourceIP},
		},
	}
}

// proxyEvent is what API Gateway sends the function for s once the
// authorizer allowed it: its context values arrive as strings. A body
// arrives as text, isBase64Encoded false: the API declares no binary media
// types, so API Gateway passes every body on as a UTF-8 string.
func proxyEvent(s sample, authz map[string]any, principal string) events.APIGatewayProxyRequest {
	headers := headersFor(s)
	ctx := map[string]any{"principalId": principal, "integrationLatency": 23}
	for k, v := range authz {
		ctx[k] = fmt.Sprint(v)
	}
	return events.APIGatewayProxyRequest{
		Resource: s.resource, Path: s.path, HTTPMethod: s.method,
		Headers: single(headers), MultiValueHeaders: headers,
		QueryStringParameters: single(s.query), MultiValueQueryStringParameters: s.query,
		PathParameters: pathParameters(s.resource, s.path), Body: s.body,
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID: account, ResourceID: "r3s0ur", Stage: stage, RequestID: "c0ffee00-" + s.name,
			ExtendedRequestID: "Bx9Q2F8dDoEF1A=", DomainName: apiID + ".execute-api." + region + ".amazonaws.com",
			DomainPrefix: apiID, Protocol: "HTTP/1.1", Path: "/" + stage + s.path, ResourcePath: s.resource,
			HTTPMethod: s.method, APIID: apiID, RequestTime: "22/Nov/2026:10:00:00 +0000", RequestTimeEpoch: now.UnixMilli(),
			Identity:   events.APIGatewayRequestIdentity{SourceIP: sourceIP, UserAgent: "curl/8.5.0"},
			Authorizer: ctx,
		},
	}
}

// denials are the authorizer events that must be refused, with the code the
// 401 carries.
func denials() []struct {
	name, code string
	headers    map[string][]string
} {
	two := headersOf("dlk_demo_full_scope")
	two["Authorization"] = append(two["Authorization"], "Bearer dlk_demo_one_library")
	basic := headersOf("")
	basic["Authorization"] = []string{"Basic ZGxrOmRlbW8="}
	return []struct {
		name, code string
		headers    map[string][]string
	}{
		{"deny-unknown-key", doclib.EUnauthorised, headersOf("dlk_not_a_key_0000000000")},
		{"deny-malformed-header", doclib.EUnauthorised, basic},
		{"deny-two-headers", doclib.EUnauthorised, two},
		{"deny-expired-key", doclib.EKeyExpired, headersOf("dlk_demo_expired_key")},
		{"deny-removed-device", doclib.EKeyDeviceRemoved, headersOf("dlk_demo_removed_device")},
		{"deny-archived-device", doclib.EKeyDeviceRemoved, headersOf("dlk_demo_archived_device")},
	}
}

func writeJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(eventsDir, name), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, name))
	if err != nil {
		t.Fatalf("%v (run go test ./shared/aws/apigw -update to write the sample events)", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s does not decode as the event the code reads: %v", name, err)
	}
}

// TestSampleEvents writes (with -update) and checks the sample events: the
// authorizer allows each API event's key with exactly the context the event
// carries, refuses each denial with its code, and each function answers each
// API event as the local server answers the same request.
func TestSampleEvents(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for _, s := range samples(w.data) {
		t.Run(s.name, func(t *testing.T) {
			authEv := authorizerEvent(s, headersFor(s))
			if s.name == "libraries" { // one allowed authorizer event is kept as a sample
				if *update {
					writeJSON(t, "authorizer-allow.json", authEv)
				}
				authEv = events.APIGatewayCustomAuthorizerRequestTypeRequest{}
				readJSON(t, "authorizer-allow.json", &authEv)
			}
			resp, err := w.authorizer.Handle(ctx, authEv)
			if err != nil {
				t.Fatal(err)
			}
			if resp.PolicyDocument.Statement[0].Effect != "Allow" {
				t.Fatalf("the authorizer refused %s: %v", s.key, resp.Context)
			}
			if *update {
				writeJSON(t, "apigw-"+s.name+".json", proxyEvent(s, resp.Context, resp.PrincipalID))
			}
			var ev events.APIGatewayProxyRequest
			readJSON(t, "apigw-"+s.name+".json", &ev)
			for k, v := range resp.Context {
				if got := ev.RequestContext.Authorizer[k]; got != fmt.Sprint(v) {
					t.Errorf("the event's authorizer context %s=%v, the authorizer now gives %v", k, got, v)
				}
			}
			mcp := s.path == httpapi.MCPPath // served by the mcp function
			got, err := apigw.Handler(w.server(true, mcp))(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			// The same request to the local server.
			u := s.path
			if len(s.query) > 0 {
				u += "?" + s.query.Encode()
			}
			req := httptest.NewRequest(s.method, u, strings.NewReader(s.body))
			req.RemoteAddr = sourceIP + ":443"
			for k, vs := range headersFor(s) {
				req.Header[http.CanonicalHeaderKey(k)] = vs
			}
			rec := httptest.NewRecorder()
			w.server(false, mcp).ServeHTTP(rec, req)
			if got.StatusCode != rec.Code {
				t.Errorf("status %d behind the gateway, %d locally", got.StatusCode, rec.Code)
			}
			if s.method != "HEAD" && got.Body != rec.Body.String() { // a recorder keeps HEAD bodies net/http drops
				t.Errorf("bodies differ:\n gateway %.300s\n local   %.300s", got.Body, rec.Body.String())
			}
			for _, h := range []string{"Content-Type", "X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "Allow", "Retry-After"} {
				if g, l := got.MultiValueHeaders[h], rec.Header().Values(h); !slices.Equal(g, l) {
					t.Errorf("header %s: %q behind the gateway, %q locally", h, g, l)
				}
			}
			if id := got.MultiValueHeaders["X-Request-Id"]; len(id) != 1 || id[0] != ev.RequestContext.RequestID {
				t.Errorf("X-Request-Id %q, want API Gateway's request ID %q", id, ev.RequestContext.RequestID)
			}
			if s.method == "HEAD" && got.Body != "" {
				t.Errorf("HEAD answered with a body")
			}
			if mcp {
				// The tool ran, behind the gateway as locally: a JSON-RPC
				// answer to the message's ID with the search's hits.
				var res struct {
					ID     int `json:"id"`
					Result struct {
						IsError           bool `json:"isError"`
						StructuredContent struct {
							Hits []struct{ ID string } `json:"hits"`
						} `json:"structuredContent"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(got.Body), &res); err != nil || got.StatusCode != 200 || res.ID != 7 ||
					res.Result.IsError || len(res.Result.StructuredContent.Hits) == 0 {
					t.Errorf("MCP answer %d %.400s (%v): want the tools/call's result with hits", got.StatusCode, got.Body, err)
				}
			}
		})
	}
	for _, d := range denials() {
		t.Run(d.name, func(t *testing.T) {
			s := sample{name: d.name, method: "GET", path: "/libraries", resource: "/libraries"}
			if *update {
				writeJSON(t, "authorizer-"+d.name+".json", authorizerEvent(s, d.headers))
			}
			var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
			readJSON(t, "authorizer-"+d.name+".json", &ev)
			resp, err := w.authorizer.Handle(ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			st := resp.PolicyDocument.Statement
			if len(st) != 1 || st[0].Effect != "Deny" || resp.Context[apigw.CtxCode] != d.code || resp.UsageIdentifierKey != "" {
				t.Fatalf("answer %+v, want a Deny with code %s and no usage key", resp, d.code)
			}
			// The gateway response template puts the message between quotes.
			body := `{"error":{"code":"` + fmt.Sprint(resp.Context[apigw.CtxCode]) + `","message":"` + fmt.Sprint(resp.Context[apigw.CtxMessage]) + `"}}`
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != d.code || e.Error.Message == "" {
				t.Errorf("the ACCESS_DENIED template would give %s (%v)", body, err)
			}
			// The local server answers the same headers with the same code.
			req := httptest.NewRequest("GET", "/libraries", nil)
			for k, vs := range d.headers {
				req.Header[http.CanonicalHeaderKey(k)] = vs
			}
			rec := httptest.NewRecorder()
			w.handler(false).ServeHTTP(rec, req)
			if rec.Code != 401 || !strings.Contains(rec.Body.String(), `"`+d.code+`"`) {
				t.Errorf("locally: %d %s", rec.Code, rec.Body.String())
			}
			if e.Error.Message != jsonMessage(rec.Body.Bytes()) {
				t.Errorf("message %q behind the gateway, %q locally", e.Error.Message, jsonMessage(rec.Body.Bytes()))
			}
		})
	}
	if *update {
		return
	}
	// Every sample file is one of the above: none is stale.
	files, _ := filepath.Glob(filepath.Join(eventsDir, "apigw-*.json"))
	more, _ := filepath.Glob(filepath.Join(eventsDir, "authorizer-*.json"))
	want := map[string]bool{"authorizer-allow.json": true}
	for _, s := range samples(w.data) {
		want["apigw-"+s.name+".json"] = true
	}
	for _, d := range denials() {
		want["authorizer-"+d.name+".json"] = true
	}
	var stale []string
	for _, f := range append(files, more...) {
		if !want[filepath.Base(f)] {
			stale = append(stale, filepath.Base(f))
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 || len(files)+len(more) != len(want) {
		t.Errorf("events/ has stale files %v, or misses some of %v", stale, slices.Sorted(maps.Keys(want)))
	}
}

func jsonMessage(body []byte) string {
	var e struct{ Error struct{ Message string } }
	_ = json.Unmarshal(body, &e)
	return e.Error.Message
}

// TestEventsThatAreNoRequest feeds the functions sample events that
// aws-lambda-go-api-proxy cannot turn into an http.Request: a path with an
// invalid escape (the REST API passes paths on percent-encoded) and a body
// that is not base64. Each gets the API's answer, in its shape and with API
// Gateway's request ID, never a Lambda error (API Gateway's bare 502).
func TestEventsThatAreNoRequest(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	h := apigw.Handler(w.handler(true))
	badPath := func(file, path string) events.APIGatewayProxyRequest {
		var ev events.APIGatewayProxyRequest
		readJSON(t, file, &ev)
		ev.Path, ev.RequestContext.Path = path, "/"+stage+path
		ev.PathParameters = pathParameters(ev.Resource, path)
		return ev
	}
	// local is the local server's answer to a path, escaped as a client sends it.
	local := func(key, path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = sourceIP + ":443"
		for k, vs := range headersOf(key) {
			req.Header[http.CanonicalHeaderKey(k)] = vs
		}
		rec := httptest.NewRecorder()
		w.handler(false).ServeHTTP(rec, req)
		return rec
	}
	for _, c := range []struct {
		file, path, localPath string
	}{
		{"apigw-document.json", "/documents/%zz", "/documents/%25zz"},
		{"apigw-document-source-recordings.json", "/documents/doc_it_001%/source-recordings", "/documents/doc_it_001%25/source-recordings"},
		{"apigw-library-tags.json", "/libraries/%E2%82/tags%", "/libraries/%25E2%2582/tags%25"},
		{"apigw-library.json", "/libraries/%zz", "/libraries/%25zz"},
	} {
		t.Run(c.path, func(t *testing.T) {
			ev := badPath(c.file, c.path)
			got, err := h(ctx, ev)
			if err != nil {
				t.Fatalf("a Lambda error, which API Gateway answers with a bare 502: %v", err)
			}
			if got.StatusCode != 404 || jsonCode(got.Body) != doclib.ENotFound || jsonMessage([]byte(got.Body)) == "" {
				t.Errorf("answer %d %s, want 404 not_found in the error shape", got.StatusCode, got.Body)
			}
			if id := got.MultiValueHeaders["X-Request-Id"]; len(id) != 1 || id[0] != ev.RequestContext.RequestID {
				t.Errorf("X-Request-Id %q, want API Gateway's request ID %q", id, ev.RequestContext.RequestID)
			}
			if ct := got.MultiValueHeaders["Content-Type"]; len(ct) != 1 || ct[0] != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if len(got.MultiValueHeaders["X-Ratelimit-Limit"]) != 1 {
				t.Errorf("no rate-limit headers: the request passed authentication and counts against the key")
			}
			// The local server answers the same path, escaped, alike.
			rec := local("dlk_demo_full_scope", c.localPath)
			if rec.Code != got.StatusCode || rec.Body.String() != got.Body {
				t.Errorf("behind the gateway %d %s, locally %d %s", got.StatusCode, got.Body, rec.Code, rec.Body.String())
			}
		})
	}
	t.Run("HEAD", func(t *testing.T) {
		var ev events.APIGatewayProxyRequest
		readJSON(t, "apigw-head-libraries.json", &ev)
		ev.Path = "/libraries/%zz"
		got, err := h(ctx, ev)
		if err != nil || got.StatusCode != 404 || got.Body != "" {
			t.Errorf("HEAD of a bad path: %d %q, %v; want 404 without a body", got.StatusCode, got.Body, err)
		}
	})
	t.Run("body not base64", func(t *testing.T) {
		var ev events.APIGatewayProxyRequest
		readJSON(t, "apigw-libraries.json", &ev)
		want, err := h(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		ev.Body, ev.IsBase64Encoded = "not base64 at all!", true
		got, err := h(ctx, ev)
		if err != nil || got.StatusCode != want.StatusCode || got.Body != want.Body {
			t.Errorf("a GET whose body is not base64: %d %.200s, %v; want the answer without it, %d", got.StatusCode, got.Body, err, want.StatusCode)
		}
		ev.HTTPMethod = "POST"
		if got, err := h(ctx, ev); err != nil || got.StatusCode != 405 || jsonCode(got.Body) != doclib.EMethodNotAllowed {
			t.Errorf("a POST whose body is not base64: %d %s, %v; want 405", got.StatusCode, got.Body, err)
		}
	})
}

func jsonCode(body string) string {
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Code
}
