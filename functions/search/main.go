// Command search serves the search routes (httpapi.Routes, group "search")
// behind API Gateway: the shared handler over the table and the stack's
// search tier, OpenSearch or the embedded engine over the indexer's snapshots.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
	"github.com/doclib/doclib/shared/wiring"
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
	ss := settings.SearchFromEnv(getenv)
	if err := ss.Validate(); err != nil {
		return nil, err
	}
	t, err := dynamo.Connect(ctx, api.Table)
	if err != nil {
		return nil, err
	}
	embedder, err := wiring.Embedder(ctx, ss.Embedder) // Bedrock in the stack
	if err != nil {
		return nil, err
	}
	var backend search.Backend
	if ss.Embedded() { // DOCLIB_SEARCH=embedded: the engine over the indexer's snapshots
		var blobs *s3blobs.Blobs
		if blobs, err = s3blobs.Connect(ctx, ss.Snapshots.Bucket); err == nil {
			backend, err = wiring.SnapshotFollower(ctx, blobs, ss.Snapshots.Poll, embedder, log)
		}
	} else { // OpenSearch, its index checked before the first search
		var b *opensearch.Backend
		b, err = wiring.OpenSearch(ctx, ss.OpenSearch, embedder)
		backend = &opensearch.Checked{Backend: b}
	}
	if err != nil {
		return nil, err
	}
	searcher, err := ss.Rules.Searcher(backend, embedder)
	if err != nil {
		return nil, err
	}
	searcher.EmbedBudget = search.DefaultEmbedBudget // a slow embedding fails the search as unavailable
	svc := service.New(dynamo.NewStore(t), nil, service.WithSearch(searcher, dynamo.NewLedger(t)), service.WithLogger(log), service.WithAccountHelp(api.AccountHelp))
	return apigw.NewFunction(api, svc, dynamo.NewLimiter(t), log), nil
}
