// Package wiring builds what shared/settings chooses: the embedder, the
// OpenSearch backend and the embedded tier's snapshot follower. A
// program calls it where it starts, in its main, so that each main shows the
// backends it runs and a function that does not search (the authorizer, the
// libraries and documents functions, the CLI) links none of their clients.
// Only mains import it; internal/checks/layout checks.
package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/doclib/doclib/shared/backend/bedrock"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/backend/openai"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// Embedder makes the embedder of e, once per process: the offline hashing one
// (the default), an OpenAI-compatible server's, or Bedrock's.
func Embedder(ctx context.Context, e settings.Embedder) (search.Embedder, error) {
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	var out search.Embedder
	var err error
	switch e.Kind {
	case "openai":
		out, err = openai.New(ctx, openai.Config{BaseURL: e.URL, Model: e.Model, APIKey: e.APIKey,
			Dimensions: e.Dimensions, RequestDimensions: e.Dimensions > 0,
			BatchSize: e.Batch, Concurrency: e.Concurrency, Timeout: e.Timeout})
	case "bedrock":
		out, err = bedrock.NewFromAWS(ctx, e.Region, bedrock.Config{Model: e.Model, Dimensions: e.Dimensions,
			Concurrency: e.Concurrency})
	default:
		out, err = offline.NewHashing(0, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	return out, nil
}

// OpenSearch makes the backend of cluster o for the vectors of e. It makes no
// call to the cluster: a cold start pays only for what its first request
// needs.
func OpenSearch(ctx context.Context, o settings.OpenSearch, e search.Embedder) (*opensearch.Backend, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("search settings: %w", err)
	}
	cfg := opensearch.Config{URL: o.URL, Alias: o.Alias, Dimensions: e.Dimensions(), Embedder: e.ID(),
		Username: o.Username, Password: o.Password, AWSService: o.AWSService}
	if o.AWSService != "" {
		ac, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("AWS configuration for signing OpenSearch requests: %w", err)
		}
		if ac.Region == "" {
			return nil, errors.New("signing OpenSearch requests needs AWS_REGION")
		}
		cfg.AWS = &ac
	}
	return opensearch.New(cfg)
}

// EnsureIndex is the indexer's check on OpenSearch, made before a batch
// first writes and again every search.IndexCheckEvery: the alias points at
// an index of this embedder, and an empty one is created when it has gone.
func EnsureIndex(b *opensearch.Backend, e search.Embedder, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		created, err := b.EnsureIndex(ctx)
		if created {
			log.Warn("indexer: the alias had gone; created an empty index behind it", "alias", b.Alias(), "embedder", e.ID())
		}
		return err
	}
}

// SnapshotFollower is the search function's side of the embedded tier: the
// engine over the segments the manifest in blobs (the stack's bucket,
// s3blobs.Connect) names, looked for at most every s.Poll and read now (the
// hot parts of the large ones: the rest is read by range), so that the
// first search finds them. What it keeps of the cold parts is bounded by
// s.CacheMB, or by the function's memory, s.MemoryMB; which segments it
// opens by range, and whether it prefetches their cold parts, are
// s.ReadWholeBelow and s.NoPrefetch. An index it cannot
// use leaves it answering 503 until a good one is published
// (snapshot.Follower). The indexer's side is snapshot.NewWriter.
func SnapshotFollower(ctx context.Context, blobs snapshot.Blobs, s settings.Snapshots, e search.Embedder, log *slog.Logger) (*snapshot.Follower, error) {
	if limit, ok := memoryLimit(s.MemoryMB, s.GoMemLimit); ok {
		debug.SetMemoryLimit(limit)
	}
	f := &snapshot.Follower{Blobs: blobs, Embedder: e, Every: s.Poll, Logger: log,
		CacheBytes: int64(s.CacheMB) << 20, MemoryBytes: int64(s.MemoryMB) << 20,
		ReadWholeBelow: s.ReadWholeBelow, NoPrefetch: s.NoPrefetch, GCHeadroom: gcHeadroom(s.GOGC)}
	if err := f.Load(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// gcHeadroom is the follower's GCHeadroom: snapshot.DefaultGCHeadroom,
// none when GOGC (goGC) sets the collector's percentage already.
func gcHeadroom(goGC string) int64 {
	if goGC != "" {
		return 0
	}
	return snapshot.DefaultGCHeadroom
}

// memoryLimit is the Go memory limit the search function sets, of a
// function of memoryMB (Lambda's AWS_LAMBDA_FUNCTION_MEMORY_SIZE): nine
// tenths of it, so that the collector works harder as the heap nears the
// function's memory instead of letting it grow to twice what it holds
// (Lambda ends an instance that passes its memory), and the cache of the
// index's cold parts may hold more (snapshot.Follower). None outside Lambda
// (memoryMB 0), nor when GOMEMLIMIT (goMemLimit) sets one already.
func memoryLimit(memoryMB int, goMemLimit string) (int64, bool) {
	if memoryMB <= 0 || goMemLimit != "" {
		return 0, false
	}
	return int64(memoryMB) << 20 / 10 * 9, true
}
