package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange sends raw bytes on a new connection to addr and reads one answer.
func rawExchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// checkErrorShape fails unless resp is status in the API's error shape, with
// code bad_request and a message holding want.
func checkErrorShape(t *testing.T, resp *http.Response, body []byte, status int, want string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q, want JSON: %s", ct, body)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	if !resp.Close {
		t.Error("the connection is not closed after the refusal")
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("body is not the error shape: %v: %s", err, body)
	}
	if e.Error.Code != "bad_request" || !strings.Contains(e.Error.Message, want) {
		t.Errorf("error %+v, want code bad_request and a message with %q", e.Error, want)
	}
}

// The requests net/http refuses before any handler runs are answered by the
// real server (run, as main starts it) in the API's error shape, not in
// net/http's plain text.
func TestRefusalsAnswerInTheErrorShape(t *testing.T) {
	base, _, stop := start(t, "--addr", "127.0.0.1:0")
	defer func() { _ = stop() }()
	addr := strings.TrimPrefix(base, "http://")
	for _, c := range []struct {
		name, raw string
		status    int
		want      string
	}{
		{"not HTTP", "GARBAGE\r\n\r\n", 400, "not a well-formed HTTP/1.1 request"},
		{"malformed header", "GET /libraries HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, "not a well-formed HTTP/1.1 request"},
		{"no Host", "GET /libraries HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"malformed Host", "GET /libraries HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "malformed Host header"},
		{"headers over the cap", "GET /libraries HTTP/1.1\r\nHost: x\r\nX-Padding: " +
			strings.Repeat("x", 2*defaultLimits.MaxHeaderBytes) + "\r\n\r\n", 431, "limit of 32 KiB"},
		{"unknown transfer coding", "GET /libraries HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Transfer-Encoding"},
		{"HTTP/3.0", "GET /libraries HTTP/3.0\r\nHost: x\r\n\r\n", 505, "HTTP version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := rawExchange(t, addr, c.raw)
			checkErrorShape(t, resp, body, c.status, c.want)
		})
	}
	// And the server still serves.
	if status, body := get(t, base+"/libraries", "bad-key"); status != http.StatusUnauthorized {
		t.Errorf("after the refusals: %d %s", status, body)
	}
}

// Only net/http's own refusals are rewritten: a handler's plain-text error,
// even on a connection that closes, goes out as the handler wrote it.
func TestHandlerAnswersAreNotRewritten(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "431 Request Header Fields Too Large", http.StatusRequestHeaderFieldsTooLarge)
	})
	s := serveWithLimits(t, testLimits, h)
	resp, body := rawExchange(t, s.addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		string(body) != "431 Request Header Fields Too Large\n" {
		t.Errorf("the handler's answer was changed: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func TestParseRefusal(t *testing.T) {
	for _, c := range []struct {
		in     string
		status int
		detail string
		ok     bool
	}{
		{"HTTP/1.1 400 Bad Request" + refusalHeaders + "400 Bad Request", 400, "Bad Request", true},
		{"HTTP/1.1 400 Bad Request: invalid header name" + refusalHeaders + "400 Bad Request: invalid header name", 400, "Bad Request: invalid header name", true},
		{"HTTP/1.1 431 Request Header Fields Too Large" + refusalHeaders + "431 Request Header Fields Too Large", 431, "Request Header Fields Too Large", true},
		{"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nDate: x\r\n\r\nno", 0, "", false},
		{"HTTP/1.1 200 OK" + refusalHeaders + "ok", 0, "", false},
		{"HTTP/1.0 400 Bad Request" + refusalHeaders, 0, "", false},
		{"HTTP/1.1 400 Bad Request\r\n", 0, "", false},
		{`{"HTTP/1.1 400"}`, 0, "", false},
		{"", 0, "", false},
	} {
		status, detail, ok := parseRefusal([]byte(c.in))
		if status != c.status || detail != c.detail || ok != c.ok {
			t.Errorf("parseRefusal(%q) = %d %q %v, want %d %q %v", c.in, status, detail, ok, c.status, c.detail, c.ok)
		}
	}
}
