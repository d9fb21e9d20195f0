package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/doclib/doclib/internal/fixture"
	doclib "github.com/doclib/doclib/shared"
)

// syncBuffer is a bytes.Buffer the server's goroutines can log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// failingStore fails document lookups with an internal error.
type failingStore struct{ doclib.Store }

func (failingStore) Documents(context.Context, []string) (map[string]*doclib.Document, error) {
	return nil, errors.New("table docs-prod unreachable")
}

func (failingStore) DocumentsWithEdges(context.Context, []string) (map[string]*doclib.Document, map[string]*doclib.DocumentEdges, error) {
	return nil, nil, errors.New("table docs-prod unreachable")
}

// orphanStore has lost every workspace, so the service refuses keys and logs why.
type orphanStore struct{ doclib.Store }

func (orphanStore) Workspace(context.Context, string) (*doclib.Workspace, error) {
	return nil, doclib.ErrNotFound
}

// Every line the handler and the service write during a request carries the
// request's ID as request_id, the X-Request-Id the client saw, although the
// logger is given to both unwrapped and no log call names the ID.
func TestEveryLogLineHasTheRequestID(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap func(doclib.Store) doclib.Store
		path string
		// messages are the lines expected, in order.
		messages []string
	}{
		{"internal error", func(st doclib.Store) doclib.Store { return failingStore{st} }, "/documents/doc_a1_1",
			[]string{"request failed", "request"}},
		{"panic", func(st doclib.Store) doclib.Store { return panicStore{st} }, "/documents/doc_a1_1",
			[]string{"panic", "request failed", "request"}},
		{"service log", func(st doclib.Store) doclib.Store { return orphanStore{st} }, "/libraries",
			[]string{"service: API key refused: its workspace does not exist", "request"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf syncBuffer
			s := newServer(t, options{wrap: c.wrap, log: slog.New(slog.NewJSONHandler(&buf, nil))})
			id := s.get(t, fixture.KeyFull, c.path).header.Get("X-Request-Id")
			if id == "" {
				t.Fatal("no X-Request-Id")
			}
			lines := buf.lines(t)
			var messages []string
			for _, l := range lines {
				messages = append(messages, l["msg"].(string))
				if l[doclib.LogRequestID] != id {
					t.Errorf("line %v: request_id %v, want %s", l, l[doclib.LogRequestID], id)
				}
				for k := range l {
					if k != strings.ToLower(k) {
						t.Errorf("line %v: key %q is not snake_case", l, k)
					}
				}
			}
			if strings.Join(messages, "|") != strings.Join(c.messages, "|") {
				t.Errorf("messages %q, want %q", messages, c.messages)
			}
		})
	}
}
