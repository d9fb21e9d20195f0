package httpapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
)

// The field sets below are copied from the tables of docs/api.md and the lists of
// docs/api.md ("Resources"), independently of the Go types and
// of docs/openapi.yaml, so that a field added, renamed or dropped anywhere fails here.
var (
	librarySet       = []string{"id", "name", "description", "categories", "tags", "documentCount", "createdAt", "updatedAt"}
	labelSet         = []string{"name", "documentCount"}
	schemaSet        = []string{"version", "sections"}
	sectionSet       = []string{"key", "title", "type"} // our choice: docs/design.md
	graphEdgeSet     = []string{"sourceDocumentId", "sourceDocumentTitle", "targetDocumentId", "targetDocumentTitle", "label", "edgeType", "recordingCount", "support", "lowConfidence"}
	listItemSet      = []string{"id", "title", "category", "tags", "applications", "recordingCount", "deviceCount", "firstSeen", "lastSeen", "createdAt", "updatedAt", "content"}
	documentSet      = append(slices.Clone(listItemSet), "schema", "library", "edges")
	outgoingEdgeSet  = []string{"targetDocumentId", "targetDocumentTitle", "targetLibraryId", "label", "edgeType", "recordingCount", "support", "lowConfidence"}
	incomingEdgeSet  = []string{"sourceDocumentId", "sourceDocumentTitle", "sourceLibraryId", "label", "edgeType", "recordingCount", "support", "lowConfidence"}
	graphDocumentSet = []string{"id", "title", "category", "tags", "applications", "recordingCount", "lastSeen"}
	nodeSet          = []string{"id", "title", "category", "tags", "applications", "libraryId", "depth", "content"}
	recordingSet     = []string{"id", "title", "status", "clientCreatedAt", "questions", "steps"}
	questionSet      = []string{"id", "question", "response", "sequenceOrder"}
	errorSet         = []string{"code", "message"}
	// Search: docs/api.md's response table and hit fields; guidance only when lowConfidence.
	searchSet = []string{"documents", "schemas", "total", "matchedTotal", "page", "pageSize", "facets", "lowConfidence"}
	hitSet    = []string{"id", "title", "category", "tags", "applications", "content", "library", "edges", "relevance"}
)

// shape maps a path inside a response ("" is the body, "a.b" a member, "a[]" each
// item of an array, "a.*" each value of an object) to the exact set of keys every
// object found there must have.
type shape map[string][]string

func TestFieldSetsMatchTheSpec(t *testing.T) {
	s := newServer(t, options{keyLimit: 1000, ipLimit: 1000})
	withSchema := func(sh shape, at string) shape {
		sh[at] = schemaSet
		sh[strings.TrimPrefix(at+".sections[]", ".")] = sectionSet
		return sh
	}
	cases := []struct {
		path  string
		shape shape
	}{
		{"/libraries", shape{"": {"libraries"}, "libraries[]": librarySet}},
		{"/libraries/lib_a1", shape{"": append(slices.Clone(librarySet), "edgeCount")}},
		{"/libraries/lib_a1/tags", shape{"": {"tags"}, "tags[]": labelSet}},
		{"/libraries/lib_a1/categories", shape{"": {"categories"}, "categories[]": labelSet}},
		{"/libraries/lib_a1/applications", shape{"": {"applications"}, "applications[]": labelSet}},
		{"/libraries/lib_a1/graph", withSchema(shape{"": {"documents", "edges", "truncated", "schema"},
			"documents[]": graphDocumentSet, "edges[]": graphEdgeSet}, "schema")},
		{"/libraries/lib_a1/documents", withSchema(shape{"": {"documents", "total", "page", "pageSize", "schema"},
			"documents[]": listItemSet}, "schema")},
		{"/documents/doc_a1_1", withSchema(shape{"": documentSet, "library": {"id", "name"},
			"edges": {"outgoing", "incoming"}, "edges.outgoing[]": outgoingEdgeSet, "edges.incoming[]": incomingEdgeSet}, "schema")},
		{"/documents/doc_a1_1/traverse?depth=3", withSchema(shape{"": {"rootDocumentId", "direction", "label", "maxDepth", "nodes", "edges", "schemas"},
			"nodes[]": nodeSet, "edges[]": graphEdgeSet}, "schemas.*")},
		{"/documents/doc_a1_1/source-recordings", shape{"": {"sourceRecordings", "total", "linkedTotal", "privateTotal", "guidance", "page", "pageSize"},
			"sourceRecordings[]": recordingSet, "sourceRecordings[].questions[]": questionSet}},
		{"/search/documents?q=reset%20password", withSchema(shape{"": searchSet, "documents[]": hitSet,
			"documents[].relevance": {"signals", "score", "semanticSimilarity"}, "documents[].library": {"id", "name"},
			"documents[].edges": {"outgoing", "incoming"}, "documents[].edges.outgoing[]": outgoingEdgeSet,
			"facets": {"categories", "tags", "applications", "libraries"}, "facets.categories[]": labelSet,
			"facets.tags[]": labelSet, "facets.applications[]": labelSet, "facets.libraries[]": {"id", "name", "documentCount"}}, "schemas.*")},
		{"/search/documents?q=zzqx%20blorf", shape{"": append(slices.Clone(searchSet), "guidance"), "documents[]": hitSet}},
		{"/documents/doc_nope", shape{"": {"error"}, "error": errorSet}},
		{"/libraries/lib_a1/documents?page=0", shape{"": {"error"}, "error": errorSet}},
	}
	for _, c := range cases {
		r := s.get(t, fixture.KeyFull, c.path)
		var body any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		for at, want := range c.shape {
			objs := objectsAt(body, at)
			if len(objs) == 0 {
				// An empty list would make the check vacuous: the fixture must fill it.
				t.Errorf("GET %s: no object at %q to check", c.path, at)
			}
			for _, o := range objs {
				got := make([]string, 0, len(o))
				for k := range o {
					got = append(got, k)
				}
				slices.Sort(got)
				w := slices.Sorted(slices.Values(want))
				if !slices.Equal(got, w) {
					t.Errorf("GET %s at %q: fields %v, want %v", c.path, at, got, w)
				}
			}
		}
	}
}

// objectsAt returns the JSON objects found at path in v (see shape).
func objectsAt(v any, path string) []map[string]any {
	if path == "" {
		if o, ok := v.(map[string]any); ok {
			return []map[string]any{o}
		}
		return nil
	}
	seg, rest, _ := strings.Cut(path, ".")
	var next []any
	o, _ := v.(map[string]any)
	switch {
	case seg == "*":
		for _, x := range o {
			next = append(next, x)
		}
	case strings.HasSuffix(seg, "[]"):
		arr, _ := o[strings.TrimSuffix(seg, "[]")].([]any)
		next = arr
	default:
		if x, ok := o[seg]; ok {
			next = []any{x}
		}
	}
	var out []map[string]any
	for _, x := range next {
		out = append(out, objectsAt(x, rest)...)
	}
	return out
}
