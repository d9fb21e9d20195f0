package search

import "strings"

// DefaultRules returns the documented defaults for the vectors of an embedder,
// chosen by the prefix of its ID. Its thresholds hold until the index has a
// calibration (Calibrated), which replaces them: a threshold means something
// for one model only. The weights are one set for every embedder, measured on
// the public test collections (docs/search.md): a meaning signal's strength
// counts from its calibrated threshold, so it means the same whatever the
// model's cosines. (Model embedders had their own weights once, semantic 0.3,
// never measured; with a real model they ranked SciFact under BM25.)
func DefaultRules(embedderID string) Rules {
	r := Rules{
		FuzzySimilarity: 0.8,
		FuzzyShare:      0.1,
		Feedback:        Feedback{Docs: 10, Terms: 30, QueryWeight: 0.7},
		Weights:         Weights{Lexical: 0.7, Fuzzy: 0.65, Semantic: 0.08, Recordings: 0.2},
	}
	switch {
	case strings.HasPrefix(embedderID, "corpus-"):
		// The fitted offline embedder: unrelated texts of the collections
		// fall below 0.2; random letters embed to zero.
		r.SemanticThreshold, r.RecordingsThreshold = 0.2, 0.3
	case strings.HasPrefix(embedderID, "hash-"):
		r.SemanticThreshold, r.RecordingsThreshold = 0.20, 0.45
	case strings.HasPrefix(embedderID, "bedrock/amazon.titan-embed-text-v2"):
		// Titan V2, normalised: starting points until a reindex
		// calibrates the index (docs/search.md).
		r.SemanticThreshold, r.RecordingsThreshold = 0.45, 0.50
	default:
		// A guess until a reindex calibrates the index: models differ
		// (USE-lite puts unrelated texts near 0.5, others near 0.1).
		r.SemanticThreshold, r.RecordingsThreshold = 0.55, 0.6
	}
	return r
}
