package doclib

import "slices"

// CapGraph keeps a library's graph within the caps, as Store.Graph returns it:
// the first maxDocs documents, and the edges among those kept, at most
// maxEdges. docs must be in CompareActivity order and edges, those with both
// ends in the library, in CompareEdges order. truncated is true when either cap
// removed anything. Every store computes its graph here, so they answer alike.
func CapGraph(docs []*Document, edges []*Edge, maxDocs, maxEdges int) (capped []*Document, kept []*Edge, truncated bool) {
	n := min(len(docs), maxDocs)
	truncated = n < len(docs)
	capped = slices.Clone(docs[:n])
	var in map[string]bool
	if truncated {
		in = make(map[string]bool, n)
		for _, d := range capped {
			in[d.ID] = true
		}
	}
	kept = make([]*Edge, 0, min(len(edges), maxEdges))
	for _, e := range edges {
		if truncated && (!in[e.SourceID] || !in[e.TargetID]) {
			continue
		}
		if len(kept) == maxEdges {
			truncated = true
			break
		}
		kept = append(kept, e)
	}
	return capped, kept, truncated
}
