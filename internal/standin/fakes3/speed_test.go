package fakes3

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock adds up the waits it is asked for and moves its time on by
// them, without sleeping: the model's delays are checked as numbers.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

// stillClock never moves: every writer on it schedules from the same
// instant, as answers that start together do.
type stillClock struct{ now time.Time }

func (c stillClock) Now() time.Time                           { return c.now }
func (stillClock) Sleep(context.Context, time.Duration) error { return nil }

func TestSpeedTime(t *testing.T) {
	sp := Speed{FirstByte: 20 * time.Millisecond, PerConnection: 75e6, Share: 150e6}
	for _, c := range []struct {
		n        int64
		parallel int
		want     time.Duration
	}{
		{0, 1, 20 * time.Millisecond},
		{75e6, 1, 20*time.Millisecond + time.Second},   // one connection's rate
		{75e6, 2, 20*time.Millisecond + time.Second},   // two fill the share
		{75e6, 4, 20*time.Millisecond + 2*time.Second}, // four divide it
	} {
		if got := sp.Time(c.n, c.parallel); got != c.want {
			t.Errorf("Time(%d, %d) = %s, want %s", c.n, c.parallel, got, c.want)
		}
	}
	if got := (Speed{}).Time(1e9, 1); got != 0 {
		t.Errorf("loopback's Time = %s, want 0", got)
	}
}

// TestParallelAnswersDivideTheShare starts k answers of one client at the
// same instant and writes them chunk by chunk in turn: each arrives at its
// connection's rate until they fill the client's share, then they divide
// it; another client's answer has a share of its own.
func TestParallelAnswersDivideTheShare(t *testing.T) {
	sp := Speed{PerConnection: 75e6, Share: 150e6}
	const n = 6_000_000 // bytes per answer
	t0 := time.Unix(1_000_000, 0)
	for _, k := range []int{1, 2, 4} {
		l := &link{}
		ws := make([]*paced, k)
		for i := range ws {
			ws[i] = &paced{ctx: context.Background(), speed: sp, clock: stillClock{t0}, link: l, rec: &Request{}}
		}
		for sent := 0; sent < n; sent += chunk {
			for _, w := range ws {
				if err := w.pace(min(chunk, n-sent)); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Within one round of chunks on the link: answers that take their
		// turn first end that much sooner.
		want, round := sp.Time(n, k), time.Duration(float64(k*chunk)/sp.Share*float64(time.Second))
		for i, w := range ws {
			if got := w.due.Sub(t0); got < want-round || got > want+time.Microsecond {
				t.Errorf("%d answers at once: answer %d's last byte at %s, want %s", k, i, got, want)
			}
		}
		other := &paced{ctx: context.Background(), speed: sp, clock: stillClock{t0}, link: &link{}, rec: &Request{}}
		for sent := 0; sent < n; sent += chunk {
			_ = other.pace(min(chunk, n-sent))
		}
		if got, want := other.due.Sub(t0), sp.Time(n, 1); got > want+time.Millisecond {
			t.Errorf("with %d answers to another client, a client's answer took %s, want %s", k, got, want)
		}
	}
}

func serve(t *testing.T, sp Speed, c Clock) (*Server, *httptest.Server) {
	t.Helper()
	f := New()
	if err := f.CreateBucket("b", false); err != nil {
		t.Fatal(err)
	}
	f.SetSpeed(sp)
	f.SetClock(c)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func do(t *testing.T, method, url, rng string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDSEARCH/20261128/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestRequestsAreCountedAndWaited: every answer waits the first byte, a
// body its bytes at the connection's rate, a range only its own bytes; the
// log counts GETs, ranged GETs and each answer's bytes, and an upload is
// not paced.
func TestRequestsAreCountedAndWaited(t *testing.T) {
	sp := Speed{FirstByte: 20 * time.Millisecond, PerConnection: 10e6, Share: 20e6}
	c := &fakeClock{now: time.Unix(1_000_000, 0)}
	f, srv := serve(t, sp, c)
	const size = 3_000_000
	obj := strings.Repeat("x", size)

	mark := f.Mark()
	if resp := do(t, http.MethodPut, srv.URL+"/b/seg", "", strings.NewReader(obj)); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %s", resp.Status)
	}
	if resp := do(t, http.MethodGet, srv.URL+"/b/seg", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	if resp := do(t, http.MethodGet, srv.URL+"/b/seg", "bytes=1000-500999", nil); resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("ranged GET: %s", resp.Status)
	}
	do(t, http.MethodHead, srv.URL+"/b/seg", "", nil)
	if resp := do(t, http.MethodGet, srv.URL+"/b/missing", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of a missing key: %s", resp.Status)
	}
	// A range S3 ignores (its last byte before its first) is a whole GET.
	if resp := do(t, http.MethodGet, srv.URL+"/b/seg", "bytes=5-1", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET with an ignored range: %s", resp.Status)
	}

	rs := f.Since(mark)
	if len(rs) != 6 {
		t.Fatalf("logged %d requests, want 6: %+v", len(rs), rs)
	}
	if ignored := rs[5]; ignored.Ranged() || ignored.Bytes != size {
		t.Errorf("GET with an ignored range: %+v; want a whole GET of %d bytes", ignored, size)
	}
	rs = rs[:5]
	near := func(got, want time.Duration) bool {
		return got >= want-time.Microsecond && got <= want+time.Microsecond
	}
	put, get, ranged, head, missing := rs[0], rs[1], rs[2], rs[3], rs[4]
	if put.Method != http.MethodPut || put.Wait != sp.FirstByte {
		t.Errorf("PUT: %+v; want a wait of the first byte alone, %s", put, sp.FirstByte)
	}
	if get.Bytes != size || get.Ranged() || !near(get.Wait, sp.Time(size, 1)) {
		t.Errorf("GET: %+v; want %d bytes, whole, a wait of %s", get, size, sp.Time(size, 1))
	}
	if ranged.Bytes != 500_000 || !ranged.Ranged() || ranged.Range != "bytes=1000-500999" || !near(ranged.Wait, sp.Time(500_000, 1)) {
		t.Errorf("ranged GET: %+v; want 500000 bytes, ranged, a wait of %s", ranged, sp.Time(500_000, 1))
	}
	if head.Method != http.MethodHead || head.Bytes != 0 || head.Wait != sp.FirstByte {
		t.Errorf("HEAD: %+v", head)
	}
	if missing.Status != http.StatusNotFound || missing.Key != "missing" || missing.Bucket != "b" {
		t.Errorf("missing: %+v", missing)
	}
	if get.Client != "AKIDSEARCH" {
		t.Errorf("client %q, want the access key AKIDSEARCH", get.Client)
	}
	cnt := Count(rs)
	if cnt.Requests != 5 || cnt.GETs != 3 || cnt.RangedGETs != 1 || cnt.HEADs != 1 || cnt.GETBytes != size+500_000+missing.Bytes {
		t.Errorf("counts %+v", cnt)
	}
	// The clock moved by the waits, nothing else: they were slept.
	if moved, waited := c.Now().Sub(time.Unix(1_000_000, 0)), Count(f.Since(mark)).Wait; !near(moved, waited) {
		t.Errorf("the clock moved %s, the waits add up to %s", moved, waited)
	}
}

// TestOneShareAClient: the answers to one access key share one link, and
// another key's have their own.
func TestOneShareAClient(t *testing.T) {
	f := New()
	f.SetSpeed(DefaultSpeed)
	f.SetClock(stillClock{}) // the first byte is not slept
	link := func(key string) *link {
		r := httptest.NewRequest(http.MethodGet, "/b/k", nil)
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+key+"/20261128/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0")
		w, done := f.start(httptest.NewRecorder(), r)
		defer done()
		return w.(*paced).link
	}
	if a, b := link("AKIDA"), link("AKIDA"); a == nil || a != b {
		t.Errorf("two answers to one key have the links %p and %p, want one", a, b)
	}
	if a, c := link("AKIDA"), link("AKIDC"); a == c {
		t.Errorf("two keys share the link %p", a)
	}
}

// TestSpeedIsSlept checks, on the real clock, that the model's waits are
// slept: an answer never arrives before its model time. Only that bound is
// checked: a loaded machine may take longer, never shorter.
func TestSpeedIsSlept(t *testing.T) {
	sp := Speed{FirstByte: 30 * time.Millisecond, PerConnection: 10e6}
	_, srv := serve(t, sp, nil)
	do(t, http.MethodPut, srv.URL+"/b/seg", "", strings.NewReader(strings.Repeat("x", 1_000_000)))
	start := time.Now()
	do(t, http.MethodGet, srv.URL+"/b/seg", "", nil)
	if took, want := time.Since(start), sp.Time(1_000_000, 1); took < want {
		t.Errorf("a GET of 1 MB took %s, under the model's %s", took, want)
	}
}

// TestLoopbackUnlessSet: a new fake waits nothing (the stand-in and the
// sizing harness turn the model on), and Speed{} turns it off again.
func TestLoopbackUnlessSet(t *testing.T) {
	f := New()
	if f.Speed() != (Speed{}) {
		t.Fatalf("a new fake's speed is %+v", f.Speed())
	}
	f.SetSpeed(DefaultSpeed)
	f.SetSpeed(Speed{})
	if err := f.CreateBucket("b", false); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	do(t, http.MethodGet, srv.URL+"/b/none", "", nil)
	if rs := f.Requests(); len(rs) != 1 || rs[0].Wait != 0 {
		t.Errorf("requests %+v, want one with no wait", rs)
	}
}
