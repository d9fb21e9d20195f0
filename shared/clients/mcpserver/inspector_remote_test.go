package mcpserver

import (
	"strings"
	"testing"

	mcpinspector "github.com/doclib/doclib/internal/suites/inspector"
	"github.com/doclib/doclib/shared/httpapi"
)

// TestInspectorOverTheAPIsEndpoint drives the API's own /mcp (what
// doclib-server and every stack serve) with the inspector's CLI over
// streamable HTTP, the key in a header as an agent's configuration sends it:
// tools listed, search and a document read; no key is the API's 401; a
// one-library key cannot read another library; a workspace without credit
// cannot search, and keeps its credit.
func TestInspectorOverTheAPIsEndpoint(t *testing.T) {
	bin := inspector(t)
	rm := newRemote(t, 0)
	url := rm.url + httpapi.MCPPath
	with := func(key string, args ...string) inspectorRun {
		base := []string{url, "--transport", "http"}
		if key != "" {
			base = append(base, "--header", "Authorization: Bearer "+key)
		}
		return runInspector(t, bin, append(base, args...)...)
	}

	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	with(keyFull, "--method", "tools/list").decode(t, &list)
	if len(list.Tools) != 7 {
		t.Errorf("%d tools listed, want 7: %+v", len(list.Tools), list.Tools)
	}
	res := with(keyFull, "--method", "tools/call", "--tool-name", "search_documents", "--tool-arg", "query=reset a user's password").call(t)
	if !strings.Contains(res.text(), "doc_it_001") {
		t.Errorf("search: %s", res.text())
	}
	res = with(keyFull, "--method", "tools/call", "--tool-name", "get_document", "--tool-arg", "id=doc_it_001").call(t)
	if !strings.Contains(res.text(), "Reset a user's password in Okta") {
		t.Errorf("get_document: %.300s", res.text())
	}

	if r := with("", "--method", "tools/list"); r.exit == 0 || strings.Contains(string(r.stdout), "search_documents") {
		t.Errorf("without a key the inspector listed the tools (exit %d):\n%s", r.exit, r.stdout)
	}
	if !strings.Contains(rm.log.String(), "method=POST path=/mcp status=401") {
		t.Errorf("no 401 for the keyless POST in the server's log:\n%s", rm.log.String())
	}

	var refused inspectorResult
	with(keyOneLibrary, "--method", "tools/call", "--tool-name", "get_document", "--tool-arg", "id=doc_it_001").decode(t, &refused)
	if !refused.IsError || !strings.HasPrefix(refused.text(), "not_found: ") {
		t.Errorf("a one-library key read another library's document: %s", refused.text())
	}

	ws := workspaceOf(t, keyNoAICredit)
	before := rm.ledger.Balance(ws)
	refused = inspectorResult{}
	with(keyNoAICredit, "--method", "tools/call", "--tool-name", "search_documents", "--tool-arg", "query=reset password").decode(t, &refused)
	if !refused.IsError || !strings.HasPrefix(refused.text(), "insufficient_ai_credit: ") {
		t.Errorf("search without credit: %s", refused.text())
	}
	if after := rm.ledger.Balance(ws); after != before {
		t.Errorf("a refused search moved the credit from %d to %d", before, after)
	}
}

// TestInspectorWithAWrongKey: what the inspector shows when /mcp refuses
// its key, as docs/mcp.md, "A wrong key", tells. The inspector takes any
// 401 for a server that wants OAuth. Without a terminal it will not sign in
// and says so; with --stored-auth-only it prints the 401's body, which names
// the key. At a terminal it looks for OAuth metadata and registers a client
// at /register, and prints that answer: doclib's says that it uses no OAuth.
func TestInspectorWithAWrongKey(t *testing.T) {
	bin := inspector(t)
	rm := newRemote(t, 0)
	args := []string{rm.url + httpapi.MCPPath, "--transport", "http", "--header", "Authorization: Bearer dlk_wrong_key_0000", "--method", "tools/list"}
	secrets := []string{"dlk_wrong_key_0000", keyFull}

	r := mcpinspector.Run(t, bin, secrets, append(args, "--stored-auth-only")...)
	if out := string(r.Stdout) + r.Stderr; r.Exit == 0 || !strings.Contains(out, "The API key is not valid") {
		t.Errorf("--stored-auth-only: exit %d, the key is not named:\n%s", r.Exit, out)
	}
	r = mcpinspector.Run(t, bin, secrets, args...)
	if out := string(r.Stdout) + r.Stderr; r.Exit == 0 || !strings.Contains(out, "--stored-auth-only") {
		t.Errorf("no terminal: exit %d, want the inspector's refusal to sign in:\n%s", r.Exit, out)
	}
	r = mcpinspector.RunAtTerminal(t, bin, secrets, args...)
	if out := string(r.Stdout) + r.Stderr; r.Exit == 0 || !strings.Contains(out, "uses no OAuth") || strings.Contains(out, "Missing API key") {
		t.Errorf("at a terminal: exit %d, want doclib's word that it uses no OAuth:\n%s", r.Exit, out)
	}
	if !strings.Contains(rm.log.String(), "method=POST path=/register status=401") {
		t.Errorf("the inspector registered no client at a terminal; the server's log:\n%s", rm.log.String())
	}
}
