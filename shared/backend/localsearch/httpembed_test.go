package localsearch_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/openai"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/search"
)

// fakeModel speaks the OpenAI embeddings wire format. Its "model" knows three
// topics, each an axis, and puts every other text on axes drawn from a hash of
// it, so that texts of one topic are neighbours whatever their words.
func fakeModel(t *testing.T, texts *atomic.Int64) *httptest.Server {
	topics := [][]string{{"laptop", "notebook computer", "workstation"}, {"invoice", "bill"}, {"password", "credentials"}}
	const dims = 32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-topics" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		texts.Add(int64(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Data []item `json:"data"`
		}{}
		for i, text := range req.Input {
			v := make([]float32, dims)
			lower := strings.ToLower(text)
			for axis, words := range topics {
				for _, w := range words {
					if strings.Contains(lower, w) {
						v[axis] += 4
					}
				}
			}
			h := fnv.New32a()
			h.Write([]byte(lower))
			v[3+h.Sum32()%(dims-3)] += 1
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
}

func TestHTTPEmbedderNeighboursFireSemantic(t *testing.T) {
	var texts atomic.Int64
	srv := fakeModel(t, &texts)
	defer srv.Close()
	e, err := openai.New(context.Background(), openai.Config{BaseURL: srv.URL + "/v1", Model: "fake-topics"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	x, err := localsearch.Build(context.Background(), d, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	readable := 0
	for _, r := range d.Recordings {
		if r.Shared && !strings.HasPrefix(r.ID, "rec_i") { // ws_i is on the Individual plan
			readable++
		}
	}
	if got, want := texts.Load(), int64(1+len(d.Documents)+readable); got != want {
		t.Errorf("%d texts sent to the model; want the probe, %d documents and %d readable recordings", got, len(d.Documents), readable)
	}
	s := searcher(x, search.DefaultRules(x.EmbedderID()))
	res, err := s.Search(context.Background(), search.Request{Text: "workstation for a new starter", Libraries: []string{"lib_a1", "lib_a2", "lib_a3"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	// "new" is in a few documents, so the near miss may fire on its share of
	// the query; only the model relates "workstation" to the laptop document.
	if res.LowConfidence || len(res.Hits) == 0 || res.Hits[0].DocumentID != "doc_a1_3" || !slices.Contains(res.Hits[0].Signals, search.SignalSemantic) {
		t.Fatalf("want doc_a1_3 (Provision a laptop) first, by meaning, got %+v", res.Hits)
	}
	for _, h := range res.Hits[1:] {
		if slices.Contains(h.Signals, search.SignalSemantic) {
			t.Errorf("%s matched by meaning; only the laptop document is about workstations", h.DocumentID)
		}
	}
}
