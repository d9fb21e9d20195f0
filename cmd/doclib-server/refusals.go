package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
)

// net/http refuses some requests before any handler runs: a malformed request
// line or header (400), headers over MaxHeaderBytes (431), an unknown
// Transfer-Encoding (501), an HTTP version it does not serve (505). It writes
// those answers itself, straight to the connection, in plain text
// ((*conn).serve in net/http's server.go):
//
//	HTTP/1.1 431 Request Header Fields Too Large\r\n
//	Content-Type: text/plain; charset=utf-8\r\n
//	Connection: close\r\n
//	\r\n
//	431 Request Header Fields Too Large
//
// No hook of http.Server reaches them, so the listener wraps each connection
// and rewrites exactly that answer into the API's error shape, with
// X-Request-Id, as it is written: the status is kept and the code is
// bad_request. Other approaches fall short: raising MaxHeaderBytes and
// checking the size in the handler would let every connection buffer more
// before anything refuses it and would not reach the 400s at all, and parsing
// requests ahead of net/http would mean a second HTTP parser that could
// disagree with the first.
//
// The match is strict, so that no answer of a handler is ever touched: one
// Write that starts a response whose only headers are net/http's two above.
// Every answer of a handler goes out with Date and a length or chunking, and
// the API writes no plain text. A net/http that words these answers
// differently is caught by the tests (httpserver_test.go), which read them
// off a real connection.

// refusalHeaders are the headers net/http gives the answers it writes itself.
const refusalHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// refusalListener wraps each accepted connection in a refusalConn.
type refusalListener struct {
	net.Listener
	maxHeaderBytes int
	logger         *slog.Logger
}

func (l refusalListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &refusalConn{Conn: c, maxHeaderBytes: l.maxHeaderBytes, logger: l.logger}, nil
}

// refusalConn rewrites net/http's own plain-text refusals (see above).
type refusalConn struct {
	net.Conn
	maxHeaderBytes int
	logger         *slog.Logger
}

func (c *refusalConn) Write(p []byte) (int, error) {
	status, detail, ok := parseRefusal(p)
	if !ok {
		return c.Conn.Write(p)
	}
	id := newRefusalID()
	msg := refusalMessage(status, detail, c.maxHeaderBytes)
	c.logger.Info("request refused before the handler", "status", status, "request_id", id,
		"remote", c.RemoteAddr().String(), "reason", detail)
	if _, err := c.Conn.Write(refusalAnswer(status, id, msg, time.Now())); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite keeps what net/http does after a 431 (half-close, then wait for
// the client to stop sending) working through the wrapper.
func (c *refusalConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// parseRefusal reports whether p is one of net/http's own refusals, with its
// status and the text after the status code in its status line ("Bad
// Request: missing required Host header").
func parseRefusal(p []byte) (status int, detail string, ok bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(proto)) || len(p) < len(proto)+4 || p[len(proto)+3] != ' ' {
		return 0, "", false
	}
	end := bytes.IndexByte(p, '\r')
	if end < 0 || !bytes.HasPrefix(p[end:], []byte(refusalHeaders)) {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if err != nil || status < 400 || status > 599 {
		return 0, "", false
	}
	return status, string(p[len(proto)+4 : end]), true
}

// refusalMessage is the error message for a refusal: what was wrong, and what
// to do instead.
func refusalMessage(status int, detail string, maxHeaderBytes int) string {
	switch status {
	case 431:
		return fmt.Sprintf("The request line and headers are over this server's limit of %d KiB. Send a shorter query string or fewer headers.",
			maxHeaderBytes>>10)
	case 501:
		return "The request's Transfer-Encoding is not supported. The API reads no request body: send none."
	case 505:
		return "The request's HTTP version is not supported. Send HTTP/1.1."
	}
	why := "it is not a well-formed HTTP/1.1 request (request line or headers)"
	if _, d, found := bytes.Cut([]byte(detail), []byte(": ")); found { // "Bad Request: missing required Host header"
		why = string(d)
	}
	return "The request cannot be read: " + why + ". Check what the client sends."
}

// refusalAnswer is a whole HTTP/1.1 answer in the API's error shape, which
// closes the connection as net/http's own did.
func refusalAnswer(status int, id, msg string, now time.Time) []byte {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false) // as the handler's writeErrorPlain
	_ = enc.Encode(api.ErrorBody{Error: api.ErrorDetail{Code: doclib.EBadRequest, Message: msg}})
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", status, http.StatusText(status))
	fmt.Fprintf(&b, "Content-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\n", body.Len())
	fmt.Fprintf(&b, "X-Request-Id: %s\r\nDate: %s\r\nConnection: close\r\n\r\n", id, now.UTC().Format(http.TimeFormat))
	b.Write(body.Bytes())
	return b.Bytes()
}

// newRefusalID is a request ID like the handler's (16 random bytes in hex).
func newRefusalID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
