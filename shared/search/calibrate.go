package search

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// A threshold of cosine similarity means something only for one model, and
// models differ: the fitted offline embedder puts a query and an unrelated
// document near 0.05, a small sentence encoder near 0.5. Calibration measures
// where chance lies for the embedder on the corpus it serves, so that
// `semantic` means "far closer than chance" whatever the model
// (docs/search.md, "Calibrated thresholds"):
//
//   - Chance: the cosines of query-like texts (the titles of a sample of the
//     documents) with documents they were not taken from. Their median is
//     the chance level; the threshold starts at their 95th percentile, where
//     one such pair in twenty reaches by chance.
//   - Gibberish: the best cosine that strings of random letters (1 to 3
//     words of 4 to 12 letters, none a word of the corpus) reach with any
//     document. A query of random letters must match nothing (docs/api.md),
//     so the threshold is at least their highest, plus half its distance
//     from their median, a margin for strings not drawn.
//
// The same measure against the readable recordings gives their threshold
// when there are enough of them; otherwise recordings take the documents'.

// Calibration is what an index measured of its embedder on its corpus.
type Calibration struct {
	// Embedder is the ID of the embedder measured: a calibration applies to
	// its vectors only.
	Embedder string `json:"embedder"`
	// Documents is the chance of a query with the documents.
	Documents Null `json:"documents"`
	// Recordings is the chance of a query with the readable recordings,
	// when there were at least MinCalibrationRecordings of them.
	Recordings *Null `json:"recordings,omitempty"`
}

// Null is the distribution of cosines that chance gives.
type Null struct {
	// Queries is the number of query-like texts measured, Pairs the (query,
	// item) pairs, Gibberish the random-letter strings.
	Queries   int `json:"queries"`
	Pairs     int `json:"pairs"`
	Gibberish int `json:"gibberish"`
	// P50 to P99 are percentiles of the cosine of a query-like text and an
	// item it was not taken from; P50 is the chance level.
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	// GibberishMedian and GibberishMax are the median and the highest of
	// the best cosine each random-letter string reached with an item.
	GibberishMedian float64 `json:"gibberishMedian"`
	GibberishMax    float64 `json:"gibberishMax"`
}

// Check refuses a calibration no measure gives: a read one (from a
// manifest, an index's _meta) is data, not to be trusted blindly.
func (c *Calibration) Check() error {
	nulls := []*Null{&c.Documents}
	if c.Recordings != nil {
		nulls = append(nulls, c.Recordings)
	}
	for _, n := range nulls {
		if n.Queries < 0 || n.Pairs < 0 || n.Gibberish < 0 {
			return fmt.Errorf("a negative count (%d queries, %d pairs, %d strings)", n.Queries, n.Pairs, n.Gibberish)
		}
		for _, x := range []float64{n.P50, n.P90, n.P95, n.P99, n.GibberishMedian, n.GibberishMax} {
			if math.IsNaN(x) || x < -1 || x > 1 {
				return fmt.Errorf("a cosine of %v", x)
			}
		}
		if !(n.P50 <= n.P90 && n.P90 <= n.P95 && n.P95 <= n.P99 && n.GibberishMedian <= n.GibberishMax) {
			return errors.New("percentiles out of order")
		}
	}
	return nil
}

// Threshold is the cosine at or above which an item is "far closer than
// chance": the 95th percentile of the chance cosines, and at least above
// what random letters reach.
func (n Null) Threshold() float64 {
	ceiling := n.GibberishMax + (n.GibberishMax-n.GibberishMedian)/2
	return round4(min(max(n.P95, ceiling, minThreshold), 0.99))
}

// minThreshold is the least calibrated threshold: an embedder whose chance
// cosines are all near 0 (a corpus of a few unrelated documents) still
// needs a cosine above noise for a meaning match.
const minThreshold = 0.05

// Chance is the chance level: the cosine a query-like text has with an item
// it was not taken from, at the median.
func (n Null) Chance() float64 { return round4(max(n.P50, 0)) }

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Calibration's sample sizes: enough for stable percentiles (200 queries
// by up to 4,000 documents, 800,000 pairs), few enough that a model served
// at 3 texts a second embeds them in under three minutes.
const (
	calibrationQueries   = 200
	calibrationItems     = 4000
	calibrationGibberish = 256
	// MinCalibrationRecordings is the fewest readable recordings measured
	// on their own; below it, recordings take the documents' threshold.
	MinCalibrationRecordings = 50
)

// Calibrate measures the chance level of e's vectors over docs (made by e).
// known, when set, tells the words of the corpus, so that no random-letter
// string is a word. It embeds at most 456 short texts; the rest is
// arithmetic on the vectors. The result depends only on docs and e: the
// samples are drawn from a seed of the corpus's size and the embedder's ID.
func Calibrate(ctx context.Context, e Embedder, docs []IndexDoc, known func(word string) bool) (*Calibration, error) {
	c := &Calibration{Embedder: e.ID()}
	if len(docs) < 2 {
		return nil, nil
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", e.ID(), len(docs))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))

	// The query-like texts: titles of a sample of the documents.
	picks := rng.Perm(len(docs))[:min(calibrationQueries, len(docs))]
	var texts []string
	var from []int // the document each title is from
	for _, i := range picks {
		if t := strings.TrimSpace(docs[i].Title); t != "" {
			texts = append(texts, t)
			from = append(from, i)
		}
	}
	nq := len(texts)
	for range calibrationGibberish {
		texts = append(texts, gibberish(rng, known))
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("search: calibrate %s: %w", e.ID(), err)
	}

	// The documents compared: all of them, or a sample.
	items := make([][]float32, 0, min(len(docs), calibrationItems))
	owner := make([]int, 0, cap(items))
	for _, i := range rng.Perm(len(docs))[:cap(items)] {
		items = append(items, docs[i].Vector)
		owner = append(owner, i)
	}
	c.Documents = measure(vecs[:nq], from, vecs[nq:], items, owner)

	var recs [][]float32
	var recOwner []int
	for i, d := range docs {
		for _, r := range d.Recordings {
			recs = append(recs, r.Vector)
			recOwner = append(recOwner, i)
		}
	}
	if len(recs) >= MinCalibrationRecordings {
		if len(recs) > calibrationItems {
			keep := rng.Perm(len(recs))[:calibrationItems]
			slices.Sort(keep)
			for j, k := range keep {
				recs[j], recOwner[j] = recs[k], recOwner[k]
			}
			recs, recOwner = recs[:calibrationItems], recOwner[:calibrationItems]
		}
		n := measure(vecs[:nq], from, vecs[nq:], recs, recOwner)
		c.Recordings = &n
	}
	return c, ctx.Err()
}

// Sample keeps a uniform sample of a stream of documents (reservoir
// sampling), enough for Calibrate, so that an index loaded batch by batch
// (OpenSearch's reindex) is calibrated without holding every vector. The
// sample depends only on the stream's order and the seed.
type Sample struct {
	rng  *rand.Rand
	seen int
	docs []IndexDoc
}

// NewSample returns an empty sample drawn with seed.
func NewSample(seed uint64) *Sample {
	return &Sample{rng: rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))}
}

// Add offers d to the sample; what is kept is copied.
func (s *Sample) Add(d IndexDoc) {
	s.seen++
	at := len(s.docs)
	if at >= calibrationItems {
		if at = s.rng.IntN(s.seen); at >= calibrationItems {
			return
		}
	}
	d.Vector = slices.Clone(d.Vector)
	d.Body, d.Labels = slices.Clone(d.Body), slices.Clone(d.Labels)
	recs := make([]RecordingVector, len(d.Recordings))
	for i, r := range d.Recordings {
		recs[i] = RecordingVector{ID: r.ID, Vector: slices.Clone(r.Vector)}
	}
	d.Recordings = recs
	if at == len(s.docs) {
		s.docs = append(s.docs, d)
	} else {
		s.docs[at] = d
	}
}

// Docs are the documents kept.
func (s *Sample) Docs() []IndexDoc { return s.docs }

// measure is the null of queries (taken from the documents from) and of the
// gibberish strings against items (owned by the documents owner).
func measure(queries [][]float32, from []int, gib [][]float32, items [][]float32, owner []int) Null {
	n := Null{Queries: len(queries), Gibberish: len(gib)}
	pairs := make([]float32, 0, len(queries)*len(items))
	for qi, q := range queries {
		if isZero(q) {
			continue // a title the embedder knows nothing of relates to nothing
		}
		for j, it := range items {
			if owner[j] != from[qi] {
				pairs = append(pairs, dot(q, it))
			}
		}
	}
	n.Pairs = len(pairs)
	if len(pairs) > 0 {
		slices.Sort(pairs)
		at := func(p float64) float64 { return float64(pairs[min(len(pairs)-1, int(p*float64(len(pairs))))]) }
		n.P50, n.P90, n.P95, n.P99 = at(0.5), at(0.9), at(0.95), at(0.99)
	}
	best := make([]float32, 0, len(gib))
	for _, g := range gib {
		top := float32(0)
		for _, it := range items {
			top = max(top, dot(g, it))
		}
		best = append(best, top)
	}
	if len(best) > 0 {
		slices.Sort(best)
		n.GibberishMedian, n.GibberishMax = float64(best[len(best)/2]), float64(best[len(best)-1])
	}
	return n
}

// gibberish is a string of random letters, 1 to 3 words of 4 to 12
// letters, none of them a word of the corpus (known).
func gibberish(rng *rand.Rand, known func(string) bool) string {
	words := make([]string, 1+rng.IntN(3))
	for i := range words {
		for {
			b := make([]byte, 4+rng.IntN(9))
			for j := range b {
				b[j] = byte('a' + rng.IntN(26))
			}
			if known == nil || !known(string(b)) {
				words[i] = string(b)
				break
			}
		}
	}
	return strings.Join(words, " ")
}

func dot(a, b []float32) float32 {
	s := float32(0)
	for i := range min(len(a), len(b)) {
		s += a[i] * b[i]
	}
	return s
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
