package relevance

import (
	"cmp"
	"math"
	"slices"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/search"
)

// Parameters of the BM25 baseline: the textbook (Robertson et al.) values.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// BM25 is a textbook BM25 ranking over one field that holds exactly the text
// doclib's word match indexes for a document (shared/backend/localsearch, buildLexical):
// its title, the strings of its content and its labels (category, tags,
// applications), analysed by shared/analysis. A document's terms are the
// terms of its words that are not stop words.
//
//	score(d, q) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//	idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
// with k1 = 1.2, b = 0.75, |d| the number of terms of d and avgdl their mean.
// A query's terms are analysis.Analyzer.Terms of its text, each counted once:
// a term repeated in a query does not weigh more (a textbook variant: k3 = 0
// in Robertson's query-term-frequency factor), as doclib's own word match
// treats a query as the set of its terms.
type BM25 struct {
	analyzer *analysis.Analyzer
	ids      []string // by ordinal: document IDs in ascending order
	docLen   []float64
	avgLen   float64
	terms    map[string][]posting
}

type posting struct {
	doc int32
	tf  float64
}

// NewBM25 indexes documents.
func NewBM25(docs []*doclib.Document) *BM25 {
	sorted := slices.Clone(docs)
	slices.SortFunc(sorted, func(a, b *doclib.Document) int { return cmp.Compare(a.ID, b.ID) })
	x := &BM25{analyzer: analysis.New(), ids: make([]string, len(sorted)), docLen: make([]float64, len(sorted)),
		terms: map[string][]posting{}}
	total := 0.0
	counts := map[string]int{}
	for i, d := range sorted {
		x.ids[i] = d.ID
		clear(counts)
		n := 0
		add := func(s string) {
			x.analyzer.Each(s, func(t analysis.Token) {
				if !t.Stop {
					counts[t.Term]++
					n++
				}
			})
		}
		add(d.Title)
		for _, s := range doclib.ContentStrings(d.Content) {
			add(s)
		}
		for _, s := range search.Labels(d) {
			add(s)
		}
		for t, tf := range counts {
			x.terms[t] = append(x.terms[t], posting{doc: int32(i), tf: float64(tf)})
		}
		x.docLen[i] = float64(n)
		total += float64(n)
	}
	if len(sorted) > 0 {
		x.avgLen = total / float64(len(sorted))
	}
	return x
}

// Scored is a document's BM25 score.
type Scored struct {
	ID    string
	Score float64
}

// IDF is the inverse document frequency of an analysed term (0 for a term no
// document holds).
func (x *BM25) IDF(term string) float64 {
	df := float64(len(x.terms[term]))
	if df == 0 {
		return 0
	}
	n := float64(len(x.ids))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// Rank returns every document whose score for q is above 0, best first, ties
// by document ID.
func (x *BM25) Rank(q string) []Scored {
	terms := x.analyzer.Terms(q)
	slices.Sort(terms)
	terms = slices.Compact(terms) // each term once: see BM25
	scores := map[int32]float64{}
	for _, t := range terms {
		idf := x.IDF(t)
		for _, p := range x.terms[t] {
			norm := BM25K1 * (1 - BM25B + BM25B*x.docLen[p.doc]/x.avgLen)
			scores[p.doc] += idf * p.tf * (BM25K1 + 1) / (p.tf + norm)
		}
	}
	out := make([]Scored, 0, len(scores))
	for d, s := range scores {
		if s > 0 {
			out = append(out, Scored{ID: x.ids[d], Score: s})
		}
	}
	slices.SortFunc(out, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
