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

// recordingsInput is a page of the recordings behind a document.
type recordingsInput struct {
	ID       string `json:"id" jsonschema:"the document's doc_… ID"`
	Page     int    `json:"page,omitempty" jsonschema:"page number, from 1"`
	PageSize int    `json:"pageSize,omitempty" jsonschema:"recordings per page, 1 to 50"`
}

func (t *tools) addRecordingsTool(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{
		Name:  "get_source_recordings",
		Title: "Read the recordings behind a document",
		Description: `Read the shared recordings a document was written from: each recording's title, status, date, its question-and-answer pairs (why things were done) and its step timeline. Use it for detail or context the document leaves out.

Needs recording-details access on the API key; without it the call fails with forbidden. An EMPTY list is NORMAL and does not mean the document is unsupported: recordings stay private until someone shares them, and on the Individual plan they cannot be shared at all. privateTotal says how many exist but cannot be read, linkedTotal how many exist in all, and guidance explains the gap. When none can be read, the document's own content (get_document) is the authoritative account.`,
		Annotations: readOnly("Read the recordings behind a document"),
		InputSchema: inputSchema[recordingsInput](func(p map[string]*jsonschema.Schema) {
			p["id"].MinLength = ptr(1)
			paging(p, doclib.MaxRecordingsPageSize)
		}),
		OutputSchema: outputSchema[api.SourceRecordings](),
	}, t.sourceRecordings)
}

func (t *tools) sourceRecordings(ctx context.Context, _ *mcp.CallToolRequest, in recordingsInput) (*mcp.CallToolResult, *api.SourceRecordings, error) {
	r, err := t.client(ctx).SourceRecordings(ctx, in.ID, client.Page{Page: in.Page, PageSize: in.PageSize})
	if err != nil {
		return nil, nil, t.toolError(ctx, "get_source_recordings", err)
	}
	r.SourceRecordings = nonNil(r.SourceRecordings)
	for i := range r.SourceRecordings {
		r.SourceRecordings[i].Questions = nonNil(r.SourceRecordings[i].Questions)
		r.SourceRecordings[i].Steps = nonNil(r.SourceRecordings[i].Steps)
	}
	return textResult(recordingsText(in.ID, r)), r, nil
}

func recordingsText(id string, r *api.SourceRecordings) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Recordings behind %s: %d linked, %d readable, %d private.\n", render.Clean(id), r.LinkedTotal, r.Total, r.PrivateTotal)
	if r.Guidance != "" {
		fmt.Fprintf(&b, "%s\n", render.CleanText(r.Guidance))
	}
	if r.Total == 0 {
		b.WriteString("\nNo recording can be read. That is normal and does not mean the document is unsupported: its own content (get_document) is the authoritative account.\n")
		return b.String()
	}
	b.WriteString(capitalise(pageLine("recording", "recordings", len(r.SourceRecordings), r.Total, r.Page, r.PageSize)) + "\n")
	for _, rec := range r.SourceRecordings {
		b.WriteString("\n")
		render.Recording(&b, &rec)
	}
	return b.String()
}
