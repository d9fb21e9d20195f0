package mcpserver

import (
	"context"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/internal/suites/demoapi"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/httpapi"
)

// The benchmarks put a tool call next to the same API call made directly with
// the client, over the same loopback API on the demo data, so that the
// difference is the MCP layer's cost: JSON-RPC over the SDK's in-memory
// transport, input validation, the text rendering and the structured output.
//
//	go test ./shared/clients/mcpserver -run '^$' -bench . -benchtime 2s -count 5

func benchSession(b *testing.B, key string) (*mcp.ClientSession, *client.Client) {
	b.Helper()
	api := demoapi.NewServer(b, httpapi.Config{}) // no limiter: no rate limits
	c, err := client.New(api.URL, key, client.WithRetries(0))
	if err != nil {
		b.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := newServer(c, "bench", slog.New(slog.DiscardHandler), "").Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs, c
}

func benchTool(b *testing.B, key, name string, args map[string]any) {
	cs, _ := benchSession(b, key)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError {
			b.Fatalf("%s: tool error", name)
		}
	}
}

func BenchmarkToolGetDocument(b *testing.B) {
	benchTool(b, keyFull, "get_document", map[string]any{"id": "doc_it_001"})
}

func BenchmarkToolSearchDocuments(b *testing.B) {
	// The own-provider key's searches are not metered, so no run of the
	// benchmark runs out of credit; its library is the demo's smallest (10
	// documents), so this measures the MCP layer more than the engine.
	benchTool(b, "dlk_demo_own_provider", "search_documents", map[string]any{"query": "recruit study participants", "pageSize": 10})
}

func BenchmarkToolTraverseGraph(b *testing.B) {
	benchTool(b, keyFull, "traverse_graph", map[string]any{"id": "doc_it_001", "depth": 2})
}

// BenchmarkClientGetDocument is the same read as BenchmarkToolGetDocument
// without MCP: the client alone against the same API.
func BenchmarkClientGetDocument(b *testing.B) {
	_, c := benchSession(b, keyFull)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Document(ctx, "doc_it_001"); err != nil {
			b.Fatal(err)
		}
	}
}
