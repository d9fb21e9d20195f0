package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/doclib/doclib/shared/api"

	doclib "github.com/doclib/doclib/shared"
)

// Traversal writes a walk of the graph as a tree indented by depth: the root
// document, then each document reached under the document one hop nearer the
// root that it is linked to, with the edge's direction (→ the nearer document
// links to it, ← it links to the nearer document), label and support. Edges
// the tree does not use (between documents at the same depth, or a second
// path to a document) are listed after it, so every edge the API sent appears.
func Traversal(w io.Writer, t *api.Traversal) {
	label := "every label"
	if t.Label != nil {
		label = fmt.Sprintf("label %q", *t.Label)
	}
	fmt.Fprintf(w, "%d %s within %d %s of %s (direction %s, %s):\n\n", len(t.Nodes), doclib.Plural(len(t.Nodes), "document", "documents"),
		t.MaxDepth, doclib.Plural(t.MaxDepth, "hop", "hops"), Clean(t.RootDocumentID), Clean(t.Direction), label)

	depth := map[string]int{}
	byID := map[string]api.TraverseNode{}
	for _, n := range t.Nodes {
		depth[n.ID], byID[n.ID] = n.Depth, n
	}
	type child struct {
		id   string
		edge api.GraphEdge
		out  bool // the edge goes from the parent to the child
	}
	children := map[string][]child{}
	used := make([]bool, len(t.Edges))
	var orphans []string
	for _, n := range t.Nodes {
		if n.ID == t.RootDocumentID {
			continue
		}
		found := false
		for i, e := range t.Edges {
			if used[i] {
				continue
			}
			if d, ok := depth[e.SourceDocumentID]; ok && e.TargetDocumentID == n.ID && d == n.Depth-1 {
				children[e.SourceDocumentID] = append(children[e.SourceDocumentID], child{n.ID, e, true})
			} else if d, ok := depth[e.TargetDocumentID]; ok && e.SourceDocumentID == n.ID && d == n.Depth-1 {
				children[e.TargetDocumentID] = append(children[e.TargetDocumentID], child{n.ID, e, false})
			} else {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			orphans = append(orphans, n.ID)
		}
	}

	rootLib := byID[t.RootDocumentID].LibraryID
	node := func(id string) string {
		n, ok := byID[id]
		if !ok {
			return Clean(id)
		}
		s := fmt.Sprintf("%s (%s)", orUntitled(n.Title), Clean(n.ID))
		if n.LibraryID != rootLib {
			s += " [" + Clean(n.LibraryID) + "]"
		}
		return s
	}
	var walk func(id string, level int)
	walk = func(id string, level int) {
		for _, c := range children[id] {
			arrow := "→"
			if !c.out {
				arrow = "←"
			}
			fmt.Fprintf(w, "%s%s %s: %s\n", strings.Repeat("  ", level), arrow, node(c.id),
				EdgeNote(c.edge.Label, c.edge.EdgeType, c.edge.Support, c.edge.LowConfidence))
			walk(c.id, level+1)
		}
	}
	fmt.Fprintln(w, node(t.RootDocumentID))
	walk(t.RootDocumentID, 1)
	for _, id := range orphans {
		fmt.Fprintf(w, "%s? %s: reached at depth %d\n", strings.Repeat("  ", max(depth[id], 1)), node(id), depth[id])
	}

	var rest []api.GraphEdge
	for i, e := range t.Edges {
		if !used[i] {
			rest = append(rest, e)
		}
	}
	if len(rest) > 0 {
		fmt.Fprintln(w, "\nAlso between these documents:")
		for _, e := range rest {
			fmt.Fprintf(w, "- %s → %s: %s\n", node(e.SourceDocumentID), node(e.TargetDocumentID),
				EdgeNote(e.Label, e.EdgeType, e.Support, e.LowConfidence))
		}
	}
}
