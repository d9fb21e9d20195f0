package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// serverLimits bound what one connection may hold of the local server. The
// API's answers are small and fast (milliseconds; a capped graph is about a
// megabyte), so the limits are tight: a client that stalls is cut off in
// seconds instead of holding a connection and its buffers for good.
type serverLimits struct {
	// ReadHeader is the time to read a request's headers; Read the time to
	// read the whole request, body included (the API reads none, but net/http
	// drains a small announced body before it answers).
	ReadHeader, Read time.Duration
	// Write runs from the end of the request's headers to the end of the
	// answer: a client that does not read its answer is dropped after it.
	// Handlers get a deadline a little before it (handlerBudget), so that a
	// slow backend still answers 503 in the API's shape.
	Write time.Duration
	// Idle is how long a kept-alive connection waits for its next request.
	Idle time.Duration
	// MaxHeaderBytes caps the request line and headers; beyond it net/http
	// answers 431 itself, which the listener rewrites into the API's error
	// shape (refusals.go).
	MaxHeaderBytes int
}

// defaultLimits are the local server's limits (docs/design.md, "The local
// server"). 32 KiB of headers hold the longest query the API accepts (q of
// 1,000 characters, percent-encoded, with every filter) with room to spare.
var defaultLimits = serverLimits{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second,
	Idle: time.Minute, MaxHeaderBytes: 32 << 10}

// handlerBudget is how long a handler may run: the write timeout less a
// reserve to write the answer (2 s, or a quarter of a short timeout).
func (l serverLimits) handlerBudget() time.Duration {
	return l.Write - min(2*time.Second, l.Write/4)
}

// httpServer is an http.Server whose Serve answers the requests net/http
// refuses itself in the API's error shape (refusals.go).
type httpServer struct {
	*http.Server
	logger *slog.Logger
}

// Serve serves connections from ln until the server is shut down.
func (s httpServer) Serve(ln net.Listener) error {
	return s.Server.Serve(refusalListener{Listener: ln, maxHeaderBytes: s.MaxHeaderBytes, logger: s.logger})
}

// newHTTPServer serves h within l.
func newHTTPServer(h http.Handler, l serverLimits, logger *slog.Logger) httpServer {
	budget := l.handlerBudget()
	return httpServer{logger: logger, Server: &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), budget)
			defer cancel()
			h.ServeHTTP(w, r.WithContext(ctx))
		}),
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.Read,
		WriteTimeout:      l.Write,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}}
}
