package render

import (
	"fmt"
	"io"
	"strings"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
)

// GraphTree writes a library's graph as text: each document in the API's
// order (most active first) with its outgoing edges indented under it, and a
// note when the API's cap truncated the graph.
func GraphTree(w io.Writer, g *api.Graph) {
	fmt.Fprintf(w, "%d %s and %d %s, most active first.\n", len(g.Documents), doclib.Plural(len(g.Documents), "document", "documents"),
		len(g.Edges), doclib.Plural(len(g.Edges), "edge", "edges"))
	if g.Truncated {
		fmt.Fprintf(w, "Truncated: the API sends at most %d documents and %d edges, the most active first; the rest of the library is not shown.\n",
			doclib.GraphMaxDocuments, doclib.GraphMaxEdges)
	}
	out := map[string][]api.GraphEdge{}
	for _, e := range g.Edges {
		out[e.SourceDocumentID] = append(out[e.SourceDocumentID], e)
	}
	for _, d := range g.Documents {
		fmt.Fprintf(w, "\n%s (%s)", orUntitled(d.Title), Clean(d.ID))
		fmt.Fprintf(w, " · %d %s", d.RecordingCount, doclib.Plural(d.RecordingCount, "recording", "recordings"))
		if d.Category != "" {
			fmt.Fprintf(w, " · %s", Clean(d.Category))
		}
		fmt.Fprintln(w)
		for _, e := range out[d.ID] {
			fmt.Fprintf(w, "  → %s (%s): %s\n", orUntitled(e.TargetDocumentTitle), Clean(e.TargetDocumentID),
				EdgeNote(e.Label, e.EdgeType, e.Support, e.LowConfidence))
		}
	}
}

// GraphDOT writes a library's graph in Graphviz DOT, named name: one node
// per document labelled with its title, one edge line per edge labelled with
// its label and support. Semantic edges are dashed and low-confidence data
// edges dotted and grey. Render it with e.g. `dot -Tsvg -o graph.svg`.
func GraphDOT(w io.Writer, g *api.Graph, name string) {
	fmt.Fprintf(w, "digraph %s {\n", DOTQuote(name))
	if g.Truncated {
		fmt.Fprintf(w, "  // Truncated by the API's cap: %d documents and %d edges, the most active first.\n",
			doclib.GraphMaxDocuments, doclib.GraphMaxEdges)
	}
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, `  node [shape=box, style=rounded];`)
	for _, d := range g.Documents {
		tip := fmt.Sprintf("%s · %d %s", d.ID, d.RecordingCount, doclib.Plural(d.RecordingCount, "recording", "recordings"))
		if d.Category != "" {
			tip += " · " + d.Category
		}
		fmt.Fprintf(w, "  %s [label=%s, tooltip=%s];\n", DOTQuote(d.ID), DOTQuote(d.Title), DOTQuote(tip))
	}
	for _, e := range g.Edges {
		attrs := []string{}
		switch {
		case e.EdgeType == "semantic":
			attrs = append(attrs, "label="+DOTQuote(e.Label), "style=dashed")
		case e.LowConfidence:
			attrs = append(attrs, "label="+DOTQuote(fmt.Sprintf("%s (%d)", e.Label, e.Support)), "style=dotted", "color=gray50")
		default:
			attrs = append(attrs, "label="+DOTQuote(fmt.Sprintf("%s (%d)", e.Label, e.Support)))
		}
		fmt.Fprintf(w, "  %s -> %s [%s];\n", DOTQuote(e.SourceDocumentID), DOTQuote(e.TargetDocumentID), strings.Join(attrs, ", "))
	}
	fmt.Fprintln(w, "}")
}

// DOTQuote makes s a DOT quoted string: backslashes and double quotes are
// escaped and line breaks become DOT's \n, so a title cannot end the string
// or the statement early, and other control characters are replaced as
// CleanText does, so a DOT file printed to a terminal is as safe as text.
func DOTQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(CleanText(s)) + `"`
}
