package embedcall

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedtest"
	"github.com/doclib/doclib/shared/search"
)

// clock is a test's time: it moves only when told to, and by a millisecond
// at every reading, so that two events are never at the same instant.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// total is the sum of the recorded waits.
func total(s *embedtest.Sleeps) time.Duration {
	var t time.Duration
	for _, d := range s.All() {
		t += d
	}
	return t
}

func testPacer(lim Limits) (*Pacer, *clock, *embedtest.Sleeps) {
	if lim.BaseBackoff == 0 {
		lim.BaseBackoff, lim.MaxBackoff = 500*time.Millisecond, 30*time.Second
	}
	p := NewPacer("test", lim)
	c, s := newClock(), &embedtest.Sleeps{}
	p.Now, p.Sleep, p.Random = c.Now, s.Sleep, func() float64 { return 0.5 }
	return p, c, s
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text %04d", i)
	}
	return out
}

// vectors are what a fake provider answers: the text's number.
func vectors(in []string) [][]float32 {
	vs := make([][]float32, len(in))
	for i, s := range in {
		var n int
		fmt.Sscanf(s, "text %d", &n)
		vs[i] = []float32{float32(n)}
	}
	return vs
}

// near tells durations within 1% (the test clock ticks a millisecond at every
// reading, so the measured rate is a hair under the simulated one).
func near(got, want time.Duration) bool {
	return got >= want*99/100 && got <= want*101/100
}

func job(send Send) Job {
	return Job{Dims: 1, Skip: func(s string) bool { return s == "" }, Send: send}
}

func checkOrder(t *testing.T, in []string, got [][]float32) {
	t.Helper()
	want := vectors(in)
	if len(got) != len(want) {
		t.Fatalf("%d vectors for %d texts", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) && in[i] != "" {
			t.Fatalf("vector %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestBatchesAndDeadlinesFollowTheThroughput: against a server that embeds
// 3 texts a second, one request at a time, the first batch is StartBatch
// texts with Limits.Timeout per QueryTexts texts, and every later one carries Target's worth (30
// texts) with Safety times its expected time (30 s); a query-sized call
// keeps the short Limits.Timeout however slow the server.
func TestBatchesAndDeadlinesFollowTheThroughput(t *testing.T) {
	p, clk, _ := testPacer(Limits{MaxBatch: 64, MaxConcurrency: 1, Timeout: 10 * time.Second})
	var mu sync.Mutex
	var sizes []int
	var times []time.Duration
	send := func(_ context.Context, c Call, in []string) ([][]float32, error) {
		mu.Lock()
		sizes = append(sizes, len(in))
		times = append(times, c.Timeout)
		mu.Unlock()
		clk.advance(time.Duration(len(in)) * time.Second / 3)
		return vectors(in), nil
	}
	in := texts(200)
	got, err := p.Embed(context.Background(), in, job(send))
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, in, got)
	want := []int{8, 30, 30, 30, 30, 30, 30, 12}
	if !slices.Equal(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
	for i, d := range times {
		want := 30 * time.Second
		if i == 0 {
			want = 20 * time.Second // nothing measured yet: Limits.Timeout per QueryTexts texts
		} else if sizes[i] != 30 {
			want = max(time.Duration(sizes[i])*time.Second, 10*time.Second)
		}
		if !near(d, want) {
			t.Errorf("request %d of %d texts had %s, want %s", i, sizes[i], d, want)
		}
	}
	if s := p.Stats(); s.Rate < 2.99 || s.Rate > 3.01 || s.Batch != 30 || s.Texts != 200 {
		t.Errorf("stats %+v, want 3 texts/s, batches of 30, 200 texts", s)
	}

	sizes, times = nil, nil
	if _, err := p.Embed(context.Background(), texts(QueryTexts), job(send)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sizes, []int{QueryTexts}) || times[0] != 10*time.Second {
		t.Errorf("a query-sized call went as %v with %v, want one request with Limits.Timeout (10s)", sizes, times)
	}
}

// TestDeadlineCountsTheTextsAhead: a bulk request sent while another is on
// the wire gets the time of that one's texts as well as its own.
func TestDeadlineCountsTheTextsAhead(t *testing.T) {
	p, clk, _ := testPacer(Limits{MaxBatch: 64, MaxConcurrency: 2, Timeout: time.Second})
	// The first answer (8 texts at 3 a second, fast) sets the rate and
	// lets two requests go at once: 15 texts each, Target's worth shared.
	// The next two are held until both are on the wire.
	release := make(chan struct{})
	var mu sync.Mutex
	var n int
	var held []Call
	send := func(_ context.Context, c Call, in []string) ([][]float32, error) {
		mu.Lock()
		n++
		hold := n == 2 || n == 3
		if hold {
			held = append(held, c)
			if len(held) == 2 {
				close(release)
			}
		}
		mu.Unlock()
		if hold {
			<-release
		}
		clk.advance(time.Duration(len(in)) * time.Second / 3)
		return vectors(in), nil
	}
	if _, err := p.Embed(context.Background(), texts(100), job(send)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got := []time.Duration{held[0].Timeout, held[1].Timeout}
	slices.Sort(got)
	// 3 × 15 texts / 3 a second alone; 3 × (15 + 15) / 3 behind the other.
	if want := []time.Duration{15 * time.Second, 30 * time.Second}; !near(got[0], want[0]) || !near(got[1], want[1]) {
		t.Errorf("two requests of 15 texts sent together had %v, want %v", got, want)
	}
}

// TestBusyAnswersHalveTheLimitOncePerBurst: the limit grows to
// MaxConcurrency while answers come fast, halves once when every request in
// flight is answered 503 together, and halves again on an answer that
// takes over twice Target.
func TestBusyAnswersHalveTheLimitOncePerBurst(t *testing.T) {
	p, clk, _ := testPacer(Limits{MaxBatch: 1, MaxConcurrency: 8, Timeout: 10 * time.Second})
	var inflight, most atomic.Int64
	var phase atomic.Int64 // 0 fast, 1 the busy burst
	gate := make(chan struct{})
	var arrived atomic.Int64
	send := func(_ context.Context, _ Call, in []string) ([][]float32, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if phase.Load() == 1 {
			// Hold the burst until all 8 are in flight, then answer
			// each "busy".
			if arrived.Add(1) == 8 {
				close(gate)
			}
			<-gate
			return nil, &Retryable{Err: errors.New("503"), Wait: -1, Overloaded: true}
		}
		return vectors(in), nil
	}
	if _, err := p.Embed(context.Background(), texts(40), job(send)); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Concurrency != 8 || most.Load() > 8 {
		t.Fatalf("after fast answers: limit %d, %d in flight at most; want 8 and at most 8", s.Concurrency, most.Load())
	}
	phase.Store(1)
	var calls atomic.Int64
	busy := func(ctx context.Context, c Call, in []string) ([][]float32, error) {
		if calls.Add(1) > 8 { // the retries, after the burst
			return vectors(in), nil
		}
		return send(ctx, c, in)
	}
	if _, err := p.Embed(context.Background(), texts(8), job(busy)); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Cuts != 1 || s.Overloaded != 8 {
		t.Errorf("8 busy answers to requests sent together: %d cuts, %d busy answers counted; want 1 and 8", s.Cuts, s.Overloaded)
	}
	if s := p.Stats(); s.Concurrency < 4 || s.Concurrency > 5 {
		t.Errorf("limit %d after the burst and 8 answers, want 4 (halved) or 5 (grown by one round since)", s.Concurrency)
	}

	// One slow answer: over 2 × Target.
	before := p.Stats()
	slow := func(_ context.Context, _ Call, in []string) ([][]float32, error) {
		clk.advance(3 * Target)
		return vectors(in), nil
	}
	if _, err := p.Embed(context.Background(), texts(5), job(func(ctx context.Context, c Call, in []string) ([][]float32, error) {
		if in[0] == "text 0000" {
			return slow(ctx, c, in)
		}
		return vectors(in), nil
	})); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Cuts != before.Cuts+1 {
		t.Errorf("an answer after %s: %d cuts, want %d", 3*Target, s.Cuts, before.Cuts+1)
	}
}

// TestTimedOutBatchIsSplitNotSentTwiceAtOnce: a batch whose request runs out
// of time is sent again as two halves, each after the first attempt has
// ended, and no text is ever in two requests at once.
func TestTimedOutBatchIsSplitNotSentTwiceAtOnce(t *testing.T) {
	p, _, slept := testPacer(Limits{MaxBatch: 64, MaxConcurrency: 4, Timeout: 50 * time.Millisecond})
	var mu sync.Mutex
	onWire := map[string]bool{}
	var sizes []int
	var first atomic.Bool
	send := func(ctx context.Context, _ Call, in []string) ([][]float32, error) {
		mu.Lock()
		sizes = append(sizes, len(in))
		for _, s := range in {
			if onWire[s] {
				t.Errorf("%q sent while a request holding it is in flight", s)
			}
			onWire[s] = true
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			for _, s := range in {
				delete(onWire, s)
			}
			mu.Unlock()
		}()
		if first.CompareAndSwap(false, true) {
			<-ctx.Done() // the first request is never answered
			return nil, &Retryable{Err: ctx.Err(), Wait: -1}
		}
		return vectors(in), nil
	}
	in := texts(8)
	in = append(in, texts(12)[8:]...)
	got, err := p.Embed(context.Background(), in, job(send))
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, in, got)
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) < 3 || sizes[0] != 8 || sizes[1] != 4 && sizes[2] != 4 {
		t.Errorf("requests of %v texts; want 8 (timed out), then its halves of 4", sizes)
	}
	if s := p.Stats(); s.Timeouts != 1 || s.Retries != 2 {
		t.Errorf("stats %+v, want 1 timeout and 2 retries (the halves)", s)
	}
	if total(slept) == 0 {
		t.Error("the halves went without a backoff after the timeout")
	}
}

// TestBulkRetriesForPatienceThenFails: a server that answers 503 for ever
// fails a bulk call with search.ErrEmbedder once its waits reach Patience,
// not before; one that recovers within it is ridden out.
func TestBulkRetriesForPatienceThenFails(t *testing.T) {
	p, _, slept := testPacer(Limits{MaxBatch: 64, MaxConcurrency: 1, Timeout: time.Second, MaxRetries: 1})
	var calls atomic.Int64
	down := func(_ context.Context, _ Call, in []string) ([][]float32, error) {
		calls.Add(1)
		return nil, &Retryable{Err: errors.New("the server answered 503"), Wait: -1, Overloaded: true}
	}
	_, err := p.Embed(context.Background(), texts(8), job(down))
	if !errors.Is(err, search.ErrEmbedder) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("error %v, want ErrEmbedder naming the 503", err)
	}
	if w := total(slept); w > Patience || w < Patience-30*time.Second {
		t.Errorf("waited %s in all, want Patience (%s) less at most one wait", w, Patience)
	}
	if n := calls.Load(); n < 8 {
		t.Errorf("%d attempts, want the bulk batch retried far past MaxRetries (1)", n)
	}

	// Down for 6 answers, then up: no error.
	p, _, _ = testPacer(Limits{MaxBatch: 64, MaxConcurrency: 1, Timeout: time.Second, MaxRetries: 1})
	calls.Store(0)
	recovers := func(ctx context.Context, c Call, in []string) ([][]float32, error) {
		if calls.Load() < 6 {
			return down(ctx, c, in)
		}
		return vectors(in), nil
	}
	in := texts(20)
	got, err := p.Embed(context.Background(), in, job(recovers))
	if err != nil {
		t.Fatalf("a server down for 6 answers: %v", err)
	}
	checkOrder(t, in, got)
}

// TestQueryGoesAheadOfBulkWork: a query-sized call is sent at once, though
// bulk work holds every slot.
func TestQueryGoesAheadOfBulkWork(t *testing.T) {
	p, _, _ := testPacer(Limits{MaxBatch: 64, MaxConcurrency: 1, Timeout: time.Minute})
	holding := make(chan struct{})
	release := make(chan struct{})
	bulk := func(_ context.Context, _ Call, in []string) ([][]float32, error) {
		close(holding)
		<-release
		return vectors(in), nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Embed(context.Background(), texts(8), job(bulk))
		done <- err
	}()
	<-holding
	type answer struct {
		vs  [][]float32
		err error
	}
	query := make(chan answer, 1)
	go func() {
		vs, err := p.Embed(context.Background(), []string{"text 0042"}, job(func(_ context.Context, _ Call, in []string) ([][]float32, error) {
			return vectors(in), nil
		}))
		query <- answer{vs, err}
	}()
	select {
	case a := <-query:
		if a.err != nil || a.vs[0][0] != 42 {
			t.Errorf("the query: %v, %v", a.vs, a.err)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Error("the query waited behind bulk work")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestEachToldEveryVectorOnce: Each hears every text once, skipped ones
// included, as its request is answered.
func TestEachToldEveryVectorOnce(t *testing.T) {
	p, _, _ := testPacer(Limits{MaxBatch: 3, MaxConcurrency: 2, Timeout: time.Second})
	in := texts(20)
	in[4], in[11] = "", ""
	told := map[int]int{}
	j := job(func(_ context.Context, _ Call, in []string) ([][]float32, error) { return vectors(in), nil })
	j.Each = func(pos []int, vs [][]float32) {
		if len(pos) != len(vs) {
			t.Errorf("told %d positions and %d vectors", len(pos), len(vs))
		}
		for _, i := range pos {
			told[i]++
		}
	}
	got, err := p.Embed(context.Background(), in, j)
	if err != nil {
		t.Fatal(err)
	}
	checkOrder(t, in, got)
	for i := range in {
		if told[i] != 1 {
			t.Errorf("text %d told %d times, want once", i, told[i])
		}
	}
}

// TestFirstFailureStopsTheRest: an error no retry can cure ends the call,
// wrapped by Job.Wrap, and no batch is sent after it.
func TestFirstFailureStopsTheRest(t *testing.T) {
	p, _, _ := testPacer(Limits{MaxBatch: 2, MaxConcurrency: 1, Timeout: time.Second})
	var calls atomic.Int64
	boom := errors.New("boom")
	j := job(func(_ context.Context, _ Call, in []string) ([][]float32, error) {
		if calls.Add(1) == 2 {
			return nil, boom
		}
		return vectors(in), nil
	})
	j.Wrap = func(pos []int, err error) error { return fmt.Errorf("batch at %d: %w", pos[0], err) }
	_, err := p.Embed(context.Background(), texts(10), j)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "batch at 2: ") {
		t.Errorf("error %v, want boom about the batch at 2", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Embed(ctx, texts(10), j); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call: %v", err)
	}
}
