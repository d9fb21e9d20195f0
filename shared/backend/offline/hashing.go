// Package offline holds the embedders that need no network and no model:
// Hashing, a deterministic text-to-vector function, and Corpus, latent
// semantic analysis fitted to a corpus, with the small thesaurus both use to
// relate synonyms.
package offline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/search"
)

// Hashing is the offline embedder. It hashes a text's features into a fixed
// number of dimensions with a random sign per feature (the "hashing trick"):
//
//   - each word's stem, weight 1, and each pair of neighbouring stems, weight 0.5
//     (word order within a phrase);
//   - the character trigrams of each word, weight 0.5 per word in all, so that a
//     misspelt or inflected word still shares most of its vector ("pasword");
//   - the concept of each word or phrase listed in the thesaurus, weight 1, so that
//     listed synonyms share part of their vectors ("sign in" and "log in").
//
// Counts are dampened (1 + ln n) so that a long text does not drown its rare words.
//
// What it captures: shared words and word forms, misspellings, word order in short
// phrases, and the synonyms of its thesaurus. What it cannot: meaning beyond that.
// Two texts about the same thing in different words that the thesaurus does not
// list are as unrelated to it as any two texts. It is a reasonable default for
// local use and tests; for real meaning, point doclib at an embedding model.
type Hashing struct {
	dims     int
	analyzer *analysis.Analyzer
	concepts map[string]int  // a word's or phrase's stems joined by spaces -> group
	maxWords int             // the longest phrase of the thesaurus, in words
	first    map[string]bool // the first stem of every phrase: where a concept can start
}

var _ search.Embedder = (*Hashing)(nil)

// DefaultDimensions is the vector size of the offline embedder.
const DefaultDimensions = 256

// NewHashing returns the offline embedder with dims dimensions (DefaultDimensions
// when 0). a may be shared with an index build; nil makes a new one.
func NewHashing(dims int, a *analysis.Analyzer) (*Hashing, error) {
	if dims == 0 {
		dims = DefaultDimensions
	}
	if dims < 16 || dims > 4096 {
		return nil, fmt.Errorf("embed: %d dimensions; the offline embedder takes 16 to 4096", dims)
	}
	if a == nil {
		a = analysis.New()
	}
	h := &Hashing{dims: dims, analyzer: a, concepts: map[string]int{}, first: map[string]bool{}}
	for g, group := range thesaurus {
		for _, phrase := range group {
			key := strings.Join(h.stems(phrase), " ")
			if key == "" {
				continue
			}
			h.concepts[key] = g
			first, _, _ := strings.Cut(key, " ")
			h.first[first] = true
			h.maxWords = max(h.maxWords, strings.Count(key, " ")+1)
		}
	}
	return h, nil
}

// stems returns the terms of every word of s, stop words included, so that
// phrases such as "log in" keep their particle.
func (h *Hashing) stems(s string) []string {
	var out []string
	h.analyzer.Each(s, func(t analysis.Token) { out = append(out, t.Term) })
	return out
}

// ID implements search.Embedder.
func (h *Hashing) ID() string { return fmt.Sprintf("hash-v1/%d", h.dims) }

// Dimensions implements search.Embedder.
func (h *Hashing) Dimensions() int { return h.dims }

// Embed implements search.Embedder. It never fails.
func (h *Hashing) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.Vector(t)
	}
	return out, nil
}

// Vector embeds one text.
func (h *Hashing) Vector(text string) []float32 {
	toks := h.analyzer.Tokens(text)
	counts := make(map[uint64]float64, 4*len(toks))
	var prev string
	for _, t := range toks {
		if t.Stop {
			prev = ""
			continue
		}
		counts[fnvString(fnvByte(fnvOffset, 'w'), t.Term)]++
		if prev != "" {
			counts[fnvString(fnvByte(fnvString(fnvByte(fnvOffset, 'b'), prev), ' '), t.Term)] += 0.5
		}
		prev = t.Term
		addTrigrams(counts, t.Word)
	}
	// Thesaurus concepts, longest phrase first, over all words (stop words too).
	h.eachConcept(toks, func(g int) { counts[fnvByte(fnvByte(fnvByte(fnvOffset, 'c'), byte(g>>8)), byte(g))]++ })
	v := make([]float32, h.dims)
	// Summed in a fixed order: a map's order would change the floats'
	// last bits from one run to the next.
	for _, x := range slices.Sorted(maps.Keys(counts)) {
		n := counts[x]
		w := n // fractional weights (pairs, trigrams) are not dampened
		if n >= 1 {
			w = 1 + math.Log(n)
		}
		if x>>63 == 1 {
			w = -w
		}
		v[x%uint64(h.dims)] += float32(w)
	}
	search.Normalize(v)
	return v
}

// FNV-1a, inlined: the embedder hashes hundreds of features per text.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// addTrigrams adds the character trigrams of "^word$", 0.5 in all.
func addTrigrams(counts map[uint64]float64, w string) {
	var starts [64]int // byte offsets of the runes of w, for words up to 64 runes
	n := 0
	for i := range w {
		if n == len(starts) {
			break
		}
		starts[n] = i
		n++
	}
	// Runes of "^" + w + "$" are: '^', w's n runes, '$' -> n+2 runes, n trigrams.
	each := 0.5 / float64(n)
	rune := func(k int) string { // the k-th rune of "^w$"
		switch {
		case k == 0:
			return "^"
		case k == n+1:
			return "$"
		case k == n:
			return w[starts[k-1]:]
		}
		return w[starts[k-1]:starts[k]]
	}
	for k := 0; k+3 <= n+2; k++ {
		x := fnvByte(fnvOffset, 'g')
		x = fnvString(x, rune(k))
		x = fnvString(x, rune(k+1))
		x = fnvString(x, rune(k+2))
		counts[x] += each
	}
}
