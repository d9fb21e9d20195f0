package wiring

import (
	"context"
	"log/slog"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

// Searching is what a function that searches serves with: the settings, the
// service over the table and the stack's search tier, and the limiter.
type Searching struct {
	API     settings.API
	Service *service.Service
	Limiter doclib.Limiter
}

// SearchFunction wires a function that searches (the search function, the
// MCP function) from the environment the stack sets: the table, Bedrock,
// and OpenSearch (its index checked before the first search, so init makes
// no call) or the embedded engine over the indexer's segments (loaded in
// service).
func SearchFunction(ctx context.Context, getenv func(string) string, log *slog.Logger) (*Searching, error) {
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
	embedder, err := Embedder(ctx, ss.Embedder) // Bedrock in the stack
	if err != nil {
		return nil, err
	}
	var backend search.Backend
	if ss.Embedded() { // DOCLIB_SEARCH=embedded: the engine over the indexer's snapshots
		var blobs *s3blobs.Blobs
		if blobs, err = s3blobs.Connect(ctx, ss.Snapshots.Bucket); err == nil {
			backend, err = SnapshotFollower(ctx, blobs, ss.Snapshots, embedder, log)
		}
	} else { // OpenSearch, its index checked before the first search
		var b *opensearch.Backend
		b, err = OpenSearch(ctx, ss.OpenSearch, embedder)
		backend = &opensearch.Checked{Backend: b}
	}
	if err != nil {
		return nil, err
	}
	searcher, err := ss.Rules.Searcher(backend, embedder)
	if err != nil {
		return nil, err
	}
	svc := service.New(dynamo.NewStore(t), nil, service.WithSearch(searcher, dynamo.NewLedger(t)), service.WithLogger(log), service.WithAccountHelp(api.AccountHelp))
	return &Searching{API: api, Service: svc, Limiter: dynamo.NewLimiter(t)}, nil
}
