// Package faultproxy is an HTTP reverse proxy for tests that sits between an
// AWS SDK DynamoDB client and dynalite and answers chosen requests with the
// failures real DynamoDB produces: throttling, exceeded provisioned
// throughput, internal errors and dropped connections. dynalite never fails
// on its own, so without this the retry and resume paths of a store would
// go untested.
//
// The error answers copy DynamoDB's wire format (awsJson1.0: status code,
// X-Amzn-ErrorType header, JSON "__type" and "message"), so the SDK decodes
// them into its modelled error types (*types.ThrottlingException and so on)
// and its standard retryer retries them as it would in production.
package faultproxy

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Fault is what the proxy answers instead of forwarding a request.
type Fault int

const (
	// Throttle answers HTTP 400 ThrottlingException, as DynamoDB does when
	// on-demand capacity or account limits are exceeded. The SDK retries it.
	Throttle Fault = iota + 1
	// ProvisionedThroughputExceeded answers HTTP 400
	// ProvisionedThroughputExceededException, DynamoDB's throttling of a
	// provisioned table. The SDK retries it as a throttle.
	ProvisionedThroughputExceeded
	// InternalError answers HTTP 500 InternalServerError. The SDK retries it
	// because of the 500 status.
	InternalError
	// Drop closes the connection without answering, before the request
	// reaches dynalite: the client sees a transport error and the SDK
	// retries it.
	Drop
	// DropResponse forwards the request to dynalite and then closes the
	// connection without answering: the write happened but the client cannot
	// know, which is what a timeout after a commit looks like. It tests that
	// retried writes are idempotent (for example, that a retried conditional
	// put copes with ConditionalCheckFailedException).
	DropResponse
)

func (f Fault) String() string {
	switch f {
	case Throttle:
		return "Throttle"
	case ProvisionedThroughputExceeded:
		return "ProvisionedThroughputExceeded"
	case InternalError:
		return "InternalError"
	case Drop:
		return "Drop"
	case DropResponse:
		return "DropResponse"
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// Rule chooses requests to fail and how. The selectors are alternatives:
// the first non-zero of Next, Every and Rate applies; with none set, every
// matching request fails.
type Rule struct {
	// Op restricts the rule to one operation, given as the X-Amz-Target
	// header ("DynamoDB_20120810.BatchWriteItem") or just the operation name
	// ("BatchWriteItem"). Empty matches every request.
	Op string
	// Next fails the next Next matching requests, then none: the way to
	// test "fails a few times, then recovers".
	Next int
	// Every fails every Every-th matching request (the Every-th, the
	// 2*Every-th, ...), counted from when the rule was added.
	Every int
	// Rate fails each matching request with this probability, drawn from a
	// PCG source seeded with Seed, so a test sees the same failures on every
	// run (given the same request order).
	Rate float64
	// Seed seeds the Rate source.
	Seed uint64
	// Max, if positive, stops the rule after it has injected Max faults, so
	// that Every and Rate rules can still let a bounded retry loop finish.
	Max int
	// Fault is the failure to inject; required.
	Fault Fault
}

// rule is a Rule with its running state.
type rule struct {
	Rule
	op       string // normalized Op
	seen     int    // matching requests consulted
	injected int
	rnd      *rand.Rand
}

// decide reports whether r fails this matching request, advancing its state.
func (r *rule) decide() bool {
	if r.Max > 0 && r.injected >= r.Max {
		return false
	}
	r.seen++
	var fail bool
	switch {
	case r.Next > 0:
		fail = r.seen <= r.Next
	case r.Every > 0:
		fail = r.seen%r.Every == 0
	case r.Rate > 0:
		fail = r.rnd.Float64() < r.Rate
	default:
		fail = true
	}
	if fail {
		r.injected++
	}
	return fail
}

// afterHook is a callback registered with AfterN.
type afterHook struct {
	at   int // fire when forwardedOK reaches at
	fn   func()
	done bool
}

// Proxy is a fault-injecting reverse proxy. Its methods are safe for
// concurrent use, so rules can change while a client is mid-operation.
type Proxy struct {
	srv *httptest.Server
	rp  *httputil.ReverseProxy
	tr  *http.Transport

	mu          sync.Mutex
	rules       []*rule
	requests    map[string]int // by operation name; "" = total
	injected    map[string]int
	forwardedOK int
	hooks       []*afterHook
	seq         int
}

// New starts a proxy in front of target (for example a dynalite endpoint,
// http://127.0.0.1:N). It panics if target is not a URL, as httptest.NewServer
// panics on failure: both are test set-up errors. Close it when done.
func New(target string) *Proxy {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		panic(fmt.Sprintf("faultproxy: bad target %q: %v", target, err))
	}
	p := &Proxy{
		tr:       http.DefaultTransport.(*http.Transport).Clone(),
		requests: map[string]int{},
		injected: map[string]int{},
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			// Keep the Host the client signed (SigV4 covers it).
			r.Out.Host = r.In.Host
		},
		Transport: p.tr,
		// A client that gives up (an import cancelled half way) is a test's
		// point, not an error to print.
		ErrorLog: log.New(io.Discard, "", 0),
		// Counting here, before the response is copied to the client, means
		// an AfterN hook has returned before the client sees the response
		// that triggered it.
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode/100 == 2 && resp.Request.Context().Value(droppedKey{}) == nil {
				p.forwarded()
			}
			return nil
		},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	return p
}

// URL is the proxy's base URL, to use as the client's BaseEndpoint.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops the proxy and closes its connections to the target.
func (p *Proxy) Close() {
	p.srv.CloseClientConnections()
	p.srv.Close()
	p.tr.CloseIdleConnections()
}

// Fail adds a rule. Rules are consulted in the order added; the first that
// fires answers the request.
func (p *Proxy) Fail(r Rule) {
	if r.Fault < Throttle || r.Fault > DropResponse {
		panic(fmt.Sprintf("faultproxy: rule without a valid Fault: %+v", r))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &rule{
		Rule: r,
		op:   opName(r.Op),
		rnd:  rand.New(rand.NewPCG(r.Seed, r.Seed^0x9e3779b97f4a7c15)),
	})
}

// Clear removes all rules; requests are forwarded again. Counters are kept.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// Requests counts the requests the proxy received for op (operation name or
// X-Amz-Target), failed or not; "" counts all of them.
func (p *Proxy) Requests(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[opName(op)]
}

// Injected counts the faults injected for op (operation name or
// X-Amz-Target); "" counts all of them.
func (p *Proxy) Injected(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected[opName(op)]
}

// AfterN calls hook once, after n more requests (of any operation) have been
// forwarded and answered with a 2xx, counted from this call; n <= 0 calls it
// at once. It runs on the proxy's handler goroutine and returns before the
// n-th response is passed on to the client, which makes it a deterministic
// point to cancel a context or stop a worker in the middle of a
// multi-request job (the n-th request has then been applied).
func (p *Proxy) AfterN(n int, hook func()) {
	if n <= 0 {
		hook()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hooks = append(p.hooks, &afterHook{at: p.forwardedOK + n, fn: hook})
}

// opName turns an X-Amz-Target value into the bare operation name.
func opName(target string) string {
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		return target[i+1:]
	}
	return target
}

func (p *Proxy) serve(w http.ResponseWriter, req *http.Request) {
	op := opName(req.Header.Get("X-Amz-Target"))

	p.mu.Lock()
	p.requests[""]++
	if op != "" {
		p.requests[op]++
	}
	var fault Fault
	for _, r := range p.rules {
		if r.op != "" && r.op != op {
			continue
		}
		if r.decide() {
			fault = r.Fault
			break
		}
	}
	if fault != 0 {
		p.injected[""]++
		if op != "" {
			p.injected[op]++
		}
	}
	p.seq++
	seq := p.seq
	p.mu.Unlock()

	switch fault {
	case 0:
		p.rp.ServeHTTP(w, req)
	case Drop:
		drop(w)
	case DropResponse:
		// The client never sees this answer, so AfterN does not count it.
		req = req.WithContext(context.WithValue(req.Context(), droppedKey{}, true))
		p.rp.ServeHTTP(httptest.NewRecorder(), req)
		drop(w)
	default:
		writeError(w, fault, seq)
	}
}

// forwarded counts a successful forward and runs the hooks that are due,
// outside the lock so a hook may use the proxy.
func (p *Proxy) forwarded() {
	p.mu.Lock()
	p.forwardedOK++
	var due []func()
	for _, h := range p.hooks {
		if !h.done && p.forwardedOK >= h.at {
			h.done = true
			due = append(due, h.fn)
		}
	}
	p.mu.Unlock()
	for _, fn := range due {
		fn()
	}
}

// droppedKey marks, in a request's context, a forward whose answer is
// dropped.
type droppedKey struct{}

// drop closes the client's connection without a response.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): aborting the handler resets the stream.
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// errorAnswer is DynamoDB's answer for a fault: the status, the X-Amzn-ErrorType
// header ("" = none) and the body.
type errorAnswer struct {
	status    int
	errorType string
	body      string
}

var answers = map[Fault]errorAnswer{
	Throttle: {
		status:    http.StatusBadRequest,
		errorType: "ThrottlingException",
		body:      `{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}`,
	},
	ProvisionedThroughputExceeded: {
		status: http.StatusBadRequest,
		body:   `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}`,
	},
	InternalError: {
		status: http.StatusInternalServerError,
		body:   `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"Internal server error"}`,
	},
}

// writeError answers like DynamoDB, including the x-amz-crc32 checksum the
// DynamoDB client validates when present.
func writeError(w http.ResponseWriter, f Fault, seq int) {
	a := answers[f]
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Requestid", fmt.Sprintf("FAULTPROXY%022d", seq))
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(a.body))), 10))
	if a.errorType != "" {
		h.Set("X-Amzn-Errortype", a.errorType)
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	_, _ = w.Write([]byte(a.body))
}
