package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/shared/api"
)

// hostile holds the characters no text result may carry: a terminal title
// escape, a screen clear, a CR, a bidi override and isolate, a C1 CSI.
const hostile = "T\x1b]0;hacked\x07i\x1b[2Jt\rl\u202Ee\u2066\u009b"

// fakeAPI serves fixed JSON answers by path, as the API would, for data the
// demo does not have.
func fakeAPI(t *testing.T, answers map[string]any) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":"not_found","message":"no such thing"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return connectClient(t, newClient(t, srv.URL, keyFull))
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, text(res))
	}
	return res, text(res)
}

// noControls fails the test if a text result carries a character that
// could steer a terminal or reorder what the model reads.
func noControls(t *testing.T, what, s string) {
	t.Helper()
	for i, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("%s: control character %U at byte %d in\n%q", what, r, i, s)
			return
		}
	}
}

func TestTextResultsCarryNoControlCharacters(t *testing.T) {
	h := hostile
	schema := api.Schema{Sections: []api.Section{{Key: "summary", Title: "Summary", Type: "text"}, {Key: "steps", Title: "Steps", Type: "steps"}}}
	content := json.RawMessage(`{"summary":` + quote(h+"\n## Steps") + `,"steps":[` + quote(h) + `,"",` + quote(h) + `]}`)
	lib := api.Library{ID: "lib_x", Name: h, Description: h, Categories: []string{h}, Tags: []string{h}, DocumentCount: 1}
	doc := api.Document{DocumentItem: api.DocumentItem{ID: "doc_x", Title: h, Category: h, Tags: []string{h}, Applications: []string{h}, Content: content,
		RecordingCount: 1, DeviceCount: 1}, Schema: schema, Library: api.DocumentRef{ID: "lib_x", Name: h},
		Edges: api.Edges{Outgoing: []api.OutgoingEdge{{TargetDocumentID: "doc_y", TargetDocumentTitle: h, Label: h, EdgeType: "data", Support: 1}}}}
	cs := fakeAPI(t, map[string]any{
		"/libraries":                 api.LibraryList{Libraries: []api.Library{lib}},
		"/libraries/lib_x":           lib,
		"/libraries/lib_x/tags":      api.Tags{Tags: []api.Label{{Name: h, DocumentCount: 1}}},
		"/libraries/lib_x/documents": map[string]any{"documents": []any{doc}, "total": 1, "page": 1, "pageSize": 20, "schema": schema},
		"/documents/doc_x":           doc,
		"/documents/doc_x/traverse":  api.Traversal{RootDocumentID: "doc_x", Direction: "both", MaxDepth: 1, Nodes: []api.TraverseNode{{ID: "doc_x", Title: h, LibraryID: "lib_x", Content: content}}, Edges: []api.GraphEdge{{SourceDocumentID: "doc_x", SourceDocumentTitle: h, TargetDocumentID: "doc_y", TargetDocumentTitle: h, Label: h, EdgeType: "semantic"}}},
		"/documents/doc_x/source-recordings": api.SourceRecordings{Total: 1, LinkedTotal: 1, Page: 1, PageSize: 20, Guidance: h,
			SourceRecordings: []api.SourceRecording{{ID: "rec_x", Title: h, Status: h, Questions: []api.Question{{Question: h, Response: h}}, Steps: []string{h, " ", h}}}},
		"/search/documents": api.SearchResults{Page: 1, PageSize: 20, Total: 1, MatchedTotal: 1,
			Documents: []api.SearchHit{{ID: "doc_x", Title: h, Library: api.DocumentRef{ID: "lib_x", Name: h}, Category: h, Tags: []string{h}, Content: content, Relevance: api.Relevance{Signals: []string{"lexical"}}}},
			Facets:    api.SearchFacets{Tags: []api.Label{{Name: h, DocumentCount: 1}}, Libraries: []api.LibraryFacet{{ID: "lib_x", Name: h, DocumentCount: 1}}}},
	})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_libraries", nil},
		{"get_library", map[string]any{"library": "lib_x", "include": []string{"tags"}}},
		{"list_documents", map[string]any{"library": "lib_x"}},
		{"get_document", map[string]any{"id": "doc_x"}},
		{"traverse_graph", map[string]any{"id": "doc_x"}},
		{"get_source_recordings", map[string]any{"id": "doc_x"}},
		{"search_documents", map[string]any{"query": "anything"}},
	} {
		res, text := callTool(t, cs, c.tool, c.args)
		noControls(t, c.tool, text)
		if !strings.Contains(text, "T\uFFFD]0;hacked\uFFFDi") {
			t.Errorf("%s: the title is not shown cleaned:\n%s", c.tool, text)
		}
		// The structured output is the API's data as it came.
		if b, _ := json.Marshal(res.StructuredContent); !bytes.Contains(b, []byte(`\u001b]0;hacked`)) {
			t.Errorf("%s: the structured output was changed: %s", c.tool, b)
		}
	}

	_, text := callTool(t, cs, "get_document", map[string]any{"id": "doc_x"})
	for _, want := range []string{"Recorded 1 time on 1 device, last seen -;", "\\## Steps", "## Steps\n1. T\uFFFD", "\n2. T\uFFFD"} {
		if !strings.Contains(text, want) {
			t.Errorf("get_document: no %q in\n%s", want, text)
		}
	}
	if _, text := callTool(t, cs, "list_documents", map[string]any{"library": "lib_x"}); !strings.Contains(text, ": 1 document.\n") || !strings.Contains(text, "Recorded 1 time;") {
		t.Errorf("list_documents counts one as many:\n%s", text)
	}
	if _, text := callTool(t, cs, "list_libraries", nil); !strings.Contains(text, "\n1 document · ") {
		t.Errorf("list_libraries counts one as many:\n%s", text)
	}
	if _, text := callTool(t, cs, "traverse_graph", map[string]any{"id": "doc_x"}); !strings.Contains(text, "up to 1 hop: 1 document, 1 edge.") {
		t.Errorf("traverse_graph counts one as many:\n%s", text)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestGetDocumentOddContent(t *testing.T) {
	big := strings.Repeat("Step of a very long procedure, written out in full. ", 5000) // 260 KB
	bigDoc := api.Document{DocumentItem: api.DocumentItem{ID: "doc_big", Title: "Big", Content: json.RawMessage(`{"summary":` + quote(big) + `}`)},
		Schema: api.Schema{Sections: []api.Section{{Key: "summary", Title: "Summary", Type: "text"}}}}
	strDoc := api.Document{DocumentItem: api.DocumentItem{ID: "doc_str", Title: "Plain", Content: json.RawMessage(`"Just do it.\nThen check."`)}}
	cs := fakeAPI(t, map[string]any{"/documents/doc_big": bigDoc, "/documents/doc_str": strDoc})

	res, text := callTool(t, cs, "get_document", map[string]any{"id": "doc_big"})
	if n := utf8.RuneCountInString(text); n > documentTextMax+500 {
		t.Errorf("the text is %d characters, over the cap of %d", n, documentTextMax)
	}
	if !strings.HasPrefix(text, "# Big\n") || !strings.Contains(text, "[Cut: this document's text is ") ||
		!strings.Contains(text, "The structured output holds the whole document.]") {
		t.Errorf("the cut is not said:\n%s", text[len(text)-600:])
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out api.Document
	if err := json.Unmarshal(b, &out); err != nil || !strings.Contains(string(out.Content), big) {
		t.Errorf("the structured output is not whole (%d bytes): %v", len(b), err)
	}

	res, text = callTool(t, cs, "get_document", map[string]any{"id": "doc_str"})
	if !strings.Contains(text, "(The content is a string") || !strings.Contains(text, "Just do it.\nThen check.") {
		t.Errorf("string content:\n%s", text)
	}
	b, _ = json.Marshal(res.StructuredContent)
	if !bytes.Contains(b, []byte(`"content":"Just do it.\nThen check."`)) {
		t.Errorf("string content in the structured output: %s", b)
	}
}

func TestCapText(t *testing.T) {
	if s := capText("short", 10); s != "short" {
		t.Errorf("a short text was changed: %q", s)
	}
	// No line break in the second half: cut at the limit.
	s := capText(strings.Repeat("ab\n", 2)+strings.Repeat("é", 44), 40) // 50 characters
	if !strings.HasPrefix(s, strings.Repeat("ab\n", 2)+strings.Repeat("é", 34)+"\n\n[Cut: this document's text is 50 characters") ||
		!strings.Contains(s, "The first 40 are shown; the other 10 are left out") {
		t.Errorf("not cut at the limit: %q", s)
	}
	// A line break in the second half: cut after it.
	s = capText(strings.Repeat("line\n", 20), 52) // 100 characters
	if !strings.HasPrefix(s, strings.Repeat("line\n", 10)+"\n[Cut: ") || !strings.Contains(s, "The first 50 are shown; the other 50") {
		t.Errorf("not cut at a line break: %q", s)
	}
}

// rawStdio runs Run over pipes and talks to it in raw lines, as a client
// that sends what it likes would.
type rawStdio struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func newRawStdio(t *testing.T, logs *logBuffer) *rawStdio {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Client: newClient(t, newAPI(t).URL, keyFull), Version: "test",
			Stdin: serverIn, Stdout: serverOut, Logger: logs.logger()})
		serverOut.Close()
	}()
	sc := bufio.NewScanner(clientIn)
	sc.Buffer(nil, 16<<20)
	r := &rawStdio{t: t, in: clientOut, out: sc, done: done}
	t.Cleanup(func() { clientOut.Close(); clientIn.Close() })
	return r
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("write %q: %v", line, err)
	}
}

// answer reads the next line the server writes, as a JSON-RPC response.
func (r *rawStdio) answer() (id string, code int, result map[string]any) {
	r.t.Helper()
	if !r.out.Scan() {
		r.t.Fatalf("the server wrote nothing more: %v", r.out.Err())
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  map[string]any  `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.out.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
		r.t.Fatalf("not a JSON-RPC response: %v\n%s", err, r.out.Bytes())
	}
	if m.Error != nil {
		code = m.Error.Code
	}
	return string(m.ID), code, m.Result
}

func TestStdioAnswersBadLinesAndGoesOn(t *testing.T) {
	logs := &logBuffer{}
	c := newRawStdio(t, logs)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if id, code, res := c.answer(); id != "1" || code != 0 || res["serverInfo"] == nil {
		t.Fatalf("initialize: id %s, code %d, %v", id, code, res)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for _, tc := range []struct {
		line, id string
		code     int
	}{
		{"this is not json", "null", -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"`, "null", -32700},
		{`{"jsonrpc":"2.0","id":3} {"jsonrpc":"2.0","id":4}`, "null", -32700},
		{`{"hello":"world"}`, "null", -32600},
		{`{"jsonrpc":"1.0","id":"five","method":"tools/list"}`, `"five"`, -32600},
		{`[]`, "null", -32600},
		{`42`, "null", -32600},
	} {
		c.send("   ") // blank lines are skipped, unanswered
		c.send(tc.line)
		if id, code, _ := c.answer(); id != tc.id || code != tc.code {
			t.Errorf("%q: answered id %s, code %d; want id %s, code %d", tc.line, id, code, tc.id, tc.code)
		}
	}

	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}` + "\r") // CRLF, as Windows clients write
	id, code, res := c.answer()
	if tools, _ := res["tools"].([]any); id != "9" || code != 0 || len(tools) != len(toolNames) {
		t.Fatalf("tools/list after the bad lines: id %s, code %d, %d tools", id, code, len(tools))
	}
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"get_document","arguments":{"id":"doc_it_001"}}}`)
	if id, code, res := c.answer(); id != "10" || code != 0 || res["isError"] == true {
		t.Fatalf("tools/call after the bad lines: id %s, code %d, %v", id, code, res)
	}

	c.in.Close()
	if err := wait(t, c.done); err != nil {
		t.Errorf("Run: %v, want nil when the client hangs up", err)
	}
	if n := strings.Count(logs.String(), "not a message"); n != 7 {
		t.Errorf("%d bad lines logged, want 7:\n%s", n, logs)
	}
}

// A line longer than the limit is answered and dropped without being held
// whole, and a last line without a newline still counts.
func TestMessagesLongAndLastLines(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader("\n" + strings.Repeat("x", 100) + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n  " + `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	m := newMessages(in, &out, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.max = 64
	m.in = bufio.NewReaderSize(in, 16) // the long line comes in several pieces
	got, err := io.ReadAll(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"; string(got) != want {
		t.Errorf("passed on %q, want %q", got, want)
	}
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: a message is at most 64 bytes"}}` + "\n"; out.String() != want {
		t.Errorf("answered %q, want %q", out.String(), want)
	}
}
