// Command search serves the search routes (httpapi.Routes, group "search")
// behind API Gateway: the shared handler over the table and the stack's
// search tier, OpenSearch or the embedded engine over the indexer's snapshots.
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
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

func main() {
	log := lambdaapp.Logger(nil)
	h, err := newHandler(context.Background(), os.Getenv, log)
	lambdaapp.Start(log, h, err)
}

// newHandler wires the handler from the environment the stack sets. On
// OpenSearch it makes no network call (the index is checked before the
// first search); on the embedded tier it loads the snapshot in service.
func newHandler(ctx context.Context, getenv func(string) string, log *slog.Logger) (any, error) {
	api, err := settings.APIFromEnv(getenv) // the table, the per-key and per-IP limits
	if err != nil {
		return nil, err
	}
	t, err := dynamo.Connect(ctx, api.Table)
	if err != nil {
		return nil, err
	}
	ss := settings.SearchFromEnv(getenv)
	embedder, backend, err := ss.Backend(ctx, log) // by DOCLIB_SEARCH: OpenSearch, or the snapshots
	if err != nil {
		return nil, err
	}
	searcher, err := ss.Rules.Searcher(backend, embedder)
	if err != nil {
		return nil, err
	}
	searcher.EmbedBudget = search.DefaultEmbedBudget // a slow embedding fails the search as unavailable
	svc := service.New(dynamo.NewStore(t), nil, service.WithSearch(searcher, dynamo.NewLedger(t)), service.WithLogger(log), service.WithAccountHelp(api.AccountHelp))
	h := httpapi.NewServer(httpapi.Config{Service: svc, Limiter: dynamo.NewLimiter(t), KeyLimit: api.KeyLimit,
		IPLimit: api.IPLimit, Logger: log, RequestID: apigw.RequestID, Authenticate: apigw.Principal(time.Now, api.AccountHelp),
		// Streamed answers are compressed here and bounded by what one stream
		// carries in time; buffered ones are compressed by API Gateway.
		Uncompressed: !api.Streaming, MaxAnswerBytes: apigw.MaxAnswerBytes(api.Streaming)})
	return apigw.Serve(h, api.Streaming), nil // by DOCLIB_RESPONSE_TRANSFER
}
