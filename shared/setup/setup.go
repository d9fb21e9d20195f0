// Package setup builds the configured embedder, search rules and search backend
// from settings, once, for every program that needs them: the local server,
// doclib-admin and the Lambdas. Each program maps its flags or environment onto
// these structs; the choices and their errors are the same everywhere.
package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/doclib/doclib/shared/bedrock"
	"github.com/doclib/doclib/shared/embed"
	"github.com/doclib/doclib/shared/openai"
	"github.com/doclib/doclib/shared/opensearch"
	"github.com/doclib/doclib/shared/search"
)

// Embedder chooses the embedder of the meaning matches.
type Embedder struct {
	// Kind is "hash" (offline, the default), "openai" (any OpenAI-compatible
	// server) or "bedrock" (Titan Text Embeddings V2 on Amazon Bedrock).
	Kind string
	// URL, Model and APIKey are for "openai"; Model also names a Bedrock model.
	URL, Model, APIKey string
	// Dimensions asks the model for vectors of this size (bedrock: 256, 512 or
	// 1024; openai: sent as "dimensions"); 0 takes the default.
	Dimensions int
	// Region is Bedrock's (AWS_REGION when empty).
	Region string
}

// Kinds of embedder.
var EmbedderKinds = []string{"hash", "openai", "bedrock"}

// Build makes the embedder, once per process.
func (e Embedder) Build(ctx context.Context) (search.Embedder, error) {
	switch e.Kind {
	case "", "hash":
		return embed.NewHashing(0, nil)
	case "openai":
		if e.URL == "" || e.Model == "" {
			return nil, errors.New("the openai embedder needs a URL and a model, e.g. http://localhost:11434/v1 and nomic-embed-text")
		}
		return openai.New(ctx, openai.Config{BaseURL: e.URL, Model: e.Model, APIKey: e.APIKey,
			Dimensions: e.Dimensions, RequestDimensions: e.Dimensions > 0})
	case "bedrock":
		return bedrock.NewFromAWS(ctx, e.Region, bedrock.Config{Model: e.Model, Dimensions: e.Dimensions})
	}
	return nil, fmt.Errorf("the embedder is one of %s, not %q", strings.Join(EmbedderKinds, ", "), e.Kind)
}

// Rules returns the embedder's default rules with the given overrides (0 keeps
// a default), validated.
func Rules(embedderID string, semantic, recordings float64) (search.Rules, error) {
	r := search.DefaultRules(embedderID)
	if semantic != 0 {
		r.SemanticThreshold = semantic
	}
	if recordings != 0 {
		r.RecordingsThreshold = recordings
	}
	return r, r.Validate()
}

// OpenSearch says how to reach a cluster.
type OpenSearch struct {
	URL, Alias string
	// AWSService signs requests with SigV4: "es" for a managed domain, "aoss"
	// for a serverless collection; empty for a cluster with basic or no
	// authentication.
	AWSService         string
	Username, Password string
}

// Build makes the OpenSearch backend for vectors of dims dimensions.
func (o OpenSearch) Build(ctx context.Context, dims int) (*opensearch.Backend, error) {
	if o.URL == "" {
		return nil, errors.New("OpenSearch needs its URL, e.g. https://localhost:9200")
	}
	cfg := opensearch.Config{URL: o.URL, Alias: o.Alias, Dimensions: dims, Username: o.Username, Password: o.Password,
		AWSService: o.AWSService}
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
