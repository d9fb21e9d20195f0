package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/internal/suites/demoapi"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/httpapi"
)

// Demo keys (shared/data/demo).
const (
	keyFull         = "dlk_demo_full_scope"
	keyOneLibrary   = "dlk_demo_one_library"
	keyNoRecordings = "dlk_demo_no_recordings"
	keyNoAICredit   = "dlk_demo_no_ai_credit"
	keyIndividual   = "dlk_demo_individual_plan"
)

// apiServer is the local read API on the demo data, as doclib-server runs it,
// counting the requests it gets.
type apiServer = demoapi.Server

func newAPI(t *testing.T) *apiServer { return demoapi.NewServer(t, httpapi.Config{}) }

func newClient(t *testing.T, url, key string) *client.Client {
	t.Helper()
	c, err := client.New(url, key, client.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// logBuffer collects a logger's output, safe for concurrent writes.
type logBuffer struct{ demoapi.SyncBuffer }

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// session is an MCP client session with the server over the SDK's in-memory
// transport, its server calling the API with key. It records every result's
// text and the server's log, so that tests can check the key appears in
// neither.
type session struct {
	*mcp.ClientSession
	t     *testing.T
	c     *client.Client // a direct client with the same key, to compare
	log   *logBuffer
	texts []string
}

func connect(t *testing.T, a *apiServer, key string) *session {
	t.Helper()
	c := newClient(t, a.URL, key)
	logs := &logBuffer{}
	srv := newServer(c, "test", logs.logger(), "")
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{ClientSession: cs, t: t, c: c, log: logs}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		for _, text := range append(s.texts, logs.String()) {
			if strings.Contains(text, key) {
				t.Errorf("the API key appears in a result or the log:\n%s", text)
			}
		}
	})
	return s
}

// call calls a tool; a protocol error fails the test, a tool error does not.
func (s *session) call(name string, args map[string]any) *mcp.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: protocol error: %v", name, err)
	}
	s.texts = append(s.texts, text(res))
	if b, err := json.Marshal(res.StructuredContent); err == nil {
		s.texts = append(s.texts, string(b))
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured output.
func ok[T any](s *session, name string, args map[string]any) (T, string) {
	s.t.Helper()
	res := s.call(name, args)
	var out T
	if res.IsError {
		s.t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	if res.StructuredContent == nil {
		s.t.Fatalf("%s: no structured content", name)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		s.t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // the output has exactly the expected shape
	if err := dec.Decode(&out); err != nil {
		s.t.Fatalf("%s: structured content does not decode into %T: %v\n%s", name, out, err, b)
	}
	return out, text(res)
}

// toolErr calls a tool that must fail with a tool error and returns its text.
func (s *session) toolErr(name string, args map[string]any) string {
	s.t.Helper()
	res := s.call(name, args)
	if !res.IsError {
		s.t.Fatalf("%s(%v): want a tool error, got success: %s", name, args, text(res))
	}
	return text(res)
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// jsonEqual compares two values by their JSON, ignoring the order of object
// keys (the SDK re-encodes structured output through a map).
func jsonEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	var gv, wv any
	if err := errors.Join(json.Unmarshal(g, &gv), json.Unmarshal(w, &wv)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("%s differs from the API's answer:\n got %s\nwant %s", what, g, w)
	}
}
