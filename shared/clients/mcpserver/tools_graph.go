package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

// traverseInput is a walk of the graph from one document.
type traverseInput struct {
	ID        string `json:"id" jsonschema:"the doc_… ID of the document to start from"`
	Direction string `json:"direction,omitempty" jsonschema:"outgoing: what people do after it; incoming: what they do before it; both (default)"`
	Label     string `json:"label,omitempty" jsonschema:"follow only edges with this label, e.g. often next or alternative to (default: every label)"`
	Depth     int    `json:"depth,omitempty" jsonschema:"how many hops to walk, 1 to 3 (default 1)"`
}

// traverseNode is a document reached, without its full content.
type traverseNode struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Category     string   `json:"category"`
	Tags         []string `json:"tags"`
	Applications []string `json:"applications"`
	LibraryID    string   `json:"libraryId" jsonschema:"a walk can cross into another library the key sees"`
	Depth        int      `json:"depth" jsonschema:"hops from the start; the start itself has depth 0"`
	Excerpt      string   `json:"excerpt" jsonschema:"the start of the document's content"`
}

// traverseOutput is what a walk reached.
type traverseOutput struct {
	RootDocumentID string          `json:"rootDocumentId"`
	Direction      string          `json:"direction"`
	Label          *string         `json:"label" jsonschema:"the label followed, null when every label was"`
	MaxDepth       int             `json:"maxDepth"`
	Nodes          []traverseNode  `json:"nodes" jsonschema:"every document reached once, by depth"`
	Edges          []api.GraphEdge `json:"edges" jsonschema:"every edge walked once; edgeType data means seen in real recorded sequences (support = how many recordings), semantic means related by meaning; lowConfidence marks a data edge with support below 3"`
}

func (t *tools) addGraphTool(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{
		Name:  "traverse_graph",
		Title: "Follow a document's edges",
		Description: `Walk the graph of documents outward from one document, breadth first, up to 3 hops, and return every document reached (by depth, with an excerpt) and every edge walked.

Edges are labelled: "often next" means people who do this task often do that one next; "alternative to" means the two documents are different ways to the same end. An edge's edgeType is data (seen in real recorded sequences; support is how many recordings show it) or semantic (related by meaning only). lowConfidence marks a data edge seen in fewer than 3 recordings: a hint, not an established path.

Use it to answer "what comes next / before / instead" and to plan a sequence of tasks; read any node in full with get_document. A walk can cross libraries but never leaves this key's scope; a document with no edges returns only itself.`,
		Annotations: readOnly("Follow a document's edges"),
		InputSchema: inputSchema[traverseInput](func(p map[string]*jsonschema.Schema) {
			p["id"].MinLength = ptr(1)
			p["direction"].Enum = []any{"outgoing", "incoming", "both"}
			p["direction"].Default = []byte(`"` + defaultDirectn + `"`)
			bounds(p["depth"], doclib.MinDepth, doclib.MaxDepth, doclib.DefaultDepth)
		}),
		OutputSchema: outputSchema[traverseOutput](),
	}, t.traverse)
}

func (t *tools) traverse(ctx context.Context, _ *mcp.CallToolRequest, in traverseInput) (*mcp.CallToolResult, *traverseOutput, error) {
	tr, err := t.client(ctx).Traverse(ctx, in.ID, client.TraverseParams{Direction: in.Direction, Label: in.Label, Depth: in.Depth})
	if err != nil {
		return nil, nil, t.toolError(ctx, "traverse_graph", err)
	}
	out := &traverseOutput{RootDocumentID: tr.RootDocumentID, Direction: tr.Direction, Label: tr.Label, MaxDepth: tr.MaxDepth,
		Nodes: make([]traverseNode, len(tr.Nodes)), Edges: nonNil(tr.Edges)}
	for i, n := range tr.Nodes {
		out.Nodes[i] = traverseNode{ID: n.ID, Title: n.Title, Category: n.Category, Tags: nonNil(n.Tags),
			Applications: nonNil(n.Applications), LibraryID: n.LibraryID, Depth: n.Depth,
			Excerpt: excerpt(n.Content, tr.Schemas[n.LibraryID])}
	}
	return textResult(traverseText(out)), out, nil
}

func traverseText(r *traverseOutput) string {
	var b strings.Builder
	label := "every label"
	if r.Label != nil {
		label = fmt.Sprintf("label %q", *r.Label)
	}
	fmt.Fprintf(&b, "Walk from %s, direction %s, %s, up to %s: %s, %s.\n",
		render.Clean(r.RootDocumentID), render.Clean(r.Direction), label, count(r.MaxDepth, "hop", "hops"),
		count(len(r.Nodes), "document", "documents"), count(len(r.Edges), "edge", "edges"))
	for depth := 0; depth <= r.MaxDepth; depth++ {
		first := true
		for _, n := range r.Nodes {
			if n.Depth != depth {
				continue
			}
			if first {
				if depth == 0 {
					b.WriteString("\n## Start\n")
				} else {
					fmt.Fprintf(&b, "\n## %d %s away\n", depth, doclib.Plural(depth, "hop", "hops"))
				}
				first = false
			}
			fmt.Fprintf(&b, "- %s (%s, library %s)\n", render.Clean(n.Title), render.Clean(n.ID), render.Clean(n.LibraryID))
			if n.Excerpt != "" && depth > 0 {
				fmt.Fprintf(&b, "  %s\n", n.Excerpt)
			}
		}
	}
	if len(r.Edges) == 0 {
		b.WriteString("\nNo edges: nothing in this key's scope is linked to this document in that direction.\n")
		return b.String()
	}
	b.WriteString("\n## Edges\n")
	for _, e := range r.Edges {
		fmt.Fprintf(&b, "- %s (%s) → %s (%s): %s\n", render.Clean(e.SourceDocumentTitle), render.Clean(e.SourceDocumentID),
			render.Clean(e.TargetDocumentTitle), render.Clean(e.TargetDocumentID), render.EdgeNote(e.Label, e.EdgeType, e.Support, e.LowConfidence))
	}
	b.WriteString("\n\"often next\": people often do the target after the source; \"alternative to\": another way to the same end. Low confidence: seen in fewer than 3 recordings. Read any document with get_document.\n")
	return b.String()
}
