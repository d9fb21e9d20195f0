package mcpserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/shared/clients/client"
)

// Handler serves MCP's streamable HTTP for the API itself: the /mcp
// endpoint of doclib-server and of every stack (httpapi.Config.MCP). Its
// tools are the ones `doclib mcp` serves, built by the same code; their
// client calls api, the API's handler, in process, acting for the key that
// the request carried. Scope, credit and errors are therefore the API's
// own: a document outside the key's scope is not_found here as over REST,
// and a search spends credit as GET /search/documents does.
//
// The server is stateless (docs/design.md): each POST is answered on its
// own, with JSON rather than an event stream, and no session outlives it,
// so any function instance answers any request. version is reported to
// clients (the module's version when empty); log gets diagnostics.
func Handler(api http.Handler, version string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if bi, ok := debug.ReadBuildInfo(); ok && version == "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version // "" when the build recorded none: "dev"
	}
	opts := &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: log,
		// Behind API Gateway the Host is the API's own name; locally the
		// server decides where it listens, and doclib-server checks origins.
		DisableLocalhostProtection: true,
		// The front has read the message whole, within MaxBody.
		MaxRequestBodyBytes: MaxBody}
	// One server for every request: building one takes milliseconds
	// (the tools' schemas). Each request's client goes in its context.
	s := newServer(nil, version, log, "")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := client.New("http://in-process", inProcessKey,
			client.WithHTTPClient(&http.Client{Transport: &inProcess{api: api, outer: r}}),
			client.WithRetries(0))
		if err != nil { // the base URL and key are constants
			panic("mcpserver: " + err.Error())
		}
		h.ServeHTTP(w, r.WithContext(withClient(r.Context(), c)))
	})
	// A page in a browser, of another origin, cannot post tool calls; the
	// front reads and checks each message before the SDK does (front.go).
	return http.NewCrossOriginProtection().Handler(front(serve))
}

// inProcessKey is the key the in-process client sends. The API's handler
// for those calls ignores it: it acts for the principal of the outer
// request, whose key the gateway or the handler already checked.
const inProcessKey = "in-process"

// inProcess is an http.RoundTripper that serves each request with api,
// without a network: the request gets the context values of the outer /mcp
// request (its principal, its request ID, API Gateway's request context)
// and keeps its own cancellation and deadline.
type inProcess struct {
	api   http.Handler
	outer *http.Request
}

func (t *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(valuesOf{Context: req.Context(), values: t.outer.Context()})
	r.RemoteAddr = t.outer.RemoteAddr
	r.RequestURI = req.URL.RequestURI()
	w := &response{header: http.Header{}}
	t.api.ServeHTTP(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// valuesOf is a context whose values are another's: the in-process call's
// cancellation with the outer request's values.
type valuesOf struct {
	context.Context
	values context.Context
}

func (c valuesOf) Value(key any) any { return c.values.Value(key) }

// response records what a handler answers: the API's, for the in-process
// client, and the SDK's, for the front to send (front.go).
type response struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *response) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
