package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// testLimits are short limits, so that each case takes a fraction of a
// second; the write timeout outlasts the read timeout, as in defaultLimits.
var testLimits = serverLimits{ReadHeader: 300 * time.Millisecond, Read: 400 * time.Millisecond,
	Write: 800 * time.Millisecond, Idle: time.Second, MaxHeaderBytes: 4 << 10}

// slack is what a busy machine may add to a timeout.
const slack = 1500 * time.Millisecond

type limitsServer struct {
	addr   string
	closed chan time.Time // when each connection closed
}

// serveWithLimits serves h under l on a real listener, with the API's handler
// when h is nil.
func serveWithLimits(t *testing.T, l serverLimits, h http.Handler) *limitsServer {
	t.Helper()
	if h == nil {
		d, err := dataset.Validate(fixture.File())
		if err != nil {
			t.Fatal(err)
		}
		h = httpapi.NewServer(httpapi.Config{Service: service.New(memory.New(d), nil)})
	}
	srv := newHTTPServer(h, l, slog.New(slog.DiscardHandler))
	s := &limitsServer{closed: make(chan time.Time, 16)}
	srv.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed || st == http.StateHijacked {
			s.closed <- time.Now()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

func (s *limitsServer) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin fails unless the server closed a connection by start+d.
func (s *limitsServer) closedWithin(t *testing.T, start time.Time, d time.Duration) time.Duration {
	t.Helper()
	select {
	case at := <-s.closed:
		return at.Sub(start)
	case <-time.After(time.Until(start.Add(d))):
		t.Fatalf("the server still holds the connection after %s", d)
		return 0
	}
}

// A request that announces a body it never sends is answered and its
// connection closed once the read timeout runs out, not held forever.
func TestStalledBodyIsClosedAfterTheReadTimeout(t *testing.T) {
	s := serveWithLimits(t, testLimits, nil)
	c := s.dial(t)
	start := time.Now()
	if _, err := io.WriteString(c, "GET /libraries HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+fixture.KeyFull+
		"\r\nContent-Length: 100\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	took := s.closedWithin(t, start, testLimits.Read+slack)
	if took < testLimits.Read/2 {
		t.Errorf("closed after %s, before the read timeout of %s", took, testLimits.Read)
	}
	_ = c.SetReadDeadline(time.Now().Add(slack))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer before the close: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("answer %d (close %v); want 200 and Connection: close", resp.StatusCode, resp.Close)
	}
}

// A client that stops after part of its headers is dropped after the header
// timeout.
func TestStalledHeadersAreClosedAfterTheHeaderTimeout(t *testing.T) {
	s := serveWithLimits(t, testLimits, nil)
	c := s.dial(t)
	start := time.Now()
	if _, err := io.WriteString(c, "GET /libraries HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	s.closedWithin(t, start, testLimits.ReadHeader+slack)
}

// A client that never reads a large answer holds the connection no longer
// than the write timeout, and the handler writing it returns.
func TestSlowReaderIsDroppedAfterTheWriteTimeout(t *testing.T) {
	wrote := make(chan error, 1)
	big := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 64<<10))
		for i := 0; i < 1024; i++ { // 64 MiB: far more than the sockets buffer
			if _, err := w.Write(chunk); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	})
	s := serveWithLimits(t, testLimits, big)
	c := s.dial(t)
	_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	start := time.Now()
	if _, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	s.closedWithin(t, start, testLimits.Write+slack)
	select {
	case err := <-wrote:
		if err == nil {
			t.Error("the whole answer was written to a client that reads nothing")
		}
	case <-time.After(slack):
		t.Error("the handler is still writing after the connection closed")
	}
}

// Headers over the cap get a 431 in the API's error shape (net/http refuses
// them before any handler runs; refusals.go rewrites its answer). Headers
// under it are served.
func TestOversizedHeadersGet431(t *testing.T) {
	s := serveWithLimits(t, testLimits, nil)
	for _, c := range []struct {
		name   string
		header string
		status int
	}{
		{"over the cap", strings.Repeat("x", 3*testLimits.MaxHeaderBytes), http.StatusRequestHeaderFieldsTooLarge},
		{"under the cap", strings.Repeat("x", testLimits.MaxHeaderBytes/2), http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+s.addr+"/libraries", nil)
			req.Header.Set("Authorization", "Bearer "+fixture.KeyFull)
			req.Header.Set("X-Padding", c.header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if c.status == http.StatusRequestHeaderFieldsTooLarge {
				checkErrorShape(t, resp, body, c.status, "limit of 4 KiB")
			} else if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
		})
	}
}

// The default cap holds the longest query the API takes: q of 1,000
// three-byte characters, percent-encoded, a 512-character search and
// filters.
func TestDefaultHeaderCapHoldsTheLongestQuery(t *testing.T) {
	s := serveWithLimits(t, defaultLimits, nil)
	q := strings.Repeat("%E2%82%AC", 1000)
	target := "/libraries/lib_a1/documents?search=" + strings.Repeat("%E2%82%AC", 512) + "&category=" + q + "&tag=" + q[:9*200]
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.addr+target, nil)
	req.Header.Set("Authorization", "Bearer "+fixture.KeyFull)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a %d-byte request line: %d", len(target), resp.StatusCode)
	}
}

// A handler's context ends before the write timeout, so a backend that hangs
// still gets an answer written in the API's shape.
func TestHandlerDeadlineComesBeforeTheWriteTimeout(t *testing.T) {
	got := make(chan time.Duration, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dl, ok := r.Context().Deadline()
		if !ok {
			got <- 0
			return
		}
		got <- time.Until(dl)
		<-r.Context().Done()
		if r.Context().Err() != context.DeadlineExceeded {
			t.Errorf("context ended with %v", r.Context().Err())
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	s := serveWithLimits(t, testLimits, h)
	resp, err := http.Get("http://" + s.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if left := <-got; left <= 0 || left >= testLimits.Write {
		t.Errorf("handler deadline in %s; want one before the write timeout of %s", left, testLimits.Write)
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("status %d: the answer was not written before the write timeout", resp.StatusCode)
	}
}

// The defaults set every limit, and a request's whole read ends before its
// answer's write deadline, so that a stalled body still gets its answer.
func TestDefaultLimits(t *testing.T) {
	l := defaultLimits
	if l.ReadHeader <= 0 || l.Read <= 0 || l.Write <= 0 || l.Idle <= 0 || l.MaxHeaderBytes <= 0 {
		t.Fatalf("a limit is unset: %+v", l)
	}
	if l.ReadHeader > l.Read || l.Read >= l.Write || l.handlerBudget() >= l.Write || l.handlerBudget() <= 0 {
		t.Errorf("limits out of order: %+v, handler budget %s", l, l.handlerBudget())
	}
}
