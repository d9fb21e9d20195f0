package opensearch

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// titanQuery is a search as production sends it: Titan V2's 1,024 dimensions.
func titanQuery(b *testing.B) *search.Query {
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 1024)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	search.Normalize(v)
	rules := search.DefaultRules("bedrock/amazon.titan-embed-text-v2:0/1024")
	return &search.Query{Text: "reset a user's password in okta", Vector: v, Rules: &rules,
		Libraries: []string{"lib_it", "lib_finance", "lib_sales"}, Limit: 20}
}

// BenchmarkQueryBody: building and encoding the one request of a search.
func BenchmarkQueryBody(b *testing.B) {
	q := titanQuery(b)
	terms := []string{"reset", "user", "password", "okta"}
	var n int
	for b.Loop() {
		n = len(mustJSON(matchBody(q, terms)))
	}
	b.ReportMetric(float64(n), "body-bytes")
}

// BenchmarkDecodeResponse: decoding a page of 20 hits, each with its 1,024
// float vector in _source (for semanticSimilarity), and the facets.
func BenchmarkDecodeResponse(b *testing.B) {
	q := titanQuery(b)
	r := rand.New(rand.NewPCG(3, 4))
	type hit struct {
		ID     string         `json:"_id"`
		Score  float64        `json:"_score"`
		Source map[string]any `json:"_source"`
		MQ     map[string]any `json:"matched_queries"`
	}
	var hits []hit
	for i := range 20 {
		v := make([]float32, 1024)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		search.Normalize(v)
		id := fmt.Sprintf("doc_it_%03d", i)
		hits = append(hits, hit{id, 0.7, map[string]any{"id": id, "libraryId": "lib_it", "embedding": v},
			map[string]any{"lexical": 7.2, "semantic": 0.8}})
	}
	buckets := func(n int) map[string]any {
		var bs []any
		for i := range n {
			bs = append(bs, map[string]any{"key": fmt.Sprintf("label %d", i), "doc_count": n - i})
		}
		return map[string]any{"buckets": bs}
	}
	raw, _ := json.Marshal(map[string]any{
		"hits": map[string]any{"total": map[string]any{"value": 180, "relation": "eq"}, "hits": hits},
		"aggregations": map[string]any{"categories": buckets(12), "tags": buckets(40), "applications": buckets(25),
			"libraries": buckets(3), "matched": map[string]any{"value": 240}},
	})
	for b.Loop() {
		var resp searchResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			b.Fatal(err)
		}
		if _, err := resp.matches(q, 4); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(raw)), "response-bytes")
}

// BenchmarkDocsFromDemo: turning the demo data set (200 documents) into index
// documents with the offline embedder, as a reindex does before its bulk
// writes.
func BenchmarkDocsFromDemo(b *testing.B) {
	d, err := demo.Load()
	if err != nil {
		b.Fatal(err)
	}
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		if err := search.DocsFromData(context.Background(), d, e, 0, func(docs []search.IndexDoc) error {
			n += len(docs)
			return nil
		}); err != nil || n != len(d.Documents) {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(len(d.Documents))*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
