// Package httpapi is the read API's http.Handler: routing, the order of checks of
// docs/api.md (IP limit, key, key limit, route, parameters), parameter parsing and
// JSON encoding. The same handler serves under net/http locally and behind API
// Gateway in Lambda.
package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/service"
)

// Config are the dependencies and settings of the handler.
type Config struct {
	Service *service.Service
	// Limiter counts requests per key and per client IP. Nil disables limits.
	Limiter  doclib.Limiter
	KeyLimit int           // requests per window per key; default doclib.KeyLimit
	IPLimit  int           // requests per window per client IP; default doclib.IPLimit
	Window   time.Duration // default doclib.RateWindow
	// Logger gets the access log and internal errors, each line with the
	// request's ID as request_id (NewServer wraps its handler with
	// doclib.LogHandler). Nil discards.
	Logger *slog.Logger
	Now    func() time.Time
	// RequestID returns the ID of a request; the default makes a random one.
	// Lambda passes API Gateway's request ID so that logs line up.
	RequestID func(*http.Request) string
	// ClientIP returns the client's address for the per-IP limit; the default is
	// the host of RemoteAddr (what API Gateway's source IP becomes in Lambda).
	ClientIP func(*http.Request) string
	// Authenticate returns who a request acts for, or the error to answer
	// (401 in the spec's codes). The default checks the Authorization header's
	// bearer key with Service.Authenticate; behind API Gateway the Lambda
	// authorizer has done that, and the principal comes from its context.
	Authenticate func(*http.Request) (*doclib.Principal, error)
	// Uncompressed turns off the handler's own compression, for a gateway
	// that compresses answers itself (a buffered API Gateway integration).
	Uncompressed bool
	// MaxAnswerBytes, when above 0, is the largest body (as sent, after
	// compression) the handler answers; a larger answer is a 400 that says
	// how to ask for less. Zero is no limit (the local server). Behind API
	// Gateway it is what one streamed answer can carry in time
	// (shared/aws/apigw).
	MaxAnswerBytes int
	// MemoBytes bounds the answers kept over a snapshot store
	// (doclib.Versioned; memo.go): 0 is DefaultMemoBytes, below 0 keeps
	// none. Other stores keep none whatever it says.
	MemoBytes int
	// MCP, when set, makes POST /mcp an endpoint (MCPPath): the handler it
	// returns serves MCP's streamable HTTP there, behind the same IP limit,
	// key and key limit as every route, so that one POST counts once. It
	// is given the API's handler for the calls that request makes in
	// process: the same routes and service, acting for the request's
	// principal, counted against no limit again (mcp.go).
	MCP func(api http.Handler) http.Handler
}

type server struct {
	Config
	mux  *http.ServeMux
	memo *memo        // nil: answers are not kept
	mcp  http.Handler // nil: /mcp is no endpoint
}

// NewServer returns the API's handler.
func NewServer(cfg Config) http.Handler {
	if cfg.KeyLimit <= 0 {
		cfg.KeyLimit = doclib.KeyLimit
	}
	if cfg.IPLimit <= 0 {
		cfg.IPLimit = doclib.IPLimit
	}
	if cfg.Window <= 0 {
		cfg.Window = doclib.RateWindow
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg.Logger = doclib.Logger(cfg.Logger)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RequestID == nil {
		cfg.RequestID = randomRequestID
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = remoteHost
	}
	s := &server{Config: cfg, mux: http.NewServeMux()}
	if cfg.Service != nil {
		if _, ok := cfg.Service.Version(); ok {
			s.memo = newMemo(cfg.MemoBytes)
		}
	}
	if s.Authenticate == nil {
		s.Authenticate = s.bearerKey
	}
	if cfg.MCP != nil {
		s.mcp = cfg.MCP(inProcess(cfg))
	}
	s.routes()
	// Outermost first: every response gets an ID and a log line, a panic anywhere
	// becomes a 500, then the checks in the order of docs/api.md.
	return s.withRequest(s.recoverPanics(s.limitIP(s.authenticate(s.limitKey(s.route())))))
}

func randomRequestID(*http.Request) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

type ctxKey int

const (
	principalKey ctxKey = iota
	ipTakeKey
	keyTakeKey
	memoKey
	accessKey
)

// ipTake is what the per-IP limit took for a request, so that the per-key limit
// can give it back when it refuses the request.
type ipTake struct {
	bucket string
	at     time.Time
}

// PrincipalFrom returns the principal of an authenticated request.
func PrincipalFrom(ctx context.Context) *doclib.Principal {
	p, _ := ctx.Value(principalKey).(*doclib.Principal)
	return p
}

// RequestIDFrom returns the request's ID (doclib.RequestID).
func RequestIDFrom(ctx context.Context) string {
	return doclib.RequestID(ctx)
}
