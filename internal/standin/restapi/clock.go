package restapi

import (
	"sync"
	"time"
)

// AheadClock is a gateway clock for tests (Options.Now and Sleep) that runs
// ahead of the wall clock by what the gateway has slept on it: Sleep returns
// at once and moves the clock on, so a stream the gateway paces over a
// minute of its own time passes in a moment, and its timeouts see the
// minute pass. Every other wait (a function that stalls) takes real time.
type AheadClock struct {
	mu    sync.Mutex
	ahead time.Duration
}

// Now is the wall clock's time plus what has been slept.
func (c *AheadClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.ahead)
}

// Sleep moves the clock d ahead, at once.
func (c *AheadClock) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ahead += d
}
