package search

import "strings"

// DefaultRules returns the documented defaults for the vectors of an embedder,
// chosen by the prefix of its ID. Thresholds only mean something for one model:
// the offline embedder's were measured on the public test collections and the
// relevance set (docs/search.md); those for other models are starting points
// to calibrate with the same command on the customer's own data.
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
		// Titan V2, normalised: starting points, to calibrate with the
		// relevance command on the customer's own data (docs/search.md).
		r.SemanticThreshold, r.RecordingsThreshold = 0.45, 0.50
		r.Weights = Weights{Lexical: 0.55, Fuzzy: 0.5, Semantic: 0.3, Recordings: 0.15}
	default:
		// Sentence-embedding models put paraphrases at about 0.5 to 0.8 and
		// unrelated texts below 0.3 to 0.4.
		r.SemanticThreshold, r.RecordingsThreshold = 0.55, 0.6
		r.Weights = Weights{Lexical: 0.55, Fuzzy: 0.5, Semantic: 0.3, Recordings: 0.15}
	}
	return r
}
