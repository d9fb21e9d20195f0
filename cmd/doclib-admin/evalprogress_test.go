package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedtest"
)

// TestEvalBarMovesWithEachAnswer: on a terminal, eval's bar of a model's
// embedding moves with every answer of the model (a few texts at a time at
// first), not once per call of the index build, which would hold all 40
// documents here and show only 0 and 40.
func TestEvalBarMovesWithEachAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		// Slower than the bar's redraws (at most one per 100 ms), so
		// that each answer shows; a busy machine only slows it more.
		time.Sleep(150 * time.Millisecond)
		data := make([]item, len(req.Input))
		for i, text := range req.Input {
			data[i] = item{Index: i, Embedding: embedtest.RawVector(text, 8)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	dir := t.TempDir()
	var corpus, qrels strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range 40 {
		fmt.Fprintf(&corpus, `{"_id": "d%d", "title": "Document %d", "text": "words of document number %d"}`+"\n", i, i, i)
	}
	qrels.WriteString("q1\td1\t1\n")
	for name, body := range map[string]string{"corpus.jsonl": corpus.String(), "qrels.tsv": qrels.String(),
		"queries.jsonl": `{"_id": "q1", "text": "document number one"}` + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"eval", "--embedder", "openai", "--embed-url", srv.URL + "/v1",
		"--embed-model", "m", "--embed-cache", "", dir}, func(string) string { return "" }, &out, &errb, true)
	if code != 0 {
		t.Fatalf("eval: exit %d\n%s", code, errb.String())
	}
	counts := map[string]bool{}
	for _, m := range regexp.MustCompile(`\((\d+)/40,`).FindAllStringSubmatch(errb.String(), -1) {
		counts[m[1]] = true
	}
	// The first request carries 8 texts (embedcall.StartBatch).
	if !counts["8"] || !counts["40"] {
		t.Errorf("the bar showed %v of 40; want 8 (the first answer) and 40:\n%q", counts, errb.String())
	}
}
