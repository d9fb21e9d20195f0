package fakes3

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Speed is how fast S3 answers a client in Lambda, where the fake answers
// over loopback at memory speed: a latency before each answer, and the rate
// at which the answer's body arrives. docs/standin.md ("S3's speed") gives
// the sources of DefaultSpeed. The zero Speed is loopback's: no delay.
//
// Only answers are paced. A request's body (an upload) is read at loopback
// speed: the indexer's and a harness's writes are not what the figures
// measure, and pacing them would only slow the set-up down.
type Speed struct {
	// FirstByte is the time from a request to its answer's first byte, for
	// every request (GET, HEAD, PUT, LIST, an error alike).
	FirstByte time.Duration
	// PerConnection is the rate of one answer's body, in bytes per second;
	// 0 is unbounded.
	PerConnection float64
	// Share is the rate of all the bodies one client (one access key: one
	// function) receives at once, in bytes per second: the function's
	// network share, which answers in parallel divide; 0 is unbounded.
	Share float64
}

// DefaultSpeed is S3 as a function in the same Region sees it (sources in
// docs/standin.md): about 20 ms to the first byte of each answer, 75 MB/s
// for one answer's body, and 150 MB/s for the answers one function reads
// at once, so that two ranged GETs in parallel fill the share and more only
// divide it.
var DefaultSpeed = Speed{FirstByte: 20 * time.Millisecond, PerConnection: 75e6, Share: 150e6}

// Time is what the model makes a client wait for an answer of n bytes while
// parallel answers of the same size arrive at once: the first byte, then
// the body at the lower of the per-connection rate and its part of the
// share. It is what a test compares counts against, never a clock.
func (sp Speed) Time(n int64, parallel int) time.Duration {
	rate := sp.rate(parallel)
	if rate == 0 {
		return sp.FirstByte
	}
	return sp.FirstByte + time.Duration(float64(n)/rate*float64(time.Second))
}

// rate is one answer's rate among parallel ones (0: unbounded).
func (sp Speed) rate(parallel int) float64 {
	rate := sp.PerConnection
	if sp.Share > 0 {
		part := sp.Share / float64(max(parallel, 1))
		if rate == 0 || part < rate {
			rate = part
		}
	}
	return rate
}

// Clock is the speed model's time. The real one sleeps; a test's may only
// add up what it was asked to wait.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx ends (then it returns ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Request is one request the fake answered, as S3's server access log would
// record it, with the wait the speed model gave it.
type Request struct {
	Method string
	Bucket string
	Key    string // "" for a bucket's operation (a LIST)
	// Range is the request's Range header, as sent ("" for none).
	Range  string
	Status int
	// Bytes is the answer's body as sent.
	Bytes int64
	// Wait is what the speed model made the answer wait in all: the first
	// byte and the body's pacing. It is computed, not measured: a loaded
	// machine adds its own delays, which this does not count.
	Wait time.Duration
	// Client is the access key the request was signed with ("" unsigned).
	Client string
}

// Ranged reports whether S3 answered a part of the object (206): a GET
// with a Range header that S3 ignores is a whole GET.
func (r Request) Ranged() bool { return r.Status == http.StatusPartialContent }

// Counts sums requests: GETs (ranged ones among them), HEADs, the others,
// and the answers' body bytes.
type Counts struct {
	Requests, GETs, RangedGETs, HEADs int
	// Bytes are the answers' bodies; GETBytes those of the GETs.
	Bytes, GETBytes int64
	// Wait is the speed model's waits, added up (computed, not measured).
	Wait time.Duration
}

// Count sums rs.
func Count(rs []Request) Counts {
	var c Counts
	for _, r := range rs {
		c.Requests++
		c.Bytes += r.Bytes
		c.Wait += r.Wait
		switch r.Method {
		case http.MethodGet:
			c.GETs++
			c.GETBytes += r.Bytes
			if r.Ranged() {
				c.RangedGETs++
			}
		case http.MethodHead:
			c.HEADs++
		}
	}
	return c
}

// meter holds the speed model, the clock and the log of requests.
type meter struct {
	mu    sync.Mutex
	speed Speed
	clock Clock
	links map[string]*link // by client
	log   []Request
	// begun numbers the requests as they start; open holds the numbers of
	// those not yet logged, and ended is signalled as each is.
	begun int
	open  map[int]bool
	ended *sync.Cond
}

// settle waits until every request begun so far is logged: a client may
// have read a whole answer before its handler returned. The caller holds
// m.mu.
func (m *meter) settle() {
	upto := m.begun
	for {
		pending := false
		for n := range m.open {
			if n < upto {
				pending = true
				break
			}
		}
		if !pending {
			return
		}
		m.cond().Wait()
	}
}

func (m *meter) cond() *sync.Cond {
	if m.ended == nil {
		m.ended = sync.NewCond(&m.mu)
	}
	return m.ended
}

// SetSpeed makes the fake answer at sp's speed from the next request on;
// Speed{} is loopback's.
func (s *Server) SetSpeed(sp Speed) {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	s.meter.speed = sp
	s.meter.links = nil
}

// Speed is the speed the fake answers at.
func (s *Server) Speed() Speed {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	return s.meter.speed
}

// SetClock gives the speed model a clock other than the real one (nil: the
// real one), so that a test can count the waits without sleeping them.
func (s *Server) SetClock(c Clock) {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	s.meter.clock = c
	s.meter.links = nil
}

// Mark is a point in the log of requests: Since(m) returns those after it.
// It waits for the requests under way to end.
func (s *Server) Mark() int {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	s.meter.settle()
	return len(s.meter.log)
}

// Since returns the requests answered after the mark, in the order their
// answers ended. It waits for the requests under way to end, so that an
// answer its client has read is in it.
func (s *Server) Since(mark int) []Request {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	s.meter.settle()
	if mark < 0 || mark > len(s.meter.log) {
		mark = 0
	}
	return append([]Request(nil), s.meter.log[mark:]...)
}

// Requests returns every request answered so far.
func (s *Server) Requests() []Request { return s.Since(0) }

// start applies the first byte's wait and returns the writer that paces
// and counts the answer, and the function that logs it once it is done.
func (s *Server) start(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	m := &s.meter
	m.mu.Lock()
	seq := m.begun
	m.begun++
	if m.open == nil {
		m.open = map[int]bool{}
	}
	m.open[seq] = true
	sp, clock := m.speed, m.clock
	if clock == nil {
		clock = realClock{}
	}
	client := accessKey(r)
	var l *link
	if sp.Share > 0 {
		if m.links == nil {
			m.links = map[string]*link{}
		}
		if l = m.links[client]; l == nil {
			l = &link{}
			m.links[client] = l
		}
	}
	m.mu.Unlock()

	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	rec := Request{Method: r.Method, Bucket: bucket, Key: key, Range: r.Header.Get("Range"), Client: client}
	pw := &paced{ResponseWriter: w, ctx: r.Context(), speed: sp, clock: clock, link: l, rec: &rec}
	if sp.FirstByte > 0 {
		rec.Wait += sp.FirstByte
		_ = clock.Sleep(r.Context(), sp.FirstByte) // a client that gave up gets nothing anyway
	}
	return pw, func() {
		if rec.Status == 0 {
			rec.Status = http.StatusOK
		}
		m.mu.Lock()
		m.log = append(m.log, rec)
		delete(m.open, seq)
		m.cond().Broadcast()
		m.mu.Unlock()
	}
}

// accessKey is the access key of a SigV4-signed request, from its
// Authorization header or its presigned query.
func accessKey(r *http.Request) string {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if a := r.Header.Get("Authorization"); a != "" {
		if _, after, ok := strings.Cut(a, "Credential="); ok {
			cred = after
		}
	}
	id, _, _ := strings.Cut(cred, "/")
	return id
}

// link is one client's network share: the time until which its answers'
// bytes already sent occupy it.
type link struct {
	mu   sync.Mutex
	busy time.Time
}

// reserve books n bytes on the link at rate from now on, and returns when
// the last of them has passed.
func (l *link) reserve(now time.Time, n int, rate float64) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy = advance(l.busy, now, n, rate)
	return l.busy
}

// advance is a schedule moved on by n bytes at rate: from now if it had
// fallen behind by more than slack (it was idle, or a sleep overran by
// more than that), else from where it was, so that sleeps that overrun a
// little do not slow the average.
func advance(at, now time.Time, n int, rate float64) time.Time {
	if at.Before(now.Add(-slack)) {
		at = now
	}
	return at.Add(time.Duration(float64(n) / rate * float64(time.Second)))
}

const (
	// chunk is the most bytes written between two looks at the schedule:
	// the grain at which parallel answers share the link (1.7 ms at
	// 75 MB/s).
	chunk = 128 << 10
	// slack is how far behind a schedule may fall and still be caught up.
	slack = 10 * time.Millisecond
)

// paced is an answer's writer: it records the status and the bytes, and
// holds each chunk back until the connection's rate and the client's share
// have let all of it pass, so that no byte arrives before the model says.
type paced struct {
	http.ResponseWriter
	ctx   context.Context
	speed Speed
	clock Clock
	link  *link
	rec   *Request
	due   time.Time // when the bytes written so far have arrived
}

func (p *paced) WriteHeader(status int) {
	if p.rec.Status == 0 {
		p.rec.Status = status
	}
	p.ResponseWriter.WriteHeader(status)
}

func (p *paced) Write(b []byte) (int, error) {
	if p.rec.Status == 0 {
		p.rec.Status = http.StatusOK
	}
	written := 0
	for len(b) > 0 {
		n := min(len(b), chunk)
		if err := p.pace(n); err != nil {
			return written, err
		}
		m, err := p.ResponseWriter.Write(b[:n])
		written += m
		p.rec.Bytes += int64(m)
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

// pace schedules n bytes and sleeps until they have passed.
func (p *paced) pace(n int) error {
	if p.speed.PerConnection == 0 && p.link == nil {
		return nil
	}
	now := p.clock.Now()
	if p.speed.PerConnection > 0 {
		p.due = advance(p.due, now, n, p.speed.PerConnection)
	}
	if p.link != nil {
		if shared := p.link.reserve(now, n, p.speed.Share); shared.After(p.due) {
			p.due = shared
		}
	}
	if d := p.due.Sub(now); d > 0 {
		p.rec.Wait += d
		return p.clock.Sleep(p.ctx, d)
	}
	return nil
}

// Flush passes a flush on, if the writer below can.
func (p *paced) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer below.
func (p *paced) Unwrap() http.ResponseWriter { return p.ResponseWriter }
