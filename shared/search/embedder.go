package search

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Embedder turns texts into vectors for the meaning matches (the semantic and
// source_recordings signals). Implementations: the offline hashing embedder in
// shared/backend/offline, an OpenAI-compatible HTTP embedder in shared/backend/openai, and Bedrock
// (a later issue).
type Embedder interface {
	// Embed returns one vector per text, in the order given, each of length
	// Dimensions() and of unit length (L2-normalised), so that a dot product is the
	// cosine similarity. An empty text gets a zero vector.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions is the length of every vector the embedder returns.
	Dimensions() int
	// ID names the model and its settings (e.g. "hash-v1/256",
	// "openai/nomic-embed-text"). Vectors of different IDs are never compared, and
	// thresholds and caches are per ID.
	ID() string
}

// Fitter is an embedder that learns from the corpus it is to serve, as the
// offline embedder does: Fit returns the embedder for that corpus, whose ID
// tells it apart from one fitted on other texts. An in-process index fits the
// embedder it is given on its documents before it embeds them.
type Fitter interface {
	Fit(ctx context.Context, texts []string) (Embedder, error)
}

// ErrEmbedder marks a failure of the embedding provider that a retry may cure
// (unreachable, throttled past the retries, a 5xx). The API answers it with 503.
var ErrEmbedder = errors.New("embedding provider unavailable")

// Normalize scales v to unit length in place; a zero vector stays zero. It reports
// false when v holds a NaN or an infinity, which no embedder may return.
func Normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		sum += f * f
	}
	if sum == 0 {
		return true
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}

// CheckVectors verifies what an embedder returned for n texts: n vectors of dims
// each, finite. It normalises them in place.
func CheckVectors(vs [][]float32, n, dims int) error {
	if len(vs) != n {
		return fmt.Errorf("search: embedder returned %d vectors for %d texts", len(vs), n)
	}
	for i, v := range vs {
		if len(v) != dims {
			return fmt.Errorf("search: embedder returned a vector of %d dimensions at %d, want %d", len(v), i, dims)
		}
		if !Normalize(v) {
			return fmt.Errorf("search: embedder returned a vector with NaN or infinity at %d", i)
		}
	}
	return nil
}
