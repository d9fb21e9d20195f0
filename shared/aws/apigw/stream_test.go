package apigw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/doclib/doclib/shared/aws/apigw"
)

// streamed reads a StreamHandler's answer as aws-lambda-go posts it:
// the prelude, eight NUL bytes, the body.
func streamed(t *testing.T, resp *events.APIGatewayProxyStreamingResponse) (prelude map[string]any, body []byte) {
	t.Helper()
	raw, err := io.ReadAll(resp)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(raw, make([]byte, 8))
	if !ok {
		t.Fatalf("no delimiter after the prelude: %.200q", raw)
	}
	if err := json.Unmarshal(head, &prelude); err != nil {
		t.Fatalf("prelude %q: %v", head, err)
	}
	if resp.ContentType() != "application/vnd.awslambda.http-integration-response" {
		t.Errorf("content type %q", resp.ContentType())
	}
	return prelude, body
}

// TestStreamingAnswersTheLocalBytes: a streamed answer carries the local
// server's status, headers and bytes, without Content-Length (the gateway
// frames a stream), a HEAD or 304 without a body, and the request's
// deadline leaves the function the time to stream the largest answer.
func TestStreamingAnswersTheLocalBytes(t *testing.T) {
	w := newWorld(t)
	var ev events.APIGatewayProxyRequest
	readJSON(t, "apigw-library-documents.json", &ev)
	ev.Headers["Accept-Encoding"], ev.MultiValueHeaders["Accept-Encoding"] = "identity", []string{"identity"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := apigw.Streaming(w.handler(true))(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	prelude, body := streamed(t, resp)
	headers, _ := prelude["multiValueHeaders"].(map[string]any)
	req := httptest.NewRequest(http.MethodGet, ev.Path+"?"+queryOf(ev), nil)
	req.Header.Set("Authorization", ev.Headers["Authorization"])
	req.Header.Set("Accept-Encoding", "identity")
	req.RemoteAddr = sourceIP + ":443"
	rec := httptest.NewRecorder()
	w.handler(false).ServeHTTP(rec, req)
	if prelude["statusCode"] != float64(rec.Code) || !bytes.Equal(body, rec.Body.Bytes()) {
		t.Fatalf("streamed %v, %d bytes; locally %d, %d bytes", prelude["statusCode"], len(body), rec.Code, rec.Body.Len())
	}
	if headers["Content-Length"] != nil || headers["Etag"] == nil || headers["Cache-Control"] == nil {
		t.Errorf("streamed headers %v: want ETag and Cache-Control, and no Content-Length", headers)
	}
	// A 304 and a HEAD have no body.
	tag := headers["Etag"].([]any)[0].(string)
	ev.Headers["If-None-Match"], ev.MultiValueHeaders["If-None-Match"] = tag, []string{tag}
	resp, _ = apigw.Streaming(w.handler(true))(ctx, ev)
	if prelude, body := streamed(t, resp); prelude["statusCode"] != float64(304) || len(body) != 0 {
		t.Errorf("with its tag: %v, %d bytes", prelude["statusCode"], len(body))
	}
	delete(ev.Headers, "If-None-Match")
	delete(ev.MultiValueHeaders, "If-None-Match")
	ev.HTTPMethod = http.MethodHead
	resp, _ = apigw.Streaming(w.handler(true))(ctx, ev)
	if prelude, body := streamed(t, resp); prelude["statusCode"] != float64(200) || len(body) != 0 {
		t.Errorf("HEAD: %v, %d bytes", prelude["statusCode"], len(body))
	}
	// The request's own deadline keeps the stream's time and the reserve.
	var got time.Time
	probe := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		got, _ = r.Context().Deadline()
		rw.WriteHeader(http.StatusNoContent)
	})
	dl, _ := ctx.Deadline()
	if _, err := apigw.Streaming(probe)(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if want := dl.Add(-apigw.DeadlineReserve - time.Duration(apigw.StreamSeconds)*time.Second); !got.Equal(want) {
		t.Errorf("request deadline %v, want %v", got, want)
	}
	if apigw.StreamTime(apigw.MaxStreamedAnswer) > time.Duration(apigw.StreamSeconds)*time.Second {
		t.Errorf("the largest answer streams in %v, more than the %d s kept for it", apigw.StreamTime(apigw.MaxStreamedAnswer), apigw.StreamSeconds)
	}
}

func queryOf(ev events.APIGatewayProxyRequest) string {
	return url.Values(ev.MultiValueQueryStringParameters).Encode()
}
