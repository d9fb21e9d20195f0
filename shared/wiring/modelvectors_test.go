package wiring

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedtest"
	"github.com/doclib/doclib/shared/backend/bedrock"
	"github.com/doclib/doclib/shared/backend/embedcache"
	"github.com/doclib/doclib/shared/backend/openai"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/settings"
)

// modelServer is an OpenAI-compatible embeddings server that records the
// texts it answered, and refuses every request (400) once it has answered
// failAfter texts (never when 0). It handles one request at a time.
type modelServer struct {
	*httptest.Server
	mu        sync.Mutex
	answered  []string
	failAfter int
}

func newModelServer(t *testing.T) *modelServer {
	s := &modelServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.failAfter > 0 && len(s.answered) >= s.failAfter {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"refused for the test"}}`)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, text := range req.Input {
			data[i] = item{Index: i, Embedding: embedtest.RawVector(text, 16)}
		}
		s.answered = append(s.answered, req.Input...)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(s.Close)
	return s
}

// take returns the texts answered since the last take, and sets failAfter
// for what comes next.
func (s *modelServer) take(failAfter int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.answered
	s.answered, s.failAfter = nil, failAfter
	return got
}

// TestIndexDirKeepsAModelsVectors: with a model embedder, an index
// directory keeps the model's vectors in DIR/vectors as each request
// answers. A build cut short by the model, started again, sends none of the
// texts it kept; a build over changed data sends only the texts it never
// sent.
func TestIndexDirKeepsAModelsVectors(t *testing.T) {
	ctx := context.Background()
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := newModelServer(t)
	e, err := Embedder(ctx, settings.Embedder{Kind: "openai", URL: srv.URL + "/v1", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	srv.take(150) // the model refuses everything after 150 texts, about half of the 347 the build embeds

	if _, _, err := IndexDir(ctx, dir, d, e, settings.Rules{}, quiet, nil); err == nil {
		t.Fatalf("the build went through a model that refused it (%d texts answered)", len(srv.take(0)))
	}
	first := srv.take(0)
	// What the directory kept: a cache over an embedder that refuses to
	// embed serves only what is in the file.
	c, err := embedcache.Open(filepath.Join(dir, vectorsDir), embedtest.Named{Name: e.ID(), Dims: e.Dimensions()})
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, text := range first {
		if _, err := c.Embed(ctx, []string{text}); err == nil {
			kept[text] = true
		}
	}
	c.Close()
	if len(kept) == 0 {
		t.Fatalf("of the %d texts answered before the model refused, none was kept", len(first))
	}

	_, read, err := IndexDir(ctx, dir, d, e, settings.Rules{}, quiet, nil)
	if err != nil || read {
		t.Fatalf("the build started again: read %v, %v", read, err)
	}
	again := srv.take(0)
	for _, text := range again {
		if kept[text] {
			t.Errorf("embedded again although kept: %.60q", text)
		}
	}
	t.Logf("first build: %d texts answered, %d kept; second: %d sent", len(first), len(kept), len(again))

	// One document's text changed: only that text is new.
	d.Documents[0].Title += " (revised)"
	_, read, err = IndexDir(ctx, dir, d, e, settings.Rules{}, quiet, nil)
	if err != nil || read {
		t.Fatalf("the build over changed data: read %v, %v", read, err)
	}
	seen := map[string]bool{}
	for _, text := range append(first, again...) {
		seen[text] = true
	}
	changed := srv.take(0)
	if len(changed) == 0 {
		t.Error("the changed document was not embedded")
	}
	for _, text := range changed {
		if seen[text] {
			t.Errorf("embedded again over changed data: %.60q", text)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(dir, vectorsDir)); err != nil || len(entries) != 1 {
		t.Errorf("%s holds %d files (%v), want the model's one", vectorsDir, len(entries), err)
	}
}

// TestEmbedderTakesThePacing: the pacing bounds of the settings reach the
// openai and bedrock embedders.
func TestEmbedderTakesThePacing(t *testing.T) {
	srv := newModelServer(t)
	e, err := Embedder(context.Background(), settings.Embedder{Kind: "openai", URL: srv.URL + "/v1", Model: "m",
		Batch: 16, Concurrency: 2, Timeout: 45 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if l := e.(*openai.Embedder).Pacer().Limits(); l.MaxBatch != 16 || l.MaxConcurrency != 2 || l.Timeout != 45*time.Second {
		t.Errorf("openai's limits %+v, want 16 texts, 2 at once, 45s", l)
	}
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	b, err := Embedder(context.Background(), settings.Embedder{Kind: "bedrock", Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	if l := b.(*bedrock.Embedder).Pacer().Limits(); l.MaxConcurrency != 3 || l.MaxBatch != 1 {
		t.Errorf("bedrock's limits %+v, want 3 at once, one text a call", l)
	}
}
