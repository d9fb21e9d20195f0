package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

// getDocumentInput names a document.
type getDocumentInput struct {
	ID string `json:"id" jsonschema:"the document's doc_… ID (from search_documents, list_documents or an edge); titles and slugs do not resolve"`
}

// listDocumentsInput is a page of one library's documents, filtered.
type listDocumentsInput struct {
	Library     string `json:"library" jsonschema:"the library's lib_… ID, from list_libraries; a library slug the user gives you works too, but list_libraries does not return slugs"`
	Category    string `json:"category,omitempty" jsonschema:"keep only this category (values from get_library)"`
	Tag         string `json:"tag,omitempty" jsonschema:"keep only this tag"`
	Application string `json:"application,omitempty" jsonschema:"keep only documents that use this application"`
	Search      string `json:"search,omitempty" jsonschema:"keep documents whose title or content contains this text (a plain substring match; spends no AI credit)"`
	Page        int    `json:"page,omitempty" jsonschema:"page number, from 1"`
	PageSize    int    `json:"pageSize,omitempty" jsonschema:"documents per page, 1 to 100"`
}

// documentSummary is a document of a list, without its full content.
type documentSummary struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	Category       string   `json:"category"`
	Tags           []string `json:"tags"`
	Applications   []string `json:"applications"`
	RecordingCount int      `json:"recordingCount"`
	UpdatedAt      api.Time `json:"updatedAt"`
	Excerpt        string   `json:"excerpt" jsonschema:"the start of the document's content"`
}

// listDocumentsOutput is a page of a library's documents.
type listDocumentsOutput struct {
	Library   string            `json:"library" jsonschema:"the library as it was asked for"`
	Documents []documentSummary `json:"documents" jsonschema:"most recently updated first"`
	Total     int               `json:"total"`
	Page      int               `json:"page"`
	PageSize  int               `json:"pageSize"`
}

func (t *tools) addDocumentTools(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{
		Name:  "get_document",
		Title: "Read a document",
		Description: `Read one document in full by its doc_… ID: title, library, category, tags, applications, how often it was recorded, its content section by section in its library template's order, and its edges (documents people go to next, or come from).

The content is the authoritative account of how the task is done: quote and follow it. Get IDs from search_documents, list_documents or an edge; a title or slug is not an ID. not_found means the ID is wrong or outside this key's scope. Next: traverse_graph to follow the edges further, get_source_recordings for the recordings behind it.`,
		Annotations: readOnly("Read a document"),
		InputSchema: inputSchema[getDocumentInput](func(p map[string]*jsonschema.Schema) {
			p["id"].MinLength = ptr(1)
		}),
		OutputSchema: outputSchema[api.Document](),
	}, t.getDocument)

	addTool(t, s, &mcp.Tool{
		Name:  "list_documents",
		Title: "List a library's documents",
		Description: `List a page of one library's documents, most recently updated first: ID, title, category, tags, applications, recording count and a short excerpt. Filter by category, tag or application (exact values from get_library) or by a substring of title or content (search; no AI credit).

Use it to browse a library, or to find documents when search is unavailable. Read one in full with get_document. An empty page with a total above zero means the page is past the end; total 0 means nothing passes the filters.`,
		Annotations: readOnly("List a library's documents"),
		InputSchema: inputSchema[listDocumentsInput](func(p map[string]*jsonschema.Schema) {
			p["library"].MinLength = ptr(1)
			paging(p, doclib.MaxPageSize)
		}),
		OutputSchema: outputSchema[listDocumentsOutput](),
	}, t.listDocuments)
}

func (t *tools) getDocument(ctx context.Context, _ *mcp.CallToolRequest, in getDocumentInput) (*mcp.CallToolResult, *api.Document, error) {
	d, err := t.client(ctx).Document(ctx, in.ID)
	if err != nil {
		return nil, nil, t.toolError(ctx, "get_document", err)
	}
	normaliseDocument(d)
	var b strings.Builder
	if err := render.Document(&b, d); err != nil {
		return nil, nil, t.toolError(ctx, "get_document", err)
	}
	text := capText(b.String(), documentTextMax)
	text += "\nThis content is the authoritative account of the task."
	if len(d.Edges.Outgoing)+len(d.Edges.Incoming) > 0 {
		text += " Follow the edges with traverse_graph or read a neighbour with get_document."
	}
	return textResult(text + "\n"), d, nil
}

// documentTextMax bounds get_document's text, in characters: a document
// that long would crowd everything else out of an agent's context. The
// structured output stays whole: it is the API's answer, for programs.
const documentTextMax = 100_000

// capText cuts text longer than max characters, at a line break where there
// is one in the second half, and ends it with a note of how much was cut.
func capText(text string, max int) string {
	total := utf8.RuneCountInString(text)
	if total <= max {
		return text
	}
	cut, n := text, 0
	for i := range text {
		if n == max {
			cut = text[:i]
			break
		}
		n++
	}
	if i := strings.LastIndexByte(cut, '\n'); i >= len(cut)/2 {
		cut = cut[:i+1]
	}
	shown := utf8.RuneCountInString(cut)
	return fmt.Sprintf("%s\n\n[Cut: this document's text is %d characters, too long to send whole. The first %d are shown; the other %d are left out, and with them any edges listed after the content. The structured output holds the whole document.]\n",
		strings.TrimRight(cut, "\n"), total, shown, total-shown)
}

// normaliseDocument makes every list non-nil: the API never sends null, but
// the output schema would refuse one, failing the call for nothing.
func normaliseDocument(d *api.Document) {
	d.Tags, d.Applications = nonNil(d.Tags), nonNil(d.Applications)
	d.Schema.Sections = nonNil(d.Schema.Sections)
	d.Edges.Outgoing, d.Edges.Incoming = nonNil(d.Edges.Outgoing), nonNil(d.Edges.Incoming)
	if len(d.Content) == 0 || string(d.Content) == "null" {
		d.Content = []byte("{}")
	}
}

func (t *tools) listDocuments(ctx context.Context, _ *mcp.CallToolRequest, in listDocumentsInput) (*mcp.CallToolResult, *listDocumentsOutput, error) {
	page, err := t.client(ctx).Documents(ctx, in.Library, client.DocumentsParams{
		Page:     client.Page{Page: in.Page, PageSize: in.PageSize},
		Category: in.Category, Tag: in.Tag, Application: in.Application, Search: in.Search,
	})
	if err != nil {
		return nil, nil, t.toolError(ctx, "list_documents", err)
	}
	out := &listDocumentsOutput{Library: in.Library, Documents: make([]documentSummary, len(page.Documents)),
		Total: page.Total, Page: page.Page, PageSize: page.PageSize}
	for i, d := range page.Documents {
		out.Documents[i] = documentSummary{ID: d.ID, Title: d.Title, Category: d.Category, Tags: nonNil(d.Tags),
			Applications: nonNil(d.Applications), RecordingCount: d.RecordingCount, UpdatedAt: d.UpdatedAt,
			Excerpt: excerpt(d.Content, page.Schema)}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Library %s", render.Clean(in.Library))
	if f := filterText(in); f != "" {
		fmt.Fprintf(&b, " (%s)", f)
	}
	b.WriteString(": " + pageLine("document", "documents", len(out.Documents), out.Total, out.Page, out.PageSize) + "\n")
	for _, d := range out.Documents {
		fmt.Fprintf(&b, "\n- %s (%s)\n", render.Clean(d.Title), render.Clean(d.ID))
		if f := facts(d.Category, d.Tags, d.Applications); f != "" {
			fmt.Fprintf(&b, "  %s\n", f)
		}
		fmt.Fprintf(&b, "  Recorded %s; updated %s\n", count(d.RecordingCount, "time", "times"), day(d.UpdatedAt))
		if d.Excerpt != "" {
			fmt.Fprintf(&b, "  %s\n", d.Excerpt)
		}
	}
	if len(out.Documents) > 0 {
		b.WriteString("\nRead one in full with get_document and its ID.\n")
	}
	return textResult(b.String()), out, nil
}

func filterText(in listDocumentsInput) string {
	var f []string
	for _, kv := range [][2]string{{"category", in.Category}, {"tag", in.Tag}, {"application", in.Application}, {"search", in.Search}} {
		if kv[1] != "" {
			f = append(f, fmt.Sprintf("%s %q", kv[0], kv[1]))
		}
	}
	return strings.Join(f, ", ")
}
