package apigw

import (
	"log/slog"
	"net/http"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/clients/mcpserver"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

// NewFunction is the Lambda handler of an API function (libraries, documents,
// search): the shared handler over svc, with the key and IP limits of api
// counted by limiter, the principal that the authorizer put in the request
// context, and the transfer mode the stack set beside the integration's
// ResponseTransferMode (settings.EnvResponseTransfer). Streamed answers are
// compressed here and bounded by what one stream carries in time; buffered
// ones are compressed by API Gateway.
func NewFunction(api settings.API, svc *service.Service, limiter doclib.Limiter, log *slog.Logger) any {
	return Serve(httpapi.NewServer(config(api, svc, limiter, log)), api.Streaming)
}

// NewMCPFunction is the Lambda handler of the MCP function: NewFunction's
// handler with POST /mcp (httpapi.MCPPath) served by the tools of `doclib
// mcp`, which call the API's routes in process for the key the authorizer
// let through (mcpserver.Handler). API Gateway sends it /mcp alone.
func NewMCPFunction(api settings.API, svc *service.Service, limiter doclib.Limiter, log *slog.Logger) any {
	cfg := config(api, svc, limiter, log)
	cfg.MCP = func(h http.Handler) http.Handler { return mcpserver.Handler(h, "", log) }
	return Serve(httpapi.NewServer(cfg), api.Streaming)
}

func config(api settings.API, svc *service.Service, limiter doclib.Limiter, log *slog.Logger) httpapi.Config {
	return httpapi.Config{Service: svc, Limiter: limiter, KeyLimit: api.KeyLimit,
		IPLimit: api.IPLimit, Logger: log, RequestID: RequestID, Authenticate: Principal(time.Now, api.AccountHelp),
		Uncompressed: !api.Streaming, MaxAnswerBytes: MaxAnswerBytes(api.Streaming)}
}
