package lambdaemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// streamed reads a whole Stream: the bytes, and the error it ended with
// (nil for a clean end).
func streamed(t *testing.T, p *Pool, event string) ([]byte, error) {
	t.Helper()
	s, err := p.InvokeStream(context.Background(), []byte(event))
	if err != nil {
		t.Fatalf("InvokeStream %s: %v", event, err)
	}
	defer s.Close()
	b, err := io.ReadAll(s)
	return b, err
}

// body splits API Gateway's streaming format: prelude, eight NULs, body.
func body(t *testing.T, b []byte) (prelude map[string]any, rest []byte) {
	t.Helper()
	head, rest, ok := bytes.Cut(b, make([]byte, 8))
	if !ok {
		t.Fatalf("no prelude delimiter in %.200q", b)
	}
	if err := json.Unmarshal(head, &prelude); err != nil {
		t.Fatalf("prelude %q: %v", head, err)
	}
	return prelude, rest
}

func TestInvokeStream(t *testing.T) {
	p := start(t, "fn", Function{Timeout: 20 * time.Second})
	b, err := streamed(t, p, `{"op":"stream","size":300000}`)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	prelude, rest := body(t, b)
	if prelude["statusCode"] != float64(200) || len(rest) != 300000 || strings.Trim(string(rest), "x") != "" {
		t.Errorf("prelude %v, %d body bytes; want 200 and 300,000 x", prelude, len(rest))
	}
	// Bytes come as the function sends them: the first chunk is read while
	// the function still streams the rest (a chunk every 200 ms).
	s, err := p.InvokeStream(context.Background(), []byte(`{"op":"stream","size":327680,"ms":200}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := make([]byte, 1)
	start := time.Now()
	if _, err := io.ReadFull(s, first); err != nil {
		t.Fatal(err)
	}
	firstAt := time.Since(start)
	rest2, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if all := time.Since(start); all < firstAt+500*time.Millisecond || len(rest2) < 327680 {
		t.Errorf("first byte after %s, all %d bytes after %s: the stream is not passed on as it comes", firstAt, len(rest2)+1, all)
	}
	// A buffered Invoke of the same function gets the same bytes, whole.
	res := invoke(t, p, `{"op":"stream","size":1000}`)
	if res.FunctionError != "" || !bytes.HasSuffix(res.Payload, bytes.Repeat([]byte("x"), 1000)) {
		t.Errorf("buffered invoke of a streaming function: %q %.100q", res.FunctionError, res.Payload)
	}
}

// TestStreamLimits: what a stream may carry and how fast, and how it ends
// when the function fails, overruns its timeout or its size.
func TestStreamLimits(t *testing.T) {
	t.Run("bandwidth-after-the-burst", func(t *testing.T) {
		// The first 6 MiB are free; 2 MB past them at a raised rate of
		// 4 MB/s take at least half a second (at AWS's 2 MB/s, a second).
		p := start(t, "fn", Function{Timeout: 20 * time.Second, StreamRate: 4_000_000})
		begin := time.Now()
		b, err := streamed(t, p, fmt.Sprintf(`{"op":"stream","size":%d}`, StreamBurst+2_000_000))
		if err != nil || len(b) < StreamBurst+2_000_000 {
			t.Fatalf("%d bytes, %v", len(b), err)
		}
		if took := time.Since(begin); took < 500*time.Millisecond {
			t.Errorf("%d bytes streamed in %s; past the burst the cap allows no faster than 0.5 s", len(b), took)
		}
	})
	t.Run("fails-midway", func(t *testing.T) {
		p := start(t, "fn", Function{Timeout: 20 * time.Second})
		b, err := streamed(t, p, `{"op":"streamfail","size":200000}`)
		var se *StreamError
		if !errors.As(err, &se) || se.Code != "Unhandled" || !strings.Contains(string(se.Details), "the disk went away") {
			t.Fatalf("error %v, want a StreamError with the function's error", err)
		}
		if _, rest := body(t, b); len(rest) != 200000 {
			t.Errorf("%d bytes before the failure, want the 200,000 sent", len(rest))
		}
		// The instance still serves.
		if res := invoke(t, p, `{"op":"echo"}`); res.FunctionError != "" {
			t.Errorf("after a failed stream: %s", res.Payload)
		}
	})
	t.Run("error-before-any-byte", func(t *testing.T) {
		p := start(t, "fn", Function{Timeout: 20 * time.Second})
		b, err := streamed(t, p, `{"op":"error"}`)
		var se *StreamError
		if !errors.As(err, &se) || len(b) != 0 || !strings.Contains(string(se.Details), "boom") {
			t.Fatalf("%d bytes, error %v; want none and the function's error", len(b), err)
		}
	})
	t.Run("timeout-midway", func(t *testing.T) {
		// The invocation lasts until the last byte: a stream slower than the
		// timeout ends there, and the instance is reset.
		p := start(t, "fn", Function{Timeout: time.Second})
		b, err := streamed(t, p, `{"op":"stream","size":3276800,"ms":50}`)
		var se *StreamError
		if !errors.As(err, &se) || !strings.Contains(string(se.Details), "Task timed out") {
			t.Fatalf("error %v, want the timeout", err)
		}
		if len(b) == 0 || len(b) >= 3276800 {
			t.Errorf("%d bytes before the timeout, want some but not all", len(b))
		}
	})
	t.Run("over-200-MB", func(t *testing.T) {
		p := start(t, "fn", Function{Timeout: 60 * time.Second, StreamRate: 1e12})
		b, err := streamed(t, p, fmt.Sprintf(`{"op":"stream","size":%d}`, MaxStreamedResponseSize+(1<<20)))
		var se *StreamError
		if !errors.As(err, &se) || se.Code != "Function.ResponseSizeTooLarge" {
			t.Fatalf("error %v, want Function.ResponseSizeTooLarge", err)
		}
		if len(b) > MaxStreamedResponseSize {
			t.Errorf("%d bytes passed, more than the %d a stream may carry", len(b), MaxStreamedResponseSize)
		}
	})
	t.Run("buffered-over-6-MB", func(t *testing.T) {
		// The same function invoked buffered: Lambda's 6 MB response limit.
		p := start(t, "fn", Function{Timeout: 20 * time.Second})
		res := invoke(t, p, fmt.Sprintf(`{"op":"stream","size":%d}`, MaxResponseSize))
		if e := errorPayload(t, res); e.ErrorType != "Function.ResponseSizeTooLarge" {
			t.Errorf("buffered invoke of a 6 MB stream: %+v", e)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		p := start(t, "fn", Function{Timeout: 20 * time.Second})
		if _, err := p.InvokeStream(context.Background(), []byte(`{"op":`)); !errors.Is(err, ErrInvalidRequestContent) {
			t.Errorf("not JSON: %v", err)
		}
	})
}
