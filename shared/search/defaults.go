package search

import "strings"

// DefaultRules returns the documented defaults for the vectors of an embedder,
// chosen by the prefix of its ID. Thresholds only mean something for one model:
// the offline embedder's were measured on the relevance set (docs/search.md);
// those for other models are starting points to calibrate with the same set.
func DefaultRules(embedderID string) Rules {
	r := Rules{
		FuzzySimilarity:   0.8,
		LexicalSaturation: 2,
		Weights:           Weights{Lexical: 0.5, Fuzzy: 0.4, Semantic: 0.3, Recordings: 0.2},
	}
	switch {
	case strings.HasPrefix(embedderID, "hash-"):
		r.SemanticThreshold, r.RecordingsThreshold = 0.20, 0.45
	default:
		// Sentence-embedding models put paraphrases at about 0.5 to 0.8 and
		// unrelated texts below 0.3 to 0.4.
		r.SemanticThreshold, r.RecordingsThreshold = 0.55, 0.6
	}
	return r
}
