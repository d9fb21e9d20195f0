package functions_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// waits records when a service was answering the function: each request's
// span, from its arrival to its answer's end. Wrapped around the table's
// endpoint and the fake Bedrock, it tells how much of an invoke was spent
// waiting on them, so that what is left is the search backend's (with the
// handler's own work, well under a millisecond).
type waits struct {
	mu    sync.Mutex
	spans []span
	now   func() time.Time
}

type span struct{ from, to time.Time }

func newWaits() *waits { return &waits{now: time.Now} }

// wrap records the spans of the requests h serves.
func (w *waits) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		from := w.now()
		h.ServeHTTP(rw, r)
		w.add(from, w.now())
	})
}

func (w *waits) add(from, to time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.spans = append(w.spans, span{from, to})
}

// take returns the spans recorded since the last take, and forgets them.
func (w *waits) take() []span {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.spans
	w.spans = nil
	return s
}

// within is the time inside [from, to] that at least one span covers:
// calls that overlap count once.
func within(spans []span, from, to time.Time) time.Duration {
	var cut []span
	for _, s := range spans {
		a, b := maxTime(s.from, from), minTime(s.to, to)
		if a.Before(b) {
			cut = append(cut, span{a, b})
		}
	}
	slices.SortFunc(cut, func(x, y span) int { return x.from.Compare(y.from) })
	var total time.Duration
	var cur span
	for i, s := range cut {
		switch {
		case i == 0:
			cur = s
		case !s.from.After(cur.to):
			cur.to = maxTime(cur.to, s.to)
		default:
			total += cur.to.Sub(cur.from)
			cur = s
		}
	}
	if len(cut) > 0 {
		total += cur.to.Sub(cur.from)
	}
	return total
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// TestWithinCountsOverlapsOnce: spans that overlap count once, spans
// outside the window not at all, and a span across an edge only inside it.
func TestWithinCountsOverlapsOnce(t *testing.T) {
	t0 := time.Unix(1_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	spans := []span{
		{at(10), at(30)}, // overlaps the next
		{at(20), at(40)},
		{at(50), at(60)},
		{at(55), at(58)},   // inside the one before
		{at(-20), at(5)},   // across the window's start
		{at(95), at(120)},  // across its end
		{at(200), at(300)}, // outside
	}
	if got, want := within(spans, at(0), at(100)), 30*time.Millisecond+10*time.Millisecond+5*time.Millisecond+5*time.Millisecond; got != want {
		t.Errorf("within = %s, want %s", got, want)
	}
	if got := within(nil, at(0), at(100)); got != 0 {
		t.Errorf("no spans: %s", got)
	}
	w := newWaits()
	w.add(at(1), at(2))
	if s := w.take(); len(s) != 1 || len(w.take()) != 0 {
		t.Errorf("take returned %v, then not nothing", s)
	}
}
