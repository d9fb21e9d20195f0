// Package client is the Go client of the doclib read API: typed requests and
// responses (the wire types of shared/api, which the server encodes), paging
// iterators, errors that carry the API's code, and retries that honour
// Retry-After on 429 and back off on 5xx and network failures. The doclib CLI
// and the MCP server use it; so can anyone else.
//
//	c, err := client.New("http://127.0.0.1:8080", os.Getenv("DOCLIB_API_KEY"))
//	libs, err := c.Libraries(ctx)
//	for doc, err := range c.AllDocuments(ctx, "it-operations", client.DocumentsParams{Tag: "security"}) { … }
//
// Every call is a GET, so every call is safe to retry. A search spends one AI
// credit per page actually served; a retried 429 or a failed search spends
// none (the API refunds a search that fails).
package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/doclib/doclib/shared/api"
)

// Defaults of a Client.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRetries   = 3
	DefaultMaxRetryWait = time.Minute
	// MaxAnswerBytes bounds an answer read into memory, decoded: a deployment
	// sends at most 64 MiB compressed (docs/design.md), and a page of 100
	// documents at the content limit is about 30 MB of JSON.
	MaxAnswerBytes = 256 << 20
)

// Errors of New, to tell a bad key from a bad URL.
var (
	ErrBadURL = errors.New("client: the API URL is not an http(s) URL, e.g. http://127.0.0.1:8080")
	ErrNoKey  = errors.New("client: no API key: set DOCLIB_API_KEY or pass one")
	ErrBadKey = errors.New("client: the API key holds a space, a line break or a control character; it must be the key alone, on one line")
)

// Client calls one deployment of the API with one key. Build it once; it is
// safe for concurrent use.
type Client struct {
	base *url.URL
	key  string
	http *http.Client
	// timeout bounds each attempt of a call.
	timeout time.Duration
	// maxRetries is the number of retries after the first attempt.
	maxRetries int
	// maxRetryWait is the longest Retry-After the client waits for; a longer
	// one is returned as the error at once.
	maxRetryWait time.Duration
	userAgent    string
	sleep        func(context.Context, time.Duration) error
	random       func() float64
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (its Timeout is left alone; the
// client's own per-attempt timeout applies too).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout bounds each attempt of a call (DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithRetries sets how many times a call is retried after a 429, a 5xx or a
// network failure (DefaultMaxRetries; 0 never retries).
func WithRetries(n int) Option { return func(c *Client) { c.maxRetries = n } }

// WithMaxRetryWait sets the longest Retry-After the client waits for
// (DefaultMaxRetryWait).
func WithMaxRetryWait(d time.Duration) Option { return func(c *Client) { c.maxRetryWait = d } }

// WithUserAgent names the program in the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithSleep replaces the waits between retries (tests).
func WithSleep(f func(context.Context, time.Duration) error) Option {
	return func(c *Client) { c.sleep = f }
}

// New returns a client of the API at baseURL (e.g. http://127.0.0.1:8080, or a
// deployment's ApiUrl https://<id>.execute-api.<region>.amazonaws.com/api/)
// with an API key.
func New(baseURL, key string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadURL, redact(baseURL))
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, ErrNoKey
	}
	if strings.IndexFunc(key, notKeyRune) >= 0 {
		// Said before any request: sent, it would fail as a malformed header
		// (a network error) or be cut at the line break.
		return nil, ErrBadKey
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	c := &Client{base: u, key: key, http: http.DefaultClient, timeout: DefaultTimeout,
		maxRetries: DefaultMaxRetries, maxRetryWait: DefaultMaxRetryWait, userAgent: "doclib-go-client",
		sleep: sleepCtx, random: rand.Float64}
	for _, o := range opts {
		o(c)
	}
	if c.maxRetries < 0 {
		c.maxRetries = 0
	}
	return c, nil
}

// BaseURL is the API's base URL, without the key.
func (c *Client) BaseURL() string { return c.base.String() }

// String describes the client without its key.
func (c *Client) String() string { return "doclib client for " + c.BaseURL() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Error is an error answer of the API, or of the gateway in front of it, in
// the API's shape.
type Error struct {
	Status    int
	Code      string // the API's code: not_found, rate_limited, …
	Message   string // the API's sentence, meant for people
	RequestID string // X-Request-Id, to quote when reporting a problem
	// RetryAfter is the wait the API asked for (429), or zero.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Code returns the API error code of err, or "" when err is not an API error.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// get calls path (already escaped) with query and decodes a 200 answer into out. It retries
// 429s (after Retry-After), 5xx answers and network failures, up to
// maxRetries times.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	if strings.Contains(path, "//") || strings.HasSuffix(path, "/") {
		// An empty ID would address another route, or none.
		return errors.New("client: an empty ID; pass the library or document ID")
	}
	u := c.base.String() + path // path is escaped by the caller (see seg)
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var last error
	for attempt := 0; ; attempt++ {
		wait, err := c.attempt(ctx, u, out)
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			// Cancelled (Ctrl-C) or out of time: say so, not the failure
			// that was about to be retried.
			return ctx.Err()
		}
		if wait < 0 || attempt >= c.maxRetries {
			return last
		}
		if wait == 0 { // back off: 250 ms, 500 ms, 1 s, … with jitter
			wait = time.Duration(float64(250*time.Millisecond<<attempt) * (0.5 + c.random()))
		}
		if err := c.sleep(ctx, wait); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return last
		}
	}
}

// attempt makes one request. wait < 0 means the error is final; 0 means retry
// after a backoff; > 0 means retry after that long.
func (c *Client) attempt(ctx context.Context, u string, out any) (time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	if err != nil {
		return -1, fmt.Errorf("client: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	// Named here, so Go's transport leaves the body as sent: decodeBody
	// undoes either coding.
	req.Header.Set("Accept-Encoding", AcceptEncoding)
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		return 0, &NetworkError{URL: redact(u), Err: err}
	}
	defer resp.Body.Close()
	body, err := decodeBody(resp)
	if errors.Is(err, errTooLarge) || errors.Is(err, errUnknownCoding) {
		return -1, &AnswerError{URL: redact(u), Err: err, TooLarge: errors.Is(err, errTooLarge)}
	}
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		// A streamed answer cut short ends in an unexpected EOF: the request
		// failed, and is retried.
		return 0, &NetworkError{URL: redact(u), Err: err}
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, out); err != nil {
			return -1, &AnswerError{URL: redact(u), Err: err}
		}
		return -1, nil
	}
	apiErr := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id")}
	var eb api.ErrorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error.Code != "" {
		apiErr.Code, apiErr.Message = eb.Error.Code, eb.Error.Message
	} else {
		// Not the API's error shape: a gateway, a proxy or the wrong URL.
		apiErr.Code = "http_" + strconv.Itoa(resp.StatusCode)
		apiErr.Message = foreignMessage(resp, body)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		apiErr.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		if apiErr.RetryAfter > c.maxRetryWait {
			return -1, apiErr
		}
		return apiErr.RetryAfter, apiErr
	case resp.StatusCode >= 500:
		return 0, apiErr
	}
	return -1, apiErr
}

// AnswerError is a 200 answer that is not the JSON a doclib API sends: the
// URL points at another server, or a proxy answered in its place. Its
// message says so in words; Unwrap gives the decoder's error. TooLarge
// marks an answer over MaxAnswerBytes instead.
type AnswerError struct {
	URL      string
	Err      error
	TooLarge bool
}

func (e *AnswerError) Error() string {
	if e.TooLarge {
		return fmt.Sprintf("the answer from %s is larger than this client reads (%d MiB); ask for less: a smaller pageSize, depth, one direction or one label", e.URL, MaxAnswerBytes>>20)
	}
	return fmt.Sprintf("the answer from %s is not what a doclib API sends; check that the URL is the API's base URL and that no proxy answers in its place", e.URL)
}

func (e *AnswerError) Unwrap() error { return e.Err }

// NetworkError is a request that got no answer (refused, reset, timed out).
type NetworkError struct {
	URL string
	Err error
}

func (e *NetworkError) Error() string {
	return fmt.Sprintf("cannot reach the API at %s: %s", e.URL, e.Reason())
}

// Reason says in plain words why the API could not be reached, for a
// person or an agent to act on: never Go's own text ("dial tcp …",
// "context deadline exceeded"). Unwrap gives the cause for programs.
func (e *NetworkError) Reason() string {
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var ne net.Error
	switch {
	case errors.Is(e.Err, context.DeadlineExceeded) || errors.As(e.Err, &ne) && ne.Timeout():
		return "it did not answer in time"
	case errors.As(e.Err, &dns):
		return fmt.Sprintf("the host name %q is not known", dns.Name)
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return "nothing is listening there (connection refused)"
	case errors.Is(e.Err, syscall.ECONNRESET), errors.Is(e.Err, io.EOF), errors.Is(e.Err, io.ErrUnexpectedEOF):
		return "the connection closed before the API answered"
	case errors.As(e.Err, &cert):
		return "its TLS certificate is not trusted on this machine"
	case errors.As(e.Err, &record):
		return "it does not speak HTTPS there; try http://"
	}
	// The innermost cause is the system's own words ("connection reset by
	// peer", "network is unreachable"), without the Go call that failed.
	inner := e.Err
	for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
		inner = u
	}
	if inner == nil {
		return "the connection failed"
	}
	return "the connection failed: " + strings.TrimPrefix(inner.Error(), "connect: ")
}

func (e *NetworkError) Unwrap() error { return e.Err }

// retryAfter reads a Retry-After header: seconds (what the API sends) or an
// HTTP date (what some gateways send). A missing or unusable value, or one in
// the past, is one second.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if secs, err := strconv.Atoi(h); err == nil {
		return time.Duration(max(secs, 1)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now).Round(time.Second); d >= time.Second {
			return d
		}
	}
	return time.Second
}

// foreignMessage describes an error answer that is not in the API's shape.
// An HTML page says nothing useful in a terminal; a short text answer is
// kept, on one line, without control characters.
func foreignMessage(resp *http.Response, body []byte) string {
	status := http.StatusText(resp.StatusCode)
	if status == "" {
		status = "HTTP " + strconv.Itoa(resp.StatusCode)
	}
	const note = " (not an answer of the doclib API: check that the URL is the API's base URL)"
	ct := resp.Header.Get("Content-Type")
	text := strings.TrimSpace(string(body))
	if text == "" || strings.Contains(ct, "html") || strings.HasPrefix(text, "<") {
		return status + note
	}
	text = strings.Join(strings.FieldsFunc(text, func(r rune) bool { return r < 0x20 || r == 0x7f }), " ")
	if r := []rune(text); len(r) > 200 {
		text = string(r[:200]) + "…"
	}
	return status + ": " + text + note
}

// notKeyRune is a rune no API key holds: white space or a control character.
func notKeyRune(r rune) bool { return r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) }

// redact drops the query (it may hold a search) and any password from a URL
// for messages.
func redact(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	if p, err := url.Parse(u); err == nil && p.User != nil {
		return p.Redacted()
	}
	return u
}

// seg escapes an ID for use as one path segment. "." and ".." are escaped
// too: sent as they are, a proxy that cleans paths would send the request to
// another route.
func seg(id string) string {
	if strings.Trim(id, ".") == "" {
		return strings.Repeat("%2E", len(id))
	}
	return url.PathEscape(id)
}
