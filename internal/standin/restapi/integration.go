package restapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// headers are the request's headers as API Gateway hands them on: the
// client's, with Host set to the API's domain and the X-Forwarded-* and
// X-Amzn-Trace-Id headers API Gateway adds.
func (g *Gateway) headers(c *call) map[string][]string {
	h := map[string][]string{}
	for k, v := range c.r.Header {
		h[k] = v
	}
	h["Host"] = []string{g.domain()}
	h["X-Forwarded-For"] = []string{c.sourceIP}
	h["X-Forwarded-Port"] = []string{"443"}
	h["X-Forwarded-Proto"] = []string{"https"}
	h["X-Amzn-Trace-Id"] = []string{"Root=1-" + c.requestID[:8] + "-" + strings.ReplaceAll(c.requestID[9:], "-", "")[:24]}
	return h
}

func (g *Gateway) domain() string {
	return g.api.ID + ".execute-api." + g.api.Region + ".amazonaws.com"
}

func singleValues(m map[string][]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if len(v) > 0 {
			out[k] = v[len(v)-1]
		}
	}
	return out
}

func nilIfEmpty(m url.Values) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func nilIfEmptyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// integrate calls the method's function with the proxy event and writes
// its answer.
func (g *Gateway) integrate(w http.ResponseWriter, c *call, in Integration) {
	body := c.body
	h := g.headers(c)
	q := c.r.URL.Query()
	authorizer := map[string]any{}
	for k, v := range c.authorizer {
		authorizer[k] = v
	}
	if c.authorizer != nil {
		authorizer["integrationLatency"] = g.opts.Now().Sub(c.start).Milliseconds()
	} else {
		authorizer = nil
	}
	now := g.opts.Now().UTC()
	ev := events.APIGatewayProxyRequest{
		Resource: c.resource.res.Path, Path: c.r.URL.Path, HTTPMethod: c.r.Method,
		Headers: singleValues(h), MultiValueHeaders: h,
		QueryStringParameters: singleValues(q), MultiValueQueryStringParameters: nilIfEmpty(q),
		PathParameters: nilIfEmptyMap(c.params),
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID: g.api.Account, ResourceID: resourceID(c.resource.res.Path), Stage: g.api.Stage,
			DomainName: g.domain(), DomainPrefix: g.api.ID, RequestID: c.requestID,
			ExtendedRequestID: c.requestID[:8] + "=", Protocol: c.r.Proto,
			Identity:     events.APIGatewayRequestIdentity{SourceIP: c.sourceIP, UserAgent: c.r.UserAgent(), APIKeyID: c.apiKeyID},
			ResourcePath: c.resource.res.Path, Path: "/" + g.api.Stage + c.r.URL.Path, Authorizer: authorizer,
			HTTPMethod: c.r.Method, RequestTime: now.Format("02/Jan/2006:15:04:05 -0700"),
			RequestTimeEpoch: now.UnixMilli(), APIID: g.api.ID,
		},
	}
	if len(body) > 0 {
		// A body is text unless its type is one of the API's binary media
		// types, as for a REST API proxy integration: with none declared
		// (this stack's case) every body arrives as text, a JSON-RPC
		// message to /mcp included.
		if g.binary(c.r.Header.Get("Content-Type")) {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		} else {
			ev.Body = string(body)
		}
	}
	payload, _ := json.Marshal(ev)
	if in.TransferMode == TransferStream {
		g.stream(w, c, in, payload, h["X-Amzn-Trace-Id"][0])
		return
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), g.timeout(in))
	defer cancel()
	out, fnErr, err := g.inv.Invoke(ctx, in.Function, payload)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err == nil && ctx.Err() != nil):
		c.errMessage = "Endpoint request timed out"
		g.gatewayResponse(w, c, "INTEGRATION_TIMEOUT")
		return
	case err != nil:
		g.invokeRefused(w, c, in, err)
		return
	case fnErr != "":
		g.opts.Logf("restapi: %s %s: function %s failed (%s): %s", c.r.Method, c.r.URL.Path, in.Function, fnErr, out)
		c.errMessage = "Internal server error"
		g.gatewayResponseStatus(w, c, "INTEGRATION_FAILURE", http.StatusBadGateway)
		return
	}
	var resp events.APIGatewayProxyResponse
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&resp); err != nil || resp.StatusCode < 100 || resp.StatusCode > 599 {
		// A malformed proxy response: 502, as API Gateway answers it.
		g.opts.Logf("restapi: %s %s: function %s answered no proxy response: %s", c.r.Method, c.r.URL.Path, in.Function, out)
		c.errMessage = "Internal server error"
		g.gatewayResponseStatus(w, c, "INTEGRATION_FAILURE", http.StatusBadGateway)
		return
	}
	respBody := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if respBody, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			c.errMessage = "Internal server error"
			g.gatewayResponseStatus(w, c, "INTEGRATION_FAILURE", http.StatusBadGateway)
			return
		}
	}
	hdr := w.Header()
	setHeaders(hdr, resp.Headers, resp.MultiValueHeaders)
	hdr.Set("X-Amzn-Trace-Id", h["X-Amzn-Trace-Id"][0])
	g.write(w, c, resp.StatusCode, respBody)
}

// invokeRefused answers an invocation Lambda refused (no permission, no
// such function, throttled, a request it will not take): INTEGRATION_FAILURE
// with status 500 unless the API's response sets one. The Lambda Developer
// Guide ("Handling Lambda errors with an API Gateway API"): "If the Lambda
// API rejects the invocation request, API Gateway returns a 500 error code.
// If the function runs but returns an error, or returns a response in the
// wrong format, API Gateway returns a 502", both with {"message": "Internal
// server error"}. Both are the INTEGRATION_FAILURE response type (its
// customized template and status apply): API Gateway's access logs give
// $context.error.responseType INTEGRATION_FAILURE for a Lambda function
// error, and the type's documented default status, 504, is not what either
// answers (docs/standin.md, "Function errors").
func (g *Gateway) invokeRefused(w http.ResponseWriter, c *call, in Integration, err error) {
	g.opts.Logf("restapi: %s %s: invoke %s: %v", c.r.Method, c.r.URL.Path, in.Function, err)
	c.errMessage = "Internal server error"
	g.gatewayResponseStatus(w, c, "INTEGRATION_FAILURE", http.StatusInternalServerError)
}

// write sends a body, compressed when the API compresses (its
// MinimumCompressionSize), the body is at least that size, the integration
// answered without a Content-Encoding, and the client's Accept-Encoding asks
// for a coding the gateway compresses with by AWS's rule (gatewayCoding).
// The integration's other headers pass as they came, an ETag included.
func (g *Gateway) write(w http.ResponseWriter, c *call, status int, body []byte) {
	hdr := w.Header()
	min := g.api.MinimumCompressionSize
	if min >= 0 && len(body) >= min && hdr.Get("Content-Encoding") == "" {
		if coding := gatewayCoding(c.r.Header.Values("Accept-Encoding")); coding != "" {
			body = compress(coding, body)
			hdr.Set("Content-Encoding", coding)
		}
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if c.r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// gatewayCoding is the content coding API Gateway compresses a response
// with for a request's Accept-Encoding values, or "" for none. AWS's rule
// (API Gateway Developer Guide, "Receive an API response with a compressed
// payload" and "Enable payload compression for an API"): the request must
// name a supported coding, of deflate, gzip and identity, explicitly (no
// header, which stands for "*", or "*" alone gets no compression), and
// "the highest-priority content encoding must be one supported by API
// Gateway. If it is not, compression is not applied". The highest priority
// is the highest q-value; when several codings share it, AWS does not say
// which is taken, so the stand-in compresses only when every one of them is
// a coding API Gateway compresses with (gzip or deflate; the first named
// wins): "zstd, gzip" gets no compression, "gzip, zstd;q=0.5" gets gzip. A
// q-value outside RFC 9110's 0 to 1 with three decimals makes the header
// one API Gateway may not read, and gets none.
func gatewayCoding(values []string) string {
	type coding struct {
		name string
		q    float64
	}
	var all []coding
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
					continue
				}
				w, ok := qvalue(strings.TrimSpace(val))
				if !ok {
					return ""
				}
				q = w
			}
			all = append(all, coding{name, q})
		}
	}
	top := 0.0
	for _, c := range all {
		top = max(top, c.q)
	}
	if top == 0 {
		return ""
	}
	chosen := ""
	for _, c := range all {
		if c.q != top {
			continue
		}
		switch c.name {
		case "gzip", "deflate":
			if chosen == "" {
				chosen = c.name
			}
		default:
			// identity, "*" or a coding API Gateway does not support may
			// be the one taken: no compression.
			return ""
		}
	}
	return chosen
}

// qvalue reads a weight as RFC 9110 (12.4.2) writes it: "0" to "1" with at
// most three decimals.
func qvalue(s string) (float64, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if (whole != "0" && whole != "1") || len(frac) > 3 || (dot && whole == "1" && strings.Trim(frac, "0") != "") {
		return 0, false
	}
	for _, r := range frac {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	q, err := strconv.ParseFloat(s, 64)
	return q, err == nil
}

// compress is body in the content coding (gzip, or deflate: the zlib
// format, as RFC 9110 defines the deflate coding).
func compress(coding string, body []byte) []byte {
	var buf bytes.Buffer
	var zw io.WriteCloser
	if coding == "deflate" {
		zw = zlib.NewWriter(&buf)
	} else {
		zw = gzip.NewWriter(&buf)
	}
	_, _ = zw.Write(body)
	_ = zw.Close()
	return buf.Bytes()
}

// binary reports whether a request body of contentType is binary to the API:
// its media type (without parameters) is one of BinaryMediaTypes, which may
// be "type/*" or "*/*".
func (g *Gateway) binary(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	typ, _, _ := strings.Cut(mt, "/")
	for _, b := range g.api.BinaryMediaTypes {
		b = strings.ToLower(b)
		if b == "*/*" || b == mt || (strings.HasSuffix(b, "/*") && strings.TrimSuffix(b, "/*") == typ) {
			return true
		}
	}
	return false
}

// setHeaders copies a proxy response's headers: its single values, then its
// multiple ones, which win.
func setHeaders(hdr http.Header, single map[string]string, multi map[string][]string) {
	for k, v := range single {
		hdr.Set(k, v)
	}
	for k, vs := range multi {
		hdr.Del(k)
		for _, v := range vs {
			hdr.Add(k, v)
		}
	}
}
