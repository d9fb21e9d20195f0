package localsearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
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
	// The whole of a search in process: candidates, rules, facets and page.
	b.Run("match", func(b *testing.B) {
		i := 0
		for b.Loop() {
			q := queries[i%len(queries)]
			i++
			if _, err := (search.Local{Retriever: one}).Match(context.Background(), q); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMerge merges ten segments of 10,000 documents of 1,024
// dimensions into one, the largest merge the default merge policy runs
// (snapshot.DefaultMergePolicy): what the indexer's memory and time must
// hold. It reports the heap in use at the end, inputs and output alive
// (peak-MiB), and what the merge allocated (alloc-MiB).
func BenchmarkMerge(b *testing.B) {
	e, err := offline.NewHashing(benchDims, nil)
	if err != nil {
		b.Fatal(err)
	}
	docs := benchDocs(b, 100_000)
	segs := localsearch.NewSegments(e)
	for start := 0; start < len(docs); start += 10_000 {
		x, err := localsearch.FromDocs(context.Background(), docs[start:start+10_000], e, localsearch.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if segs, err = segs.With(x, nil); err != nil {
			b.Fatal(err)
		}
	}
	docs = nil
	base := heapMiB()
	var x *localsearch.Index
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		if x, _, err = segs.Merge(context.Background(), 0, segs.Count()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(heapMiB(), "peak-MiB")
	b.ReportMetric(base, "inputs-MiB")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20)/float64(b.N), "alloc-MiB")
	b.Logf("%d documents merged", x.Stats().Documents)
}
