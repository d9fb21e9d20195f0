package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/api"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, line, text string }{
		{"Reset a password", "Reset a password", "Reset a password"},
		{"Café ✓ 日本 \uFFFD", "Café ✓ 日本 \uFFFD", "Café ✓ 日本 \uFFFD"},
		{"\x1b]0;hacked\x07Title", "\uFFFD]0;hacked\uFFFDTitle", "\uFFFD]0;hacked\uFFFDTitle"},
		{"\x1b[2J\x1b[31mred", "\uFFFD[2J\uFFFD[31mred", "\uFFFD[2J\uFFFD[31mred"},
		{"a\nb\tc", "a b c", "a\nb\tc"},
		{"a\r\nb", "a b", "a\nb"},
		{"safe\rEVIL", "safe EVIL", "safe\nEVIL"},
		{"x\u0085y\u2028z\u2029.", "x y z .", "x\ny\nz\n."},
		{"nul\x00 bel\x07 del\x7f csi\u009b", "nul\uFFFD bel\uFFFD del\uFFFD csi\uFFFD", "nul\uFFFD bel\uFFFD del\uFFFD csi\uFFFD"},
		{"abc\u202Efdp.exe", "abc\uFFFDfdp.exe", "abc\uFFFDfdp.exe"},
		{"\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069\u200E\u200F\u061C", strings.Repeat("\uFFFD", 11), strings.Repeat("\uFFFD", 11)},
		{"bad \xff\x9b byte", "bad \uFFFD\uFFFD byte", "bad \uFFFD\uFFFD byte"},
	} {
		if got := Clean(tc.in); got != tc.line {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := CleanText(tc.in); got != tc.text {
			t.Errorf("CleanText(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

// hostile is a string with every kind of character Clean must stop.
const hostile = "T\x1b]0;hacked\x07i\x1b[2Jt\rl\u202Ee\u2066\x9b\x00\x7f\xff"

// safe fails the test if out holds a character that could steer a terminal:
// anything Clean would replace, other than the newlines and tabs text is
// made of.
func safe(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if cleanRune(r, false) != r || (r == '\uFFFD' && !strings.HasPrefix(out[i:], "\uFFFD")) {
			t.Errorf("%s: control character %U at byte %d in\n%q", what, r, i, out)
			return
		}
	}
	if !strings.Contains(out, "T\uFFFD]0;hacked\uFFFDi") {
		t.Errorf("%s: the hostile title is not shown, replaced, in\n%q", what, out)
	}
}

func TestNoControlCharacterReachesTheOutput(t *testing.T) {
	h := hostile
	at := api.Time{Time: time.Date(2026, 1, 8, 21, 25, 0, 0, time.UTC)}
	var b bytes.Buffer

	content, _ := json.Marshal(map[string]any{"summary": h + "\nsecond " + h, "steps": []string{h, "ok"}, h: []string{h}})
	d := &api.Document{DocumentItem: api.DocumentItem{ID: h, Title: h, Category: h, Tags: []string{h}, Applications: []string{h}, Content: content},
		Schema:  api.Schema{Sections: []api.Section{{Key: "summary", Title: h, Type: "text"}, {Key: "steps", Title: "Steps", Type: "steps"}}},
		Library: api.DocumentRef{ID: h, Name: h},
		Edges: api.Edges{Outgoing: []api.OutgoingEdge{{TargetDocumentID: h, TargetDocumentTitle: h, Label: h, EdgeType: "data", Support: 3}},
			Incoming: []api.IncomingEdge{{SourceDocumentID: h, SourceDocumentTitle: h, Label: h, EdgeType: "semantic"}}}}
	if err := Document(&b, d); err != nil {
		t.Fatal(err)
	}
	safe(t, "Document", b.String())

	b.Reset()
	d.Content, _ = json.Marshal(h)
	Document(&b, d)
	safe(t, "Document with string content", b.String())

	g := &api.Graph{Documents: []api.GraphDocument{{ID: h, Title: h, Category: h}},
		Edges: []api.GraphEdge{{SourceDocumentID: h, TargetDocumentID: h, TargetDocumentTitle: h, Label: h, EdgeType: "data", Support: 1}}}
	b.Reset()
	GraphTree(&b, g)
	safe(t, "GraphTree", b.String())
	b.Reset()
	GraphDOT(&b, g, h)
	safe(t, "GraphDOT", b.String())

	b.Reset()
	Traversal(&b, &api.Traversal{RootDocumentID: "doc_a", Direction: h, Label: &h, MaxDepth: 1,
		Nodes: []api.TraverseNode{{ID: "doc_a", Title: h, LibraryID: "lib_a"}, {ID: "doc_b", Title: h, LibraryID: h, Depth: 1}, {ID: h, Title: h, LibraryID: h, Depth: 1}},
		Edges: []api.GraphEdge{{SourceDocumentID: "doc_a", TargetDocumentID: "doc_b", Label: h, EdgeType: "data", Support: 4},
			{SourceDocumentID: "doc_b", TargetDocumentID: "doc_x" + h, Label: h, EdgeType: "semantic"}}})
	safe(t, "Traversal", b.String())

	b.Reset()
	Recordings(&b, &api.SourceRecordings{Total: 1, LinkedTotal: 2, PrivateTotal: 1, Guidance: h,
		SourceRecordings: []api.SourceRecording{{ID: h, Title: h, Status: h, ClientCreatedAt: at,
			Questions: []api.Question{{Question: h, Response: h}}, Steps: []string{h}}}})
	safe(t, "Recordings", b.String())

	b.Reset()
	SearchResults(&b, &api.SearchResults{Page: 1, PageSize: 20, Total: 1, MatchedTotal: 1, LowConfidence: true, Guidance: []string{h},
		Documents: []api.SearchHit{{ID: h, Title: h, Category: h, Library: api.DocumentRef{ID: h, Name: h}, Relevance: api.Relevance{Signals: []string{h}}}},
		Facets:    api.SearchFacets{Libraries: []api.LibraryFacet{{ID: h, Name: h}}, Tags: []api.Label{{Name: h}}}})
	safe(t, "SearchResults", b.String())
}

func TestContentEdgeCases(t *testing.T) {
	schema := api.Schema{Sections: []api.Section{
		{Key: "summary", Title: "Summary", Type: "text"},
		{Key: "steps", Title: "Steps", Type: "steps"},
		{Key: "notes", Title: "Notes", Type: "list"},
	}}
	var b bytes.Buffer
	content := json.RawMessage(`{"summary":"Do it.\n## Steps\n  # not a heading either","steps":["Open Okta.",""," ","Reset it.\nThen:\n# tell them"],"notes":["", "\t"]}`)
	if err := Content(&b, content, schema); err != nil {
		t.Fatal(err)
	}
	want := "## Summary\nDo it.\n\\## Steps\n  \\# not a heading either\n\n## Steps\n1. Open Okta.\n2. Reset it.\n   Then:\n   \\# tell them\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if strings.Count(b.String(), "## Steps") != 2 || strings.Count(b.String(), "\n## ") != 1 {
		t.Errorf("the content's own heading was not escaped:\n%s", b.String())
	}

	doc := func(content string) string {
		t.Helper()
		var b bytes.Buffer
		d := &api.Document{DocumentItem: api.DocumentItem{ID: "doc_1", Title: "T", RecordingCount: 1, DeviceCount: 1,
			UpdatedAt: api.Time{Time: time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)},
			Content:   json.RawMessage(content)}, Schema: schema}
		if err := Document(&b, d); err != nil {
			t.Fatalf("%s: %v", content, err)
		}
		return b.String()
	}
	for _, c := range []string{``, `null`, `{}`, `{"summary":"  ","steps":["",""]}`} {
		contains(t, doc(c), "(this document has no content)")
	}
	got := doc(`{}`)
	contains(t, got, "Recorded 1 time on 1 device, last seen -; updated 2026-03-05\n")
	if strings.Contains(got, "0001") {
		t.Errorf("a zero time printed as a date:\n%s", got)
	}
	contains(t, doc(`"Just do it.\n## Steps"`), "(The content is a string", "\nJust do it.\n\\## Steps\n")
	contains(t, doc(`[1,{"a":"b"}]`), "(The content is not the JSON object", "[\n  1,\n  {\n    \"a\": \"b\"\n  }\n]\n")
	if strings.Contains(doc(`"x"`), "no content") {
		t.Error("string content reported as none")
	}
}
