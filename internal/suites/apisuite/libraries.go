package apisuite

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/doclib/doclib/shared/data/dataset"
)

// checkLibrary compares a library with the demo data: its labels are exactly
// those its documents use (docs/api.md, Library).
func (s *suite) checkLibrary(t testing.TB, where string, key *dataset.APIKey, got apiLibrary) {
	t.Helper()
	l := s.m.libs[got.ID]
	if l == nil || !s.m.sees(key, got.ID) {
		t.Errorf("%s: library %s is not one the key may see", where, got.ID)
		return
	}
	wantCats := sortedKeys(s.m.labelCounts(l.ID, "categories"))
	wantTags := sortedKeys(s.m.labelCounts(l.ID, "tags"))
	if got.Name != l.Name || got.Description != l.Description || got.DocumentCount != len(s.m.docsByLib[l.ID]) ||
		!sameTime(got.CreatedAt, l.CreatedAt) || !sameTime(got.UpdatedAt, l.UpdatedAt) {
		t.Errorf("%s: %s = name %q description %q documentCount %d createdAt %s updatedAt %s; want %q %q %d %s %s", where, l.ID,
			got.Name, got.Description, got.DocumentCount, got.CreatedAt, got.UpdatedAt,
			l.Name, l.Description, len(s.m.docsByLib[l.ID]), l.CreatedAt, l.UpdatedAt)
	}
	if !slices.Equal(sortedCopy(got.Categories), wantCats) || len(got.Categories) != len(wantCats) {
		t.Errorf("%s: %s categories %v, want (in any order) %v", where, l.ID, got.Categories, wantCats)
	}
	if !slices.Equal(sortedCopy(got.Tags), wantTags) {
		t.Errorf("%s: %s tags %v, want (in any order) %v", where, l.ID, got.Tags, wantTags)
	}
}

func (s *suite) testLibraries(t *testing.T) {
	m := s.m
	t.Run("list-per-key", func(t *testing.T) {
		for _, k := range m.workingKeys() {
			var got struct {
				Libraries []apiLibrary `json:"libraries"`
			}
			r := s.get(t, k, "/libraries")
			raw := shape(t, r.at(), ok(t, r, &got), map[string]kind{"libraries": kArray})
			for _, item := range items(raw, "libraries") {
				shape(t, "/libraries item", item, libraryFields) // edgeCount only on GET /libraries/{id}
			}
			var gotIDs []string
			for _, l := range got.Libraries {
				gotIDs = append(gotIDs, l.ID)
				s.checkLibrary(t, "GET /libraries as "+k.ID, k, l)
			}
			if want := m.visibleLibs(k); !slices.Equal(sortedCopy(gotIDs), want) || len(gotIDs) != len(want) {
				t.Errorf("GET /libraries as %s: %v, want exactly %v", k.ID, gotIDs, want)
			}
		}
	})

	t.Run("by-id-and-slugs", func(t *testing.T) {
		for _, id := range m.visibleLibs(m.full) {
			l := m.libs[id]
			// An ID, the current slug, and every earlier slug answer 200 with
			// the library as it is now (docs/api.md, Identifiers).
			for _, ref := range append([]string{l.ID, l.Slug}, l.PreviousSlugs...) {
				key := s.reader()
				r := s.get(t, key, "/libraries/"+esc(ref))
				if r.status != http.StatusOK {
					t.Errorf("%s: want 200", r)
					continue
				}
				var got apiLibrary
				shape(t, r.at(), ok(t, r, &got), libraryFullFields)
				if got.ID != l.ID {
					t.Errorf("%s: got library %s, want %s", r.at(), got.ID, l.ID)
					continue
				}
				s.checkLibrary(t, r.at(), key, got)
				s.checkEdgeCount(t, r.at(), key, got)
			}
		}
	})

	t.Run("not-found", func(t *testing.T) {
		refs := []string{"no-such-library", "lib_no_such_library"}
		for _, l := range m.file.Libraries {
			if l.WorkspaceID != m.full.WorkspaceID { // another workspace's ID and slug
				refs = append(refs, l.ID, l.Slug)
				break
			}
		}
		for _, ref := range refs {
			s.expectError(t, s.get(t, s.reader(), "/libraries/"+esc(ref)), http.StatusNotFound, "not_found")
		}
	})
}

// checkEdgeCount: the spec does not define edgeCount beyond being an integer.
// It must count at least the library's own edges (both ends inside it, the
// edges its graph shows), and anything beyond those may only be edges to
// libraries the key sees: a count never reveals what is out of scope.
func (s *suite) checkEdgeCount(t testing.TB, where string, key *dataset.APIKey, got apiLibrary) {
	t.Helper()
	if got.EdgeCount == nil {
		t.Errorf("%s: no edgeCount", where)
		return
	}
	intra, crossVisible := 0, 0
	for _, e := range s.m.file.Edges {
		src, dst := s.m.libOf(e.SourceDocumentID), s.m.libOf(e.TargetDocumentID)
		switch {
		case src == got.ID && dst == got.ID:
			intra++
		case src == got.ID && s.m.sees(key, dst), dst == got.ID && s.m.sees(key, src):
			crossVisible++
		}
	}
	if n := *got.EdgeCount; n < intra || n > intra+crossVisible {
		t.Errorf("%s: edgeCount %d, want %d (edges inside the library)%s", where, n, intra,
			map[bool]string{true: fmt.Sprintf(" up to %d (with edges to libraries the key sees)", intra+crossVisible)}[crossVisible > 0])
	}
}

// testLabels: tags, categories and applications of every library the full
// key sees, and through a slug.
func (s *suite) testLabels(t *testing.T) {
	for i, id := range s.m.visibleLibs(s.m.full) {
		ref := id
		if i == 0 {
			ref = s.m.libs[id].Slug // a slug works for the sub-resources too
		}
		for _, kindName := range []string{"tags", "categories", "applications"} {
			r := s.get(t, s.reader(), "/libraries/"+esc(ref)+"/"+kindName)
			var got map[string][]apiLabel
			raw := shape(t, r.at(), ok(t, r, &got), map[string]kind{kindName: kArray})
			for _, item := range items(raw, kindName) {
				shape(t, r.at()+" item", item, labelFields)
			}
			want := countSet(s.m.labelCounts(id, kindName))
			if gotSet := labelSet(t, r.at(), got[kindName]); !slices.Equal(gotSet, want) {
				t.Errorf("%s: %s %v, want (in any order) %v", r.method+" "+r.path, kindName, gotSet, want)
			}
		}
	}
	t.Run("filters-accept-the-values", func(t *testing.T) {
		// The lists hold exactly what the filters accept: each value filters
		// the documents list to its documentCount.
		id := s.m.visibleLibs(s.m.full)[0]
		for _, c := range []struct{ param, kind string }{{"category", "categories"}, {"tag", "tags"}, {"application", "applications"}} {
			counts := s.m.labelCounts(id, c.kind)
			name := sortedKeys(counts)[0]
			var page apiDocumentPage
			r := s.get(t, s.reader(), "/libraries/"+id+"/documents"+q(c.param, name, "pageSize", "1"))
			ok(t, r, &page)
			if page.Total != counts[name] {
				t.Errorf("%s: total %d, want the %s entry's documentCount %d", r.at(), page.Total, c.kind, counts[name])
			}
		}
	})
}

// testGraph: the whole graph of each library, in the decided order.
func (s *suite) testGraph(t *testing.T) {
	for _, id := range s.m.visibleLibs(s.m.full) {
		s.checkGraph(t, s.reader(), id)
	}
}

// checkGraph fetches a library's graph as key and compares it with the demo data.
func (s *suite) checkGraph(t testing.TB, key *dataset.APIKey, id string) {
	t.Helper()
	r := s.get(t, key, "/libraries/"+id+"/graph")
	var got apiGraph
	raw := shape(t, r.at(), ok(t, r, &got), graphFields)
	for _, d := range items(raw, "documents") {
		shape(t, r.at()+" documents[]", d, graphDocFields)
	}
	for _, e := range items(raw, "edges") {
		shape(t, r.at()+" edges[]", e, graphEdgeFields)
	}
	checkSchema(t, r.at(), got.Schema, s.m.libs[id])
	docs := slices.Clone(s.m.docsByLib[id])
	slices.SortFunc(docs, s.m.byActivity)
	if len(docs) > 2000 {
		t.Fatalf("the demo library %s has more than 2000 documents; the suite assumes no cap applies", id)
	}
	if got.Truncated {
		t.Errorf("%s: truncated true, but the library is under both caps", r.at())
	}
	// Most active first: recordingCount, then lastSeen descending, then id.
	if g, w := ids(got.Documents), docIDs(docs); !slices.Equal(g, w) {
		t.Errorf("%s: documents\n got %v\nwant %v (most active first)", r.at(), g, w)
	}
	for _, d := range got.Documents {
		s.checkDocFields(t, r.at(), d, graphDocFields)
	}
	var want []apiEdge
	for _, e := range s.m.intraEdges(id) {
		want = append(want, s.graphEdge(e))
	}
	if !sameEdgeSet(got.Edges, want) {
		t.Errorf("%s: edges are not the %d edges with both ends in the library:\n got %s\nwant %s", r.at(), len(want), edgeList(got.Edges), edgeList(want))
	}
	// By support descending, then source and target ID.
	for i := 1; i < len(got.Edges); i++ {
		a, b := got.Edges[i-1], got.Edges[i]
		if a.Support < b.Support || (a.Support == b.Support && (a.SourceDocumentID > b.SourceDocumentID ||
			(a.SourceDocumentID == b.SourceDocumentID && a.TargetDocumentID > b.TargetDocumentID))) {
			t.Errorf("%s: edges out of order at %d: %+v before %+v", r.at(), i, a, b)
			break
		}
	}
}
