package search

import (
	"fmt"
	"math"
	"strings"
)

// The signals of a hit (read-api.md, "Search hit").
const (
	SignalLexical          = "lexical"
	SignalFuzzy            = "fuzzy"
	SignalSemantic         = "semantic"
	SignalSourceRecordings = "source_recordings"
	SignalFallback         = "fallback"
)

// Rules are the thresholds and weights of search: configuration, one set per
// embedder (a threshold only means something for the vectors of one model).
type Rules struct {
	// SemanticThreshold is the cosine similarity of query and document at or
	// above which the semantic signal fires.
	SemanticThreshold float64
	// RecordingsThreshold is the cosine similarity of query and a readable
	// recording behind the document at or above which source_recordings fires.
	RecordingsThreshold float64
	// FuzzySimilarity is the least similarity, 1 - edits/length, between a query
	// term and a document term for the fuzzy signal; it scales the edits allowed
	// with the term's length (0.8: none up to 4 letters, 1 up to 9, 2 from 10).
	FuzzySimilarity float64
	// LexicalSaturation is the per-term BM25 at which the lexical strength is
	// half-way between its floor and 1: scores stay bounded and comparable across
	// queries instead of being rescaled to each query's best hit.
	LexicalSaturation float64
	// Weights of the signals in the blended score. Lexical and fuzzy never fire
	// together, so Lexical + Semantic + Recordings (and Fuzzy + Semantic +
	// Recordings) must be at most 1 for the score to stay within [0, 1].
	Weights Weights
}

// Weights of the signals in the blended score.
type Weights struct {
	Lexical    float64
	Fuzzy      float64
	Semantic   float64
	Recordings float64
}

// MaxEdits is the largest number of edits (insertions, deletions, substitutions)
// the fuzzy signal allows for a query term of n runes. Two at most: more matches
// noise in any vocabulary.
func (r *Rules) MaxEdits(n int) int {
	return min(2, int(math.Floor((1-r.FuzzySimilarity)*float64(n)+1e-9)))
}

// Validate reports configuration that cannot work.
func (r *Rules) Validate() error {
	var bad []string
	for name, v := range map[string]float64{"semantic threshold": r.SemanticThreshold, "recordings threshold": r.RecordingsThreshold,
		"fuzzy similarity": r.FuzzySimilarity} {
		if v <= 0 || v > 1 {
			bad = append(bad, fmt.Sprintf("%s %g must be in (0, 1]", name, v))
		}
	}
	if r.LexicalSaturation <= 0 {
		bad = append(bad, fmt.Sprintf("lexical saturation %g must be positive", r.LexicalSaturation))
	}
	w := r.Weights
	for name, v := range map[string]float64{"lexical": w.Lexical, "fuzzy": w.Fuzzy, "semantic": w.Semantic, "recordings": w.Recordings} {
		if v < 0 {
			bad = append(bad, fmt.Sprintf("weight %s %g must not be negative", name, v))
		}
	}
	if s := max(w.Lexical, w.Fuzzy) + w.Semantic + w.Recordings; s > 1+1e-9 {
		bad = append(bad, fmt.Sprintf("max(lexical, fuzzy) + semantic + recordings weights = %g; at most 1 keeps scores within [0, 1]", s))
	}
	if len(bad) > 0 {
		return fmt.Errorf("search rules: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Evidence is what a backend found for one document and one query.
type Evidence struct {
	// LexicalHit is true when every query term is in the document's text.
	LexicalHit bool
	// Lexical is the mean BM25 of the query terms (title weighted above content).
	Lexical float64
	// FuzzyHit is true when every query term is within the allowed edits of a
	// term of the document and LexicalHit is false.
	FuzzyHit bool
	// Fuzzy is the mean, over the query terms, of the best similarity
	// (1 - edits/length) to a term of the document.
	Fuzzy float64
	// Semantic is the cosine similarity of query and document, whatever it is.
	Semantic float64
	// Recordings is the best cosine similarity of the query to a readable (shared,
	// not Individual plan) recording behind the document; 0 when there is none.
	Recordings float64
}

// Signals returns the signals that fire for e, in the order of read-api.md.
func (r *Rules) Signals(e Evidence) []string {
	out := make([]string, 0, 3)
	if e.LexicalHit {
		out = append(out, SignalLexical)
	}
	if e.FuzzyHit && !e.LexicalHit {
		out = append(out, SignalFuzzy)
	}
	if e.Semantic >= r.SemanticThreshold {
		out = append(out, SignalSemantic)
	}
	if e.Recordings >= r.RecordingsThreshold {
		out = append(out, SignalSourceRecordings)
	}
	return out
}

// Matches reports whether any signal fires for e: the document is in the matched set.
func (r *Rules) Matches(e Evidence) bool {
	return e.LexicalHit || e.FuzzyHit || e.Semantic >= r.SemanticThreshold || e.Recordings >= r.RecordingsThreshold
}

// Score blends the fired signals into one number in [0, 1]. Each fired signal
// contributes its weight times a strength in [floor, 1]: a signal that fires is
// worth at least its floor share, and the strength grows with the evidence
// (BM25 saturated, similarity above the threshold). Signals that do not fire add
// nothing, so the score never depends on evidence below a threshold.
func (r *Rules) Score(e Evidence) float64 {
	s := 0.0
	if e.LexicalHit {
		x := max(e.Lexical, 0)
		s += r.Weights.Lexical * (0.6 + 0.4*x/(x+r.LexicalSaturation))
	} else if e.FuzzyHit {
		s += r.Weights.Fuzzy * (0.4 + 0.4*clamp01(e.Fuzzy))
	}
	if e.Semantic >= r.SemanticThreshold {
		s += r.Weights.Semantic * (0.5 + 0.5*above(e.Semantic, r.SemanticThreshold))
	}
	if e.Recordings >= r.RecordingsThreshold {
		s += r.Weights.Recordings * (0.5 + 0.5*above(e.Recordings, r.RecordingsThreshold))
	}
	return clamp01(s)
}

// above is how far x is from threshold t towards 1, in [0, 1].
func above(x, t float64) float64 {
	if t >= 1 {
		return 1
	}
	return clamp01((x - t) / (1 - t))
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }
