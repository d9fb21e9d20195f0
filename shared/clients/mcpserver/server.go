// Package mcpserver is doclib's MCP server: it lets an AI agent search and
// read the document libraries an API key can see, through tools that each
// call the read API with the Go client. It has no logic of its own beyond
// choosing what to call and writing the answer for an agent: scope, paging,
// search and errors are all the API's.
//
// Each tool answers twice: a typed structured output (structuredContent, with
// an output schema) for programs, and a readable text (content) for the
// model, written with shared/clients/render so a document reads the same as in the
// CLI. An API error is a tool error (isError) whose text is the API's code
// and message, never a protocol error, so the agent can read it and recover.
//
// `doclib mcp` runs it over stdio, or over streamable HTTP with --http; see
// [Run].
package mcpserver

import (
	"context"
	"io"
	"log/slog"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/shared/clients/client"
)

// Name is the server's name in the MCP handshake.
const Name = "doclib"

// instructions are sent to the client at initialisation; agents read them
// before choosing a tool.
const instructions = `doclib gives read-only access to libraries of step-by-step documents written from recorded work (how people in this organisation actually do things), limited to what this API key can see.

Start with list_libraries (library IDs lib_…, names, counts, categories and tags) or search_documents (hybrid word + meaning search across every library the key sees; each call spends one AI credit). Read a document in full with get_document using its doc_… ID; documents are only addressed by ID, never by title or slug. Address a library by its lib_… ID from list_libraries; a library slug the user gives you also works, but no tool returns slugs.

A document's content is authoritative. When search says lowConfidence, its hits are suggestions (the most active documents), not matches: reword or narrow as its guidance says. Use get_library or the search facets to pick filter values, list_documents to browse a library, traverse_graph to see what people do next or instead, and get_source_recordings for the shared recordings behind a document (an empty list there is normal).

Errors come back as tool errors starting with the API's code (not_found, forbidden, bad_request, insufficient_ai_credit, rate_limited, …) followed by its message.`

// New returns the MCP server with doclib's tools, calling the API through c.
// version is the program's version, reported to clients.
func New(c *client.Client, version string) *mcp.Server {
	return newServer(c, version, nil, "")
}

// newServer is New with a logger for diagnostics (nil discards them). When
// unavailable is set, the server lists its tools but answers every call
// with that text as a tool error (and c may be nil).
func newServer(c *client.Client, version string, logger *slog.Logger, unavailable string) *mcp.Server {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "doclib document libraries", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: logger})
	t := &tools{c: c, log: logger, inputs: map[string]*jsonschema.Schema{}, unavailable: unavailable}
	s.AddReceivingMiddleware(t.callErrors)
	t.addLibraryTools(s)
	t.addSearchTool(s)
	t.addDocumentTools(s)
	t.addGraphTool(s)
	t.addRecordingsTool(s)
	return s
}

// tools holds what every tool handler needs.
type tools struct {
	// c calls the API; a request's own client in the context wins
	// (withClient: Handler's tools act for the key of each request).
	c   *client.Client
	log *slog.Logger
	// inputs are the tools' input schemas, by name (see addTool).
	inputs map[string]*jsonschema.Schema
	// unavailable, when set, is the answer to every tool call.
	unavailable string
}

type clientKey struct{}

// withClient makes c the client of the tool calls that ctx carries.
func withClient(ctx context.Context, c *client.Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// client is the API client of a tool call.
func (t *tools) client(ctx context.Context) *client.Client {
	if c, ok := ctx.Value(clientKey{}).(*client.Client); ok {
		return c
	}
	return t.c
}

// readOnly marks every tool: none changes anything (a search spends credit,
// but that is billing, not a change an agent should ask permission for), and
// the world they see is the API's, not the open web.
func readOnly(title string) *mcp.ToolAnnotations {
	closed := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &closed}
}

// textResult is a successful result's readable half; the SDK adds the typed
// output as structuredContent.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
