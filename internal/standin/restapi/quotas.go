package restapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// API Gateway's quotas on running a REST API that a request or a response
// can meet (API Gateway developer guide, "Quotas for configuring and running
// a REST API in API Gateway", "Amazon API Gateway quotas and important
// notes", and "Stream the integration response for your proxy
// integrations").
const (
	// MaxPayload is the largest request or buffered response body.
	MaxPayload = 10 << 20
	// MaxURLLength is the longest URL of a Regional API, in characters.
	MaxURLLength = 10240
	// MaxMethodARN is the longest method ARN when authorization is enabled
	// on the method; the path's parameter values make it longer, and a
	// longer one gets 414 Request URI too long.
	MaxMethodARN = 1600
	// StreamBurst is what a streamed response carries before the
	// gateway's bandwidth cap, StreamRate bytes a second ("2 MB/s"; the
	// smaller reading).
	StreamBurst = 10 << 20
	StreamRate  = 2_000_000
	// StreamMaxDuration and StreamIdleTimeout bound a streamed response
	// (the idle timeout is a Regional endpoint's).
	StreamMaxDuration = 15 * time.Minute
	StreamIdleTimeout = 5 * time.Minute
	// DefaultIntegrationTimeout is an integration's timeout when it sets
	// none, and the most a BUFFERED one may set without a quota increase;
	// MinIntegrationTimeout is the least any may set. A STREAM integration
	// may set up to StreamMaxDuration ("When you use response streaming, you
	// can configure the integration timeout up to 15 minutes").
	DefaultIntegrationTimeout = 29 * time.Second
	MinIntegrationTimeout     = 50 * time.Millisecond
)

// checkTimeout refuses an integration timeout API Gateway refuses: under 50
// ms, over 29 s for a buffered integration (the Regional quota "Maximum
// integration timeout", which an account raises only by request), over 15
// minutes for a streamed one.
func checkTimeout(in Integration) error {
	if in.Timeout == 0 {
		return nil
	}
	most := DefaultIntegrationTimeout
	if in.TransferMode == TransferStream {
		most = StreamMaxDuration
	}
	if in.Timeout < MinIntegrationTimeout || in.Timeout > most {
		return fmt.Errorf("integration timeout %s: a %s integration takes %s to %s", in.Timeout, transferName(in.TransferMode), MinIntegrationTimeout, most)
	}
	return nil
}

func transferName(mode string) string {
	if mode == TransferStream {
		return TransferStream
	}
	return TransferBuffered
}

// timeout is the integration's timeout, Options.IntegrationTimeout when it
// sets none.
func (g *Gateway) timeout(in Integration) time.Duration {
	if in.Timeout > 0 {
		return in.Timeout
	}
	return g.opts.IntegrationTimeout
}

// streamDelimiter ends the JSON prelude of a Lambda proxy integration's
// streamed response ("Set up a Lambda proxy integration with payload
// response streaming").
var streamDelimiter = make([]byte, 8)

// withinRequestLimits answers a request over the payload or URL quota and
// reports false; otherwise it keeps the body for the integration.
func (g *Gateway) withinRequestLimits(w http.ResponseWriter, c *call) bool {
	u := "https://" + g.domain() + "/" + g.api.Stage + c.r.URL.RequestURI()
	if len(u) > MaxURLLength {
		g.plainError(w, c, http.StatusRequestURITooLong, "Request-URI Too Long")
		return false
	}
	body, err := io.ReadAll(io.LimitReader(c.r.Body, MaxPayload+1))
	if err != nil {
		c.errMessage = "Bad Request"
		g.gatewayResponse(w, c, "BAD_REQUEST_BODY")
		return false
	}
	if len(body) > MaxPayload {
		c.errMessage = "Request Too Long"
		g.gatewayResponse(w, c, "REQUEST_TOO_LARGE")
		return false
	}
	c.body = body
	return true
}

// methodARNFits answers 414 for a request whose method ARN is over
// MaxMethodARN, as API Gateway does before it authorizes the request.
func (g *Gateway) methodARNFits(w http.ResponseWriter, c *call) bool {
	if len(g.methodARN(c)) <= MaxMethodARN {
		return true
	}
	g.plainError(w, c, http.StatusRequestURITooLong, "Request-URI Too Long")
	return false
}

// plainError is an answer API Gateway gives before any gateway response
// applies: its status and {"message": ...}. (The body of these two 414s is
// not documented; this is API Gateway's usual form.)
func (g *Gateway) plainError(w http.ResponseWriter, c *call, status int, message string) {
	b, _ := json.Marshal(map[string]string{"message": message})
	w.Header().Set("Content-Type", "application/json")
	g.opts.Logf("restapi: %s %s: %d %s", c.r.Method, c.r.URL.Path, status, message)
	g.write(w, c, status, b)
}

// errStreamIdle ends a stream that sent nothing for StreamIdleTimeout;
// errIntegrationTimeout one still running at the integration timeout.
var (
	errStreamIdle         = errors.New("restapi: the integration's stream was idle too long")
	errIntegrationTimeout = errors.New("restapi: the integration timed out before the stream's end")
)

// stream answers from a STREAM integration: it waits for the response's
// prelude (status and headers), then passes the body on as it comes, as API
// Gateway does. The integration timeout bounds the whole response, from the
// invocation to the stream's last byte (API Gateway documents it as the time
// to complete the response). A failure before the prelude is a 502
// (INTEGRATION_FAILURE) or a 504 (INTEGRATION_TIMEOUT), as for a buffered
// integration; once the status is out nothing more can be said, and the
// connection is closed without the response's end: the client sees a body
// cut short (HTTP/1.1: no last chunk).
func (g *Gateway) stream(w http.ResponseWriter, c *call, in Integration, payload []byte, traceID string) {
	deadline := g.opts.Now().Add(g.timeout(in))
	src, err := g.inv.InvokeStream(c.r.Context(), in.Function, payload)
	if err != nil {
		g.invokeRefused(w, c, in, err)
		return
	}
	defer src.Close()
	type preludeResult struct {
		p   prelude
		err error
	}
	br := bufio.NewReaderSize(src, 64<<10)
	got := make(chan preludeResult, 1)
	go func() {
		p, err := readPrelude(br)
		got <- preludeResult{p, err}
	}()
	timer := time.NewTimer(max(deadline.Sub(g.opts.Now()), 0))
	defer timer.Stop()
	var pre prelude
	select {
	case r := <-got:
		if r.err != nil {
			g.opts.Logf("restapi: %s %s: function %s streamed no proxy response: %v", c.r.Method, c.r.URL.Path, in.Function, r.err)
			c.errMessage = "Internal server error"
			g.gatewayResponseStatus(w, c, "INTEGRATION_FAILURE", http.StatusBadGateway)
			return
		}
		pre = r.p
	case <-timer.C:
		c.errMessage = "Endpoint request timed out"
		g.gatewayResponse(w, c, "INTEGRATION_TIMEOUT")
		return
	}
	if !g.opts.Now().Before(deadline) {
		// The prelude came, but after the timeout on the gateway's clock.
		c.errMessage = "Endpoint request timed out"
		g.gatewayResponse(w, c, "INTEGRATION_TIMEOUT")
		return
	}
	hdr := w.Header()
	setHeaders(hdr, pre.Headers, pre.MultiValueHeaders)
	for _, ck := range pre.Cookies {
		hdr.Add("Set-Cookie", ck)
	}
	hdr.Del("Content-Length") // a streamed answer is framed by the gateway
	hdr.Set("X-Amzn-Trace-Id", traceID)
	status := pre.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if err := g.relay(w, br, deadline); err != nil {
		g.opts.Logf("restapi: %s %s: the stream from %s failed after the status: %v", c.r.Method, c.r.URL.Path, in.Function, err)
		panic(http.ErrAbortHandler)
	}
}

// prelude is the metadata a streamed Lambda proxy response begins with.
type prelude struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
}

// maxPrelude bounds the JSON before the delimiter: a response without one
// is not in the streaming format.
const maxPrelude = 1 << 20

func readPrelude(br *bufio.Reader) (prelude, error) {
	var head []byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = errors.New("the response ended before the prelude's delimiter")
			}
			return prelude{}, err
		}
		head = append(head, b)
		if bytes.HasSuffix(head, streamDelimiter) {
			head = head[:len(head)-len(streamDelimiter)]
			break
		}
		if len(head) > maxPrelude {
			return prelude{}, fmt.Errorf("no prelude delimiter in the first %d bytes", maxPrelude)
		}
	}
	var p prelude
	if err := json.Unmarshal(head, &p); err != nil {
		return prelude{}, fmt.Errorf("prelude %.200q: %w", head, err)
	}
	if p.StatusCode != 0 && (p.StatusCode < 100 || p.StatusCode > 599) {
		return prelude{}, fmt.Errorf("prelude status %d", p.StatusCode)
	}
	return p, nil
}

// relay copies a streamed body to the client as it comes, flushing each
// piece, within the gateway's bandwidth cap, idle timeout and longest
// duration, and until the integration's deadline: a piece that would leave
// after it is not sent, and the stream ends there with
// errIntegrationTimeout. Time is the gateway's clock (Options.Now and
// Sleep).
func (g *Gateway) relay(w http.ResponseWriter, src io.Reader, deadline time.Time) error {
	rate := g.opts.StreamRate
	if rate == 0 {
		rate = StreamRate
	}
	burst := g.opts.StreamBurst
	if burst == 0 {
		burst = StreamBurst
	}
	flusher, _ := w.(http.Flusher)
	start := g.opts.Now()
	sent := 0
	buf := make([]byte, 64<<10)
	type read struct {
		n   int
		err error
	}
	reads := make(chan read)
	next := make(chan struct{}, 1)
	go func() {
		for range next {
			n, err := src.Read(buf)
			reads <- read{n, err}
			if err != nil {
				return
			}
		}
	}()
	defer close(next)
	for {
		next <- struct{}{}
		left := deadline.Sub(g.opts.Now())
		wait := time.NewTimer(max(min(StreamIdleTimeout, left), 0))
		var r read
		select {
		case r = <-reads:
			wait.Stop()
		case <-wait.C:
			if left < StreamIdleTimeout {
				return errIntegrationTimeout
			}
			return errStreamIdle
		}
		if r.n > 0 {
			sent += r.n
			if sent > burst {
				due := start.Add(time.Duration(float64(sent-burst) / rate * float64(time.Second)))
				g.opts.Sleep(due.Sub(g.opts.Now()))
			}
			now := g.opts.Now()
			if !now.Before(deadline) {
				return errIntegrationTimeout
			}
			if now.Sub(start) > StreamMaxDuration {
				return fmt.Errorf("restapi: the stream outlasted %s", StreamMaxDuration)
			}
			if _, err := w.Write(buf[:r.n]); err != nil {
				return nil // the client went away
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if r.err == io.EOF {
			return nil
		}
		if r.err != nil {
			return r.err
		}
	}
}
