package localsearch

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/doclib/doclib/shared/search"
)

// Live is an embedded index that an indexer keeps in step with a table: a
// search.Index and search.Committer over the index documents it holds, and a
// search.Retriever over the engine last built from them.
//
// Upsert and Delete change the documents held; Commit builds a whole new
// engine from them (FromDocs) and swaps it in at once, so a search runs on
// one whole index, the one in service when it started, and never on a
// half-built one. A Commit that fails to build leaves the last good engine in
// service and the documents held, so that the next Commit tries again. It is
// safe for concurrent use.
type Live struct {
	embedder search.Embedder
	opt      Options

	mu   sync.Mutex // held by writes and by the Commit that builds
	docs *search.DocSet
	cur  atomic.Pointer[Index]
}

var (
	_ search.Index     = (*Live)(nil)
	_ search.Committer = (*Live)(nil)
	_ search.Retriever = (*Live)(nil)
)

// NewLive builds the first engine over docs, whose vectors e made (the
// embedder IndexDocs returns); later documents must be embedded by e too.
func NewLive(ctx context.Context, docs []search.IndexDoc, e search.Embedder, opt Options) (*Live, error) {
	opt.Fit, opt.Progress = false, nil
	l := &Live{embedder: e, opt: opt, docs: search.NewDocSet(docs)}
	if err := l.build(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// Embedder is the embedder of the vectors and of the queries.
func (l *Live) Embedder() search.Embedder { return l.embedder }

// Len is the number of documents of the engine in service.
func (l *Live) Len() int { return len(l.cur.Load().docs) }

// Upsert implements search.Index: it replaces docs among those held. It
// refuses documents whose vectors FromDocs would refuse, rather than hold
// them and fail every later Commit.
func (l *Live) Upsert(_ context.Context, docs []search.IndexDoc) error {
	dims := l.embedder.Dimensions()
	for i := range docs {
		d := &docs[i]
		if !usable(d.Vector, dims) {
			return fmt.Errorf("localsearch: document %q has a vector that is not %d finite values", d.ID, dims)
		}
		for _, r := range d.Recordings {
			if !usable(r.Vector, dims) {
				return fmt.Errorf("localsearch: recording %q of document %q has a vector that is not %d finite values", r.ID, d.ID, dims)
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.docs.Upsert(docs)
	return nil
}

// Delete implements search.Index: it removes the documents held.
func (l *Live) Delete(_ context.Context, ids []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.docs.Delete(ids)
	return nil
}

// Commit implements search.Committer: it builds an engine over the documents
// held and puts it in service, unless nothing changed since the last one.
func (l *Live) Commit(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.docs.Dirty() {
		return nil
	}
	return l.build(ctx)
}

// build puts an engine over the documents held in service. The caller holds
// l.mu, or is NewLive.
func (l *Live) build(ctx context.Context) error {
	docs := l.docs.Sorted()
	x, err := FromDocs(ctx, docs, l.embedder, l.opt)
	if err != nil {
		return fmt.Errorf("localsearch: rebuild the index of %d documents: %w", len(docs), err)
	}
	l.cur.Store(x)
	l.docs.MarkClean()
	return nil
}

func usable(v []float32, dims int) bool {
	if len(v) != dims {
		return false
	}
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}

// Candidates implements search.Retriever on the engine in service.
func (l *Live) Candidates(ctx context.Context, q *search.Query, add func(search.Candidate)) error {
	return l.cur.Load().Candidates(ctx, q, add)
}

// MostActive implements search.Retriever on the engine in service.
func (l *Live) MostActive(ctx context.Context, q *search.Query, f search.Filter, offset, limit int) ([]search.Candidate, int, error) {
	return l.cur.Load().MostActive(ctx, q, f, offset, limit)
}
