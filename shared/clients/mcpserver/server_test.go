package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
)

var toolNames = []string{"get_document", "get_library", "get_source_recordings", "list_documents",
	"list_libraries", "search_documents", "traverse_graph"}

// prop returns a property of a tool's input schema, as a client sees it.
func prop(t *testing.T, tool *mcp.Tool, name string) map[string]any {
	t.Helper()
	s, _ := tool.InputSchema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	p, ok := props[name].(map[string]any)
	if !ok {
		t.Fatalf("%s: no input property %q in %v", tool.Name, name, s)
	}
	return p
}

func wantNum(t *testing.T, tool, name, key string, p map[string]any, want float64) {
	t.Helper()
	if got, ok := p[key].(float64); !ok || got != want {
		t.Errorf("%s.%s: %s = %v, want %v", tool, name, key, p[key], want)
	}
}

func TestToolsListedWithBounds(t *testing.T) {
	s := connect(t, newAPI(t), keyFull)
	ctx := context.Background()
	if ins := s.InitializeResult().Instructions; !strings.Contains(ins, "list_libraries") || !strings.Contains(ins, "search_documents") {
		t.Errorf("instructions do not point at the first tools: %q", ins)
	}
	if got := s.InitializeResult().ServerInfo.Name; got != "doclib" {
		t.Errorf("server name %q", got)
	}
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	var names []string
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.InputSchema == nil {
			t.Errorf("%s: description, input or output schema missing", tool.Name)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: not marked read-only", tool.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, toolNames) {
		t.Fatalf("tools %v, want %v", names, toolNames)
	}

	q := prop(t, tools["search_documents"], "query")
	wantNum(t, "search_documents", "query", "minLength", q, 2)
	wantNum(t, "search_documents", "query", "maxLength", q, 512)
	if req, _ := tools["search_documents"].InputSchema.(map[string]any)["required"].([]any); !slices.Contains(req, any("query")) {
		t.Errorf("search_documents: query is not required: %v", req)
	}
	for _, tc := range []struct {
		tool string
		max  float64
	}{{"search_documents", 100}, {"list_documents", 100}, {"get_source_recordings", 50}} {
		wantNum(t, tc.tool, "page", "minimum", prop(t, tools[tc.tool], "page"), 1)
		ps := prop(t, tools[tc.tool], "pageSize")
		wantNum(t, tc.tool, "pageSize", "minimum", ps, 1)
		wantNum(t, tc.tool, "pageSize", "maximum", ps, tc.max)
	}
	d := prop(t, tools["traverse_graph"], "depth")
	wantNum(t, "traverse_graph", "depth", "minimum", d, 1)
	wantNum(t, "traverse_graph", "depth", "maximum", d, 3)
	if e, _ := prop(t, tools["traverse_graph"], "direction")["enum"].([]any); !slices.Equal(e, []any{"outgoing", "incoming", "both"}) {
		t.Errorf("traverse_graph.direction enum %v", e)
	}
	items, _ := prop(t, tools["get_library"], "include")["items"].(map[string]any)
	if e, _ := items["enum"].([]any); len(e) != 3 {
		t.Errorf("get_library.include items enum %v", e)
	}
	// The descriptions carry what an agent must know to use the results.
	for tool, phrases := range map[string][]string{
		"search_documents":      {"AI credit", "lowConfidence", "suggestions", "get_document"},
		"get_source_recordings": {"forbidden", "EMPTY list is NORMAL", "privateTotal", "authoritative"},
		"traverse_graph":        {"often next", "alternative to", "semantic", "lowConfidence"},
		"list_libraries":        {"first"},
		"get_document":          {"authoritative", "doc_"},
	} {
		for _, p := range phrases {
			if !strings.Contains(tools[tool].Description, p) {
				t.Errorf("%s: description lacks %q", tool, p)
			}
		}
	}
}

func TestEveryToolAgreesWithTheAPI(t *testing.T) {
	a := newAPI(t)
	s := connect(t, a, keyFull)
	ctx := context.Background()

	t.Run("list_libraries", func(t *testing.T) {
		out, text := ok[api.LibraryList](s, "list_libraries", nil)
		want, err := s.c.Libraries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, "libraries", out, want)
		for _, l := range want.Libraries {
			if !strings.Contains(text, l.Name) || !strings.Contains(text, l.ID) {
				t.Errorf("text lacks %s (%s):\n%s", l.Name, l.ID, text)
			}
		}
	})

	t.Run("get_library", func(t *testing.T) {
		out, text := ok[getLibraryOutput](s, "get_library", map[string]any{"library": "it-operations"})
		lib, err1 := s.c.Library(ctx, "lib_it")
		tags, err2 := s.c.Tags(ctx, "lib_it")
		cats, err3 := s.c.Categories(ctx, "lib_it")
		apps, err4 := s.c.Applications(ctx, "lib_it")
		for _, err := range []error{err1, err2, err3, err4} {
			if err != nil {
				t.Fatal(err)
			}
		}
		jsonEqual(t, "library", out.Library, lib)
		jsonEqual(t, "tags", out.Tags, tags.Tags)
		jsonEqual(t, "categories", out.Categories, cats.Categories)
		jsonEqual(t, "applications", out.Applications, apps.Applications)
		for _, want := range []string{lib.Name, "lib_it", "## Tags", "## Categories", "## Applications",
			tags.Tags[0].Name, cats.Categories[0].Name} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}
		// Only what was asked for.
		res := s.call("get_library", map[string]any{"library": "lib_it", "include": []string{"tags"}})
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil || m["tags"] == nil || m["categories"] != nil || m["applications"] != nil {
			t.Errorf("include=[tags] gave %s", b)
		}
	})

	t.Run("list_documents", func(t *testing.T) {
		args := map[string]any{"library": "lib_it", "tag": "security", "pageSize": 5, "page": 1}
		out, text := ok[listDocumentsOutput](s, "list_documents", args)
		want, err := s.c.Documents(ctx, "lib_it", client.DocumentsParams{Tag: "security", Page: client.Page{Page: 1, PageSize: 5}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Total != want.Total || out.Page != 1 || out.PageSize != 5 || len(out.Documents) != len(want.Documents) || len(out.Documents) == 0 {
			t.Fatalf("page %+v, want total %d, %d documents", out, want.Total, len(want.Documents))
		}
		for i, d := range want.Documents {
			got := out.Documents[i]
			if got.ID != d.ID || got.Title != d.Title || !slices.Contains(got.Tags, "security") || got.Excerpt == "" {
				t.Errorf("document %d: %+v, want %s %q", i, got, d.ID, d.Title)
			}
			if !strings.Contains(text, d.ID) || !strings.Contains(text, d.Title) {
				t.Errorf("text lacks %s %q", d.ID, d.Title)
			}
		}
	})

	t.Run("search_documents", func(t *testing.T) {
		out, text := ok[searchOutput](s, "search_documents", map[string]any{"query": "reset password", "pageSize": 5})
		want, err := s.c.Search(ctx, client.SearchParams{Query: "reset password", Page: client.Page{Page: 1, PageSize: 5}})
		if err != nil {
			t.Fatal(err)
		}
		if out.LowConfidence || want.LowConfidence || len(out.Hits) == 0 {
			t.Fatalf("search for reset password: lowConfidence %v, %d hits", out.LowConfidence, len(out.Hits))
		}
		if out.Total != want.Total || out.MatchedTotal != want.MatchedTotal || len(out.Hits) != len(want.Documents) {
			t.Fatalf("totals %d/%d, %d hits; want %d/%d, %d", out.Total, out.MatchedTotal, len(out.Hits), want.Total, want.MatchedTotal, len(want.Documents))
		}
		for i, h := range want.Documents {
			got := out.Hits[i]
			if got.ID != h.ID || got.Score != h.Relevance.Score || got.SemanticSimilarity != h.Relevance.SemanticSimilarity ||
				!slices.Equal(got.Signals, h.Relevance.Signals) || got.Library != h.Library || got.Excerpt == "" {
				t.Errorf("hit %d: %+v, want %s %+v", i, got, h.ID, h.Relevance)
			}
		}
		jsonEqual(t, "facets", out.Facets, want.Facets)
		for _, w := range []string{want.Documents[0].Title, want.Documents[0].ID, "signals:", "get_document", "libraryId:"} {
			if !strings.Contains(text, w) {
				t.Errorf("text lacks %q:\n%s", w, text)
			}
		}
	})

	t.Run("search_documents low confidence", func(t *testing.T) {
		out, text := ok[searchOutput](s, "search_documents", map[string]any{"query": "zqxw vbnm"})
		if !out.LowConfidence || len(out.Guidance) == 0 || len(out.Hits) == 0 || !slices.Equal(out.Hits[0].Signals, []string{"fallback"}) {
			t.Fatalf("nonsense query: %+v", out)
		}
		if !strings.HasPrefix(text, "LOW CONFIDENCE") || !strings.Contains(text, "suggestions, not matches") || !strings.Contains(text, out.Guidance[0]) {
			t.Errorf("text does not warn first and give the guidance:\n%s", text)
		}
	})

	t.Run("get_document", func(t *testing.T) {
		out, text := ok[api.Document](s, "get_document", map[string]any{"id": "doc_it_001"})
		want, err := s.c.Document(ctx, "doc_it_001")
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, "document", out, want)
		// The text is the document: title first, then every section of
		// the template, in the template's order, then the edges.
		at := []int{strings.Index(text, "# "+want.Title)}
		for _, sec := range want.Schema.Sections {
			at = append(at, strings.Index(text, "## "+sec.Title))
		}
		at = append(at, strings.Index(text, "## Next"))
		if len(want.Schema.Sections) < 4 || at[0] != 0 || !slices.IsSorted(at) || slices.Contains(at, -1) {
			t.Errorf("sections out of template order (%v) in:\n%s", at, text)
		}
		var content map[string]any
		if err := json.Unmarshal(want.Content, &content); err != nil {
			t.Fatal(err)
		}
		steps, _ := content["steps"].([]any)
		if len(steps) == 0 || !strings.Contains(text, "1. "+steps[0].(string)) {
			t.Errorf("text lacks the first step %v", steps)
		}
		if !strings.Contains(text, want.Edges.Outgoing[0].TargetDocumentID) {
			t.Errorf("text lacks the edge to %s", want.Edges.Outgoing[0].TargetDocumentID)
		}
	})

	t.Run("traverse_graph", func(t *testing.T) {
		out, text := ok[traverseOutput](s, "traverse_graph", map[string]any{"id": "doc_it_001", "direction": "outgoing", "depth": 2})
		want, err := s.c.Traverse(ctx, "doc_it_001", client.TraverseParams{Direction: "outgoing", Depth: 2})
		if err != nil {
			t.Fatal(err)
		}
		if out.RootDocumentID != "doc_it_001" || out.MaxDepth != 2 || out.Direction != "outgoing" || len(out.Nodes) != len(want.Nodes) || len(out.Nodes) < 2 {
			t.Fatalf("walk %+v", out)
		}
		for i, n := range want.Nodes {
			if got := out.Nodes[i]; got.ID != n.ID || got.Depth != n.Depth || got.LibraryID != n.LibraryID {
				t.Errorf("node %d: %+v, want %s at %d", i, got, n.ID, n.Depth)
			}
		}
		jsonEqual(t, "edges", out.Edges, want.Edges)
		for _, w := range []string{"## Start", "## 1 hop away", "## Edges", want.Edges[0].Label, want.Nodes[1].Title} {
			if !strings.Contains(text, w) {
				t.Errorf("text lacks %q:\n%s", w, text)
			}
		}
	})

	t.Run("get_source_recordings", func(t *testing.T) {
		out, text := ok[api.SourceRecordings](s, "get_source_recordings", map[string]any{"id": "doc_it_001", "pageSize": 2})
		want, err := s.c.SourceRecordings(ctx, "doc_it_001", client.Page{Page: 1, PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, "recordings", out, want)
		if len(out.SourceRecordings) == 0 {
			t.Fatal("doc_it_001 has no shared recording in the demo data")
		}
		r := out.SourceRecordings[0]
		for _, w := range []string{r.Title, r.ID, "Q: " + r.Questions[0].Question, "1. " + r.Steps[0]} {
			if !strings.Contains(text, w) {
				t.Errorf("text lacks %q:\n%s", w, text)
			}
		}
	})
}

func TestScopeOfAOneLibraryKey(t *testing.T) {
	s := connect(t, newAPI(t), keyOneLibrary)
	libs, _ := ok[api.LibraryList](s, "list_libraries", nil)
	if len(libs.Libraries) != 1 || libs.Libraries[0].ID != "lib_finance" {
		t.Errorf("libraries %+v, want lib_finance only", libs)
	}
	for _, q := range []string{"reset password", "invoice approval"} {
		out, _ := ok[searchOutput](s, "search_documents", map[string]any{"query": q})
		for _, h := range out.Hits {
			if h.Library.ID != "lib_finance" {
				t.Errorf("%q: hit %s in %s", q, h.ID, h.Library.ID)
			}
		}
		for _, l := range out.Facets.Libraries {
			if l.ID != "lib_finance" {
				t.Errorf("%q: facet library %s", q, l.ID)
			}
		}
	}
	msg := s.toolErr("get_document", map[string]any{"id": "doc_it_001"})
	if !strings.HasPrefix(msg, "not_found: ") || !strings.Contains(msg, "doc_it_001") {
		t.Errorf("out-of-scope document: %q", msg)
	}
	if msg := s.toolErr("list_documents", map[string]any{"library": "it-operations"}); !strings.HasPrefix(msg, "not_found: ") {
		t.Errorf("out-of-scope library: %q", msg)
	}
}

func TestSourceRecordingsAccess(t *testing.T) {
	a := newAPI(t)
	t.Run("no recording access", func(t *testing.T) {
		s := connect(t, a, keyNoRecordings)
		msg := s.toolErr("get_source_recordings", map[string]any{"id": "doc_it_001"})
		if !strings.HasPrefix(msg, "forbidden: ") || !strings.Contains(msg, "authoritative") {
			t.Errorf("got %q", msg)
		}
	})
	t.Run("individual plan", func(t *testing.T) {
		s := connect(t, a, keyIndividual)
		libs, _ := ok[api.LibraryList](s, "list_libraries", nil)
		docs, _ := ok[listDocumentsOutput](s, "list_documents", map[string]any{"library": libs.Libraries[0].ID, "pageSize": 1})
		d := docs.Documents[0]
		out, text := ok[api.SourceRecordings](s, "get_source_recordings", map[string]any{"id": d.ID})
		if len(out.SourceRecordings) != 0 || out.Total != 0 || out.LinkedTotal != d.RecordingCount || out.PrivateTotal != d.RecordingCount || out.Guidance == "" {
			t.Fatalf("individual plan: %+v (document recorded %d times)", out, d.RecordingCount)
		}
		for _, w := range []string{out.Guidance, "normal", "authoritative", "private"} {
			if !strings.Contains(text, w) {
				t.Errorf("text lacks %q:\n%s", w, text)
			}
		}
	})
}

func TestSearchWithoutAICredit(t *testing.T) {
	s := connect(t, newAPI(t), keyNoAICredit)
	msg := s.toolErr("search_documents", map[string]any{"query": "stock count"})
	if !strings.HasPrefix(msg, "insufficient_ai_credit: ") || !strings.Contains(msg, "list_documents") {
		t.Errorf("got %q", msg)
	}
}

// TestSearchFromWordsAlone: when the API answered from words (the
// embedding provider failed or was late), the tool says so first, and its
// structured result carries the unavailable signals.
func TestSearchFromWordsAlone(t *testing.T) {
	cs := fakeAPI(t, map[string]any{"/search/documents": api.SearchResults{Page: 1, PageSize: 20, Total: 1, MatchedTotal: 1,
		Documents: []api.SearchHit{{ID: "doc_1", Title: "Reset a password", Library: api.DocumentRef{ID: "lib_it", Name: "IT"},
			Relevance: api.Relevance{Signals: []string{"lexical"}, Score: 0.4}}},
		UnavailableSignals: []string{"semantic", "source_recordings"}}})
	res, text := callTool(t, cs, "search_documents", map[string]any{"query": "reset password"})
	if !strings.HasPrefix(text, "WORDS ONLY: ") || !strings.Contains(text, "semantic, source_recordings did not run") || !strings.Contains(text, "no credit") {
		t.Errorf("the text does not begin by saying the meaning match did not run:\n%s", text)
	}
	var out searchOutput
	if b, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(b, &out) != nil ||
		!slices.Equal(out.UnavailableSignals, []string{"semantic", "source_recordings"}) || len(out.Hits) != 1 {
		t.Errorf("structured result %+v", res.StructuredContent)
	}
}

func TestAPIUnreachable(t *testing.T) {
	a := newAPI(t)
	url := a.URL
	a.Close()
	c := newClient(t, url, keyFull)
	cs := connectClient(t, c)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_libraries"})
	if err != nil {
		t.Fatal(err)
	}
	if msg := text(res); !res.IsError || !strings.HasPrefix(msg, "api_unreachable: ") || !strings.Contains(msg, "DOCLIB_URL") {
		t.Errorf("got %v %q", res.IsError, msg)
	}
}

// connectClient connects an SDK client to New(c) in memory.
func connectClient(t *testing.T, c *client.Client) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := New(c, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}
