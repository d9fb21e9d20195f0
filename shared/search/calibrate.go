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
//   - Chance: the cosines of query-like texts (runs of words taken from a
//     sample of the documents, of four lengths: 2 to 4 words, 5 to 12, 13
//     to 30 and 31 to 60) with documents they were not taken from. Their
//     median is the chance level; the threshold starts at their 95th
//     percentile, where one such pair in twenty reaches by chance, measured
//     for each length apart: a sentence encoder puts a long question nearer
//     every document than a few words (on SciFact, 0.51 for three words,
//     0.74 for fifty), and a query is held to the chance of its own length.
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
	// Lengths are the chance cosines of queries of each length, shortest
	// first; P50 to P99 above are of all of them together.
	Lengths []LengthNull `json:"lengths,omitempty"`
}

// LengthNull is the chance of the queries of one length.
type LengthNull struct {
	// Words is the most words such a query has; 0 for any number above
	// the length before.
	Words int     `json:"words"`
	Pairs int     `json:"pairs"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
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
		if len(n.Lengths) > len(queryLengths) {
			return fmt.Errorf("%d lengths of query, more than the %d measured", len(n.Lengths), len(queryLengths))
		}
		for _, l := range n.Lengths {
			if l.Words < 0 || l.Pairs < 0 || math.IsNaN(l.P50) || math.IsNaN(l.P95) || l.P50 < -1 || l.P95 > 1 || l.P50 > l.P95 {
				return fmt.Errorf("a length of query of %d words, %d pairs, percentiles %v and %v", l.Words, l.Pairs, l.P50, l.P95)
			}
		}
	}
	return nil
}

// Threshold is the cosine at or above which an item is "far closer than
// chance" for a query of any length: the 95th percentile of the chance
// cosines, and at least above what random letters reach.
func (n Null) Threshold() float64 { return n.threshold(n.P95) }

// ThresholdFor is Threshold for a query of words words: the 95th percentile
// of the chance of queries of that length.
func (n Null) ThresholdFor(words int) float64 {
	for _, l := range n.Lengths {
		if l.Pairs > 0 && (l.Words == 0 || words <= l.Words) {
			return n.threshold(l.P95)
		}
	}
	return n.Threshold()
}

func (n Null) threshold(p95 float64) float64 {
	ceiling := n.GibberishMax + (n.GibberishMax-n.GibberishMedian)/2
	return round4(min(max(p95, ceiling, minThreshold), 0.99))
}

// minThreshold is the least calibrated threshold: an embedder whose chance
// cosines are all near 0 (a corpus of a few unrelated documents) still
// needs a cosine above noise for a meaning match.
const minThreshold = 0.05

// Chance is the chance level: the cosine a query-like text has with an item
// it was not taken from, at the median.
func (n Null) Chance() float64 { return round4(max(n.P50, 0)) }

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Calibration's sample sizes: enough for stable percentiles (100 queries
// of each length by up to 4,000 documents, 1,600,000 pairs), few enough
// that a model served at 3 texts a second embeds them in under four
// minutes.
const (
	calibrationQueries   = 100 // of each length
	calibrationItems     = 4000
	calibrationGibberish = 256
	// MinCalibrationRecordings is the fewest readable recordings measured
	// on their own; below it, recordings take the documents' threshold.
	MinCalibrationRecordings = 50
)

// queryLengths are the lengths of query measured apart: the most words of
// each (0: no most), and the run of words a query-like text is cut to.
var queryLengths = []struct{ upTo, from, to int }{{4, 2, 4}, {12, 5, 12}, {30, 13, 30}, {0, 31, 60}}

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

	// The query-like texts: runs of words of each length, each from a
	// document drawn at random (its title and body).
	var texts []string
	var from []int   // the document each was taken from
	var length []int // its length's place in queryLengths
	for li, ql := range queryLengths {
		for range min(calibrationQueries, 2*len(docs)) {
			i := rng.IntN(len(docs))
			words := strings.Fields(docs[i].Title + " " + strings.Join(docs[i].Body, " "))
			if len(words) == 0 {
				continue
			}
			n := min(ql.from+rng.IntN(ql.to-ql.from+1), len(words))
			at := rng.IntN(len(words) - n + 1)
			texts = append(texts, strings.Join(words[at:at+n], " "))
			from, length = append(from, i), append(length, li)
		}
	}
	nq := len(texts)
	for range calibrationGibberish {
		texts = append(texts, RandomLetters(rng, known))
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
	c.Documents = measure(vecs[:nq], from, length, vecs[nq:], items, owner)

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
		n := measure(vecs[:nq], from, length, vecs[nq:], recs, recOwner)
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

// measure is the null of queries (taken from the documents from, of the
// lengths length) and of the gibberish strings against items (owned by the
// documents owner).
func measure(queries [][]float32, from, length []int, gib [][]float32, items [][]float32, owner []int) Null {
	n := Null{Queries: len(queries), Gibberish: len(gib)}
	byLength := make([][]float32, len(queryLengths))
	var pairs []float32
	for qi, q := range queries {
		if isZero(q) {
			continue // a text the embedder knows nothing of relates to nothing
		}
		for j, it := range items {
			if owner[j] != from[qi] {
				c := dot(q, it)
				pairs = append(pairs, c)
				byLength[length[qi]] = append(byLength[length[qi]], c)
			}
		}
	}
	n.Pairs = len(pairs)
	if len(pairs) > 0 {
		slices.Sort(pairs)
		n.P50, n.P90, n.P95, n.P99 = at(pairs, 0.5), at(pairs, 0.9), at(pairs, 0.95), at(pairs, 0.99)
	}
	for li, ps := range byLength {
		l := LengthNull{Words: queryLengths[li].upTo, Pairs: len(ps)}
		if len(ps) > 0 {
			slices.Sort(ps)
			l.P50, l.P95 = at(ps, 0.5), at(ps, 0.95)
		}
		n.Lengths = append(n.Lengths, l)
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

// at is the p-quantile of sorted.
func at(sorted []float32, p float64) float64 {
	return float64(sorted[min(len(sorted)-1, int(p*float64(len(sorted))))])
}

// RandomLetters is a string of random letters, 1 to 3 words of 4 to 12
// letters, none of them a word of the corpus when known is set: the query
// that docs/api.md says must match nothing (the calibration's gibberish,
// and the tests' random queries).
func RandomLetters(rng *rand.Rand, known func(string) bool) string {
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
