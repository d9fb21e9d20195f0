package search

import (
	"context"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// CachedEmbedder remembers the vectors of recent texts, so that a repeated query
// (a user paging through results, an agent retrying) costs no embedding call, and
// concurrent requests for the same text share one call.
type CachedEmbedder struct {
	Embedder
	cache *lru.Cache[string, []float32]
	group singleflight.Group
}

// DefaultCacheSize is the number of query vectors kept.
const DefaultCacheSize = 4096

// Cached wraps e with a cache of size texts (DefaultCacheSize when 0).
func Cached(e Embedder, size int) *CachedEmbedder {
	if size <= 0 {
		size = DefaultCacheSize
	}
	c, _ := lru.New[string, []float32](size) // only a size below 1 fails
	return &CachedEmbedder{Embedder: e, cache: c}
}

// EmbedQuery returns the vector of one query text. Callers must not modify it.
func (c *CachedEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if v, ok := c.cache.Get(text); ok {
		return v, nil
	}
	v, err, _ := c.group.Do(text, func() (any, error) {
		// A call for the same text may have finished between the miss above
		// and this one starting.
		if v, ok := c.cache.Get(text); ok {
			return v, nil
		}
		vs, err := c.Embedder.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		if err := CheckVectors(vs, 1, c.Dimensions()); err != nil {
			return nil, fmt.Errorf("search: embed query: %w", err)
		}
		c.cache.Add(text, vs[0])
		return vs[0], nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]float32), nil
}
