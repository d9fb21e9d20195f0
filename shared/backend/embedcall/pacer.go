package embedcall

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/doclib/doclib/shared/search"
)

// The rules of a Pacer (docs/search.md, "Embedders": "A client for any
// server"). They are constants rather than settings: each follows from what
// the others guarantee, and Limits carries the bounds a user may need.
const (
	// QueryTexts is the most texts of a query-sized call: one request with
	// the short Limits.Timeout, outside the pacing of bulk work, since a
	// search waits for it. A search embeds one text; the model server of
	// the tests answers requests of up to 4 texts ahead of bulk work.
	QueryTexts = 4
	// Target is how much of the server's time the requests in flight should
	// hold: a batch carries about Target's worth of texts at the measured
	// throughput, shared among the requests at once. A request lost (a
	// timeout, a cancel) then costs about that much work, progress moves at
	// least that often, and a query behind bulk work on a server that does
	// not serve queries first waits about that long.
	Target = 10 * time.Second
	// Safety is how many times the expected time a bulk request gets before
	// it is given up: the expected time is that of the texts in flight
	// ahead of it and its own at the measured throughput, and a busy
	// machine's throughput varies by that much within a minute.
	Safety = 3
	// MaxTimeout bounds the time of any one request.
	MaxTimeout = 10 * time.Minute
	// Patience is how long, in backoff waits, a bulk batch is retried
	// before the call fails: a server that restarts or reloads its model
	// is ridden out, and a vector cache (embedcache) keeps what was done
	// when it is not.
	Patience = 2 * time.Minute
	// StartBatch is the size of the first bulk batches, before the
	// throughput is known: small enough for a slow server to answer
	// within Limits.Timeout.
	StartBatch = 8
	// horizon is the busy time over which throughput is averaged: older
	// answers weigh e⁻¹ less per horizon.
	horizon = time.Minute
)

// Limits bound a Pacer. Within them it adapts the batch size, the requests
// in flight and each request's time to what it measures.
type Limits struct {
	// MaxBatch is the most texts in one request (at least 1).
	MaxBatch int
	// MaxConcurrency is the most requests in flight at once, over all the
	// Embed calls of the pacer (at least 1).
	MaxConcurrency int
	// Timeout bounds each attempt of a query-sized call (QueryTexts texts
	// or fewer) and is the least a bulk request gets; 0 sets no deadline
	// (the provider's client bounds its own calls).
	Timeout time.Duration
	// MaxRetries is the retries of a query-sized call after a failure that
	// another attempt may cure; negative, none. Bulk batches are retried
	// for Patience.
	MaxRetries int
	// BaseBackoff and MaxBackoff shape the wait before a retry: BaseBackoff
	// doubled per attempt up to MaxBackoff, jittered (Backoff).
	BaseBackoff, MaxBackoff time.Duration
}

// Retryable marks a failed attempt that another attempt may cure: an
// answer of 429 or 5xx, or no answer at all.
type Retryable struct {
	Err error
	// Wait is the server's Retry-After, or negative when it gave none.
	Wait time.Duration
	// Overloaded says that the server answered that it is busy (429, 503):
	// fewer requests go at once.
	Overloaded bool
}

func (r *Retryable) Error() string { return r.Err.Error() }
func (r *Retryable) Unwrap() error { return r.Err }

// Call is what a Send is told of its request.
type Call struct {
	// Timeout is the request's time (0: none of the pacer's), which the
	// context's deadline enforces; for messages and tests.
	Timeout time.Duration

	p    *Pacer
	sent time.Time
	bulk bool
}

// Throttled tells the pacer that the provider throttled this request and
// the provider retries it itself (Bedrock's own retries): fewer requests
// go at once.
func (c Call) Throttled() {
	if c.bulk {
		c.p.cut(c.sent)
	}
}

// Send makes one attempt at embedding texts, within ctx's deadline (the
// request's time), and returns their vectors in order. An error that
// another attempt may cure is a *Retryable; any other ends the Embed call.
type Send func(ctx context.Context, c Call, texts []string) ([][]float32, error)

// Each is told the vectors of texts as they come: pos are their positions
// in the call's texts. Calls of one Embed come one at a time.
type Each func(pos []int, vecs [][]float32)

// Job is one Embed call's texts' treatment.
type Job struct {
	// Dims is the length of the zero vector a skipped text gets.
	Dims int
	// Skip tells the texts not to send, which get a zero vector: providers
	// reject empty input, and a blank text carries no meaning to match.
	Skip func(text string) bool
	// Send makes one request.
	Send Send
	// Each, when set, is told every text's vector as it comes.
	Each Each
	// Wrap, when set, says which texts an error is about (the positions of
	// the request's texts in the call's).
	Wrap func(pos []int, err error) error
}

func (j Job) wrap(pos []int, err error) error {
	if j.Wrap == nil {
		return err
	}
	return j.Wrap(pos, err)
}

// Stats say what a pacer did and where its adaptation stands.
type Stats struct {
	// Texts embedded, requests answered, retries sent (a split batch's
	// halves count one each), requests timed out, answers that said the
	// server was busy, and cuts of the limit.
	Texts, Requests, Retries, Timeouts, Overloaded, Cuts int64
	// Concurrency is the number of requests allowed in flight now, Batch
	// the texts of the next bulk request, and Rate the throughput measured
	// (texts a second of busy time; 0 until the first bulk answer).
	Concurrency int
	Batch       int
	Rate        float64
}

// Pacer sends an embedder's requests to its provider: the texts of bulk
// work in batches sized to the measured throughput, as many at once as its
// additive-increase, multiplicative-decrease limit allows, each with a
// deadline scaled to the work ahead of it; query-sized calls at once, with
// a short deadline. One pacer serves all the Embed calls of an embedder, so
// that concurrent calls (an index build's workers) share its limit. It is
// safe for concurrent use.
type Pacer struct {
	name string
	lim  Limits

	// Now, Sleep and Random stand in for the clock, the backoff's wait and
	// its jitter; tests replace them before the first call.
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Random func() float64

	mu      sync.Mutex
	wake    chan struct{} // closed, and replaced, when a slot frees
	limit   float64       // requests allowed in flight
	growing bool          // slow start: the limit grows by one per fast answer until its first cut
	cutAt   time.Time     // requests sent before it do not cut the limit again
	slots   int           // requests in flight or waiting to retry
	wire    int           // requests sent and not yet answered
	ahead   int           // the texts of those
	texts   float64       // texts answered, decayed over horizon of busy time
	busy    float64       // seconds with a request on the wire, decayed alike
	mark    time.Time     // when texts and busy were last brought up to date
	lost    int           // timeouts in a row before any answer: the deadline doubles per loss
	stats   Stats
}

// NewPacer returns a pacer within lim for the provider name ("openai").
func NewPacer(name string, lim Limits) *Pacer {
	lim.MaxBatch = max(lim.MaxBatch, 1)
	lim.MaxConcurrency = max(lim.MaxConcurrency, 1)
	return &Pacer{name: name, lim: lim, Now: time.Now, Sleep: Sleep, Random: rand.Float64,
		wake: make(chan struct{}), limit: 1, growing: true}
}

// Limits returns the pacer's bounds.
func (p *Pacer) Limits() Limits { return p.lim }

// Stats says what the pacer did so far.
func (p *Pacer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Concurrency = int(p.limit)
	s.Batch = p.batchSize()
	s.Rate = p.rate()
	return s
}

// Embed returns one vector per text, in order: a zero vector for the texts
// j.Skip names, and j.Send's answers for the others. A call of at most
// QueryTexts texts to send is one request, retried Limits.MaxRetries times;
// a larger one is paced (Pacer). The first failure that retries cannot cure
// cancels the call's other requests and is returned.
func (p *Pacer) Embed(ctx context.Context, texts []string, j Job) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var pending, skipped []int // positions of the texts to send, and of those not sent
	for i, t := range texts {
		if j.Skip(t) {
			out[i] = make([]float32, j.Dims)
			skipped = append(skipped, i)
		} else {
			pending = append(pending, i)
		}
	}
	if len(skipped) > 0 && j.Each != nil {
		vs := make([][]float32, len(skipped))
		for k, i := range skipped {
			vs[k] = out[i]
		}
		j.Each(skipped, vs)
	}
	if len(pending) == 0 {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: embed %d texts: %w", p.name, len(pending), err)
	}
	var err error
	if len(pending) <= QueryTexts {
		err = p.query(ctx, texts, pending, out, j)
	} else {
		err = p.bulk(ctx, texts, pending, out, j)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pick returns the texts at pos.
func pick(texts []string, pos []int) []string {
	in := make([]string, len(pos))
	for k, i := range pos {
		in[k] = texts[i]
	}
	return in
}

// attempt sends texts once within c.Timeout (none when 0) and says whether
// the request ran out of its time.
func (p *Pacer) attempt(ctx context.Context, c Call, send Send, texts []string) ([][]float32, bool, error) {
	actx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	vs, err := send(actx, c, texts)
	if err == nil && len(vs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vs), len(texts))
	}
	timedOut := err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
	return vs, timedOut, err
}

// query sends a query-sized call's texts at once, in as few requests as
// Limits.MaxBatch allows: the short deadline, the retries of
// Limits.MaxRetries, nothing paced or measured.
func (p *Pacer) query(ctx context.Context, texts []string, pos []int, out [][]float32, j Job) error {
	if len(pos) <= p.lim.MaxBatch {
		return p.queryOne(ctx, texts, pos, out, j)
	}
	g, gctx := errgroup.WithContext(ctx)
	var mu sync.Mutex // Each hears one request at a time
	each := j.Each
	if each != nil {
		j.Each = func(pos []int, vs [][]float32) {
			mu.Lock()
			defer mu.Unlock()
			each(pos, vs)
		}
	}
	for start := 0; start < len(pos); start += p.lim.MaxBatch {
		part := pos[start:min(start+p.lim.MaxBatch, len(pos))]
		g.Go(func() error { return p.queryOne(gctx, texts, part, out, j) })
	}
	return g.Wait()
}

// queryOne sends one request of a query-sized call.
func (p *Pacer) queryOne(ctx context.Context, texts []string, pos []int, out [][]float32, j Job) error {
	in := pick(texts, pos)
	for attempt := 0; ; attempt++ {
		vs, timedOut, err := p.attempt(ctx, Call{Timeout: p.lim.Timeout, p: p, sent: p.Now()}, j.Send, in)
		if err == nil {
			p.mu.Lock()
			p.stats.Texts += int64(len(in))
			p.stats.Requests++
			p.mu.Unlock()
			deliver(pos, vs, out, j.Each)
			return nil
		}
		// A caller that gave up is not a provider outage.
		if ctx.Err() != nil {
			return j.wrap(pos, ctx.Err())
		}
		var re *Retryable
		wait := time.Duration(-1)
		switch {
		case timedOut:
			err = fmt.Errorf("no answer within %s", p.lim.Timeout)
		case errors.As(err, &re):
			err, wait = re.Err, re.Wait
		default:
			return j.wrap(pos, err)
		}
		if attempt >= p.lim.MaxRetries {
			return j.wrap(pos, fmt.Errorf("%w: gave up after %d attempts: %w", search.ErrEmbedder, attempt+1, err))
		}
		if wait < 0 {
			wait = p.backoff(attempt)
		}
		p.mu.Lock()
		p.stats.Retries++
		p.mu.Unlock()
		if err := p.Sleep(ctx, wait); err != nil {
			return j.wrap(pos, err)
		}
	}
}

func deliver(pos []int, vs [][]float32, out [][]float32, each Each) {
	for k, i := range pos {
		out[i] = vs[k]
	}
	if each != nil {
		each(pos, vs)
	}
}

func (p *Pacer) backoff(attempt int) time.Duration {
	return Backoff(attempt, p.lim.BaseBackoff, p.lim.MaxBackoff, p.Random)
}

// batch is texts of a bulk call on their way: fresh, or sent again after a
// failure (whole, or half of one that timed out).
type batch struct {
	pos      []int
	attempts int           // failed attempts so far
	waited   time.Duration // backoff waited so far, against Patience
}

// ticket is a request's slot.
type ticket struct {
	b       *batch
	sent    time.Time
	timeout time.Duration
}

// outcome is what came of a request, for its caller's loop.
type outcome struct {
	b     *batch
	vs    [][]float32
	again []*batch // to send again, first
	err   error
}

// bulk sends a large call's texts: fresh batches of the pacer's current
// size as slots free, a failed batch again once its backoff is over (in
// halves after a timeout), never two requests with the same text at once.
func (p *Pacer) bulk(ctx context.Context, texts []string, pending []int, out [][]float32, j Job) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan outcome)
	var again []*batch // failed batches, sent before fresh ones
	next, running := 0, 0
	var first error
	done := ctx.Done()
	for {
		if running == 0 && (first != nil || len(again) == 0 && next == len(pending)) {
			return first
		}
		var wake <-chan struct{}
		if first == nil && (len(again) > 0 || next < len(pending)) {
			t, w := p.take(func(size int) *batch {
				if len(again) > 0 {
					b := again[0]
					again = again[1:]
					return b
				}
				end := min(next+size, len(pending))
				b := &batch{pos: pending[next:end]}
				next = end
				return b
			})
			if t != nil {
				running++
				go func() { results <- p.run(ctx, t, texts, j) }()
				continue
			}
			wake = w
		}
		select {
		case r := <-results:
			// The slot is freed here, not by the request, so that a
			// failure is seen before its slot can carry another batch.
			p.release()
			running--
			switch {
			case r.err != nil:
				if first == nil {
					first = r.err
					done = nil
					cancel()
				}
			case r.again != nil:
				again = append(r.again, again...)
			default:
				// Told even after a failure: the vectors are good, and a
				// cache keeps them for the next call.
				deliver(r.b.pos, r.vs, out, j.Each)
			}
		case <-wake:
		case <-done:
			first = fmt.Errorf("%s: embed %d texts: %w", p.name, len(pending), ctx.Err())
			done = nil
		}
	}
}

// take gives a slot and the batch next makes at the current size, or, when
// none is free, a channel closed when one may be.
func (p *Pacer) take(next func(size int) *batch) (*ticket, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slots >= int(p.limit) {
		return nil, p.wake
	}
	now := p.Now()
	p.account(now)
	b := next(p.batchSize())
	n := len(b.pos)
	t := &ticket{b: b, sent: now, timeout: p.timeout(n, p.ahead)}
	p.slots++
	p.wire++
	p.ahead += n
	return t, nil
}

// run sends a bulk request and says what came of it; its slot is held until
// the caller's loop has heard.
func (p *Pacer) run(ctx context.Context, t *ticket, texts []string, j Job) outcome {
	in := pick(texts, t.b.pos)
	vs, timedOut, err := p.attempt(ctx, Call{Timeout: t.timeout, p: p, sent: t.sent, bulk: true}, j.Send, in)
	p.answered(t, err == nil, timedOut)
	if err == nil {
		return outcome{b: t.b, vs: vs}
	}
	if ctx.Err() != nil {
		return outcome{err: j.wrap(t.b.pos, ctx.Err())}
	}
	var re *Retryable
	wait := time.Duration(-1)
	switch {
	case timedOut:
		err = fmt.Errorf("no answer within %s", t.timeout.Round(time.Millisecond))
	case errors.As(err, &re):
		err, wait = re.Err, re.Wait
		if re.Overloaded {
			p.mu.Lock()
			p.stats.Overloaded++
			p.mu.Unlock()
			p.cut(t.sent)
		}
	default:
		return outcome{err: j.wrap(t.b.pos, err)}
	}
	b := t.b
	if wait < 0 {
		wait = p.backoff(b.attempts)
	}
	b.attempts++
	if b.waited+wait > Patience {
		return outcome{err: j.wrap(b.pos, fmt.Errorf("%w: gave up after %d attempts over %s of waits: %w", search.ErrEmbedder, b.attempts, b.waited.Round(time.Second), err))}
	}
	b.waited += wait
	// The slot is kept through the wait: after a cut, that holds back the
	// other batches too, so that a server that is down is asked again by
	// one request at a time rather than by all.
	if serr := p.Sleep(ctx, wait); serr != nil {
		return outcome{err: j.wrap(b.pos, serr)}
	}
	out := []*batch{b}
	if timedOut && len(b.pos) > 1 {
		// Half the work to ask for within the next deadline; neither half
		// goes before this attempt has ended.
		h := len(b.pos) / 2
		out = []*batch{{pos: b.pos[:h], attempts: b.attempts, waited: b.waited}, {pos: b.pos[h:], attempts: b.attempts, waited: b.waited}}
	}
	p.mu.Lock()
	p.stats.Retries += int64(len(out))
	p.mu.Unlock()
	return outcome{again: out}
}

// answered records a bulk request's end on the wire: the throughput, the
// limit's growth on a fast answer and its cut on a slow one or a timeout.
func (p *Pacer) answered(t *ticket, ok, timedOut bool) {
	p.mu.Lock()
	now := p.Now()
	p.account(now)
	n := len(t.b.pos)
	p.wire--
	p.ahead -= n
	latency := now.Sub(t.sent)
	switch {
	case ok:
		p.texts += float64(n)
		p.lost = 0
		p.stats.Texts += int64(n)
		p.stats.Requests++
	case timedOut:
		p.lost++
		p.stats.Timeouts++
	}
	p.mu.Unlock()
	switch {
	case ok && latency < Target/2:
		p.grow()
	case ok && latency > 2*Target, timedOut:
		p.cut(t.sent)
	}
}

// release frees a slot.
func (p *Pacer) release() {
	p.mu.Lock()
	p.slots--
	close(p.wake)
	p.wake = make(chan struct{})
	p.mu.Unlock()
}

// grow adds to the limit: one per fast answer until the first cut (the
// limit doubles per round), then one per round.
func (p *Pacer) grow() {
	p.mu.Lock()
	defer p.mu.Unlock()
	before := int(p.limit)
	if p.growing {
		p.limit++
	} else {
		p.limit += 1 / p.limit
	}
	p.limit = min(p.limit, float64(p.lim.MaxConcurrency))
	if int(p.limit) > before {
		close(p.wake)
		p.wake = make(chan struct{})
	}
}

// cut halves the limit, once for all the requests that were in flight
// together: one sent before the last cut says nothing new.
func (p *Pacer) cut(sent time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if sent.Before(p.cutAt) {
		return
	}
	p.limit = max(1, p.limit/2)
	p.growing = false
	p.cutAt = p.Now()
	p.stats.Cuts++
}

// account brings the decayed throughput up to now: the busy time since the
// last mark counts while a request is on the wire.
func (p *Pacer) account(now time.Time) {
	if p.wire > 0 && !p.mark.IsZero() {
		if dt := now.Sub(p.mark).Seconds(); dt > 0 {
			f := math.Exp(-dt / horizon.Seconds())
			p.texts *= f
			p.busy = p.busy*f + dt
		}
	}
	p.mark = now
}

// rate is the measured throughput in texts a second, 0 while unknown.
func (p *Pacer) rate() float64 {
	if p.texts <= 0 || p.busy <= 0 {
		return 0
	}
	return p.texts / p.busy
}

// batchSize is the texts of the next fresh bulk request: Target's worth at
// the measured throughput, shared among the requests allowed at once.
func (p *Pacer) batchSize() int {
	r := p.rate()
	if r == 0 {
		return min(StartBatch, p.lim.MaxBatch)
	}
	n := int(math.Round(r * Target.Seconds() / math.Floor(p.limit)))
	return min(max(n, 1), p.lim.MaxBatch)
}

// timeout is the time of a bulk request of n texts sent with ahead texts on
// the wire before it: Safety times what they take at the measured
// throughput, at least Limits.Timeout and at most MaxTimeout. Before any
// answer, Limits.Timeout is a query's time (QueryTexts texts): the request
// gets it per QueryTexts texts, doubled per timeout.
func (p *Pacer) timeout(n, ahead int) time.Duration {
	if p.lim.Timeout <= 0 {
		return 0
	}
	r := p.rate()
	if r == 0 {
		d := p.lim.Timeout * time.Duration((n+QueryTexts-1)/QueryTexts)
		return min(d<<min(p.lost, 16), MaxTimeout)
	}
	d := time.Duration(Safety * float64(ahead+n) / r * float64(time.Second))
	return min(max(d, p.lim.Timeout), MaxTimeout)
}
