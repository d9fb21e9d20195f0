package memory

import (
	"context"
	"sync"
	"time"

	doclib "github.com/doclib/doclib/shared"
)

// Limiter is a fixed-window request counter for one process. It is exact under
// concurrency: a mutex guards each take.
type Limiter struct {
	mu      sync.Mutex
	windows map[string]*window
	// sweepAt is when windows that have ended are next dropped.
	sweepAt time.Time
}

type window struct {
	end   time.Time
	count int
}

var _ doclib.Limiter = (*Limiter)(nil)

// NewLimiter returns an empty limiter.
func NewLimiter() *Limiter { return &Limiter{windows: map[string]*window{}} }

// Take implements doclib.Limiter. Windows are aligned to multiples of the window
// length since the Unix epoch, as the DynamoDB limiter's item keys are.
func (l *Limiter) Take(_ context.Context, bucket string, limit int, size time.Duration, now time.Time) (doclib.Quota, error) {
	start := now.Truncate(size)
	end := start.Add(size)
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.sweepAt) {
		for k, w := range l.windows {
			if !w.end.After(now) {
				delete(l.windows, k)
			}
		}
		l.sweepAt = now.Add(size)
	}
	w := l.windows[bucket]
	if w == nil || !w.end.Equal(end) {
		w = &window{end: end}
		l.windows[bucket] = w
	}
	q := doclib.Quota{Limit: limit, Reset: end}
	if w.count >= limit {
		return q, nil
	}
	w.count++
	q.Allowed = true
	q.Remaining = limit - w.count
	return q, nil
}

// Release implements doclib.Limiter.
func (l *Limiter) Release(_ context.Context, bucket string, size time.Duration, now time.Time) error {
	end := now.Truncate(size).Add(size)
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.windows[bucket]; w != nil && w.end.Equal(end) && w.count > 0 {
		w.count--
	}
	return nil
}
