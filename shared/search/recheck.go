package search

import (
	"context"
	"sync"
	"time"
)

// IndexCheckEvery is how long a passed check of the index (that the alias
// holds this embedder's vectors in this mapping version) is trusted, by the
// search function before it searches and by the indexer before it writes: a
// reindex may swap the alias to an index of another embedder meanwhile.
const IndexCheckEvery = 5 * time.Minute

// Recheck runs a check at most once per Every while it passes, and at each
// call while it fails. The zero value is ready: Every IndexCheckEvery, the
// clock time.Now.
type Recheck struct {
	// Every is how long a passed check is trusted (IndexCheckEvery when 0).
	Every time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu     sync.Mutex
	passed time.Time // when the last check that passed began; zero: none, or it failed since
}

// Do calls check unless one passed less than Every ago, and returns its
// error. Calls wait for each other, so that a check runs once however many
// requests find it due.
func (r *Recheck) Do(ctx context.Context, check func(context.Context) error) error {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	every := r.Every
	if every <= 0 {
		every = IndexCheckEvery
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.passed.IsZero() && now().Sub(r.passed) < every {
		return nil
	}
	at := now()
	if err := check(ctx); err != nil {
		r.passed = time.Time{}
		return err
	}
	r.passed = at
	return nil
}
