package api

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"
)

// stdJSON is what the handler wrote before Appender: a json.Encoder without
// HTML escaping.
func stdJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return buf.Bytes()
}

func checkSame(t testing.TB, name string, v Appender) {
	t.Helper()
	want := stdJSON(t, v)
	got := v.AppendJSON(nil)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-40)
		t.Fatalf("%s: AppendJSON differs from encoding/json at byte %d:\n got %q\nwant %q", name, i,
			got[lo:min(len(got), i+40)], want[lo:min(len(want), i+40)])
	}
	// Appending after existing bytes keeps them.
	prefixed := v.AppendJSON([]byte("x"))
	if !bytes.Equal(prefixed[1:], want) || prefixed[0] != 'x' {
		t.Fatalf("%s: AppendJSON does not append", name)
	}
}

// tricky holds every kind of string encoding/json treats specially.
var tricky = []string{
	"", "plain", `quote " and backslash \`, "<html> & 'apostrophe'", "tab\tnewline\nreturn\r",
	"\b\f\x00\x01\x1f\x7f", "é ñ 漢字 🙂", "line\u2028para\u2029", "bad \xff\xfe utf8 \xc3", "trunc \xe2\x82",
}

func sample(s string, f float64) []Appender {
	tm := Time{time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)}
	frac := Time{time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.FixedZone("x", 3600))}
	n := 7
	label := s
	quoted, _ := json.Marshal(s)
	content := json.RawMessage(`{"summary":` + string(quoted) + `,"steps":["a","b"]}`)
	spaced := json.RawMessage(" {\n \"summary\" : \"x y\",\t\"steps\": [ \"a\" , \"b\" ] }\n")
	schema := Schema{Version: 2, Sections: []Section{{Key: "summary", Title: s, Type: "text"}, {Key: "steps", Title: "Steps", Type: "steps"}}}
	edges := Edges{
		Outgoing: []OutgoingEdge{{TargetDocumentID: "doc_2", TargetDocumentTitle: s, TargetLibraryID: "lib_x", Label: "often next", EdgeType: "data", RecordingCount: 3, Support: 2, LowConfidence: true}},
		Incoming: []IncomingEdge{{SourceDocumentID: "doc_3", SourceDocumentTitle: "t", SourceLibraryID: "lib_y", Label: s, EdgeType: "semantic"}},
	}
	item := DocumentItem{ID: "doc_1", Title: s, Category: s, Tags: []string{s, "b"}, Applications: nil, RecordingCount: 4,
		DeviceCount: 2, FirstSeen: tm, LastSeen: frac, CreatedAt: tm, UpdatedAt: Time{}, Content: content}
	spacedItem := item
	spacedItem.Content = spaced
	nullItem := item
	nullItem.Content = nil
	ge := GraphEdge{SourceDocumentID: "doc_1", SourceDocumentTitle: s, TargetDocumentID: "doc_2", TargetDocumentTitle: "x", Label: "alternative to", EdgeType: "semantic", RecordingCount: 1, Support: 9}
	return []Appender{
		&LibraryList{Libraries: []Library{{ID: "lib_1", Name: s, Description: s, Categories: []string{}, Tags: nil, DocumentCount: 3, CreatedAt: tm, UpdatedAt: frac}}},
		&LibraryList{},
		&Library{ID: "lib_1", Name: s, Categories: []string{"a"}, Tags: []string{s}, EdgeCount: &n, CreatedAt: tm},
		&Tags{Tags: []Label{{Name: s, DocumentCount: 1}}}, &Tags{Tags: []Label{}}, &Tags{},
		&Categories{Categories: []Label{{Name: s, DocumentCount: 2}, {Name: "b", DocumentCount: 0}}},
		&Applications{Applications: nil},
		&DocumentPage{Documents: []DocumentItem{item, spacedItem, nullItem}, Total: 3, Page: 1, PageSize: 20, Schema: schema},
		&DocumentPage{Documents: []DocumentItem{}, Schema: Schema{}},
		&Document{DocumentItem: item, Schema: schema, Library: DocumentRef{ID: "lib_1", Name: s}, Edges: edges},
		&Document{DocumentItem: spacedItem, Edges: Edges{Outgoing: []OutgoingEdge{}, Incoming: []IncomingEdge{}}},
		&Graph{Documents: []GraphDocument{{ID: "doc_1", Title: s, Category: "c", Tags: []string{}, Applications: []string{s}, RecordingCount: 5, LastSeen: tm}},
			Edges: []GraphEdge{ge, ge}, Truncated: true, Schema: schema},
		&Graph{},
		&Traversal{RootDocumentID: "doc_1", Direction: "both", Label: &label, MaxDepth: 3,
			Nodes:   []TraverseNode{{ID: "doc_1", Title: s, Tags: []string{}, Applications: []string{"x"}, LibraryID: "lib_1", Depth: 0, Content: content}, {ID: "doc_2", Content: spaced, Depth: 2}},
			Edges:   []GraphEdge{ge},
			Schemas: map[string]Schema{"lib_z": schema, "lib_a": {Version: 1, Sections: []Section{}}, s: schema}},
		&Traversal{Nodes: []TraverseNode{}, Edges: []GraphEdge{}, Schemas: map[string]Schema{}},
		&SourceRecordings{SourceRecordings: []SourceRecording{{ID: "rec_1", Title: s, Status: "processed", ClientCreatedAt: frac,
			Questions: []Question{{ID: "ques_1", Question: s, Response: s, SequenceOrder: 1}}, Steps: []string{s}}, {ID: "rec_2"}},
			Total: 2, LinkedTotal: 3, PrivateTotal: 1, Guidance: s, Page: 1, PageSize: 50},
		&SourceRecordings{SourceRecordings: []SourceRecording{}},
		&SearchResults{Documents: []SearchHit{{ID: "doc_1", Title: s, Tags: []string{}, Applications: nil, Content: content,
			Library: DocumentRef{ID: "lib_1", Name: "n"}, Edges: edges, Relevance: Relevance{Signals: []string{"lexical", "semantic"}, Score: f, SemanticSimilarity: -f / 3}}},
			Schemas: map[string]Schema{"lib_1": schema}, Total: 1, MatchedTotal: 4, Page: 1, PageSize: 20,
			Facets: SearchFacets{Categories: []Label{{Name: s, DocumentCount: 1}}, Tags: []Label{}, Applications: nil,
				Libraries: []LibraryFacet{{ID: "lib_1", Name: s, DocumentCount: 1}}}},
		&SearchResults{Documents: []SearchHit{}, Schemas: map[string]Schema{}, LowConfidence: true, Guidance: []string{s, "reword"}},
		&SearchResults{Guidance: []string{}},
	}
}

func TestAppendJSONIsEncodingJSON(t *testing.T) {
	floats := []float64{0, 1, 0.5, 0.123456789, 1e-7, 3.5e-12, 1e21, 12345678.25, -0.75, math.SmallestNonzeroFloat64}
	for i, s := range tricky {
		for _, v := range sample(s, floats[i%len(floats)]) {
			checkSame(t, s, v)
		}
	}
}

func TestAppendRawGuards(t *testing.T) {
	// Not JSON at all: null, where encoding/json would refuse the answer.
	if got := string(appendRaw(nil, json.RawMessage("{\"a\": nope}"))); got != "null" {
		t.Errorf("invalid spaced raw: %q", got)
	}
	if isCompact([]byte(`{"a":"b c"}`)) != true || isCompact([]byte(`{"a": "b"}`)) != false ||
		isCompact([]byte(`{"a":"\" "}`)) != true || isCompact([]byte(`{"a":"x`)) != false {
		t.Error("isCompact misreads strings or white space")
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range tricky {
		f.Add(s, 0.5, " {\"a\" : [1, 2]} ")
	}
	f.Fuzz(func(t *testing.T, s string, score float64, raw string) {
		if math.IsInf(score, 0) || math.IsNaN(score) {
			score = 0
		}
		for _, v := range sample(s, score) {
			checkSame(t, "fuzz", v)
		}
		if json.Valid([]byte(raw)) {
			page := &DocumentPage{Documents: []DocumentItem{{Content: json.RawMessage(raw)}}}
			checkSame(t, "raw", page)
		}
	})
}

// TestPlain8 holds the eight-byte test to the byte-at-a-time one for every
// byte in every position.
func TestPlain8(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := range 8 {
			w := uint64(lsb * 'a')
			w = w&^(0xff<<(8*pos)) | uint64(c)<<(8*pos)
			want := c < utf8.RuneSelf && safeSet[c]
			if got := plain8(w); got != want {
				t.Fatalf("byte %#x at %d: plain8 %v, want %v", c, pos, got, want)
			}
		}
	}
}

func TestIsCompactStrings(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"a":"b c"}`: true, `{"a": "b"}`: false, `{"a":"\" "}`: true, `{"a":"x`: false,
		`{"a":"x\\"}`: true, `{"a":"x\\" }`: false, `{"a":"x\\\" y"}`: true, `["\\\\"," "]`: true, `[ ]`: false,
	} {
		if got := isCompact([]byte(raw)); got != want {
			t.Errorf("isCompact(%s) = %v, want %v", raw, got, want)
		}
	}
}

// sliceSource is a GraphSource over a Graph's own items.
type sliceSource struct{ g *Graph }

func (s sliceSource) GraphDocument(i int) GraphDocument { return s.g.Documents[i] }
func (s sliceSource) GraphEdge(i int) GraphEdge         { return s.g.Edges[i] }

// TestGraphViewWritesTheGraph: a view writes its Graph's bytes.
func TestGraphViewWritesTheGraph(t *testing.T) {
	for _, s := range tricky {
		for _, v := range sample(s, 0.5) {
			g, ok := v.(*Graph)
			if !ok || g.Documents == nil || g.Edges == nil {
				continue // a view always has lists
			}
			view := &GraphView{Source: sliceSource{g}, Documents: len(g.Documents), Edges: len(g.Edges), Truncated: g.Truncated, Schema: g.Schema}
			if got, want := view.AppendJSON(nil), g.AppendJSON(nil); !bytes.Equal(got, want) {
				t.Fatalf("view %s\nwant %s", got, want)
			}
			if !reflect.DeepEqual(view.Graph(), g) {
				t.Fatalf("view.Graph() is not the graph")
			}
		}
	}
}
