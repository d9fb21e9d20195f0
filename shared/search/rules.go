package search

import (
	"fmt"
	"math"
	"strings"
)

// The signals of a hit (docs/api.md, "Search").
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
	// term and a document term for a near match; it scales the edits allowed
	// with the term's length (0.8: none up to 4 letters, 1 up to 9, 2 from 10).
	FuzzySimilarity float64
	// FuzzyShare is the share of the query's term weight (each term weighs its
	// rarity, BM25's idf; a near match counts its similarity times that) a
	// document must hold for the fuzzy signal to fire.
	FuzzyShare float64
	// Feedback expands the word signals' strength with the words the best
	// word matches share (pseudo-relevance feedback); zero Docs turns it off.
	Feedback Feedback
	// Weights of the signals in the blended score. Lexical and fuzzy never fire
	// together, so Lexical + Semantic + Recordings (and Fuzzy + Semantic +
	// Recordings) must be at most 1 for the score to stay within [0, 1].
	Weights Weights
	// Fixed are the thresholds set explicitly (a flag, a variable), which a
	// calibration leaves as they are.
	Fixed Fixed
}

// Fixed says which rules were set explicitly.
type Fixed uint8

// The rules a calibration would otherwise set.
const (
	FixedSemantic Fixed = 1 << iota
	FixedRecordings
)

// Calibrated returns r with the thresholds c measured for r's embedder, for
// a query of words words (0: of any length), except those set explicitly.
// A calibration of another embedder, or none, leaves r as it is.
func (r Rules) Calibrated(c *Calibration, embedderID string, words int) Rules {
	if c == nil || c.Embedder != embedderID || c.Documents.Pairs == 0 {
		return r
	}
	docs, recs := c.Documents, c.Documents
	if c.Recordings != nil && c.Recordings.Pairs > 0 {
		recs = *c.Recordings
	}
	threshold := func(n Null) float64 {
		if words > 0 {
			return n.ThresholdFor(words)
		}
		return n.Threshold()
	}
	if r.Fixed&FixedSemantic == 0 {
		r.SemanticThreshold = threshold(docs)
	}
	if r.Fixed&FixedRecordings == 0 {
		r.RecordingsThreshold = threshold(recs)
	}
	return r
}

// Strength is a meaning signal's strength: how far its cosine is beyond the
// threshold, (cosine - threshold) / (1 - threshold), in [0, 1]. A document
// just over the threshold gains next to nothing over one just under it, and
// a model whose cosines all sit high adds no more to a score than one whose
// cosines sit low: what counts is the distance past "far closer than
// chance", not the cosine's size.
func Strength(cos, threshold float64) float64 {
	if threshold >= 1 {
		return 0
	}
	return clamp01((cos - threshold) / (1 - threshold))
}

// Feedback is pseudo-relevance feedback (RM3): the words of the Docs best word
// matches, weighed by how much of each document they make up, how well the
// document matched and how rare they are, give Terms more query words, which
// make up 1 - QueryWeight of the expanded query. The expansion only changes
// the strength of documents the query's own words matched.
type Feedback struct {
	Docs, Terms int
	QueryWeight float64
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
		"fuzzy similarity": r.FuzzySimilarity, "fuzzy share": r.FuzzyShare} {
		if v <= 0 || v > 1 {
			bad = append(bad, fmt.Sprintf("%s %g must be in (0, 1]", name, v))
		}
	}
	if f := r.Feedback; f.Docs < 0 || f.Terms < 0 || (f.Docs > 0 && (f.QueryWeight <= 0 || f.QueryWeight > 1)) {
		bad = append(bad, fmt.Sprintf("feedback of %d documents and %d terms at query weight %g: counts must not be negative, the weight in (0, 1]", f.Docs, f.Terms, f.QueryWeight))
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
	// FuzzyHit is true when LexicalHit is false and the document holds at least
	// Rules.FuzzyShare of the query's term weight, exactly or nearly.
	FuzzyHit bool
	// Word is the strength of the word evidence, in [0, 1]: the document's
	// BM25F for the (expanded) query over the most any document could score,
	// so that matching rare words weighs more than matching common ones.
	Word float64
	// Share is the share of the query's term weight the document holds.
	Share float64
	// Semantic is the cosine similarity of query and document, whatever it is.
	Semantic float64
	// Recordings is the best cosine similarity of the query to a readable (shared,
	// not Individual plan) recording behind the document; 0 when there is none.
	Recordings float64
}

// Signals returns the signals that fire for e, in the order of docs/api.md.
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
// contributes its weight times the strength of its evidence: the word signals
// their BM25F strength, the meaning signals how far their cosine is past
// the threshold (Strength). Signals that do not
// fire add nothing, so the score never depends on evidence below a threshold,
// and a strong signal is never buried under another's floor.
func (r *Rules) Score(e Evidence) float64 {
	s := 0.0
	switch {
	case e.LexicalHit:
		s += r.Weights.Lexical * clamp01(e.Word)
	case e.FuzzyHit:
		s += r.Weights.Fuzzy * clamp01(e.Word)
	}
	if e.Semantic >= r.SemanticThreshold {
		s += r.Weights.Semantic * Strength(e.Semantic, r.SemanticThreshold)
	}
	if e.Recordings >= r.RecordingsThreshold {
		s += r.Weights.Recordings * Strength(e.Recordings, r.RecordingsThreshold)
	}
	// Four decimals, the precision the API reports: documents whose reported
	// scores are equal are ranked by ID, as the spec says, not by a difference
	// nobody can see.
	return math.Round(clamp01(s)*1e4) / 1e4
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }
