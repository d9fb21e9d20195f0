package localsearch_test

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/search"
)

// TestEveryCoreRanksAsOne runs queries (words, typos, meaning; a part of the
// libraries visible; without recordings) over several segments, in memory
// and opened by range, on one core with the parallel threshold as it is,
// then on four with every step split however small, then four at once: the
// same candidates, handed over in the same order, with bit-identical
// evidence, and the same responses.
func TestEveryCoreRanksAsOne(t *testing.T) {
	ctx := context.Background()
	d, e, hist, rng := demoHistory(t, 1200, 3, 6)
	mem := segmentsOf(t, hist, e)
	cold, _ := lazySegments(t, hist, e, 4096, localsearch.NewCache(1))
	if mem.Count() < 4 {
		t.Fatalf("%d segments", mem.Count())
	}
	var all []string
	for _, l := range d.Libraries {
		all = append(all, l.ID)
	}
	subsets := [][]string{all, {"lib_it"}, {"lib_finance", "lib_sales"}}
	texts := []string{"", "reset password", "how do I get paid back for a trip", "new starter laptop", "customer refund"}
	for range 8 {
		doc := d.Documents[rng.IntN(len(d.Documents))]
		words := strings.Fields(strings.ToLower(doc.Title))
		q := strings.Join(words[:min(len(words), 1+rng.IntN(3))], " ")
		texts = append(texts, q, typo(rng, q))
	}
	rules := search.DefaultRules(e.ID())
	var queries []*search.Query
	var requests []search.Request
	for i, text := range texts {
		vec := queryVector(t, e, text)
		for j, libs := range subsets {
			noRec := (i+j)%3 == 0
			queries = append(queries, &search.Query{Text: text, Vector: vec, Libraries: libs, Rules: &rules, NoRecordings: noRec, Limit: 20})
			requests = append(requests, search.Request{Text: text, Libraries: libs, Limit: 10, NoRecordings: noRec})
		}
	}
	// answers is what r answers to every query: the candidates in the order
	// they are handed over, then the responses.
	type handed struct {
		ID string
		search.Evidence
		Later bool
		Ref   uint32
	}
	type answers struct {
		candidates [][]handed
		responses  []*search.Response
	}
	ask := func(t *testing.T, r search.Retriever) answers {
		var a answers
		for _, q := range queries {
			var got []handed
			if err := r.Candidates(ctx, q, func(c search.Candidate) {
				got = append(got, handed{c.Doc.ID, c.Evidence, c.Later != nil, c.Ref})
			}); err != nil {
				t.Error(err)
				return a
			}
			a.candidates = append(a.candidates, got)
		}
		s := &search.Searcher{Backend: search.Local{Retriever: r}, Embedder: search.Cached(e, 0), Rules: rules}
		for _, req := range requests {
			resp, err := s.Search(ctx, req)
			if err != nil {
				t.Error(err)
				return a
			}
			a.responses = append(a.responses, resp)
		}
		return a
	}
	compare := func(t *testing.T, want, got answers) {
		t.Helper()
		for i := range want.candidates {
			if i >= len(got.candidates) || !reflect.DeepEqual(want.candidates[i], got.candidates[i]) {
				t.Fatalf("%q in %v (no recordings %v): other candidates, or in another order, or other evidence, on every core",
					queries[i].Text, queries[i].Libraries, queries[i].NoRecordings)
			}
		}
		if !reflect.DeepEqual(want.responses, got.responses) {
			t.Fatal("other responses on every core")
		}
	}
	for _, c := range []struct {
		name string
		r    search.Retriever
	}{{"in memory", mem}, {"opened by range", cold}} {
		t.Run(c.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			want := ask(t, c.r)
			matched := 0
			for _, cs := range want.candidates {
				matched += len(cs)
			}
			if matched == 0 {
				t.Fatal("no candidates: the comparison says little")
			}
			runtime.GOMAXPROCS(4)
			defer localsearch.SetParallelFrom(1)()
			compare(t, want, ask(t, c.r))
			var wg sync.WaitGroup
			got := make([]answers, 4)
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i] = ask(t, c.r)
				}()
			}
			wg.Wait()
			for _, g := range got {
				compare(t, want, g)
			}
			t.Logf("%d queries, %d candidates", len(queries), matched)
		})
	}
}

// queryVector is text's vector as a search embeds it: by e, normalised.
func queryVector(t *testing.T, e search.Embedder, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	search.Normalize(vs[0])
	return vs[0]
}
