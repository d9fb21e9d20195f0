// Command documents is the Lambda function behind API Gateway for the documents
// routes (httpapi.Routes of group "documents"): the shared handler over the
// DynamoDB table, built once per container. It links no embedder and no
// search backend: only the search function needs them.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

func main() {
	log := lambdaapp.Logger(nil)
	h, err := newHandler(context.Background(), os.Getenv, log)
	lambdaapp.Start(log, h, err)
}

// newHandler wires the handler from the environment the stack sets. It makes
// no network call.
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
	return apigw.NewFunction(api, svc, dynamo.NewLimiter(t), log), nil // streamed or buffered, by DOCLIB_RESPONSE_TRANSFER
}
