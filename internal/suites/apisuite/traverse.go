package apisuite

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/doclib/doclib/shared/data/dataset"
)

// checkTraversal walks from root as key and compares the answer with the walk
// computed from the demo data. query holds the parameters as sent; direction,
// label and depth are what they mean (defaults applied).
func (s *suite) checkTraversal(t testing.TB, key *dataset.APIKey, root, query, direction, label string, depth int) {
	t.Helper()
	r := s.get(t, key, "/documents/"+root+"/traverse"+query)
	var got apiTraversal
	raw := shape(t, r.at(), ok(t, r, &got), traversalFields)
	for _, n := range items(raw, "nodes") {
		shape(t, r.at()+" nodes[]", n, nodeFields)
	}
	for _, e := range items(raw, "edges") {
		shape(t, r.at()+" edges[]", e, graphEdgeFields)
	}
	want := s.m.traverse(key, root, direction, label, depth)

	if got.RootDocumentID != root || got.Direction != direction {
		t.Errorf("%s: rootDocumentId %q direction %q, want %q %q", r.at(), got.RootDocumentID, got.Direction, root, direction)
	}
	if (label == "") != (got.Label == nil) || (got.Label != nil && *got.Label != label) {
		t.Errorf("%s: label %v, want %q (null when every label is followed)", r.at(), got.Label, label)
	}
	// "The maxDepth walked": the depth asked for, or the deepest level reached.
	deepest := 0
	for _, d := range want.depth {
		deepest = max(deepest, d)
	}
	if got.MaxDepth != depth && got.MaxDepth != deepest {
		t.Errorf("%s: maxDepth %d, want %d (asked) or %d (reached)", r.at(), got.MaxDepth, depth, deepest)
	}

	// Nodes: each once, breadth first (depth never decreases), root at 0.
	gotDepth := map[string]int{}
	for i, n := range got.Nodes {
		if _, dup := gotDepth[n.ID]; dup {
			t.Errorf("%s: node %s appears twice", r.at(), n.ID)
		}
		gotDepth[n.ID] = n.Depth
		if i > 0 && n.Depth < got.Nodes[i-1].Depth {
			t.Errorf("%s: node %s at depth %d after depth %d: not breadth first", r.at(), n.ID, n.Depth, got.Nodes[i-1].Depth)
		}
		if !s.m.seesDoc(key, n.ID) {
			t.Errorf("%s: node %s is outside the key's scope", r.at(), n.ID)
			continue
		}
		s.checkDocFields(t, r.at(), n, nodeFields)
	}
	if len(got.Nodes) > 0 && got.Nodes[0].ID != root {
		t.Errorf("%s: first node %s, want the root", r.at(), got.Nodes[0].ID)
	}
	if g, w := depthList(gotDepth), depthList(want.depth); !slices.Equal(g, w) {
		t.Errorf("%s: nodes (id@depth)\n got %v\nwant %v", r.at(), g, w)
	}

	// Edges: each once, every edge followed, all inside scope.
	seen := map[edgeKey]bool{}
	for _, e := range got.Edges {
		k := edgeKey{e.SourceDocumentID, e.TargetDocumentID, e.Label}
		if seen[k] {
			t.Errorf("%s: edge %v appears twice", r.at(), k)
		}
		seen[k] = true
		if !s.m.seesDoc(key, e.SourceDocumentID) || !s.m.seesDoc(key, e.TargetDocumentID) {
			t.Errorf("%s: edge %v leaves the key's scope", r.at(), k)
		}
	}
	var wantEdges []apiEdge
	for _, e := range want.edges {
		wantEdges = append(wantEdges, s.graphEdge(e))
	}
	if !sameEdgeSet(got.Edges, wantEdges) {
		t.Errorf("%s: edges\n got %s\nwant %s", r.at(), edgeList(got.Edges), edgeList(wantEdges))
	}

	// Schemas: once per library of the nodes, and nothing else.
	libs := map[string]bool{}
	for id := range want.depth {
		libs[s.m.libOf(id)] = true
	}
	if g, w := sortedKeys(got.Schemas), sortedKeys(libs); !slices.Equal(g, w) {
		t.Errorf("%s: schemas for %v, want %v (the nodes' libraries)", r.at(), g, w)
	}
	for id, sch := range got.Schemas {
		if l := s.m.libs[id]; l != nil {
			checkSchema(t, r.at()+" schemas["+id+"]", sch, l)
		}
	}
}

func depthList(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for id, d := range m {
		out = append(out, fmt.Sprintf("%s@%d", id, d))
	}
	sort.Strings(out)
	return out
}

func (s *suite) testTraverse(t *testing.T) {
	lib := s.biggestLibrary()
	root := s.m.busiest(lib, false).ID
	crossRoot := s.m.busiest(lib, true).ID
	labels := map[string]bool{}
	for _, e := range s.m.file.Edges {
		labels[e.Label] = true
	}
	label := sortedKeys(labels)[0]
	key := s.m.full

	t.Run("defaults", func(t *testing.T) { s.checkTraversal(t, key, root, "", "both", "", 1) })
	for _, c := range []struct {
		direction, label string
		depth            int
	}{
		{"outgoing", "", 2},
		{"incoming", "", 2},
		{"both", "", 2},
		{"both", label, 3},
		{"outgoing", label, 3},
		{"both", "no such label", 2},
	} {
		name := fmt.Sprintf("%s-%d-%q", c.direction, c.depth, c.label)
		t.Run(name, func(t *testing.T) {
			query := q("direction", c.direction, "depth", strconv.Itoa(c.depth), "label", c.label)
			if c.label == "" {
				query = q("direction", c.direction, "depth", strconv.Itoa(c.depth))
			}
			s.checkTraversal(t, s.reader(), root, query, c.direction, c.label, c.depth)
		})
	}
	t.Run("across-libraries", func(t *testing.T) {
		s.checkTraversal(t, key, crossRoot, q("depth", "3"), "both", "", 3)
	})

	t.Run("bad-parameters", func(t *testing.T) {
		for _, v := range []string{"depth=0", "depth=4", "depth=two", "depth=1.5", "direction=sideways", "direction="} {
			s.expectError(t, s.get(t, s.reader(), "/documents/"+root+"/traverse?"+v), http.StatusBadRequest, "bad_request")
		}
	})
	t.Run("not-found", func(t *testing.T) {
		s.expectError(t, s.get(t, s.reader(), "/documents/doc_no_such_document/traverse"), http.StatusNotFound, "not_found")
		s.expectError(t, s.get(t, s.reader(), "/documents/"+esc(s.m.docs[root].Slug)+"/traverse"), http.StatusNotFound, "not_found")
	})
}
