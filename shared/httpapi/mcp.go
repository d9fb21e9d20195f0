package httpapi

import (
	"net/http"

	doclib "github.com/doclib/doclib/shared"
)

// MCPPath is the MCP endpoint (Config.MCP), the one path that takes POST.
// It is not in Routes: those are the read API's GET routes, each served by
// the function of its group.
const MCPPath = "/mcp"

// inProcess is the API's handler for the calls an MCP request makes: the
// routes of cfg, acting for the principal that the outer request's
// authentication put in the context. The outer request passed the IP limit
// and the key limit once; the calls it makes are not counted again, so a
// tool call costs one request of the key's limit however many API calls it
// makes. A search still spends credit, in the service, exactly as GET
// /search/documents does.
func inProcess(cfg Config) http.Handler {
	cfg.MCP = nil
	cfg.Limiter = nil
	cfg.Uncompressed = true // read at once, in this process
	if cfg.MaxAnswerBytes > 0 {
		// A tool's result holds the answer twice (structured, and as text
		// for the model), in JSON strings: a third of the outer bound.
		cfg.MaxAnswerBytes /= 3
	}
	cfg.Authenticate = func(r *http.Request) (*doclib.Principal, error) {
		if p := PrincipalFrom(r.Context()); p != nil {
			return p, nil
		}
		return nil, doclib.MissingKeyError()
	}
	// The outer request's ID: its log line and the calls' lines agree.
	cfg.RequestID = func(r *http.Request) string { return doclib.RequestID(r.Context()) }
	cfg.Logger = doclib.Logger(cfg.Logger).With("via", "mcp")
	return NewServer(cfg)
}

// post lets POST through and answers every other method with 405 in the
// API's error shape. A stateless MCP server has no event stream to open
// with GET and no session to end with DELETE (docs/mcp.md).
func post(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeErrorPlain(w, r, doclib.Errorf(doclib.EMethodNotAllowed, "%s is not allowed on %s; MCP's streamable HTTP is served statelessly here: POST each JSON-RPC message.", r.Method, MCPPath))
			return
		}
		h.ServeHTTP(w, r)
	})
}
