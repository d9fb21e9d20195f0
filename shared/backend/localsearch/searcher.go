package localsearch

import (
	"context"
	"fmt"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// Searcher builds the embedded search engine over d with embedder e, as
// doclib-server serves it and doclib-admin eval measures it: an embedder that
// learns from its corpus (the offline one) is fitted to the documents first,
// and the rules are those of the embedder that embeds the queries, with r's
// overrides.
func Searcher(ctx context.Context, d *doclib.DataSet, e search.Embedder, r settings.Rules, progress func(done, total int)) (*search.Searcher, error) {
	docs, fitted, err := IndexDocs(ctx, d, e, Options{Progress: progress, Fit: true})
	if err != nil {
		return nil, fmt.Errorf("build the search index: %w", err)
	}
	idx, err := build(ctx, docs, fitted, workerCount(Options{}))
	if err != nil {
		return nil, fmt.Errorf("build the search index: %w", err)
	}
	cal, err := search.Calibrate(ctx, fitted, docs, idx.Knows)
	if err != nil {
		return nil, fmt.Errorf("build the search index: %w", err)
	}
	return r.Searcher(search.Local{Retriever: idx, Cal: cal}, fitted)
}

// LiveSearcher is Searcher over an index that follows changes: the same
// engine, built from the same documents with the same fitted embedder, as a
// Live that an indexer keeps in step with a table. Documents written later
// are embedded by the embedder fitted at start.
func LiveSearcher(ctx context.Context, d *doclib.DataSet, e search.Embedder, r settings.Rules, progress func(done, total int)) (*search.Searcher, *Live, error) {
	docs, fitted, err := IndexDocs(ctx, d, e, Options{Progress: progress, Fit: true})
	if err != nil {
		return nil, nil, fmt.Errorf("build the search index: %w", err)
	}
	live, err := NewLive(ctx, docs, fitted, Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("build the search index: %w", err)
	}
	// Calibrated on the documents at start; the index then follows the
	// table, the calibration stays (a corpus drifts slowly).
	cal, err := search.Calibrate(ctx, fitted, docs, vocabulary(docs))
	if err != nil {
		return nil, nil, fmt.Errorf("build the search index: %w", err)
	}
	s, err := r.Searcher(search.Local{Retriever: live, Cal: cal}, fitted)
	return s, live, err
}

// vocabulary reports whether a word is, after analysis, a term of docs.
func vocabulary(docs []search.IndexDoc) func(string) bool {
	terms := map[string]bool{}
	a := analyzer()
	for _, d := range docs {
		for _, texts := range [][]string{{d.Title}, d.Body, d.Labels} {
			for _, text := range texts {
				for _, t := range a.Terms(text) {
					terms[t] = true
				}
			}
		}
	}
	return func(word string) bool {
		for _, t := range a.Terms(word) {
			if terms[t] {
				return true
			}
		}
		return false
	}
}
