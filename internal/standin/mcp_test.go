package standin_test

// The MCP endpoint of the stack as deployed, driven by a real MCP client
// nobody here wrote: the MCP inspector (@modelcontextprotocol/inspector) in
// CLI mode, as shared/clients/mcpserver's tests run it. It is a Node.js
// program that ./scripts/test installs into .tools/inspector; the test skips
// without it, unless DOCLIB_REQUIRE_MCP_INSPECTOR is set (./scripts/test sets
// it), in which case it fails.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/inspector"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/httpapi"
)

// The demo keys the MCP test uses, and their workspaces.
const (
	keyFull, keyOneLibrary, keyNoCredit = "dlk_demo_full_scope", "dlk_demo_one_library", "dlk_demo_no_ai_credit"
	wsAcme, wsNoCredit                  = "ws_acme", "ws_nocredit"
)

// inspectorRun is one run of the inspector CLI.
type inspectorRun struct {
	exit           int
	stdout, stderr string
}

// runInspector runs `mcp-inspector --cli <url> --transport http` with key as
// a bearer token (none when empty) and args (inspector.Run, which checks
// that no key is in its output). --stored-auth-only: a 401 must end the
// run, never start an OAuth login.
func runInspector(t *testing.T, bin, url, key string, args ...string) inspectorRun {
	t.Helper()
	cli := []string{url, "--transport", "http", "--stored-auth-only"}
	if key != "" {
		cli = append(cli, "--header", "Authorization: Bearer "+key)
	}
	r := inspector.Run(t, bin, []string{keyFull, keyOneLibrary, keyNoCredit}, append(cli, args...)...)
	return inspectorRun{exit: r.Exit, stdout: string(r.Stdout), stderr: r.Stderr}
}

// toolResult is what the inspector prints for tools/call.
type toolResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// result decodes a tools/call's result, which the inspector prints whether
// the tool succeeded or answered a tool error.
func (r inspectorRun) result(t *testing.T) toolResult {
	t.Helper()
	var res toolResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("the inspector's output (exit %d) is not a tool result: %v\nstdout:\n%s\nstderr:\n%s", r.exit, err, r.stdout, r.stderr)
	}
	return res
}

// mcpPost posts one JSON-RPC message to /mcp as an MCP client does, with key
// as a bearer token (none when empty).
func mcpPost(t *testing.T, c *http.Client, base, key, message string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+httpapi.MCPPath, strings.NewReader(message))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return do(t, c, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// errorCode is the code of an answer in the API's error shape.
func errorCode(body []byte) string {
	var e struct {
		Error struct{ Code, Message string }
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return ""
	}
	return e.Error.Code
}

// TestMCPThroughTheStandIn: the stack's /mcp serves a real MCP client
// through the REST API as deployed (WAF, the authorizer, the usage plans, the
// method's throttle, the mcp function under the template's role): it lists
// the tools, and search_documents and get_document answer; a search spends
// one credit, as GET /search/documents does. Without a key the gateway
// answers 401; a one-library key cannot read another library's document; a
// workspace without credit gets insufficient_ai_credit and keeps its credit.
// GET /mcp answers 405 with Allow: POST, and POST on a route 405 as before:
// /mcp is the only path that takes POST.
func TestMCPThroughTheStandIn(t *testing.T) {
	bin := inspector.Path(t)
	s := running(t)
	url := s.URL + httpapi.MCPPath
	ledger := dynamo.NewLedger(&dynamo.Table{Client: s.DB, Name: s.Table})
	ctx := context.Background()
	balance := func(ws string) int64 {
		t.Helper()
		n, err := ledger.Balance(ctx, ws) // strongly consistent
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("tools/list", func(t *testing.T) {
		r := runInspector(t, bin, url, keyFull, "--method", "tools/list")
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || r.exit != 0 {
			t.Fatalf("tools/list: exit %d, %v\nstdout:\n%s\nstderr:\n%s", r.exit, err, r.stdout, r.stderr)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		for _, want := range []string{"list_libraries", "get_library", "list_documents", "get_document", "search_documents", "traverse_graph", "get_source_recordings"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools %v lack %s", names, want)
			}
		}
	})

	t.Run("search_documents", func(t *testing.T) {
		before := balance(wsAcme)
		r := runInspector(t, bin, url, keyFull, "--method", "tools/call", "--tool-name", "search_documents", "--tool-arg", "query=reset password")
		res := r.result(t)
		var out struct {
			Hits []struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil || r.exit != 0 || res.IsError || len(out.Hits) == 0 ||
			!strings.Contains(strings.ToLower(out.Hits[0].Title), "password") {
			t.Fatalf("search for reset password: exit %d, isError %v, %+v (%v)\n%s\nstderr:\n%s", r.exit, res.IsError, out, err, res.text(), r.stderr)
		}
		if !strings.Contains(res.text(), out.Hits[0].ID) {
			t.Errorf("the text for the model lacks the first hit %s:\n%s", out.Hits[0].ID, res.text())
		}
		if after := balance(wsAcme); after != before-1 {
			t.Errorf("%s's credit %d before the tool's search, %d after; want one spent, as GET /search/documents spends", wsAcme, before, after)
		}
	})

	t.Run("get_document", func(t *testing.T) {
		r := runInspector(t, bin, url, keyFull, "--method", "tools/call", "--tool-name", "get_document", "--tool-arg", "id=doc_it_001")
		res := r.result(t)
		var doc struct {
			Title   string            `json:"title"`
			Library map[string]string `json:"library"`
		}
		if err := json.Unmarshal(res.StructuredContent, &doc); err != nil || r.exit != 0 || res.IsError ||
			doc.Title != "Reset a user's password in Okta" || doc.Library["id"] != "lib_it" {
			t.Fatalf("get_document doc_it_001: exit %d, isError %v, %+v (%v)\n%s\nstderr:\n%s", r.exit, res.IsError, doc, err, res.text(), r.stderr)
		}
	})

	t.Run("no key", func(t *testing.T) {
		// The gateway answers 401 before the authorizer and the function.
		resp, body := mcpPost(t, clientFrom("127.0.0.41"), s.URL, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if resp.StatusCode != http.StatusUnauthorized || errorCode(body) != "unauthorised" {
			t.Errorf("POST /mcp without a key: %d %s; want 401 unauthorised", resp.StatusCode, body)
		}
		// The inspector gets that 401 (its auth_required, with the gateway's
		// body), lists nothing, and starts no OAuth login.
		r := runInspector(t, bin, url, "", "--method", "tools/list")
		out := r.stdout + r.stderr
		if r.exit == 0 || strings.Contains(r.stdout, "search_documents") || !strings.Contains(out, "auth_required") || !strings.Contains(out, "unauthorised") {
			t.Errorf("tools/list without a key: exit %d; want auth_required with the API's 401 unauthorised\nstdout:\n%s\nstderr:\n%s", r.exit, r.stdout, r.stderr)
		}
	})

	t.Run("another library's document", func(t *testing.T) {
		// dlk_demo_one_library sees lib_finance only; doc_it_001 is lib_it's.
		r := runInspector(t, bin, url, keyOneLibrary, "--method", "tools/call", "--tool-name", "get_document", "--tool-arg", "id=doc_it_001")
		res := r.result(t)
		if r.exit == 0 || !res.IsError || !strings.HasPrefix(res.text(), "not_found") || strings.Contains(res.text(), "Okta") {
			t.Errorf("get_document of an IT document with the one-library key: exit %d, isError %v, %q; want a tool error starting not_found",
				r.exit, res.IsError, res.text())
		}
	})

	t.Run("no credit", func(t *testing.T) {
		before := balance(wsNoCredit)
		r := runInspector(t, bin, url, keyNoCredit, "--method", "tools/call", "--tool-name", "search_documents", "--tool-arg", "query=stock levels")
		res := r.result(t)
		if r.exit == 0 || !res.IsError || !strings.HasPrefix(res.text(), "insufficient_ai_credit") {
			t.Errorf("search_documents without credit: exit %d, isError %v, %q; want a tool error starting insufficient_ai_credit",
				r.exit, res.IsError, res.text())
		}
		if after := balance(wsNoCredit); after != before {
			t.Errorf("%s's credit %d before the refused search, %d after; want it unchanged", wsNoCredit, before, after)
		}
	})

	t.Run("methods", func(t *testing.T) {
		c := clientFrom("127.0.0.42")
		// GET /mcp: the function's 405, after the authorizer, with Allow: POST.
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+keyFull)
		req.Header.Set("Accept", "text/event-stream")
		resp, body := do(t, c, req)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" || errorCode(body) != "method_not_allowed" ||
			gatewayMade(resp) || resp.Header.Get("X-RateLimit-Limit") == "" {
			t.Errorf("GET /mcp: %d Allow %q %s; want the function's 405 method_not_allowed with Allow: POST and the rate-limit headers",
				resp.StatusCode, resp.Header.Get("Allow"), body)
		}
		// POST on a route of the read API: still the function's 405, Allow: GET.
		req, _ = http.NewRequest(http.MethodPost, s.URL+"/libraries", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+keyFull)
		req.Header.Set("Content-Type", "application/json")
		resp, body = do(t, c, req)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET" || errorCode(body) != "method_not_allowed" || gatewayMade(resp) {
			t.Errorf("POST /libraries: %d Allow %q %s; want the function's 405 method_not_allowed with Allow: GET", resp.StatusCode, resp.Header.Get("Allow"), body)
		}
		// And POST /mcp is served: the gateway passes the message on whole.
		resp, body = mcpPost(t, c, s.URL, keyFull, `{"jsonrpc":"2.0","id":42,"method":"ping"}`)
		var pong struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(body, &pong); err != nil || resp.StatusCode != 200 || pong.ID != 42 || pong.Result == nil {
			t.Errorf("POST /mcp ping: %d %s (%v); want a JSON-RPC result for id 42", resp.StatusCode, body, err)
		}
	})
}
