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

	"github.com/doclib/doclib/internal/suites/fixture"
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

func (failingStore) DocumentsWithEdges(context.Context, []string, *doclib.Scope) (map[string]*doclib.Document, map[string]*doclib.DocumentEdges, error) {
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

// The access log line of an authenticated request names the key by its ID
// and its workspace; no line of any request holds a secret it carried, in the
// Authorization header or in the query string, accepted or refused.
func TestAccessLogNamesTheKeyNeverTheSecret(t *testing.T) {
	var buf syncBuffer
	s := newServer(t, options{log: slog.New(slog.NewJSONHandler(&buf, nil))})
	const badKey = "dlk_test_a_full_scope_0002" // one character off KeyFull
	for _, c := range []struct {
		name, auth, path string
		status           int
		keyID, workspace string // in the access log line; "" for none
		secrets          []string
	}{
		{"authorised", "Bearer " + fixture.KeyFull, "/libraries", 200, "key_full", "ws_a", []string{fixture.KeyFull}},
		{"authorised search", "Bearer " + fixture.KeyOneLibrary, "/search/documents?q=reset", 200, "key_one", "ws_a", []string{fixture.KeyOneLibrary}},
		{"authorised, not found", "Bearer " + fixture.KeyOtherWS, "/documents/doc_a1_1", 404, "key_b", "ws_b", []string{fixture.KeyOtherWS}},
		{"bad key", "Bearer " + badKey, "/libraries", 401, "", "", []string{badKey}},
		{"expired key", "Bearer " + fixture.KeyExpired, "/libraries", 401, "", "", []string{fixture.KeyExpired}},
		{"bad scheme", "Basic " + fixture.KeyFull, "/libraries", 401, "", "", []string{fixture.KeyFull}},
		{"key in the query string", "", "/libraries?api_key=" + fixture.KeyFull + "&key=" + badKey, 401, "", "", []string{fixture.KeyFull, badKey}},
		{"key in the query string too", "Bearer " + fixture.KeyFull, "/libraries?api_key=" + fixture.KeyFull, 200, "key_full", "ws_a", []string{fixture.KeyFull}},
		{"key in the path", "Bearer " + fixture.KeyFull, "/documents/" + fixture.KeyFull, 404, "key_full", "ws_a", []string{fixture.KeyFull}},
		{"key in the path, unauthorised", "", "/libraries/" + fixture.KeyOneLibrary + "/graph", 401, "", "", []string{fixture.KeyOneLibrary}},
	} {
		t.Run(c.name, func(t *testing.T) {
			buf.mu.Lock()
			buf.b.Reset()
			buf.mu.Unlock()
			r := s.doAuth(t, "GET", c.auth, c.path)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			lines := buf.lines(t)
			access := lines[len(lines)-1]
			if access["msg"] != "request" {
				t.Fatalf("last line %v is not the access log", access)
			}
			if c.keyID == "" {
				if _, ok := access["key_id"]; ok {
					t.Errorf("refused request logged key_id: %v", access)
				}
			} else if access["key_id"] != c.keyID || access["workspace_id"] != c.workspace {
				t.Errorf("access log %v: want key_id %s, workspace_id %s", access, c.keyID, c.workspace)
			}
			buf.mu.Lock()
			raw := buf.b.String()
			buf.mu.Unlock()
			for _, secret := range c.secrets {
				if strings.Contains(raw, secret) {
					t.Errorf("the log holds the secret %s:\n%s", secret, raw)
				}
			}
		})
	}
}
