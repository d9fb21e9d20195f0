// Package settings names doclib's settings and parses them, once, for every
// program: the environment variables (env.go), the flags that mirror them, their
// defaults and their errors. It is a leaf: it imports no backend, so that the
// CLI, the authorizer and a function that does not search link no embedder and
// no search backend by reading a setting. What a setting chooses is built where
// a program starts, in its main, with shared/wiring.
package settings

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/search"
)

// FlagSet is what both the standard library's flag.FlagSet and cobra's
// pflag.FlagSet offer, so that every program declares these settings the same
// way.
type FlagSet interface {
	StringVar(p *string, name, value, usage string)
	IntVar(p *int, name string, value int, usage string)
	Float64Var(p *float64, name string, value float64, usage string)
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
}

// envValue is key's value parsed, or the zero value when it is unset; a
// value that does not parse sets *errp (the first such error) to one that
// names key and says what it should be.
func envValue[T any](getenv func(string) string, key string, parse func(string) (T, error), want string, errp *error) T {
	var zero T
	v := getenv(key)
	if v == "" {
		return zero
	}
	x, err := parse(v)
	if err != nil {
		if *errp == nil {
			*errp = fmt.Errorf("%s=%q is not %s", key, v, want)
		}
		return zero
	}
	return x
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

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
	// Batch, Concurrency and Timeout bound the pacing of the requests
	// (embedcall.Pacer): the most texts a request (openai; Bedrock takes
	// one), the most requests at once, and the time of a query-sized
	// request, the least any request gets (openai). 0 takes the
	// embedder's default.
	Batch, Concurrency int
	Timeout            time.Duration

	envErr error
}

// Kinds of embedder.
var EmbedderKinds = []string{"hash", "openai", "bedrock"}

// Flags declares the embedder's flags, with defaults from the environment. The
// API key is read from EnvEmbedAPIKey only, never from a flag (flags show
// in process lists).
func (e *Embedder) Flags(fs FlagSet, getenv func(string) string) {
	fs.StringVar(&e.Kind, "embedder", envOr(getenv, EnvEmbedder, "hash"),
		"`NAME` of the embedder of the meaning matches: hash (offline, built in), openai (any OpenAI-compatible embeddings server) or bedrock (Titan Text Embeddings V2; AWS settings from the standard AWS variables) (env "+EnvEmbedder+")")
	fs.StringVar(&e.URL, "embed-url", getenv(EnvEmbedURL),
		"base `URL` of the OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama (env "+EnvEmbedURL+")")
	fs.StringVar(&e.Model, "embed-model", getenv(EnvEmbedModel),
		"embedding `MODEL`, e.g. nomic-embed-text; for bedrock, amazon.titan-embed-text-v2:0 when empty (env "+EnvEmbedModel+"); an API key, if any, comes from "+EnvEmbedAPIKey+" only")
	dims := 0
	if v := getenv(EnvEmbedDimensions); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			e.envErr = fmt.Errorf("%s=%q is not a whole number", EnvEmbedDimensions, v)
		}
		dims = n
	}
	fs.IntVar(&e.Dimensions, "embed-dimensions", dims,
		"ask the model for `N` dimensions (bedrock: 256, 512 or 1024; OpenAI text-embedding-3 models); 0 takes the model's default (env "+EnvEmbedDimensions+")")
	e.APIKey = getenv(EnvEmbedAPIKey)
	fs.IntVar(&e.Batch, "embed-batch", envValue(getenv, EnvEmbedBatch, strconv.Atoi, "a whole number", &e.envErr),
		"at most `N` texts in one request to the embedder (openai; bedrock sends one): a slow server gets fewer (docs/search.md); 0 takes 64 (env "+EnvEmbedBatch+")")
	fs.IntVar(&e.Concurrency, "embed-concurrency", envValue(getenv, EnvEmbedConcurrency, strconv.Atoi, "a whole number", &e.envErr),
		"at most `N` requests to the embedder at once: from one, more while answers come fast, half as many when they are slow or the server is busy; 0 takes 4 (openai) or 8 (bedrock) (env "+EnvEmbedConcurrency+")")
	fs.DurationVar(&e.Timeout, "embed-timeout", envValue(getenv, EnvEmbedTimeout, time.ParseDuration, "a duration such as 10s", &e.envErr),
		"the `TIME` of a query's request to the embedder, and the least a bulk request gets, which grows with its texts and the speed measured (openai); 0 takes 10s (env "+EnvEmbedTimeout+")")
}

// Validate checks the settings without building anything.
func (e Embedder) Validate() error {
	switch {
	case e.envErr != nil:
		return e.envErr
	case !slices.Contains(EmbedderKinds, e.Kind) && e.Kind != "":
		return fmt.Errorf("the embedder is one of %s, not %q", strings.Join(EmbedderKinds, ", "), e.Kind)
	case e.Kind == "openai" && (e.URL == "" || e.Model == ""):
		return errors.New("the openai embedder needs a URL and a model, e.g. --embed-url http://localhost:11434/v1 --embed-model nomic-embed-text")
	case e.Dimensions < 0:
		return errors.New("the embedding dimensions must be 0 (the model's default) or more")
	case e.Batch < 0 || e.Concurrency < 0 || e.Timeout < 0:
		return errors.New("--embed-batch, --embed-concurrency and --embed-timeout must be 0 (the embedder's default) or more")
	}
	return nil
}

// Rules are the configurable parts of the search rules: the thresholds and the
// weights of the signals. Zero values keep the embedder's defaults
// (search.DefaultRules), so one deployment, which has one embedder, tunes its
// own.
type Rules struct {
	SemanticThreshold, RecordingsThreshold float64
	// Weights overrides some or all weights: "lexical=0.5,fuzzy=0.4,semantic=0.3,recordings=0.2".
	Weights string
	// Feedback is "off" to rank the word signals by the query's own words
	// only, as the OpenSearch query does; "" or "on" keeps RM3 feedback
	// (embedded engine only).
	Feedback string
	// EmbedBudget is how long a search waits for its query's embedding
	// before it answers from words (search.Searcher.EmbedBudget): 0 is
	// search.DefaultEmbedBudget.
	EmbedBudget time.Duration

	envErr error
}

// Flags declares the rules' flags, with defaults from the environment.
func (r *Rules) Flags(fs FlagSet, getenv func(string) string) {
	num := func(key string) float64 {
		v := getenv(key)
		if v == "" {
			return 0
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil && r.envErr == nil {
			r.envErr = fmt.Errorf("%s=%q is not a number", key, v)
		}
		return f
	}
	fs.Float64Var(&r.SemanticThreshold, "semantic-threshold", num(EnvSemanticThreshold),
		"cosine at or above which the semantic signal fires; 0 takes the embedder's default (docs/search.md) (env "+EnvSemanticThreshold+")")
	fs.Float64Var(&r.RecordingsThreshold, "recordings-threshold", num(EnvRecordingsThreshold),
		"cosine at or above which source_recordings fires; 0 takes the embedder's default (env "+EnvRecordingsThreshold+")")
	fs.StringVar(&r.Weights, "search-weights", getenv(EnvSearchWeights),
		"`WEIGHTS` of the signals in the blended score, some or all of lexical=,fuzzy=,semantic=,recordings= (defaults 0.7, 0.65, 0.08, 0.2: docs/search.md); max(lexical, fuzzy) + semantic + recordings must be at most 1 (env "+EnvSearchWeights+")")
	fs.StringVar(&r.Feedback, "search-feedback", envOr(getenv, EnvSearchFeedback, "on"),
		"on: the embedded engine expands a query with the words of its best word matches (RM3, docs/search.md); off: the query's own words only, as on OpenSearch (env "+EnvSearchFeedback+")")
	budget := search.DefaultEmbedBudget
	if v := getenv(EnvEmbedBudget); v != "" {
		d, err := time.ParseDuration(v)
		if (err != nil || d <= 0) && r.envErr == nil {
			r.envErr = fmt.Errorf("%s=%q is not a duration above 0, e.g. 1.5s", EnvEmbedBudget, v)
		}
		budget = d
	}
	fs.DurationVar(&r.EmbedBudget, "embed-budget", budget,
		"how long a search waits for its query's embedding before it answers from the word signals alone, not billed (docs/search.md, \"When the meaning is late\") (env "+EnvEmbedBudget+")")
}

// Build returns the embedder's default rules with these overrides, validated.
func (r Rules) Build(embedderID string) (search.Rules, error) {
	out := search.DefaultRules(embedderID)
	if r.envErr != nil {
		return out, r.envErr
	}
	if r.SemanticThreshold != 0 {
		out.SemanticThreshold = r.SemanticThreshold
		out.Fixed |= search.FixedSemantic
	}
	if r.RecordingsThreshold != 0 {
		out.RecordingsThreshold = r.RecordingsThreshold
		out.Fixed |= search.FixedRecordings
	}
	switch r.Feedback {
	case "", "on":
	case "off":
		out.Feedback.Docs = 0
	default:
		return out, fmt.Errorf("search feedback: %q is neither on nor off", r.Feedback)
	}
	if r.Weights != "" {
		w := map[string]*float64{"lexical": &out.Weights.Lexical, "fuzzy": &out.Weights.Fuzzy,
			"semantic": &out.Weights.Semantic, "recordings": &out.Weights.Recordings}
		for _, part := range strings.Split(r.Weights, ",") {
			name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
			p := w[strings.TrimSpace(name)]
			f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if !ok || p == nil || err != nil {
				return out, fmt.Errorf("search weights: %q is not one of lexical=, fuzzy=, semantic=, recordings= with a number, e.g. semantic=0.3", part)
			}
			*p = f
		}
	}
	return out, out.Validate()
}

// DefaultOpenSearchAlias is the index alias that queries and the indexer use
// when none is set; a reindex builds a new index and swaps this alias to it.
const DefaultOpenSearchAlias = "doclib-documents"

// OpenSearch says how to reach a cluster.
type OpenSearch struct {
	URL, Alias string
	// AWSService signs requests with SigV4: "es" for a managed domain, "aoss"
	// for a serverless collection; empty for a cluster with basic or no
	// authentication.
	AWSService         string
	Username, Password string
}

// Flags declares the cluster's flags, with defaults from the environment; the
// basic-authentication user and password come from EnvOpenSearchUser and
// EnvOpenSearchPassword only.
func (o *OpenSearch) Flags(fs FlagSet, getenv func(string) string) {
	fs.StringVar(&o.URL, "opensearch-url", getenv(EnvOpenSearchURL),
		"`URL` of the OpenSearch cluster, e.g. https://localhost:9200 (env "+EnvOpenSearchURL+")")
	fs.StringVar(&o.Alias, "opensearch-alias", envOr(getenv, EnvOpenSearchAlias, DefaultOpenSearchAlias),
		"index alias `NAME` searched and written; a reindex swaps a new index in behind it (env "+EnvOpenSearchAlias+")")
	fs.StringVar(&o.AWSService, "opensearch-aws-service", getenv(EnvOpenSearchService),
		"sign requests with AWS SigV4 (`SERVICE`) for a managed domain (es) or a serverless collection (aoss); empty for basic or no authentication (env "+EnvOpenSearchService+")")
	o.Username, o.Password = getenv(EnvOpenSearchUser), getenv(EnvOpenSearchPassword)
}

// Validate checks the settings without building anything.
func (o OpenSearch) Validate() error {
	switch {
	case o.URL == "":
		return errors.New("OpenSearch needs its URL: give --opensearch-url, e.g. https://localhost:9200, or set " + EnvOpenSearchURL)
	case o.AWSService != "" && o.AWSService != "es" && o.AWSService != "aoss":
		return fmt.Errorf("the OpenSearch AWS service is es (a managed domain) or aoss (serverless), not %q", o.AWSService)
	}
	return nil
}

// Searcher is the one place a search.Searcher is made: over backend b, with
// e embedding the queries (cached), and the rules of e with these overrides.
// It makes no call.
func (r Rules) Searcher(b search.Backend, e search.Embedder) (*search.Searcher, error) {
	rules, err := r.Build(e.ID())
	if err != nil {
		return nil, err
	}
	if r.EmbedBudget < 0 {
		return nil, fmt.Errorf("embed budget %v: give a duration above 0, e.g. 1.5s", r.EmbedBudget)
	}
	return &search.Searcher{Backend: b, Embedder: search.Cached(e, 0), Rules: rules, EmbedBudget: r.EmbedBudget}, nil
}
