package render

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"

	"github.com/doclib/doclib/shared/api"
)

func contains(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in\n%s", w, got)
		}
	}
}

func TestSearchResults(t *testing.T) {
	r := &api.SearchResults{Page: 2, PageSize: 2, Total: 3, MatchedTotal: 9,
		Documents: []api.SearchHit{{ID: "doc_1", Title: "Reset a password", Category: "Accounts",
			Library:   api.DocumentRef{ID: "lib_it", Name: "IT"},
			Relevance: api.Relevance{Signals: []string{"lexical", "semantic"}, Score: 0.7051, SemanticSimilarity: 0.288}}},
		Facets: api.SearchFacets{Libraries: []api.LibraryFacet{{ID: "lib_it", Name: "IT", DocumentCount: 9}},
			Tags: []api.Label{{Name: "security", DocumentCount: 4}}},
	}
	var b bytes.Buffer
	SearchResults(&b, r)
	contains(t, b.String(), "3 results (9 matched before the filters).", "\n3. Reset a password\n",
		"doc_1 · IT (lib_it) · Accounts", "signals: lexical, semantic · score 0.705", "Libraries: IT [lib_it] (9)", "Tags: security (4)")
	if strings.Contains(b.String(), "LOW CONFIDENCE") || strings.Contains(b.String(), "Categories") {
		t.Errorf("a confident result with no categories:\n%s", b.String())
	}

	fallback := &api.SearchResults{Page: 1, PageSize: 20, Total: 1, LowConfidence: true, Guidance: []string{"Use fewer words."},
		Documents: []api.SearchHit{{ID: "doc_2", Title: "Busy", Relevance: api.Relevance{Signals: []string{"fallback"}}}}}
	b.Reset()
	SearchResults(&b, fallback)
	if !strings.HasPrefix(b.String(), "LOW CONFIDENCE") {
		t.Errorf("the warning is not first:\n%s", b.String())
	}
	contains(t, b.String(), "suggestions", "not matches", "  * Use fewer words.", "1 document suggested.", "\n1. Busy\n", "signals: fallback")
	if strings.Contains(b.String(), "by facet") {
		t.Errorf("empty facets were written:\n%s", b.String())
	}
	if strings.Contains(b.String(), "WORDS ONLY") {
		t.Errorf("a search whose meaning match ran says words only:\n%s", b.String())
	}

	// The meaning match did not run: said first, with what to do.
	words := *r
	words.UnavailableSignals = []string{"semantic", "source_recordings"}
	b.Reset()
	SearchResults(&b, &words)
	if !strings.HasPrefix(b.String(), "WORDS ONLY") {
		t.Errorf("the words-only note is not first:\n%s", b.String())
	}
	contains(t, b.String(), "semantic, source_recordings did not run", "spent no credit", "Search again", "3. Reset a password")
}

func TestRecordings(t *testing.T) {
	at := api.Time{Time: time.Date(2026, 1, 8, 21, 25, 0, 0, time.UTC)}
	r := &api.SourceRecordings{Total: 1, LinkedTotal: 3, PrivateTotal: 2, Guidance: "2 of the 3 recordings are private.",
		SourceRecordings: []api.SourceRecording{{ID: "rec_1", Title: "Reset, recorded Thu", Status: "processed", ClientCreatedAt: at,
			Questions: []api.Question{{ID: "ques_1", Question: "Why?", Response: "Because.", SequenceOrder: 1}},
			Steps:     []string{"Opened Okta", "Clicked Reset"}}}}
	var b bytes.Buffer
	Recordings(&b, r)
	// The private count is said once, by the API's guidance (issue 38).
	if strings.Count(b.String(), "private") != 1 {
		t.Errorf("the private recordings are told of more than once:\n%s", b.String())
	}
	contains(t, b.String(), "1 of the 3 recordings behind this document is shared.\n", "2 of the 3 recordings are private.",
		"## Reset, recorded Thu\nrec_1 · processed · recorded 2026-01-08 21:25 UTC", "- Q: Why?\n  A: Because.", "Steps:\n1. Opened Okta\n2. Clicked Reset")

	b.Reset()
	Recordings(&b, &api.SourceRecordings{LinkedTotal: 3, PrivateTotal: 3, Guidance: "The Individual plan cannot share."})
	contains(t, b.String(), "None of the 3 recordings", "The Individual plan cannot share.", "An empty list is normal")
	b.Reset()
	Recordings(&b, &api.SourceRecordings{LinkedTotal: 2, PrivateTotal: 2, Guidance: "All 2 recordings are private; the document's own content is the authoritative account."})
	if strings.Count(b.String(), "authoritative account") != 1 {
		t.Errorf("the document's content is said to be the account more than once:\n%s", b.String())
	}
	b.Reset()
	Recordings(&b, &api.SourceRecordings{Total: 1, LinkedTotal: 3, PrivateTotal: 2})
	contains(t, b.String(), "1 of the 3 recordings behind this document is shared (2 private).")
	// One recording reads as one; blank steps are left out and the rest
	// numbered in order; a blank answer is marked, not left dangling.
	b.Reset()
	Recordings(&b, &api.SourceRecordings{Total: 1, LinkedTotal: 1, SourceRecordings: []api.SourceRecording{{ID: "rec_2", Title: "R",
		Questions: []api.Question{{Question: "Why?\nReally?"}}, Steps: []string{"", "Opened Okta", "  ", "Clicked Reset"}}}})
	contains(t, b.String(), "The one recording behind this document is shared.\n", "· recorded -\n",
		"- Q: Why?\n     Really?\n  A: (empty)\n", "Steps:\n1. Opened Okta\n2. Clicked Reset\n")
	b.Reset()
	Recordings(&b, &api.SourceRecordings{LinkedTotal: 1, PrivateTotal: 1})
	contains(t, b.String(), "The one recording behind this document cannot be read here.")
	if strings.Contains(b.String(), "1 recording") {
		t.Errorf("a count of one in words:\n%s", b.String())
	}

	b.Reset()
	Recordings(&b, &api.SourceRecordings{})
	if b.String() != "No recordings are linked to this document.\n" {
		t.Errorf("got %q", b.String())
	}
}

func TestTraversal(t *testing.T) {
	label := "often next"
	tr := &api.Traversal{RootDocumentID: "doc_a", Direction: "both", Label: &label, MaxDepth: 2,
		Nodes: []api.TraverseNode{
			{ID: "doc_a", Title: "A", LibraryID: "lib_it", Depth: 0},
			{ID: "doc_b", Title: "B", LibraryID: "lib_it", Depth: 1},
			{ID: "doc_c", Title: "C", LibraryID: "lib_it", Depth: 1},
			{ID: "doc_d", Title: "D", LibraryID: "lib_fin", Depth: 2},
		},
		Edges: []api.GraphEdge{
			{SourceDocumentID: "doc_a", TargetDocumentID: "doc_b", Label: "often next", EdgeType: "data", Support: 40},
			{SourceDocumentID: "doc_c", TargetDocumentID: "doc_a", Label: "often next", EdgeType: "data", Support: 2, LowConfidence: true},
			{SourceDocumentID: "doc_b", TargetDocumentID: "doc_d", Label: "often next", EdgeType: "semantic"},
			{SourceDocumentID: "doc_b", TargetDocumentID: "doc_c", Label: "often next", EdgeType: "data", Support: 5},
		}}
	var b bytes.Buffer
	Traversal(&b, tr)
	want := `4 documents within 2 hops of doc_a (direction both, label "often next"):

A (doc_a)
  → B (doc_b): often next, seen in 40 recordings
    → D (doc_d) [lib_fin]: often next, related by meaning
  ← C (doc_c): often next, seen in 2 recordings (low confidence)

Also between these documents:
- B (doc_b) → C (doc_c): often next, seen in 5 recordings
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	// A node with no edge to the depth before it is still listed.
	tr.Edges = tr.Edges[:2]
	tr.Label = nil
	b.Reset()
	Traversal(&b, tr)
	contains(t, b.String(), "every label", "    ? D (doc_d) [lib_fin]: reached at depth 2")
}

func testGraph() *api.Graph {
	return &api.Graph{
		Documents: []api.GraphDocument{
			{ID: "doc_a", Title: `Say "hi" \ wave`, Category: "Ops", RecordingCount: 9},
			{ID: "doc_b", Title: "Two\nlines", RecordingCount: 1},
			{ID: "doc_c", Title: "Plain {braces} ; -> and // not a comment", RecordingCount: 0},
		},
		Edges: []api.GraphEdge{
			{SourceDocumentID: "doc_a", TargetDocumentID: "doc_b", TargetDocumentTitle: "Two\nlines", Label: "often next", EdgeType: "data", Support: 12},
			{SourceDocumentID: "doc_a", TargetDocumentID: "doc_c", TargetDocumentTitle: "Plain", Label: "alternative to", EdgeType: "semantic"},
			{SourceDocumentID: "doc_b", TargetDocumentID: "doc_c", TargetDocumentTitle: "Plain", Label: "often next", EdgeType: "data", Support: 1, LowConfidence: true},
		},
		Truncated: true,
	}
}

func TestGraphTree(t *testing.T) {
	var b bytes.Buffer
	GraphTree(&b, testGraph())
	contains(t, b.String(), "3 documents and 3 edges, most active first.", "Truncated:",
		"Say \"hi\" \\ wave (doc_a) · 9 recordings · Ops\n  → Two lines (doc_b): often next, seen in 12 recordings\n  → Plain (doc_c): alternative to, related by meaning",
		"(doc_c) · 0 recordings\n")
	g := testGraph()
	g.Truncated = false
	b.Reset()
	GraphTree(&b, g)
	if strings.Contains(b.String(), "Truncated") {
		t.Errorf("a whole graph said truncated:\n%s", b.String())
	}
}

func TestGraphDOTParses(t *testing.T) {
	g := testGraph()
	var b bytes.Buffer
	GraphDOT(&b, g, `lib "it"`)
	src := b.String()
	if open, shut := braces(src); open != 1 || shut != 1 {
		t.Errorf("%d { and %d } outside strings:\n%s", open, shut, src)
	}
	edgeLines := 0
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), `"doc_`) && strings.Contains(l, `" -> "`) {
			edgeLines++
		}
	}
	if edgeLines != len(g.Edges) {
		t.Errorf("%d edge lines for %d edges:\n%s", edgeLines, len(g.Edges), src)
	}
	f, err := dot.ParseString(src)
	if err != nil {
		t.Fatalf("not DOT: %v\n%s", err, src)
	}
	if len(f.Graphs) != 1 || !f.Graphs[0].Directed || f.Graphs[0].ID != `"lib \"it\""` {
		t.Fatalf("graphs %+v", f.Graphs)
	}
	labels := map[string]string{}
	edges := 0
	for _, s := range f.Graphs[0].Stmts {
		switch s := s.(type) {
		case *ast.NodeStmt:
			for _, a := range s.Attrs {
				if a.Key == "label" {
					labels[s.Node.ID] = a.Val
				}
			}
		case *ast.EdgeStmt:
			edges++
		}
	}
	if edges != len(g.Edges) || len(labels) != len(g.Documents) {
		t.Errorf("parsed %d edges and %d labelled nodes", edges, len(labels))
	}
	if labels[`"doc_a"`] != `"Say \"hi\" \\ wave"` || labels[`"doc_b"`] != `"Two\nlines"` {
		t.Errorf("labels %q", labels)
	}
	if path, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command(path, "-Tsvg")
		cmd.Stdin = strings.NewReader(src)
		if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("<svg")) {
			t.Errorf("dot -Tsvg: %v\n%s", err, out)
		}
	} else {
		t.Log("no dot binary: checked with the gonum DOT parser only")
	}
}

// braces counts { and } outside DOT quoted strings.
func braces(src string) (open, shut int) {
	in := false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && c == '{':
			open++
		case !in && c == '}':
			shut++
		}
	}
	return open, shut
}
