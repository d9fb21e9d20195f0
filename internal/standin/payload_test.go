package standin_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/data/demo"
)

// TestLambdaRefusesAnEventOver6MB: API Gateway takes a request body of up
// to 10 MB, but Lambda refuses a synchronous invoke whose event is over 6 MB
// (RequestTooLargeException), before the function runs, so before the MCP
// function's own cap can answer 413; API Gateway answers a refused invoke
// with its INTEGRATION_FAILURE response, 503 unavailable in this stack. A
// body over 10 MB is the gateway's own 413.
func TestLambdaRefusesAnEventOver6MB(t *testing.T) {
	s := running(t)
	c := clientFrom("127.0.0.44")
	post := func(size int) (*http.Response, []byte) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"` +
			strings.Repeat("a", size) + `"}}}`
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/mcp", bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+demo.Keys[0].Secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return do(t, c, req)
	}
	before := strings.Count(stackLogs.String(), "RequestTooLargeException")
	resp, body := post(7 << 20)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"unavailable"`) || !gatewayMade(resp) {
		t.Errorf("a 7 MB body to /mcp: %d %.200s; want the gateway's 503 unavailable for Lambda's refusal", resp.StatusCode, body)
	}
	if strings.Count(stackLogs.String(), "RequestTooLargeException") == before {
		t.Errorf("Lambda did not refuse the 7 MB event as too large:\n%s", tail(stackLogs.String(), 20))
	}
	resp, body = post(11 << 20)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("an 11 MB body to /mcp: %d %.200s; want API Gateway's 413", resp.StatusCode, body)
	}
}
