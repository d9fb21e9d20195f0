package mcpserver

import (
	"strings"
	"testing"

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
