package apigw

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// Limits of a streamed answer (docs/design.md, "Answers of any size").
// Lambda streams the first 6 MB of a response uncapped and the rest at most
// 2 MB/s, up to 200 MB (Lambda developer guide, "Response streaming for
// Lambda functions", "Bandwidth limits for response streaming"); API
// Gateway streams the first 10 MB uncapped and the rest at 2 MB/s, for at
// most 15 minutes (API Gateway developer guide, "Stream the integration
// response for your proxy integrations"). The function's timeout covers the
// stream: the invocation lasts until its last byte is sent.
const (
	// StreamBurstBytes is what Lambda streams before its bandwidth cap.
	StreamBurstBytes = 6 << 20
	// StreamBytesPerSecond is the cap after the burst. AWS writes "2 MBps";
	// the smaller reading, 2,000,000, keeps the time estimate on the safe
	// side.
	StreamBytesPerSecond = 2_000_000
	// MaxStreamedAnswer is the largest body a function answers (after
	// compression): it streams in StreamSeconds, and every page, graph and
	// capped answer the spec allows is well below it (a page of 100
	// documents at the data set's 300,000-byte content limit is about 31
	// MiB before compression). A larger answer, which only a traversal or a
	// document with tens of thousands of edges can make, is a 400 that says
	// how to ask for less (httpapi.Config.MaxAnswerBytes).
	MaxStreamedAnswer = 64 << 20
)

// StreamTime is how long Lambda takes at most to stream n bytes.
func StreamTime(n int) time.Duration {
	if n <= StreamBurstBytes {
		return 0
	}
	return time.Duration(float64(n-StreamBurstBytes) / StreamBytesPerSecond * float64(time.Second))
}

// StreamSeconds is the time kept at the end of a streaming function's
// timeout to stream the largest answer: the stack adds it to each API
// function's timeout, and Streaming ends the request's context that much
// (and DeadlineReserve) before the function's deadline.
var StreamSeconds = int((StreamTime(MaxStreamedAnswer) + time.Second - 1) / time.Second)

// MaxAnswerBytes is httpapi.Config.MaxAnswerBytes for a function answering
// in the transfer mode of streaming: MaxStreamedAnswer when streamed; 0 when
// buffered, where Lambda itself refuses a response over 6 MB (API Gateway
// then answers its INTEGRATION_FAILURE response).
func MaxAnswerBytes(streaming bool) int {
	if streaming {
		return MaxStreamedAnswer
	}
	return 0
}

// StreamHandler is the Lambda handler of a REST API proxy integration whose
// ResponseTransferMode is STREAM: aws-lambda-go posts the returned reader to
// the Runtime API as a streamed response in API Gateway's format, a JSON
// prelude (status and headers), eight NUL bytes, then the body.
type StreamHandler func(context.Context, events.APIGatewayProxyRequest) (*events.APIGatewayProxyStreamingResponse, error)

// Serve is h as the Lambda handler for the stack's transfer mode
// (settings.EnvResponseTransfer): Streaming when streaming, else Handler.
func Serve(h http.Handler, streaming bool) any {
	if streaming {
		return Streaming(h)
	}
	return Handler(h)
}

// Streaming serves h for API Gateway's proxy events in STREAM mode. The
// answer is made whole first (its ETag is the hash of its bytes), then
// streamed: only its transfer is streamed, so the bytes are exactly those
// the local server sends. Content-Length is left out: API Gateway frames a
// streamed answer itself (chunked), and a client tells a stream cut short by
// its missing end, not by a length.
//
// As Handler does, it answers every event itself, and ends the request's
// context DeadlineReserve before the function's deadline, less the
// StreamSeconds the answer may need to stream.
func Streaming(h http.Handler) StreamHandler {
	var accessor core.RequestAccessor
	return func(ctx context.Context, ev events.APIGatewayProxyRequest) (*events.APIGatewayProxyStreamingResponse, error) {
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-DeadlineReserve-time.Duration(StreamSeconds)*time.Second))
			defer cancel()
		}
		r, err := request(ctx, &accessor, ev)
		if err != nil {
			return nil, fmt.Errorf("apigw: could not convert the proxy event to a request: %w", err)
		}
		w := &recorder{header: http.Header{}}
		h.ServeHTTP(w, r)
		if w.status == 0 {
			w.status = http.StatusOK
		}
		w.header.Del("Content-Length")
		resp := &events.APIGatewayProxyStreamingResponse{StatusCode: w.status, MultiValueHeaders: w.header}
		if !strings.EqualFold(ev.HTTPMethod, http.MethodHead) && w.status != http.StatusNotModified {
			resp.Body = bytes.NewReader(w.body.Bytes())
		}
		return resp, nil
	}
}

// recorder keeps a handler's whole answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
