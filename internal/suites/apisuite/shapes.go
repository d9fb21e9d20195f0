package apisuite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/data/dataset"
)

// The fields of each resource, from docs/api.md.
var (
	libraryFields = map[string]kind{"id": kString, "name": kString, "description": kString,
		"categories": kStrings, "tags": kStrings, "documentCount": kInt, "createdAt": kTime, "updatedAt": kTime}
	libraryFullFields = with(libraryFields, map[string]kind{"edgeCount": kInt})
	labelFields       = map[string]kind{"name": kString, "documentCount": kInt}
	libraryRefFields  = map[string]kind{"id": kString, "name": kString}
	edgesFields       = map[string]kind{"outgoing": kArray, "incoming": kArray}
	outgoingFields    = map[string]kind{"targetDocumentId": kString, "targetDocumentTitle": kString, "targetLibraryId": kString,
		"label": kString, "edgeType": kString, "recordingCount": kInt, "support": kInt, "lowConfidence": kBool}
	incomingFields = map[string]kind{"sourceDocumentId": kString, "sourceDocumentTitle": kString, "sourceLibraryId": kString,
		"label": kString, "edgeType": kString, "recordingCount": kInt, "support": kInt, "lowConfidence": kBool}
	documentFields = map[string]kind{"id": kString, "title": kString, "category": kString, "tags": kStrings,
		"applications": kStrings, "recordingCount": kInt, "deviceCount": kInt, "firstSeen": kTime, "lastSeen": kTime,
		"createdAt": kTime, "updatedAt": kTime, "content": kObject, "schema": kObject, "library": kObject, "edges": kObject}
	listItemFields = map[string]kind{"id": kString, "title": kString, "category": kString, "tags": kStrings,
		"applications": kStrings, "recordingCount": kInt, "deviceCount": kInt, "firstSeen": kTime, "lastSeen": kTime,
		"createdAt": kTime, "updatedAt": kTime, "content": kObject}
	documentPageFields = map[string]kind{"documents": kArray, "total": kInt, "page": kInt, "pageSize": kInt, "schema": kObject}
	graphFields        = map[string]kind{"documents": kArray, "edges": kArray, "truncated": kBool, "schema": kObject}
	graphDocFields     = map[string]kind{"id": kString, "title": kString, "category": kString, "tags": kStrings,
		"applications": kStrings, "recordingCount": kInt, "lastSeen": kTime}
	graphEdgeFields = map[string]kind{"sourceDocumentId": kString, "sourceDocumentTitle": kString,
		"targetDocumentId": kString, "targetDocumentTitle": kString, "label": kString, "edgeType": kString,
		"recordingCount": kInt, "support": kInt, "lowConfidence": kBool}
	traversalFields = map[string]kind{"rootDocumentId": kString, "direction": kString, "label": kNullString,
		"maxDepth": kInt, "nodes": kArray, "edges": kArray, "schemas": kObject}
	nodeFields = map[string]kind{"id": kString, "title": kString, "category": kString, "tags": kStrings,
		"applications": kStrings, "libraryId": kString, "depth": kInt, "content": kObject}
	recordingsFields = map[string]kind{"sourceRecordings": kArray, "total": kInt, "linkedTotal": kInt,
		"privateTotal": kInt, "guidance": kString, "page": kInt, "pageSize": kInt}
	recordingFields = map[string]kind{"id": kString, "title": kString, "status": kString, "clientCreatedAt": kTime,
		"questions": kArray, "steps": kStrings}
	questionFields = map[string]kind{"id": kString, "question": kString, "response": kString, "sequenceOrder": kInt}
	searchFields   = map[string]kind{"documents": kArray, "schemas": kObject, "total": kInt, "matchedTotal": kInt,
		"page": kInt, "pageSize": kInt, "facets": kObject, "lowConfidence": kBool}
	searchLowFields = with(searchFields, map[string]kind{"guidance": kStrings})
	hitFields       = map[string]kind{"id": kString, "title": kString, "category": kString, "tags": kStrings,
		"applications": kStrings, "content": kObject, "library": kObject, "edges": kObject, "relevance": kObject}
	relevanceFields   = map[string]kind{"signals": kStrings, "score": kNumber, "semanticSimilarity": kNumber}
	facetsFields      = map[string]kind{"categories": kArray, "tags": kArray, "applications": kArray, "libraries": kArray}
	libraryFacetField = map[string]kind{"id": kString, "name": kString, "documentCount": kInt}
)

func with(a, b map[string]kind) map[string]kind {
	out := map[string]kind{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// Values as the API sends them, decoded by the suite's own types. They
// repeat shared/api's on purpose: a suite that decoded with the server's
// types would not notice a field renamed in both.

type apiLibrary struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Description   string    `json:"description"`
	Categories    []string  `json:"categories"`
	Tags          []string  `json:"tags"`
	DocumentCount int       `json:"documentCount"`
	EdgeCount     *int      `json:"edgeCount"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

type apiLabel struct {
	Name          string `json:"name"`
	DocumentCount int    `json:"documentCount"`
}

type apiRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type apiEdge struct {
	SourceDocumentID    string `json:"sourceDocumentId"`
	SourceDocumentTitle string `json:"sourceDocumentTitle"`
	SourceLibraryID     string `json:"sourceLibraryId"`
	TargetDocumentID    string `json:"targetDocumentId"`
	TargetDocumentTitle string `json:"targetDocumentTitle"`
	TargetLibraryID     string `json:"targetLibraryId"`
	Label               string `json:"label"`
	EdgeType            string `json:"edgeType"`
	RecordingCount      int    `json:"recordingCount"`
	Support             int    `json:"support"`
	LowConfidence       bool   `json:"lowConfidence"`
}

type apiEdges struct {
	Outgoing []apiEdge `json:"outgoing"`
	Incoming []apiEdge `json:"incoming"`
}

// apiDoc holds every field any document form has.
type apiDoc struct {
	ID             string          `json:"id"`
	Title          string          `json:"title"`
	Category       string          `json:"category"`
	Tags           []string        `json:"tags"`
	Applications   []string        `json:"applications"`
	RecordingCount int             `json:"recordingCount"`
	DeviceCount    int             `json:"deviceCount"`
	FirstSeen      time.Time       `json:"firstSeen"`
	LastSeen       time.Time       `json:"lastSeen"`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	Content        json.RawMessage `json:"content"`
	Schema         json.RawMessage `json:"schema"`
	Library        apiRef          `json:"library"`
	LibraryID      string          `json:"libraryId"`
	Depth          int             `json:"depth"`
	Edges          apiEdges        `json:"edges"`
	Relevance      struct {
		Signals            []string `json:"signals"`
		Score              float64  `json:"score"`
		SemanticSimilarity float64  `json:"semanticSimilarity"`
	} `json:"relevance"`
}

type apiDocumentPage struct {
	Documents []apiDoc        `json:"documents"`
	Total     int             `json:"total"`
	Page      int             `json:"page"`
	PageSize  int             `json:"pageSize"`
	Schema    json.RawMessage `json:"schema"`
}

type apiGraph struct {
	Documents []apiDoc        `json:"documents"`
	Edges     []apiEdge       `json:"edges"`
	Truncated bool            `json:"truncated"`
	Schema    json.RawMessage `json:"schema"`
}

type apiTraversal struct {
	RootDocumentID string                     `json:"rootDocumentId"`
	Direction      string                     `json:"direction"`
	Label          *string                    `json:"label"`
	MaxDepth       int                        `json:"maxDepth"`
	Nodes          []apiDoc                   `json:"nodes"`
	Edges          []apiEdge                  `json:"edges"`
	Schemas        map[string]json.RawMessage `json:"schemas"`
}

type apiRecording struct {
	ID              string    `json:"id"`
	Title           string    `json:"title"`
	Status          string    `json:"status"`
	ClientCreatedAt time.Time `json:"clientCreatedAt"`
	Questions       []struct {
		ID            string `json:"id"`
		Question      string `json:"question"`
		Response      string `json:"response"`
		SequenceOrder int    `json:"sequenceOrder"`
	} `json:"questions"`
	Steps []string `json:"steps"`
}

type apiRecordings struct {
	SourceRecordings []apiRecording `json:"sourceRecordings"`
	Total            int            `json:"total"`
	LinkedTotal      int            `json:"linkedTotal"`
	PrivateTotal     int            `json:"privateTotal"`
	Guidance         string         `json:"guidance"`
	Page             int            `json:"page"`
	PageSize         int            `json:"pageSize"`
}

type apiFacets struct {
	Categories   []apiLabel `json:"categories"`
	Tags         []apiLabel `json:"tags"`
	Applications []apiLabel `json:"applications"`
	Libraries    []struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		DocumentCount int    `json:"documentCount"`
	} `json:"libraries"`
}

type apiSearch struct {
	Documents     []apiDoc                   `json:"documents"`
	Schemas       map[string]json.RawMessage `json:"schemas"`
	Total         int                        `json:"total"`
	MatchedTotal  int                        `json:"matchedTotal"`
	Page          int                        `json:"page"`
	PageSize      int                        `json:"pageSize"`
	Facets        apiFacets                  `json:"facets"`
	LowConfidence bool                       `json:"lowConfidence"`
	Guidance      []string                   `json:"guidance"`
}

// Comparisons with the demo data.

// sameJSON reports whether two values encode to equal JSON values.
func sameJSON(a, b any) bool {
	norm := func(v any) any {
		var raw []byte
		switch x := v.(type) {
		case json.RawMessage:
			raw = x
		default:
			raw, _ = json.Marshal(x)
		}
		var out any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// checkSchema checks a delivered template against the library's: its version
// and sections (the spec promises at least those two).
func checkSchema(t testing.TB, where string, got json.RawMessage, lib *dataset.Library) {
	t.Helper()
	var s struct {
		Version  *int            `json:"version"`
		Sections json.RawMessage `json:"sections"`
	}
	if err := json.Unmarshal(got, &s); err != nil || s.Version == nil {
		t.Errorf("%s: schema %s has no integer version", where, got)
		return
	}
	if *s.Version != lib.Schema.Version || !sameJSON(s.Sections, lib.Schema.Sections) {
		t.Errorf("%s: schema %s, want the template of %s: %+v", where, got, lib.ID, lib.Schema)
	}
}

func sameTime(got time.Time, want string) bool { return got.Equal(parseTime(want)) }

// checkDocFields compares the fields a document form carries with the demo
// document. fields is the form's field set; only those are compared.
func (s *suite) checkDocFields(t testing.TB, where string, got apiDoc, fields map[string]kind) {
	t.Helper()
	d := s.m.docs[got.ID]
	if d == nil {
		t.Errorf("%s: document %s is not in the demo data", where, got.ID)
		return
	}
	var bad []string
	check := func(field string, same bool) {
		if _, has := fields[field]; has && !same {
			bad = append(bad, field)
		}
	}
	check("title", got.Title == d.Title)
	check("category", got.Category == d.Category)
	check("tags", slices.Equal(got.Tags, d.Tags))
	check("applications", slices.Equal(got.Applications, d.Applications))
	check("recordingCount", got.RecordingCount == s.m.recordingCount(d.ID))
	check("deviceCount", got.DeviceCount == d.DeviceCount)
	check("firstSeen", sameTime(got.FirstSeen, d.FirstSeen))
	check("lastSeen", sameTime(got.LastSeen, d.LastSeen))
	check("createdAt", sameTime(got.CreatedAt, d.CreatedAt))
	check("updatedAt", sameTime(got.UpdatedAt, d.UpdatedAt))
	check("content", sameJSON(got.Content, d.Content))
	check("libraryId", got.LibraryID == d.LibraryID)
	check("library", got.Library == apiRef{ID: d.LibraryID, Name: s.m.libs[d.LibraryID].Name})
	if len(bad) > 0 {
		t.Errorf("%s: document %s differs from the demo data in %s", where, got.ID, strings.Join(bad, ", "))
	}
	if _, has := fields["content"]; has {
		s.checkContentKeys(t, where, got)
	}
}

// checkContentKeys: content is keyed by the sections of the library's template.
func (s *suite) checkContentKeys(t testing.TB, where string, got apiDoc) {
	t.Helper()
	d := s.m.docs[got.ID]
	var c map[string]any
	_ = json.Unmarshal(got.Content, &c)
	for k := range c {
		if !slices.ContainsFunc(s.m.libs[d.LibraryID].Schema.Sections, func(sec dataset.Section) bool { return sec.Key == k }) {
			t.Errorf("%s: content of %s has key %q, not a section of its template", where, got.ID, k)
		}
	}
}

// checkDocEdges compares a document's edges with the demo's edges the key sees.
func (s *suite) checkDocEdges(t testing.TB, where string, key *dataset.APIKey, docID string, got apiEdges, raw any) {
	t.Helper()
	obj := shape(t, where+" edges", raw, edgesFields)
	for _, e := range items(obj, "outgoing") {
		shape(t, where+" edges.outgoing[]", e, outgoingFields)
	}
	for _, e := range items(obj, "incoming") {
		shape(t, where+" edges.incoming[]", e, incomingFields)
	}
	out, in := s.m.docEdges(key, docID)
	var wantOut, wantIn []apiEdge
	for _, e := range out {
		wantOut = append(wantOut, apiEdge{TargetDocumentID: e.TargetDocumentID, TargetDocumentTitle: s.m.docs[e.TargetDocumentID].Title,
			TargetLibraryID: s.m.libOf(e.TargetDocumentID), Label: e.Label, EdgeType: e.EdgeType,
			RecordingCount: e.RecordingCount, Support: e.Support, LowConfidence: lowConfidence(e)})
	}
	for _, e := range in {
		wantIn = append(wantIn, apiEdge{SourceDocumentID: e.SourceDocumentID, SourceDocumentTitle: s.m.docs[e.SourceDocumentID].Title,
			SourceLibraryID: s.m.libOf(e.SourceDocumentID), Label: e.Label, EdgeType: e.EdgeType,
			RecordingCount: e.RecordingCount, Support: e.Support, LowConfidence: lowConfidence(e)})
	}
	for _, e := range append(slices.Clone(got.Outgoing), got.Incoming...) {
		for _, lib := range []string{e.SourceLibraryID, e.TargetLibraryID} {
			if lib != "" && !s.m.sees(key, lib) {
				t.Errorf("%s: an edge of %s leads into library %s, outside the key's scope", where, docID, lib)
			}
		}
	}
	if !sameEdgeSet(got.Outgoing, wantOut) {
		t.Errorf("%s: edges.outgoing of %s:\n got %s\nwant %s", where, docID, edgeList(got.Outgoing), edgeList(wantOut))
	}
	if !sameEdgeSet(got.Incoming, wantIn) {
		t.Errorf("%s: edges.incoming of %s:\n got %s\nwant %s", where, docID, edgeList(got.Incoming), edgeList(wantIn))
	}
}

// lowConfidence is true only for a data edge with support below 3.
func lowConfidence(e dataset.Edge) bool { return e.EdgeType == "data" && e.Support < 3 }

// graphEdge is the graph form of a demo edge.
func (s *suite) graphEdge(e dataset.Edge) apiEdge {
	return apiEdge{SourceDocumentID: e.SourceDocumentID, SourceDocumentTitle: s.m.docs[e.SourceDocumentID].Title,
		TargetDocumentID: e.TargetDocumentID, TargetDocumentTitle: s.m.docs[e.TargetDocumentID].Title,
		Label: e.Label, EdgeType: e.EdgeType, RecordingCount: e.RecordingCount, Support: e.Support, LowConfidence: lowConfidence(e)}
}

func sameEdgeSet(a, b []apiEdge) bool {
	ka, kb := edgeStrings(a), edgeStrings(b)
	return slices.Equal(ka, kb)
}

func edgeStrings(es []apiEdge) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%+v", e)
	}
	sort.Strings(out)
	return out
}

func edgeList(es []apiEdge) string {
	var b strings.Builder
	for _, s := range edgeStrings(es) {
		b.WriteString("\n  ")
		b.WriteString(s)
	}
	if len(es) == 0 {
		return "(none)"
	}
	return b.String()
}

func ids(docs []apiDoc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

func docIDs(docs []*dataset.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

// labelSet renders label entries as sorted "name=count" strings, and reports
// duplicates.
func labelSet(t testing.TB, where string, ls []apiLabel) []string {
	t.Helper()
	seen := map[string]bool{}
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		if seen[l.Name] {
			t.Errorf("%s: %q listed twice", where, l.Name)
		}
		seen[l.Name] = true
		out = append(out, fmt.Sprintf("%s=%d", l.Name, l.DocumentCount))
	}
	sort.Strings(out)
	return out
}

func countSet(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedCopy(ss []string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return out
}
