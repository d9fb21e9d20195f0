// Command documents is the Lambda function behind API Gateway for the documents
// routes (httpapi.Routes of group "documents"): the shared handler over the
// DynamoDB table, built once per container.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

func main() {
	log := lambdaapp.Logger(nil)
	h, err := newHandler(context.Background(), os.Getenv, log)
	lambdaapp.Start(log, h, err)
}

// newHandler wires the handler from the environment the stack sets. It makes
// no network call, and builds no embedder or OpenSearch client: only the
// search function needs them, so this cold start stays small.
func newHandler(ctx context.Context, getenv func(string) string, log *slog.Logger) (any, error) {
	api, err := settings.APIFromEnv(getenv) // the table, the per-key and per-IP limits
	if err != nil {
		return nil, err
	}
	t, err := dynamo.Connect(ctx, api.Table)
	if err != nil {
		return nil, err
	}
	svc := service.New(dynamo.NewStore(t), nil, service.WithLogger(log), service.WithAccountHelp(api.AccountHelp))
	h := httpapi.NewServer(httpapi.Config{Service: svc, Limiter: dynamo.NewLimiter(t), KeyLimit: api.KeyLimit,
		IPLimit: api.IPLimit, Logger: log, RequestID: apigw.RequestID, Authenticate: apigw.Principal(time.Now, api.AccountHelp),
		// Streamed answers are compressed here and bounded by what one stream
		// carries in time; buffered ones are compressed by API Gateway.
		Uncompressed: !api.Streaming, MaxAnswerBytes: apigw.MaxAnswerBytes(api.Streaming)})
	return apigw.Serve(h, api.Streaming), nil // by DOCLIB_RESPONSE_TRANSFER
}
