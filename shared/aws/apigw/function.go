package apigw

import (
	"log/slog"
	"time"

	doclib "github.com/doclib/doclib/shared"
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
	h := httpapi.NewServer(httpapi.Config{Service: svc, Limiter: limiter, KeyLimit: api.KeyLimit,
		IPLimit: api.IPLimit, Logger: log, RequestID: RequestID, Authenticate: Principal(time.Now, api.AccountHelp),
		Uncompressed: !api.Streaming, MaxAnswerBytes: MaxAnswerBytes(api.Streaming)})
	return Serve(h, api.Streaming)
}
