package relevance

import (
	"math"
	"slices"
)

// Cutoff is the rank the metrics stop at, and the page size of the searches.
const Cutoff = 10

// Scores are the metrics of one ranking, or their means over queries.
type Scores struct {
	// NDCG is nDCG@10: the discounted cumulative gain of the first 10
	// (gain = grade, discount log2(rank+1)) over that of the ideal ranking of
	// every document judged relevant.
	NDCG float64 `json:"ndcg10"`
	// Recall is Recall@10: the relevant documents in the first 10 over all
	// relevant documents.
	Recall float64 `json:"recall10"`
	// MRR is the reciprocal rank of the first relevant document within the
	// first 10, 0 when none is (its mean over queries is MRR@10).
	MRR float64 `json:"mrr10"`
}

// Score computes the metrics at Cutoff of a ranking (corpus IDs, best first)
// against a query's relevant documents and their grades (all above 0). A
// query with no relevant document scores 0.
func Score(ranked []string, relevant map[string]int) Scores {
	if len(relevant) == 0 {
		return Scores{}
	}
	top := ranked[:min(Cutoff, len(ranked))]
	var s Scores
	dcg, found := 0.0, 0
	for i, id := range top {
		g := relevant[id]
		if g <= 0 {
			continue
		}
		dcg += float64(g) / math.Log2(float64(i+2))
		found++
		if s.MRR == 0 {
			s.MRR = 1 / float64(i+1)
		}
	}
	grades := make([]int, 0, len(relevant))
	for _, g := range relevant {
		grades = append(grades, g)
	}
	slices.SortFunc(grades, func(a, b int) int { return b - a })
	ideal := 0.0
	for i, g := range grades[:min(Cutoff, len(grades))] {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	s.NDCG = dcg / ideal
	s.Recall = float64(found) / float64(len(relevant))
	return s
}

// SignTest is the two-sided p-value of the paired sign test: the chance, if
// either system were as likely as the other to win a query, of a split at
// least as uneven as wins against losses. Ties are left out; with no wins and
// no losses it is 1.
func SignTest(wins, losses int) float64 {
	n := wins + losses
	if n == 0 {
		return 1
	}
	k := min(wins, losses)
	// P(X <= k) for X ~ Binomial(n, 1/2), term by term in logs.
	lnC := func(n, k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c
	}
	tail := 0.0
	for i := 0; i <= k; i++ {
		tail += math.Exp(lnC(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*tail)
}
