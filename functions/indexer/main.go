// Command indexer reads the table's DynamoDB Stream and keeps the search
// index (OpenSearch's, or the embedded tier's snapshot), and API Gateway's
// usage keys, in step with the table.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/indexer"
	"github.com/doclib/doclib/shared/settings"
	"github.com/doclib/doclib/shared/wiring"
)

func main() {
	log := lambdaapp.Logger(nil)
	h, err := newHandler(context.Background(), os.Getenv, log)
	lambdaapp.Start(log, h, err)
}

// newHandler wires the indexer from the environment the stack sets. Its init
// makes no network call. On OpenSearch, before a batch first writes, and
// again every search.IndexCheckEvery (a reindex may swap the alias to an
// index of another embedder), the index is checked and created when
// missing; on the embedded tier the snapshot writer refuses a snapshot of
// another embedder itself. Either way another embedder's index fails every
// batch, and the alarms fire, rather than mix vectors of two models (docs:
// doclib-admin reindex cures it).
func newHandler(ctx context.Context, getenv func(string) string, log *slog.Logger) (lambdaapp.StreamHandler, error) {
	table, err := settings.Required(getenv, settings.EnvTable, "the stack gives every function its table's name")
	if err != nil {
		return nil, err
	}
	ss := settings.SearchFromEnv(getenv)
	if err := ss.Validate(); err != nil {
		return nil, err
	}
	t, err := dynamo.Connect(ctx, table)
	if err != nil {
		return nil, err
	}
	t.ConsistentRead = true                            // a re-read after a stream record must see that record's write
	embedder, err := wiring.Embedder(ctx, ss.Embedder) // Bedrock in the stack
	if err != nil {
		return nil, err
	}
	store := dynamo.NewStore(t)
	x := &indexer.Indexer{Source: store, Embedder: embedder, Logger: log}
	if ss.Embedded() { // DOCLIB_SEARCH=embedded: the snapshot writer, in the stack's bucket
		var blobs *s3blobs.Blobs
		if blobs, err = s3blobs.Connect(ctx, ss.Snapshots.Bucket); err == nil {
			x.Index = snapshot.NewWriter(blobs, embedder, log)
		}
	} else { // OpenSearch, with its index check
		var b *opensearch.Backend
		b, err = wiring.OpenSearch(ctx, ss.OpenSearch, embedder)
		x.Index, x.CheckIndex = b, wiring.EnsureIndex(b, embedder, log)
	}
	if err != nil {
		return nil, err
	}
	if plans := getenv(settings.EnvUsagePlans); plans != "" {
		u, err := lambdaapp.NewUsageKeys(ctx, plans)
		if err != nil {
			return nil, err
		}
		x.Usage, x.Keys = u, store
	}
	return x.Handle, nil
}
