package localsearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/search"
)

// BenchmarkSegmentsQuery runs the engine's part of a search (Candidates, all
// libraries visible, the default rules) over 100,000 documents of 1,024
// dimensions held as one segment, and as one of 99,000 with ten of 100 after
// it (a base and a day of stream batches), to measure what segments cost a
// query.
func BenchmarkSegmentsQuery(b *testing.B) {
	e, err := offline.NewHashing(benchDims, nil)
	if err != nil {
		b.Fatal(err)
	}
	const n = 100_000
	docs := benchDocs(b, n)
	var libs []string
	seen := map[string]bool{}
	for _, d := range docs {
		if !seen[d.LibraryID] {
			seen[d.LibraryID] = true
			libs = append(libs, d.LibraryID)
		}
	}
	texts := []string{"reset password", "close the month", "onboard a new employee laptop", "invoice approval",
		"rotate the certificate", "expense report", "grant access to the shared drive", "renew the contract"}
	rng := rand.New(rand.NewPCG(1, 1))
	rules := search.DefaultRules(e.ID())
	var queries []*search.Query
	for _, text := range texts {
		v := make([]float32, benchDims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		search.Normalize(v)
		queries = append(queries, &search.Query{Text: text, Vector: v, Libraries: libs, Rules: &rules, Limit: 20})
	}
	one, err := localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{})
	if err != nil {
		b.Fatal(err)
	}
	segs := localsearch.NewSegments(e)
	base := n - 10*100
	for start := 0; start < n; {
		end := min(start+100, n)
		if start == 0 {
			end = base
		}
		x, err := localsearch.FromDocs(context.Background(), docs[start:end], e, localsearch.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if segs, err = segs.With(x, nil); err != nil {
			b.Fatal(err)
		}
		start = end
	}
	docs = nil
	for _, c := range []struct {
		name string
		r    search.Retriever
	}{{"segments=1", one}, {fmt.Sprintf("segments=%d", segs.Count()), segs}} {
		b.Run(c.name, func(b *testing.B) {
			i, found := 0, 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				if err := c.r.Candidates(context.Background(), q, func(search.Candidate) { found++ }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(found)/float64(i), "candidates/query")
		})
	}
}
