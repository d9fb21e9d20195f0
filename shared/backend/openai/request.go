package openai

import (
	"bytes"
	"context"
	"encoding/json"

	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/search"
)

const (
	// maxResponseBytes is far above a real batch (64 texts × 3072 floats as
	// JSON is about 4 MB) and only guards memory against a runaway server.
	maxResponseBytes = 256 << 20
)

// embedRequest is the request body of POST /embeddings.
type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
	// EncodingFormat is explicit because some servers default to base64.
	EncodingFormat string `json:"encoding_format"`
	Dimensions     int    `json:"dimensions,omitempty"`
}

// embedResponse is the part of the answer we use. Index is a pointer so that a
// missing index is told apart from 0, and the numbers are json.Number so that
// a null (which would decode silently as 0 into a float) is caught.
type embedResponse struct {
	Data []struct {
		Index     *int          `json:"index"`
		Embedding []json.Number `json:"embedding"`
	} `json:"data"`
	Error json.RawMessage `json:"error"`
}

// statusError is a non-2xx answer.
type statusError struct {
	status int
	msg    string
}

func (s *statusError) Error() string { return s.msg }

// post makes one attempt at embedding texts, within ctx's deadline (the
// pacer's), and returns their unit-length vectors in order. A failure that a
// later attempt may cure is an *embedcall.Retryable.
func (e *Embedder) post(ctx context.Context, _ embedcall.Call, texts []string) ([][]float32, error) {
	req := embedRequest{Model: e.model, Input: texts, EncodingFormat: "float"}
	if e.requestDims {
		req.Dimensions = e.dims
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build the request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if e.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.client.Do(hreq)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	// Reading the whole body (not just decoding a prefix) lets the connection
	// go back to the pool.
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, transportError(err)
	}
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("the server's answer is larger than %d MB", maxResponseBytes>>20)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := e.statusError(resp, data)
		if retryableStatus(resp.StatusCode) {
			wait, ok := retryAfter(resp.Header, time.Now())
			if !ok {
				wait = -1
			}
			overloaded := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
			return nil, &embedcall.Retryable{Err: err, Wait: wait, Overloaded: overloaded}
		}
		return nil, err
	}
	return e.decode(data, resp.Header.Get("Content-Type"), len(texts))
}

// transportError describes a failure to get an answer; all are retryable.
// One that ran out of the pacer's time is told as such by the pacer.
func transportError(err error) error {
	return &embedcall.Retryable{Err: fmt.Errorf("cannot reach the server: %w", err), Wait: -1}
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryAfter reads Retry-After (seconds or an HTTP date) or, failing that,
// retry-after-ms, which OpenAI sends; the wait is capped at maxRetryAfter.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil {
			if s < 0 {
				return 0, false
			}
			if s > int64(maxRetryAfter/time.Second) {
				return maxRetryAfter, true
			}
			return time.Duration(s) * time.Second, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return min(max(t.Sub(now), 0), maxRetryAfter), true
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			if ms > float64(maxRetryAfter/time.Millisecond) {
				return maxRetryAfter, true
			}
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	return 0, false
}

// statusError describes a non-2xx answer with the server's own message and a
// hint at the setting to fix.
func (e *Embedder) statusError(resp *http.Response, data []byte) error {
	code := resp.StatusCode
	var b strings.Builder
	fmt.Fprintf(&b, "the server answered %d %s", code, http.StatusText(code))
	if msg := e.serverMessage(data, resp.Header.Get("Content-Type")); msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		if e.apiKey == "" {
			b.WriteString("; the server wants an API key: set Config.APIKey")
		} else {
			b.WriteString("; check the API key (Config.APIKey)")
		}
	case http.StatusNotFound:
		fmt.Fprintf(&b, "; check the base URL (%s, which should end where /embeddings is appended, often /v1) and the model name (%q)", e.shownURL, e.model)
	}
	return &statusError{status: code, msg: b.String()}
}

// serverMessage extracts the error text from the shapes servers use:
// {"error":{"message":...}} (OpenAI, Ollama's /v1), {"error":"..."},
// {"message":...} (vLLM) and {"detail":"..."} (FastAPI); else a snippet of a
// plain-text body. HTML pages (proxies' error pages) are only named.
func (e *Embedder) serverMessage(data []byte, contentType string) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	var msg string
	if err := json.Unmarshal(data, &body); err == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			msg = s
		case body.Message != "":
			msg = body.Message
		case json.Unmarshal(body.Detail, &s) == nil && s != "":
			msg = s
		}
	} else if isHTML(data, contentType) {
		return "an HTML page instead of JSON"
	} else {
		msg = string(data)
	}
	return e.clean(msg)
}

// clean makes a server's message fit one log line and removes the API key,
// which some servers quote back ("Incorrect API key provided: sk-...").
func (e *Embedder) clean(msg string) string {
	return embedcall.Clean(msg, e.apiKey, "[redacted]")
}

func isHTML(data []byte, contentType string) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && strings.Contains(mt, "html") {
		return true
	}
	return bytes.HasPrefix(bytes.TrimSpace(data), []byte("<"))
}

// decode parses and checks a 2xx answer for n texts and returns the vectors
// in input order, normalised.
func (e *Embedder) decode(data []byte, contentType string, n int) ([][]float32, error) {
	var resp embedResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		if isHTML(data, contentType) || !json.Valid(data) {
			return nil, fmt.Errorf("the server's answer is not JSON (Content-Type %q); check the base URL (%s)", contentType, e.shownURL)
		}
		return nil, fmt.Errorf("the server's answer is not an embeddings list: %w", err)
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		msg := e.serverMessage(data, contentType)
		if msg == "" {
			msg = e.clean(string(resp.Error))
		}
		return nil, fmt.Errorf("the server reported an error: %s", msg)
	}
	if len(resp.Data) != n {
		return nil, fmt.Errorf("the server returned %d embeddings for %d texts", len(resp.Data), n)
	}
	vs := make([][]float32, n)
	dims := 0
	for i, item := range resp.Data {
		if item.Index == nil {
			return nil, fmt.Errorf("embedding %d of the answer has no index", i)
		}
		idx := *item.Index
		if idx < 0 || idx >= n {
			return nil, fmt.Errorf("embedding %d of the answer has index %d, outside 0..%d", i, idx, n-1)
		}
		if vs[idx] != nil {
			return nil, fmt.Errorf("the answer holds index %d twice", idx)
		}
		if len(item.Embedding) == 0 {
			return nil, fmt.Errorf("the embedding for index %d is empty", idx)
		}
		if i == 0 {
			dims = len(item.Embedding)
		} else if len(item.Embedding) != dims {
			return nil, fmt.Errorf("the answer mixes vectors of %d and %d dimensions", dims, len(item.Embedding))
		}
		v, err := embedcall.ParseVector(item.Embedding, fmt.Sprintf("the embedding for index %d", idx))
		if err != nil {
			return nil, err
		}
		vs[idx] = v
	}
	if e.dims != 0 && dims != e.dims {
		return nil, fmt.Errorf("model %q returned vectors of %d dimensions, but Config.Dimensions is %d; fix Config.Dimensions, or set it to 0 to learn it", e.model, dims, e.dims)
	}
	if err := search.CheckVectors(vs, n, dims); err != nil {
		return nil, err
	}
	return vs, nil
}
