package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the streamable HTTP transport is served.
const Path = "/mcp"

const (
	// shutdownGrace bounds how long Run waits for tool calls in flight when
	// ctx ends.
	shutdownGrace = 10 * time.Second
	// sessionIdle ends an HTTP session its client forgot to close.
	sessionIdle = 30 * time.Minute
)

// Run serves the MCP server until ctx ends or, over stdio, until the client
// closes stdin. It serves over stdio (o.Stdin and o.Stdout, or the process's
// own) unless o.HTTPAddr is set, in which case it serves streamable HTTP at
// http://<HTTPAddr>/mcp; a port of 0 picks a free one, and the address
// actually bound is logged ("mcp: serving streamable HTTP", attribute url).
//
// Over stdio nothing but MCP messages is written to Stdout: diagnostics go to
// o.Logger. A ctx that ends is a normal shutdown, not an error.
func Run(ctx context.Context, o Options) error {
	if o.Client == nil && o.Unavailable == "" {
		return errors.New("mcpserver: no API client")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := newServer(o.Client, o.Version, log, o.Unavailable)
	if o.Unavailable != "" {
		log.Warn("mcp: starting without access to the API; every tool call will answer: " + o.Unavailable)
	} else {
		log.Info("mcp: starting", "version", o.Version, "api", o.Client.BaseURL())
	}
	if o.HTTPAddr != "" {
		return serveHTTP(ctx, s, o.HTTPAddr, log)
	}
	in, out := o.Stdin, o.Stdout
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	return serveStdio(ctx, s, in, out, log)
}

// serveStdio runs one session on newline-delimited JSON over in and out.
// A line that is not a JSON-RPC message is answered with an error and
// skipped (see messages), not the end of the session.
func serveStdio(ctx context.Context, s *mcp.Server, in io.Reader, out io.Writer, log *slog.Logger) error {
	// The streams stay the caller's: closing the session must not close
	// them (the SDK stops reading on Close even while a Read is blocked).
	// The end of input waits for the answers of every request read
	// (inflight.go).
	// The SDK gets tokens for the requests' ids, and the answers the
	// client's ids as sent (ids.go).
	f, x := newInflight(), newIDs()
	w := &lockedWriter{w: out, inflight: f, ids: x}
	msgs := newMessages(in, w, log)
	msgs.inflight, msgs.ids = f, x
	t := &mcp.IOTransport{Reader: io.NopCloser(msgs), Writer: nopWriteCloser{w}}
	ss, err := s.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcpserver: start the stdio session: %w", err)
	}
	log.Info("mcp: serving on stdio")
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-done
		log.Info("mcp: stopped", "reason", context.Cause(ctx))
		return nil
	case err := <-done:
		// The client closing stdin ends the session: that is how stdio
		// clients say goodbye.
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
			log.Info("mcp: the client closed the session")
			return nil
		}
		return fmt.Errorf("mcpserver: stdio session: %w", err)
	}
}

// serveHTTP serves streamable HTTP on addr until ctx ends, then shuts down
// gracefully: no new connections, tool calls in flight finish (up to
// shutdownGrace), and the long-lived event streams are ended.
func serveHTTP(ctx context.Context, s *mcp.Server, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcpserver: listen on %s: %w", addr, err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Logger: log, SessionTimeout: sessionIdle})

	// A client's standalone event stream (a GET) stays open for the whole
	// session, so http.Server.Shutdown would wait for it until its grace
	// ran out. Those requests get a context that shutdown cancels; tool
	// calls (POSTs) keep theirs and are allowed to finish.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	mux := http.NewServeMux()
	mux.Handle(Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			rctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(streams, cancel)
			defer stop()
			r = r.WithContext(rctx)
		}
		h.ServeHTTP(w, r)
	}))
	srv := &http.Server{
		// The SDK refuses requests whose Host is not the loopback name they
		// arrived on (DNS rebinding); this refuses a browser page of another
		// origin posting tool calls. Neither affects a non-browser client.
		Handler:           http.NewCrossOriginProtection().Handler(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(endStreams)

	url := "http://" + ln.Addr().String() + Path
	log.Info("mcp: serving streamable HTTP", "url", url)
	if !loopback(ln.Addr()) {
		log.Warn("mcp: listening beyond this machine: anyone who can reach " + url +
			" reads the libraries with this server's API key; prefer 127.0.0.1")
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("mcpserver: serve HTTP: %w", err)
	case <-ctx.Done():
	}

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if err != nil {
		log.Warn("mcp: calls still running after the grace period were cut off", "error", err)
		srv.Close()
	}
	<-served
	for ss := range s.Sessions() {
		ss.Close()
	}
	log.Info("mcp: stopped", "reason", context.Cause(ctx))
	return nil
}

// loopback says whether a listener is reachable from this machine only.
func loopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// nopWriteCloser leaves the caller's writer open when the session closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
