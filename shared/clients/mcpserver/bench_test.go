package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// benchRemote posts one tools/call to the API's own /mcp (Handler) per
// iteration, as an agent's client does: a new stateless session per POST,
// the tool's API calls made in process. The answer is checked to be a
// successful tool result.
func benchRemote(b *testing.B, key, name string, args map[string]any) {
	_, svc, err := demoapi.Service(nil)
	if err != nil {
		b.Fatal(err)
	}
	h := httpapi.NewServer(httpapi.Config{Service: svc,
		MCP: func(api http.Handler) http.Handler { return Handler(api, "bench", nil) }})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", httpapi.MCPPath, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"isError":true`)) {
			b.Fatalf("%s: %d %.300s", name, w.Code, w.Body.Bytes())
		}
	}
}

// BenchmarkRemoteGetDocument is BenchmarkToolGetDocument through POST /mcp.
func BenchmarkRemoteGetDocument(b *testing.B) {
	benchRemote(b, keyFull, "get_document", map[string]any{"id": "doc_it_001"})
}

// BenchmarkRemoteSearchDocuments is BenchmarkToolSearchDocuments through
// POST /mcp.
func BenchmarkRemoteSearchDocuments(b *testing.B) {
	benchRemote(b, "dlk_demo_own_provider", "search_documents", map[string]any{"query": "recruit study participants", "pageSize": 10})
}
