// Package openai is a search.Embedder that talks to any server speaking the
// OpenAI embeddings API (POST {BaseURL}/embeddings): OpenAI itself, Ollama,
// vLLM, LM Studio, the llama.cpp server and others.
//
// Empty texts are not sent: they get a zero vector, as search.Embedder
// promises, and because some servers (OpenAI among them) reject empty input.
package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/search"
)

// Defaults for the zero values of Config.
const (
	// DefaultBatchSize is the most texts per request: a hosted API answers
	// 64 texts about as fast as one, and a slow server gets fewer (the
	// batch carries embedcall.Target's worth of its measured throughput).
	DefaultBatchSize = 64
	// DefaultConcurrency is the most requests in flight: the pacer starts
	// at one and grows while answers come fast.
	DefaultConcurrency = 4
	// DefaultTimeout bounds a query-sized request: a query embeds in well
	// under a second even on a laptop's CPU, and a search falls back to
	// words sooner still. Bulk requests get more, as their size and the
	// measured throughput require.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxRetries is the retries of a query-sized request; bulk
	// batches are retried for embedcall.Patience.
	DefaultMaxRetries = 4
)

const (
	// baseBackoff doubles per retry: 0.5 s, 1 s, 2 s, 4 s with the default
	// four retries of a query-sized request, about 7 s in all, which rides
	// out a brief overload without holding a search request hostage for
	// long; a bulk batch goes on doubling up to maxBackoff.
	baseBackoff = 500 * time.Millisecond
	maxBackoff  = 30 * time.Second
	// maxRetryAfter bounds a server's Retry-After so that a misbehaving proxy
	// cannot park a request for an hour.
	maxRetryAfter = 30 * time.Second
	// probeText is what New embeds to learn the dimensions; any short text
	// would do.
	probeText = "dimension probe"
)

// Config says where the embeddings server is and how to talk to it. Only
// BaseURL and Model are required.
type Config struct {
	// BaseURL is the API root the /embeddings path hangs off, e.g.
	// "http://localhost:11434/v1" (Ollama) or "https://api.openai.com/v1".
	BaseURL string
	// Model is the embedding model's name as the server knows it, e.g.
	// "nomic-embed-text" or "text-embedding-3-small".
	Model string
	// APIKey is sent as a bearer token; leave it empty for local servers that
	// need none.
	APIKey string
	// Dimensions is the vector length. 0 means New learns it by embedding a
	// probe text; a non-zero value is checked against every response.
	Dimensions int
	// RequestDimensions sends Dimensions to the server as "dimensions", for
	// models that can shorten their vectors (OpenAI's text-embedding-3). It
	// needs Dimensions set.
	RequestDimensions bool
	// BatchSize is the most texts per request; 0 means DefaultBatchSize.
	// Fewer go to a server too slow to answer that many within
	// embedcall.Target (docs/search.md, "Embedders").
	BatchSize int
	// Concurrency is the most requests in flight for the embedder, over
	// all its Embed calls; 0 means DefaultConcurrency. It starts at one,
	// grows while answers come fast and halves when they come slow, time
	// out, or say the server is busy.
	Concurrency int
	// Timeout bounds each attempt of a query-sized request (at most
	// embedcall.QueryTexts texts), and is the least a bulk request gets,
	// which is given three times what its texts and those ahead of it take
	// at the measured throughput; 0 means DefaultTimeout. The context
	// bounds the whole call.
	Timeout time.Duration
	// MaxRetries is the number of retries of a query-sized request after a
	// throttled, failed or unanswered attempt; 0 means DefaultMaxRetries
	// and a negative value turns them off. Bulk batches are retried until
	// their waits add up to embedcall.Patience, whatever it says.
	MaxRetries int
	// HTTPClient, when set, replaces the client New builds, e.g. to add a
	// proxy or custom TLS roots. Its Timeout should be 0: each request's
	// time is the pacer's, and a bulk request may get minutes.
	HTTPClient *http.Client
}

// Embedder embeds texts through an OpenAI-compatible embeddings endpoint. It
// is safe for concurrent use; build it with New.
type Embedder struct {
	endpoint    string // BaseURL + "/embeddings"
	shownURL    string // BaseURL without credentials or query, for messages
	model       string
	apiKey      string
	requestDims bool
	dims        int
	id          string
	client      *http.Client
	pacer       *embedcall.Pacer
}

var _ search.Embedder = (*Embedder)(nil)

// New checks cfg and returns an Embedder. When cfg.Dimensions is 0 it embeds a
// probe text so that Dimensions is known before indexing starts; the error then
// wraps search.ErrEmbedder if the server cannot be reached.
func New(ctx context.Context, cfg Config) (*Embedder, error) {
	e, err := build(cfg)
	if err != nil {
		return nil, err
	}
	if err := e.learnDimensions(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// build validates cfg and fills in defaults without talking to the server, so
// that tests can swap sleep and random before the probe.
func build(cfg Config) (*Embedder, error) {
	endpoint, shown, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, errors.New(`openai: Config.Model is empty; set it to the embedding model's name, e.g. "nomic-embed-text" or "text-embedding-3-small"`)
	}
	switch {
	case cfg.Dimensions < 0:
		return nil, fmt.Errorf("openai: Config.Dimensions is %d; set it to the model's vector length, or to 0 to learn it", cfg.Dimensions)
	case cfg.RequestDimensions && cfg.Dimensions == 0:
		return nil, errors.New("openai: Config.RequestDimensions is set but Config.Dimensions is 0; set Dimensions to the size to ask the server for")
	case cfg.BatchSize < 0:
		return nil, fmt.Errorf("openai: Config.BatchSize is %d; set it to a positive number of texts per request, or 0 for %d", cfg.BatchSize, DefaultBatchSize)
	case cfg.Concurrency < 0:
		return nil, fmt.Errorf("openai: Config.Concurrency is %d; set it to a positive number of requests in flight, or 0 for %d", cfg.Concurrency, DefaultConcurrency)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("openai: Config.Timeout is %s; set it to a positive duration, or 0 for %s", cfg.Timeout, DefaultTimeout)
	}

	lim := embedcall.Limits{
		MaxBatch:       orDefault(cfg.BatchSize, DefaultBatchSize),
		MaxConcurrency: orDefault(cfg.Concurrency, DefaultConcurrency),
		Timeout:        cfg.Timeout,
		MaxRetries:     cfg.MaxRetries,
		BaseBackoff:    baseBackoff,
		MaxBackoff:     maxBackoff,
	}
	if lim.Timeout == 0 {
		lim.Timeout = DefaultTimeout
	}
	switch {
	case lim.MaxRetries == 0:
		lim.MaxRetries = DefaultMaxRetries
	case lim.MaxRetries < 0:
		lim.MaxRetries = 0
	}
	e := &Embedder{
		endpoint:    endpoint,
		shownURL:    shown,
		model:       model,
		apiKey:      strings.TrimSpace(cfg.APIKey),
		requestDims: cfg.RequestDimensions,
		dims:        cfg.Dimensions,
		client:      cfg.HTTPClient,
		pacer:       embedcall.NewPacer("openai", lim),
	}
	if e.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Without this, Concurrency parallel requests would keep only two
		// idle connections and re-dial (and re-handshake TLS) the rest.
		t.MaxIdleConnsPerHost = max(lim.MaxConcurrency, 2)
		e.client = &http.Client{Transport: t}
	}
	e.id = "openai/" + model
	if e.requestDims {
		e.id += fmt.Sprintf("/%d", e.dims)
	}
	return e, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// parseBaseURL returns the embeddings endpoint and a form of the base URL that
// is safe to put in error messages.
func parseBaseURL(raw string) (endpoint, shown string, err error) {
	raw = strings.TrimSpace(raw)
	const hint = "set it to the server's API root, e.g. http://localhost:11434/v1 or https://api.openai.com/v1"
	if raw == "" {
		return "", "", errors.New("openai: Config.BaseURL is empty; " + hint)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("openai: Config.BaseURL does not parse (%v); %s", err, hint)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("openai: Config.BaseURL %q is not an absolute http or https URL; %s", u.Redacted(), hint)
	}
	u.Fragment = ""
	u.RawFragment = ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	s := *u
	s.User = nil
	s.RawQuery = ""
	u.Path += "/embeddings"
	return u.String(), s.String(), nil
}

// learnDimensions embeds the probe text when the dimensions are not
// configured.
func (e *Embedder) learnDimensions(ctx context.Context) error {
	if e.dims != 0 {
		return nil
	}
	vs, err := e.pacer.Embed(ctx, []string{probeText}, embedcall.Job{Skip: func(string) bool { return false }, Send: e.post})
	if err != nil {
		return fmt.Errorf("openai: learn the dimensions of model %q: %w", e.model, err)
	}
	e.dims = len(vs[0])
	return nil
}

// Dimensions is the vector length, configured or learned by New.
func (e *Embedder) Dimensions() int { return e.dims }

// ID is "openai/<model>", plus "/<dimensions>" when the server is asked to
// shorten its vectors, since those differ from the model's full-length ones.
func (e *Embedder) ID() string { return e.id }

// Embed returns one unit-length vector per text, in order. Empty texts get a
// zero vector without a request. The others go in batches paced to the
// server (embedcall.Pacer); the first failure that retries cannot cure
// cancels the rest. Provider outages wrap search.ErrEmbedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.EmbedEach(ctx, texts, nil)
}

// EmbedEach is Embed that tells each the vectors of every batch as it is
// answered (embedcall.Streamer), so that a cache keeps them before the call
// ends and a progress line moves with them.
func (e *Embedder) EmbedEach(ctx context.Context, texts []string, each embedcall.Each) ([][]float32, error) {
	return e.pacer.Embed(ctx, texts, embedcall.Job{Dims: e.dims, Skip: func(t string) bool { return t == "" },
		Send: e.post, Each: each,
		Wrap: func(pos []int, err error) error { return fmt.Errorf("openai: embed batch of %d: %w", len(pos), err) }})
}

// Stats says what the embedder's requests did, and where their pacing
// stands.
func (e *Embedder) Stats() embedcall.Stats { return e.pacer.Stats() }

// Pacer is the embedder's pacer, for tests that stand in for its clock or
// its sleeps.
func (e *Embedder) Pacer() *embedcall.Pacer { return e.pacer }
