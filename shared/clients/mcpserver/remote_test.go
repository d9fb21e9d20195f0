package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/internal/suites/demoapi"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// accountHelp is the deployment's sentence on the 401, 402 and 403 answers
// (settings.EnvAccountHelp); an agent must get it in its tool errors too.
const accountHelp = "In the Acme app, {action} (Settings > Workspace)."

// remote is the API with /mcp (Handler), as doclib-server and the MCP
// function serve it, on the demo data: its ledger, to read credit, and the
// server's log.
type remote struct {
	url    string
	ledger *memory.Ledger
	log    *logBuffer
	read   atomic.Int64 // bytes of request bodies the server read
}

// newRemote serves the API with /mcp; keyLimit > 0 sets the per-key limit
// (and turns limits on).
func newRemote(t *testing.T, keyLimit int) *remote {
	t.Helper()
	return newRemoteLimits(t, keyLimit, 0)
}

// newRemoteLimits is newRemote with a per-IP limit too (0: the default).
func newRemoteLimits(t *testing.T, keyLimit, ipLimit int) *remote {
	t.Helper()
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	searcher, err := demoapi.Searcher(d)
	if err != nil {
		t.Fatal(err)
	}
	help, err := doclib.ParseAccountHelp(accountHelp)
	if err != nil {
		t.Fatal(err)
	}
	rm := &remote{ledger: memory.NewLedger(d.Workspaces), log: &logBuffer{}}
	svc := service.New(memory.New(d), nil, service.WithSearch(searcher, rm.ledger), service.WithAccountHelp(help))
	cfg := httpapi.Config{Service: svc, Logger: rm.log.logger(),
		MCP: func(api http.Handler) http.Handler { return Handler(api, "test", rm.log.logger()) }}
	if keyLimit > 0 {
		cfg.Limiter, cfg.KeyLimit, cfg.IPLimit = memory.NewLimiter(), keyLimit, ipLimit
	}
	h := httpapi.NewServer(cfg)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A shallow copy, not r itself: the server still sees its own
		// body, and so answers an unread Expect: 100-continue body as
		// net/http does (the connection closed after the answer) rather
		// than waiting to discard a body the client never sends.
		counted := *r
		counted.Body = &countingBody{ReadCloser: r.Body, n: &rm.read}
		h.ServeHTTP(w, &counted)
	}))
	t.Cleanup(srv.Close)
	rm.url = srv.URL
	return rm
}

// bearer adds a key to every request of an MCP client.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connectRemote is a session of the SDK's own streamable HTTP client with
// the server's /mcp, sending key; it records results as connect's sessions
// do, and checks at the end that the key is in no result and no log line.
func connectRemote(t *testing.T, rm *remote, key string) *session {
	t.Helper()
	ctx := context.Background()
	tr := &mcp.StreamableClientTransport{Endpoint: rm.url + httpapi.MCPPath, HTTPClient: &http.Client{Transport: bearer{key}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{ClientSession: cs, t: t, c: newClient(t, rm.url, key), log: rm.log}
	t.Cleanup(func() {
		cs.Close()
		for _, text := range append(s.texts, rm.log.String()) {
			if strings.Contains(text, key) {
				t.Errorf("the API key appears in a result or the log:\n%s", text)
			}
		}
	})
	return s
}

// TestRemoteToolsAreThoseOfDoclibMCP: /mcp lists exactly the tools `doclib
// mcp` lists (names, descriptions, schemas, annotations), and says who it
// is the same way.
func TestRemoteToolsAreThoseOfDoclibMCP(t *testing.T) {
	rm := newRemote(t, 0)
	local := connect(t, newAPI(t), keyFull)
	over := connectRemote(t, rm, keyFull)
	ctx := context.Background()
	want, err := local.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := over.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != 7 {
		t.Errorf("%d tools over /mcp, want the 7 of doclib mcp", len(got.Tools))
	}
	jsonEqual(t, "the tools of /mcp", got.Tools, want.Tools)
	if ir := over.InitializeResult(); ir == nil || ir.ServerInfo.Name != Name || ir.Instructions != instructions {
		t.Errorf("initialize: %+v", ir)
	}
}

// TestRemoteAnswersAsTheAPI: each kind of tool answers over /mcp what the
// API answers the same key over REST.
func TestRemoteAnswersAsTheAPI(t *testing.T) {
	rm := newRemote(t, 0)
	s := connectRemote(t, rm, keyFull)
	ctx := context.Background()
	libs, _ := ok[api.LibraryList](s, "list_libraries", nil)
	rest, err := s.c.Libraries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(libs.Libraries) != len(rest.Libraries) || len(rest.Libraries) < 2 {
		t.Errorf("%d libraries over /mcp, %d over REST", len(libs.Libraries), len(rest.Libraries))
	}
	doc, _ := ok[api.Document](s, "get_document", map[string]any{"id": "doc_it_001"})
	want, err := s.c.Document(ctx, "doc_it_001")
	if err != nil {
		t.Fatal(err)
	}
	normaliseDocument(want)
	jsonEqual(t, "get_document over /mcp", doc, want)
	found, text := ok[searchOutput](s, "search_documents", map[string]any{"query": "reset a user's password", "pageSize": 5})
	if len(found.Hits) == 0 || found.Hits[0].ID != "doc_it_001" || !strings.Contains(text, "doc_it_001") {
		t.Errorf("search: %+v\n%s", found.Hits, text)
	}
}

// TestRemoteScope: a one-library key sees its library only, through every
// tool: another library's document is not_found, as over REST, and nothing
// of it appears in any answer.
func TestRemoteScope(t *testing.T) {
	rm := newRemote(t, 0)
	s := connectRemote(t, rm, keyOneLibrary)
	libs, _ := ok[api.LibraryList](s, "list_libraries", nil)
	if len(libs.Libraries) != 1 || libs.Libraries[0].ID != "lib_finance" {
		t.Fatalf("libraries %+v, want lib_finance alone", libs.Libraries)
	}
	found, _ := ok[searchOutput](s, "search_documents", map[string]any{"query": "reset a user's password", "pageSize": 100})
	for _, h := range found.Hits {
		if h.Library.ID != "lib_finance" {
			t.Errorf("a hit of another library: %s in %s", h.ID, h.Library.ID)
		}
	}
	ok[listDocumentsOutput](s, "list_documents", map[string]any{"library": "lib_finance", "pageSize": 100})
	for _, text := range s.texts {
		if strings.Contains(text, "lib_it") || strings.Contains(text, "doc_it_") || strings.Contains(text, "IT Operations") {
			t.Errorf("an answer names what the key cannot see:\n%.600s", text)
		}
	}
	// The refusals name what the agent asked for, and nothing else.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"get_document", map[string]any{"id": "doc_it_001"}},
		{"traverse_graph", map[string]any{"id": "doc_it_001"}},
		{"get_source_recordings", map[string]any{"id": "doc_it_001"}},
		{"get_library", map[string]any{"library": "lib_it"}},
		{"list_documents", map[string]any{"library": "it-operations"}},
		{"search_documents", map[string]any{"query": "password", "libraryId": "it-operations"}},
	} {
		if msg := s.toolErr(c.tool, c.args); !strings.HasPrefix(msg, "not_found: ") {
			t.Errorf("%s(%v) with a one-library key: %s, want not_found", c.tool, c.args, msg)
		}
	}
}

// TestRemoteSpendsCreditAsTheAPI: a search through /mcp spends one credit,
// as GET /search/documents does, even when the tool makes two API calls (a
// library given by slug); browsing spends none; a workspace without credit
// gets insufficient_ai_credit as a tool error with the deployment's account
// help, and its credit is unchanged.
func TestRemoteSpendsCreditAsTheAPI(t *testing.T) {
	rm := newRemote(t, 0)
	s := connectRemote(t, rm, keyFull)
	ws := "ws_acme"
	before := rm.ledger.Balance(ws)
	ok[searchOutput](s, "search_documents", map[string]any{"query": "reset a user's password"})
	ok[searchOutput](s, "search_documents", map[string]any{"query": "approve an invoice", "libraryId": "finance"})
	ok[api.LibraryList](s, "list_libraries", nil)
	ok[api.Document](s, "get_document", map[string]any{"id": "doc_it_001"})
	if spent := before - rm.ledger.Balance(ws); spent != 2 {
		t.Errorf("two searches and two reads over /mcp spent %d credits, want 2", spent)
	}
	before = rm.ledger.Balance(ws)
	if _, err := s.c.Search(context.Background(), client.SearchParams{Query: "reset a user's password"}); err != nil {
		t.Fatal(err)
	}
	if spent := before - rm.ledger.Balance(ws); spent != 1 {
		t.Errorf("a search over REST spent %d credits, want 1 as over /mcp", spent)
	}

	poor := connectRemote(t, rm, keyNoAICredit)
	ws = workspaceOf(t, keyNoAICredit)
	before = rm.ledger.Balance(ws)
	msg := poor.toolErr("search_documents", map[string]any{"query": "reset a user's password"})
	if !strings.HasPrefix(msg, "insufficient_ai_credit: ") || !strings.Contains(msg, "In the Acme app, ") ||
		!strings.Contains(msg, "list_documents") {
		t.Errorf("search without credit: %s\nwant insufficient_ai_credit, the account help and what to do instead", msg)
	}
	if after := rm.ledger.Balance(ws); after != before {
		t.Errorf("a refused search moved the credit from %d to %d", before, after)
	}
}

// TestRemoteCountsAPostOnce: each POST to /mcp counts once against the
// key's limit, however many API calls its tool makes; past the limit a POST
// is a 429 that says how long to wait, and reads and spends nothing.
func TestRemoteCountsAPostOnce(t *testing.T) {
	const limit = 6
	rm := newRemote(t, limit)
	remaining := func(h http.Header) int {
		n, err := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("X-RateLimit-Remaining %q", h.Get("X-RateLimit-Remaining"))
		}
		return n
	}
	call := func(name string, args map[string]any) (http.Header, rpcAnswer) {
		return postMCP(t, rm.url, keyFull, "tools/call", map[string]any{"name": name, "arguments": args})
	}
	h, _ := postMCP(t, rm.url, keyFull, "tools/list", nil)
	if remaining(h) != limit-1 {
		t.Fatalf("after one POST, %d remaining of %d", remaining(h), limit)
	}
	// get_library makes four API calls (the library, its tags, categories
	// and applications); search by slug, two.
	h, a := call("get_library", map[string]any{"library": "it-operations"})
	if a.Result.IsError || remaining(h) != limit-2 {
		t.Errorf("get_library: error %v (%s), %d remaining, want %d", a.Result.IsError, a.text(), remaining(h), limit-2)
	}
	h, a = call("search_documents", map[string]any{"query": "reset a user's password", "libraryId": "it-operations"})
	if a.Result.IsError || remaining(h) != limit-3 {
		t.Errorf("search: error %v, %d remaining, want %d", a.Result.IsError, remaining(h), limit-3)
	}
	for range limit - 3 {
		call("list_libraries", nil)
	}
	balance := rm.ledger.Balance("ws_acme")
	resp := rawPost(t, rm.url, keyFull, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"reset a user's password"}}}`, nil)
	if resp.status != http.StatusTooManyRequests || resp.errorCode() != "rate_limited" || !strings.Contains(resp.body, "Wait ") {
		t.Errorf("past the limit: %d %s, want 429 rate_limited saying how long to wait", resp.status, resp.body)
	}
	if remaining(resp.header) != 0 || resp.header.Get("Retry-After") == "" {
		t.Errorf("past the limit: X-RateLimit-Remaining %s, Retry-After %q; want 0 and a wait",
			resp.header.Get("X-RateLimit-Remaining"), resp.header.Get("Retry-After"))
	}
	if after := rm.ledger.Balance("ws_acme"); after != balance {
		t.Errorf("a refused search spent credit: %d then %d", balance, after)
	}
}

// TestRemoteHTTPRules: /mcp takes POST alone, with a key; every other path
// keeps its GET-only rule; a server without MCP has no /mcp.
func TestRemoteHTTPRules(t *testing.T) {
	rm := newRemote(t, 0)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, c := range []struct {
		method, path, key string
		status            int
		code, allow       string
	}{
		{"POST", httpapi.MCPPath, "", 401, "unauthorised", ""},
		{"POST", httpapi.MCPPath, "dlk_not_a_key", 401, "unauthorised", ""},
		{"GET", httpapi.MCPPath, keyFull, 405, "method_not_allowed", "POST"},
		{"DELETE", httpapi.MCPPath, keyFull, 405, "method_not_allowed", "POST"},
		{"POST", "/libraries", keyFull, 405, "method_not_allowed", "GET"},
		{"POST", "/search/documents", keyFull, 405, "method_not_allowed", "GET"},
		{"POST", "/mcp/", keyFull, 404, "not_found", ""},
	} {
		req, _ := http.NewRequest(c.method, rm.url+c.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var eb api.ErrorBody
		if resp.StatusCode != c.status || json.Unmarshal(b, &eb) != nil || eb.Error.Code != c.code || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %s (Allow %q), want %d %s (Allow %q)", c.method, c.path, resp.StatusCode, b, resp.Header.Get("Allow"), c.status, c.code, c.allow)
		}
	}
	// A batch of tool calls would count once for many: refused whole.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_libraries","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_libraries","arguments":{}}}]`
	req, _ := http.NewRequest("POST", rm.url+httpapi.MCPPath, strings.NewReader(batch))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-03-26")
	req.Header.Set("Authorization", "Bearer "+keyFull)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var rpc struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &rpc) != nil || rpc.Error.Code != -32600 || strings.Contains(string(b), "lib_") {
		t.Errorf("a batch: %d %s, want 400 and the JSON-RPC error -32600, nothing read", resp.StatusCode, b)
	}

	// A body past MaxBody is refused, not read whole, in the API's shape.
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"` +
		strings.Repeat("a", 5<<20) + `"}}}`
	if r := rawPost(t, rm.url, keyFull, big, nil); r.status != http.StatusRequestEntityTooLarge || r.errorCode() != "bad_request" {
		t.Errorf("a 5 MiB message: %d %s, want 413 bad_request", r.status, r.body)
	}

	plain := newAPI(t) // no Config.MCP
	req, _ = http.NewRequest("POST", plain.URL+httpapi.MCPPath, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyFull)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mcp on a server without MCP: %d, want 404", resp.StatusCode)
	}
}

// rpcAnswer is a JSON-RPC answer to a tools call.
type rpcAnswer struct {
	Result struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (a rpcAnswer) text() string {
	var parts []string
	for _, c := range a.Result.Content {
		parts = append(parts, c.Text)
	}
	if a.Error != nil {
		parts = append(parts, "JSON-RPC error: "+a.Error.Message)
	}
	return strings.Join(parts, "\n")
}

// postMCP posts one JSON-RPC request to /mcp, as a stateless client may
// without initializing first, and returns the answer's headers and message.
func postMCP(t *testing.T, url, key, method string, params any) (http.Header, rpcAnswer) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest("POST", url+httpapi.MCPPath, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var a rpcAnswer
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &a) != nil {
		t.Fatalf("%s: %d %s", method, resp.StatusCode, body)
	}
	return resp.Header, a
}

// workspaceOf is the workspace of a demo key.
func workspaceOf(t *testing.T, secret string) string {
	t.Helper()
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	h := doclib.HashKey(secret)
	i := slices.IndexFunc(d.APIKeys, func(k *doclib.APIKey) bool { return k.Hash == h })
	if i < 0 {
		t.Fatalf("no demo key %s", secret)
	}
	return d.APIKeys[i].WorkspaceID
}
