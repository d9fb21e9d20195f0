package lambdaemu

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// Limits of a streamed response (Lambda developer guide, "Response
// streaming for Lambda functions", and its "Bandwidth limits for response
// streaming"): up to 200 MB, the first 6 MB at full speed and the rest at
// most 2 MBps. The invocation lasts, and counts against the function's
// timeout, until the last byte is out.
const (
	// MaxStreamedResponseSize is the largest streamed response; past it the
	// stream ends with Function.ResponseSizeTooLarge.
	MaxStreamedResponseSize = 200 << 20
	// StreamBurst is what a stream carries before its bandwidth cap.
	StreamBurst = 6 << 20
	// StreamRate is the cap, in bytes a second. AWS writes "2 MBps"; the
	// larger reading would let a test pass that AWS fails.
	StreamRate = 2_000_000
)

// StreamError ends a streamed invocation that failed: the error an
// InvokeWithResponseStream caller finds in its InvokeComplete event (after
// the chunks the function streamed before it failed, if any).
type StreamError struct {
	Code    string // "Unhandled", or Lambda's own: Function.ResponseSizeTooLarge, Sandbox.Timedout
	Details []byte // the error object, {"errorMessage":...,"errorType":...}
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("lambdaemu: streamed invocation failed (%s): %s", e.Code, e.Details)
}

// Stream is a streamed invocation's response as its caller reads it: the
// bytes the function streams, as they come, then io.EOF, or a *StreamError
// if the invocation failed. Close it when done: the function then streams
// into nothing, as it does on Lambda when the caller hangs up.
type Stream struct {
	r  *io.PipeReader
	sk *sink
}

// ContentType is the Content-Type the function posted its response with, as
// InvokeWithResponseStream returns it (ResponseStreamContentType); known once
// the first bytes have been read.
func (s *Stream) ContentType() string {
	s.sk.mu.Lock()
	defer s.sk.mu.Unlock()
	return s.sk.ctype
}

func (s *Stream) Read(p []byte) (int, error) { return s.r.Read(p) }

// Close stops reading.
func (s *Stream) Close() error { return s.r.Close() }

// sink is the Lambda side of a Stream: what the runtime posts goes through
// it, throttled and bounded as Lambda bounds it.
type sink struct {
	w     *io.PipeWriter
	rate  float64 // bytes a second after the burst
	mu    sync.Mutex
	sent  int
	ctype string // the response's Content-Type
	start time.Time
	ended chan struct{} // closed by end
	once  sync.Once
}

func newSink(w *io.PipeWriter, rate float64) *sink {
	return &sink{w: w, rate: rate, ended: make(chan struct{})}
}

// write passes p on after the wait the bandwidth cap asks. It reports false
// once the response is over MaxStreamedResponseSize or the stream has ended
// (failed, or the invocation timed out).
func (s *sink) write(p []byte) bool {
	s.mu.Lock()
	if s.start.IsZero() {
		s.start = time.Now()
	}
	s.sent += len(p)
	sent, start := s.sent, s.start
	s.mu.Unlock()
	if sent > MaxStreamedResponseSize {
		return false
	}
	if sent > StreamBurst && s.rate > 0 {
		// The bytes past the burst may not have left before this moment.
		due := start.Add(time.Duration(float64(sent-StreamBurst) / s.rate * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.ended:
				t.Stop()
				return false
			}
		}
	}
	select {
	case <-s.ended:
		return false
	default:
	}
	// A caller that stopped reading leaves the function streaming into
	// nothing: the write fails and the bytes are dropped.
	_, _ = s.w.Write(p)
	return true
}

// end finishes the stream, with err (a *StreamError) or cleanly when nil.
// Only the first end counts.
func (s *sink) end(err error) {
	s.once.Do(func() {
		close(s.ended)
		if err != nil {
			_ = s.w.CloseWithError(err)
		} else {
			_ = s.w.Close()
		}
	})
}

// streamError is the error a failed answer ends a stream with.
func streamError(a answer) error {
	var e errorObject
	_ = json.Unmarshal(a.payload, &e)
	code := "Unhandled"
	switch e.ErrorType {
	case "Function.ResponseSizeTooLarge", "Sandbox.Timedout":
		code = e.ErrorType
	}
	return &StreamError{Code: code, Details: a.payload}
}

// InvokeStream runs one invocation as InvokeWithResponseStream does: it
// returns at once with the Stream the function's response comes through,
// while the invocation runs. The function answers in streaming mode
// (aws-lambda-go posts a handler's io.Reader chunked, with failures in
// trailers); a response it posts whole is streamed too. The refusals of
// Invoke apply (ErrRequestTooLarge, ErrInvalidRequestContent,
// ErrTooManyRequests); everything that happens once the function runs
// (errors, crashes, timeouts, an oversized response) ends the Stream with a
// *StreamError, after whatever bytes went out before it.
func (p *Pool) InvokeStream(ctx context.Context, payload []byte) (*Stream, error) {
	in, err := p.admit(ctx, payload)
	if err != nil {
		return nil, err
	}
	r, w := io.Pipe()
	sk := newSink(w, p.streamRate())
	done := p.launch(in, payload, sk)
	go func() {
		o := <-done
		switch {
		case o.err != nil:
			sk.end(&StreamError{Code: "ServiceException", Details: errorAnswer("ServiceException", o.err.Error()).payload})
		case o.res.FunctionError != "":
			sk.end(streamError(answer{payload: o.res.Payload, failed: true}))
		default:
			sk.end(nil)
		}
	}()
	return &Stream{r: r, sk: sk}, nil
}

func (p *Pool) streamRate() float64 {
	if p.fn.StreamRate != 0 {
		return p.fn.StreamRate
	}
	return StreamRate
}

// streamResponse is POST /runtime/invocation/{id}/response for a streamed
// invocation: the body goes on to the caller as it arrives, within
// Lambda's bounds; an error in the trailers ends the stream with it.
func (pr *proc) streamResponse(w http.ResponseWriter, r *http.Request, ev *event) {
	if _, ok := pr.claim(r.PathValue("id")); !ok {
		renderError(w, http.StatusBadRequest, "InvalidRequestID", "Invalid request ID")
		return
	}
	ev.stream.mu.Lock()
	ev.stream.ctype = r.Header.Get("Content-Type")
	ev.stream.mu.Unlock()
	buf := make([]byte, 64<<10)
	over := false
	for {
		n, err := r.Body.Read(buf)
		if n > 0 && !over && !ev.stream.write(buf[:n]) {
			// Over the size limit, or the stream ended (a timeout): the rest
			// is read and dropped so that the runtime's post completes.
			over = true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return // the runtime went away mid-stream; its exit is handled by monitor
		}
	}
	if failed, ok := trailerError(r); ok {
		ev.done <- failed
		renderJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
		return
	}
	ev.stream.mu.Lock()
	size := ev.stream.sent
	ev.stream.mu.Unlock()
	if size > MaxStreamedResponseSize {
		ev.done <- errorAnswer("Function.ResponseSizeTooLarge",
			fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxStreamedResponseSize))
		renderError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge",
			fmt.Sprintf("Exceeded maximum allowed payload size (%d bytes).", MaxStreamedResponseSize))
		return
	}
	ev.done <- answer{}
	renderJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
}
