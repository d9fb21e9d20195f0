package mcpserver

import (
	"strings"
	"testing"
)

// internals are what no argument error may show: the validator's and Go's
// own words, which tell an agent nothing about what to send instead.
var internals = []string{"reflect", "%!", "float64", "json: cannot unmarshal", "jsonschema", "validating", "/properties/",
	"is greater than", "is less than", "<nil>", "map[", "[]interface", "unmarshal"}

// TestArgumentErrorsInTheAgentsTerms sends each tool wrong types,
// out-of-range numbers, unknown values, missing and extra arguments: every
// refusal names the argument and what it takes, in words, and reaches no API.
func TestArgumentErrorsInTheAgentsTerms(t *testing.T) {
	a := newAPI(t)
	s := connect(t, a, keyFull)
	before := a.Requests()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"search_documents", map[string]any{"query": "reset password", "pageSize": 500}, []string{"pageSize must be a whole number from 1 to 100, not 500"}},
		{"search_documents", map[string]any{"query": "reset password", "pageSize": 5.5}, []string{"pageSize must be a whole number from 1 to 100, not 5.5"}},
		{"search_documents", map[string]any{"query": "reset password", "pageSize": "five"}, []string{`pageSize must be a whole number from 1 to 100, not "five"`}},
		{"search_documents", map[string]any{"query": "reset password", "page": 0}, []string{"page must be a whole number, 1 or more, not 0"}},
		{"search_documents", map[string]any{"query": "a"}, []string{`query must be a string of 2 to 512 characters, not "a"`}},
		{"search_documents", map[string]any{"query": 42}, []string{"query must be a string of 2 to 512 characters, not 42"}},
		{"search_documents", map[string]any{}, []string{"query is required: a string of 2 to 512 characters"}},
		{"search_documents", map[string]any{"q": "reset password"}, []string{`"q" is not an argument of this tool; it takes query, application, category,`, "query is required"}},
		{"search_documents", map[string]any{"query": "reset password", "tag": []string{"a"}}, []string{`tag must be a string, not ["a"]`}},
		{"list_libraries", map[string]any{"all": true}, []string{`"all" is not an argument of this tool; it takes no arguments`}},
		{"get_library", map[string]any{}, []string{"library is required: a non-empty string"}},
		{"get_library", map[string]any{"library": "lib_it", "include": []string{"edges"}}, []string{"include must be a list of tags, categories, applications, each at most once, not [\"edges\"]"}},
		{"get_library", map[string]any{"library": "lib_it", "include": "tags"}, []string{"include must be a list of tags, categories, applications"}},
		{"list_documents", map[string]any{"library": "lib_it", "pageSize": 101}, []string{"pageSize must be a whole number from 1 to 100, not 101"}},
		{"list_documents", map[string]any{"library": "lib_it", "search": nil}, []string{"search must be a string, not null"}},
		{"get_document", map[string]any{"id": 7}, []string{"id must be a "}},
		{"get_document", map[string]any{"id": "doc_it_001", "format": "md"}, []string{`"format" is not an argument of this tool; it takes id`}},
		{"traverse_graph", map[string]any{"id": "doc_it_001", "depth": 4}, []string{"depth must be a whole number from 1 to 3, not 4"}},
		{"traverse_graph", map[string]any{"id": "doc_it_001", "direction": "sideways"}, []string{`direction must be one of outgoing, incoming, both, not "sideways"`}},
		{"traverse_graph", map[string]any{"direction": "outgoing"}, []string{"id is required"}},
		{"get_source_recordings", map[string]any{"id": "doc_it_001", "pageSize": 51}, []string{"pageSize must be a whole number from 1 to 50, not 51"}},
		{"get_source_recordings", map[string]any{"id": "doc_it_001", "page": true}, []string{"page must be a whole number, 1 or more, not true"}},
	} {
		msg := s.toolErr(tc.tool, tc.args)
		if !strings.HasPrefix(msg, "bad_request: ") || !strings.HasSuffix(msg, "nothing was sent to the API.") {
			t.Errorf("%s(%v): not a bad_request that says what to do: %q", tc.tool, tc.args, msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s(%v): no %q in %q", tc.tool, tc.args, w, msg)
			}
		}
		for _, bad := range internals {
			if strings.Contains(msg, bad) {
				t.Errorf("%s(%v): %q shows %q", tc.tool, tc.args, msg, bad)
			}
		}
	}
	if n := a.Requests() - before; n != 0 {
		t.Errorf("the API got %d requests for arguments the schema refuses", n)
	}
	// What only the API can judge comes back as its own error.
	if msg := s.toolErr("search_documents", map[string]any{"query": "reset password", "libraryId": "no-such-library"}); !strings.HasPrefix(msg, "not_found: ") {
		t.Errorf("libraryId by an unknown slug: %q", msg)
	}
	// A slug, current or earlier, narrows search as an ID does.
	for _, lib := range []string{"lib_finance", "finance", "accounting"} {
		out, _ := ok[searchOutput](s, "search_documents", map[string]any{"query": "invoice", "libraryId": lib})
		if len(out.Hits) == 0 {
			t.Errorf("libraryId %s: no hits", lib)
		}
		for _, h := range out.Hits {
			if h.Library.ID != "lib_finance" {
				t.Errorf("libraryId %s gave %s", lib, h.Library.ID)
			}
		}
	}
	// Arguments that fit go through, defaults applied by the SDK.
	if _, text := ok[searchOutput](s, "search_documents", map[string]any{"query": "reset password", "pageSize": 3}); text == "" {
		t.Error("a good search has no text")
	}
}
