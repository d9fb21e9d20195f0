package settings

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/search"
)

// Search tiers of a stack, the values of EnvSearch in the Lambda functions
// (infra/README.md, "Search tiers").
const (
	// TierOpenSearch searches an OpenSearch Service domain.
	TierOpenSearch = "opensearch"
	// TierEmbedded runs the embedded engine in the search function, over the
	// snapshot the indexer publishes in the stack's bucket.
	TierEmbedded = "embedded"
)

// Snapshots is where the embedded tier's snapshots live.
type Snapshots struct {
	// Bucket is the S3 bucket (versioning on) of the snapshots.
	Bucket string
	// Poll is how often, at most, a search looks for a newer snapshot.
	Poll time.Duration

	envErr error
}

// Flags declares the snapshots' settings, with defaults from the
// environment.
func (s *Snapshots) Flags(fs FlagSet, getenv func(string) string) {
	fs.StringVar(&s.Bucket, "snapshot-bucket", getenv(EnvSnapshotBucket),
		"S3 `BUCKET` of the embedded tier's search snapshots (the stack's SnapshotBucket output) (env "+EnvSnapshotBucket+")")
	s.Poll = snapshot.DefaultEvery
	if v := getenv(EnvSnapshotPoll); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			s.envErr = fmt.Errorf("%s=%q is not a positive duration such as 5s", EnvSnapshotPoll, v)
		} else {
			s.Poll = d
		}
	}
}

// Validate checks the settings without building anything.
func (s Snapshots) Validate() error {
	switch {
	case s.envErr != nil:
		return s.envErr
	case s.Bucket == "":
		return fmt.Errorf("the embedded search tier needs its snapshot bucket: set %s (the stack sets it) or give --snapshot-bucket", EnvSnapshotBucket)
	}
	return nil
}

// validate checks the tier and the settings it needs.
func (s Search) validate() error {
	switch s.Tier {
	case "", TierOpenSearch:
		return s.OpenSearch.Validate()
	case TierEmbedded:
		return s.Snapshots.Validate()
	}
	return fmt.Errorf("%s is %s or %s, not %q", EnvSearch, TierOpenSearch, TierEmbedded, s.Tier)
}

// embedded reports whether s is the embedded tier.
func (s Search) embedded() bool { return strings.EqualFold(s.Tier, TierEmbedded) }

// Backend builds the search function's side: the embedder of the queries
// and the backend searched. On OpenSearch it makes no call (the index is
// checked before the first search, opensearch.Checked). On the embedded
// tier it loads the snapshot in service, so that the first search finds
// the engine built; a snapshot it cannot use leaves it answering 503 until
// a good one is published (snapshot.Follower).
func (s Search) Backend(ctx context.Context, log *slog.Logger) (search.Embedder, search.Backend, error) {
	if err := s.validate(); err != nil {
		return nil, nil, fmt.Errorf("search settings: %w", err)
	}
	if !s.embedded() {
		e, b, err := s.Connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		return e, &opensearch.Checked{Backend: b}, nil
	}
	e, err := s.Embedder.Build(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("embedder: %w", err)
	}
	blobs, err := s3blobs.Connect(ctx, s.Snapshots.Bucket)
	if err != nil {
		return nil, nil, err
	}
	f := &snapshot.Follower{Blobs: blobs, Embedder: e.ID(), Dimensions: e.Dimensions(), Every: s.Snapshots.Poll, Logger: log,
		Build: func(ctx context.Context, docs []search.IndexDoc) (search.Retriever, error) {
			return localsearch.FromDocs(ctx, docs, e, localsearch.Options{})
		}}
	if err := f.Load(ctx); err != nil {
		return nil, nil, err
	}
	return e, f, nil
}

// Index builds the indexer's side: the embedder of the vectors, the index it
// writes, and the check to make before a batch embeds (nil when none is
// needed). On OpenSearch the check makes sure the alias points at an index
// of this embedder and creates it when missing. On the embedded tier the
// index is the snapshot writer, which refuses a snapshot of another embedder
// itself and publishes once per batch (search.Committer).
func (s Search) Index(ctx context.Context, log *slog.Logger) (search.Embedder, search.Index, func(context.Context) error, error) {
	if err := s.validate(); err != nil {
		return nil, nil, nil, fmt.Errorf("search settings: %w", err)
	}
	if !s.embedded() {
		e, b, err := s.Connect(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		check := func(ctx context.Context) error {
			created, err := b.EnsureIndex(ctx)
			if created {
				log.Warn("indexer: the alias had gone; created an empty index behind it", "alias", b.Alias(), "embedder", e.ID())
			}
			return err
		}
		return e, b, check, nil
	}
	e, err := s.Embedder.Build(ctx)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("embedder: %w", err)
	}
	blobs, err := s3blobs.Connect(ctx, s.Snapshots.Bucket)
	if err != nil {
		return nil, nil, nil, err
	}
	return e, snapshot.NewWriter(blobs, e, log), nil, nil
}
