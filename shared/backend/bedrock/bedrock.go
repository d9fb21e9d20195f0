// Package bedrock is a search.Embedder on Amazon Bedrock's Titan Text
// Embeddings V2 (InvokeModel, one text per call).
//
// Titan V2 takes a single text per request, so Embed runs up to
// Config.Concurrency calls at a time: from one, growing while answers come
// fast and halving when Bedrock throttles (embedcall.Pacer). Empty (or whitespace-only) texts are not sent: they get a
// zero vector, as search.Embedder promises, because the model rejects empty
// input and a blank one carries no meaning to match.
// Throttling is retried twice over: by the AWS SDK's retryer inside each call,
// then by this package's own backoff, because Bedrock's on-demand quotas are
// low enough that a bulk index run hits them for longer than the SDK's three
// attempts ride out.
//
// Titan V2 takes up to 50,000 characters and 8,192 tokens. Texts are cut to
// the characters before they are sent (Config.MaxInputChars). The tokens
// cannot be counted here, and characters per token vary too much with the
// language and the kind of text (about 4 in English prose, far fewer in code
// or Chinese) for a character budget to stand in for them without cutting
// most texts short. So a text the model rejects for too many tokens (a
// ValidationException) is sent again, at most twice, cut shorter at a word:
// to the share of characters that its limit and count of tokens in the
// message suggest, less a tenth, or to half when the message lacks them.
package bedrock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/search"
)

// Defaults for the zero values of Config.
const (
	// DefaultModel is Titan Text Embeddings V2, the model whose request format
	// this package speaks.
	DefaultModel = "amazon.titan-embed-text-v2:0"
	// DefaultDimensions is Titan V2's full vector length; 512 and 256 trade a
	// little accuracy for smaller indexes.
	DefaultDimensions = 1024
	// DefaultConcurrency keeps a bulk Embed well inside the default on-demand
	// request quota while hiding most of the per-call latency.
	DefaultConcurrency = 8
	// DefaultMaxInputChars is Titan V2's input limit in characters. The
	// model also stops at 8,192 tokens, which English text reaches from
	// about 33,000 characters; Embed cuts such a text shorter when the
	// model says so.
	DefaultMaxInputChars = 50000
	// DefaultMaxRetries is the number of this package's own retries after the
	// SDK's have failed.
	DefaultMaxRetries = 4
	// DefaultAttemptTimeout bounds each HTTP attempt of the client NewFromAWS
	// builds, so that a dead connection is retried rather than waited on; an
	// embedding takes well under a second.
	DefaultAttemptTimeout = 30 * time.Second
)

const (
	// baseBackoff doubles per retry: 1 s, 2 s, 4 s, 8 s with the default four
	// retries (jittered down to half), on top of the SDK's own backoff, which
	// outlasts a typical per-minute throttling window without holding a search
	// request hostage for minutes.
	baseBackoff = time.Second
	maxBackoff  = 20 * time.Second
)

// validDimensions are the vector lengths Titan V2 can return.
var validDimensions = []int{256, 512, 1024}

// retryableCodes are the Bedrock errors that another attempt may cure. The
// SDK's standard retryer already retries throttling and 5xx answers;
// ModelNotReadyException (a 429) and ModelTimeoutException (a 408) it does
// not, so NewFromAWS adds them.
var retryableCodes = []string{
	"ThrottlingException",
	"ServiceUnavailableException",
	"ModelNotReadyException",
	"ModelTimeoutException",
	"InternalServerException",
}

// InvokeModelAPI is the one call the Embedder makes: a *bedrockruntime.Client
// satisfies it, and tests can pass a fake.
type InvokeModelAPI interface {
	InvokeModel(ctx context.Context, params *bedrockruntime.InvokeModelInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.InvokeModelOutput, error)
}

// Config says which model to call and how hard to push it. Only Client is
// required (NewFromAWS builds it when it is nil).
type Config struct {
	// Client makes the InvokeModel calls, normally a *bedrockruntime.Client
	// from bedrockruntime.NewFromConfig. It carries the region, the
	// credentials and the SDK's retryer.
	Client InvokeModelAPI
	// Model is a Titan Text Embeddings V2 model ID, or the ARN of an
	// inference profile or provisioned throughput for it; "" means
	// DefaultModel.
	Model string
	// Dimensions is the vector length asked of the model: 256, 512 or 1024;
	// 0 means DefaultDimensions.
	Dimensions int
	// Concurrency is the most InvokeModel calls in flight for the
	// embedder, over all its Embed calls; 0 means DefaultConcurrency. It
	// starts at one, doubles per round of fast answers and halves when
	// Bedrock throttles.
	Concurrency int
	// MaxInputChars is the length, in characters, beyond which a text is cut
	// before it is sent, preferably at a whitespace near the limit, rather
	// than rejected by the model; 0 means DefaultMaxInputChars. Characters
	// are counted as Java does (UTF-16 code units), so that a text is never
	// rejected whichever way the service counts. The model also stops at
	// 8,192 tokens, which most texts reach before 50,000 characters (English
	// at about 33,000): a text the model rejects for its tokens is sent
	// again, at most twice, cut shorter in proportion (see the package
	// documentation). Lowering MaxInputChars saves those extra calls.
	MaxInputChars int
	// MaxRetries is the number of this package's retries of a throttled or
	// failed call, after the SDK's own; 0 means DefaultMaxRetries and a
	// negative value turns them off (the SDK still retries).
	MaxRetries int
}

// Embedder embeds texts with Titan Text Embeddings V2 on Bedrock. It is safe
// for concurrent use; build it with New or NewFromAWS.
type Embedder struct {
	client        InvokeModelAPI
	model         string
	region        string // for messages; "" when the client does not say
	dims          int
	id            string
	concurrency   int
	maxInputChars int
	maxRetries    int
	pacer         *embedcall.Pacer

	// sleep and random are fields rather than calls to time and math/rand so
	// that tests can observe the backoff without waiting for it.
	sleep  func(ctx context.Context, d time.Duration) error
	random func() float64
}

var _ search.Embedder = (*Embedder)(nil)

// New checks cfg and returns an Embedder. It makes no call: a wrong model or
// missing model access shows at the first Embed, with a message saying what
// to fix.
func New(cfg Config) (*Embedder, error) {
	if cfg.Client == nil {
		return nil, errors.New("bedrock: Config.Client is nil; pass a *bedrockruntime.Client (bedrockruntime.NewFromConfig), or use NewFromAWS to build one")
	}
	e, err := build(cfg)
	if err != nil {
		return nil, err
	}
	e.setClient(cfg.Client)
	return e, nil
}

// NewFromAWS is New with the client built from the standard AWS configuration
// chain (environment, shared config and credentials files, SSO, IAM role) when
// cfg.Client is nil, so that a deployment needs no code to wire Bedrock in. An
// empty region means the chain's (AWS_REGION). It fails early when no
// credentials can be found, rather than at the first search; a Bedrock API key
// in AWS_BEARER_TOKEN_BEDROCK stands in for them. The client keeps the SDK's
// standard retryer (unless AWS_RETRY_MODE says otherwise), taught Bedrock's
// transient errors, and bounds each HTTP attempt by DefaultAttemptTimeout.
// When cfg.Client is set, region is ignored.
func NewFromAWS(ctx context.Context, region string, cfg Config) (*Embedder, error) {
	e, err := build(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Client != nil {
		e.setClient(cfg.Client)
		return e, nil
	}
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(awshttp.NewBuildableClient().
			WithTimeout(DefaultAttemptTimeout).
			WithTransportOptions(func(t *http.Transport) {
				// Without this, Concurrency parallel calls beyond the
				// default ten idle connections would re-dial and
				// re-handshake TLS.
				t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, e.concurrency)
			})),
	}
	if region = strings.TrimSpace(region); region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("bedrock: load the AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		return nil, errors.New("bedrock: no AWS region; pass one to NewFromAWS or set AWS_REGION to a region where Bedrock offers " + e.model)
	}
	// A Bedrock API key (AWS_BEARER_TOKEN_BEDROCK, which the client picks up
	// itself) replaces the credentials.
	if os.Getenv("AWS_BEARER_TOKEN_BEDROCK") == "" {
		if awsCfg.Credentials == nil {
			return nil, errors.New("bedrock: no AWS credentials provider; set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an IAM role")
		}
		if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
			return nil, fmt.Errorf("bedrock: no usable AWS credentials (%v); set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an IAM role, or set a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK", err)
		}
	}
	e.setClient(bedrockruntime.NewFromConfig(awsCfg, withRetryableCodes, func(o *bedrockruntime.Options) {
		o.HTTPClient = readWholeBody{o.HTTPClient}
	}))
	return e, nil
}

// readWholeBody reads each answer whole before the SDK sees it. The SDK closes
// the request body as soon as the client returns; when net/http's writer is
// still checking that body for bytes past its Content-Length, that close is a
// write error and net/http closes the connection under the answer being read:
// "use of closed network connection" on an HTTP 200 (aws-sdk-go-v2 issues
// 1825 and 2737). Against a local server it failed about 1 run in 10 of this
// package's tests. An answer is at most a 1,024-float vector, about 25 KB.
type readWholeBody struct {
	client interface {
		Do(*http.Request) (*http.Response, error)
	}
}

func (c readWholeBody) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.client.Do(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp, nil
}

// maxAnswerBytes bounds what readWholeBody keeps of one answer.
const maxAnswerBytes = 4 << 20

// withRetryableCodes makes the SDK's retryer retry the Bedrock errors it does
// not know to be transient.
func withRetryableCodes(o *bedrockruntime.Options) {
	o.Retryer = retry.AddWithErrorCodes(o.Retryer, retryableCodes...)
}

// build validates cfg, apart from the client, and fills in the defaults.
func build(cfg Config) (*Embedder, error) {
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		model = DefaultModel
	}
	dims := cfg.Dimensions
	if dims == 0 {
		dims = DefaultDimensions
	}
	if !slices.Contains(validDimensions, dims) {
		return nil, fmt.Errorf("bedrock: Config.Dimensions is %d; Titan Text Embeddings V2 returns 256, 512 or 1024 dimensions (0 means %d)", cfg.Dimensions, DefaultDimensions)
	}
	switch {
	case cfg.Concurrency < 0:
		return nil, fmt.Errorf("bedrock: Config.Concurrency is %d; set it to a positive number of calls in flight, or 0 for %d", cfg.Concurrency, DefaultConcurrency)
	case cfg.MaxInputChars < 0:
		return nil, fmt.Errorf("bedrock: Config.MaxInputChars is %d; set it to a positive number of characters, or 0 for %d", cfg.MaxInputChars, DefaultMaxInputChars)
	}
	e := &Embedder{
		model:         model,
		dims:          dims,
		id:            fmt.Sprintf("bedrock/%s/%d", model, dims),
		concurrency:   orDefault(cfg.Concurrency, DefaultConcurrency),
		maxInputChars: orDefault(cfg.MaxInputChars, DefaultMaxInputChars),
		maxRetries:    orDefault(cfg.MaxRetries, DefaultMaxRetries),
		sleep:         embedcall.Sleep,
		random:        rand.Float64,
	}
	e.maxRetries = max(e.maxRetries, 0)
	// One text a call, and no deadline or retry of the pacer's: the SDK's
	// client bounds each attempt, and embedOne retries with its own
	// backoff, telling the pacer when Bedrock throttles.
	e.pacer = embedcall.NewPacer("bedrock", embedcall.Limits{MaxBatch: 1, MaxConcurrency: e.concurrency})
	return e, nil
}

// setClient stores the client and, when it can tell, its region, which the
// "model not found" message names.
func (e *Embedder) setClient(c InvokeModelAPI) {
	e.client = c
	if o, ok := c.(interface{ Options() bedrockruntime.Options }); ok {
		e.region = o.Options().Region
	}
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Dimensions is the configured vector length.
func (e *Embedder) Dimensions() int { return e.dims }

// ID is "bedrock/<model>/<dimensions>": Titan V2's shortened vectors are not
// comparable with its full-length ones, so the length is part of the name.
func (e *Embedder) ID() string { return e.id }

// Embed returns one unit-length vector per text, in order. Empty and
// whitespace-only texts get a zero vector without a call. Calls run up to
// Concurrency at a time, fewer while Bedrock throttles; the first failure
// cancels the rest. Throttling and outages that outlast the retries wrap
// search.ErrEmbedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.EmbedEach(ctx, texts, nil)
}

// EmbedEach is Embed that tells each every vector as it comes
// (embedcall.Streamer), so that a cache keeps it before the call ends.
func (e *Embedder) EmbedEach(ctx context.Context, texts []string, each embedcall.Each) ([][]float32, error) {
	return e.pacer.Embed(ctx, texts, embedcall.Job{Dims: e.dims, Skip: func(t string) bool { return strings.TrimSpace(t) == "" },
		Send: func(ctx context.Context, c embedcall.Call, batch []string) ([][]float32, error) {
			v, err := e.embedOne(ctx, batch[0], c.Throttled)
			if err != nil {
				return nil, err
			}
			return [][]float32{v}, nil
		},
		Each: each,
		Wrap: func(pos []int, err error) error { return fmt.Errorf("bedrock: embed texts[%d]: %w", pos[0], err) }})
}

// Stats says what the embedder's calls did, and where their pacing stands.
func (e *Embedder) Stats() embedcall.Stats { return e.pacer.Stats() }

// Pacer is the embedder's pacer.
func (e *Embedder) Pacer() *embedcall.Pacer { return e.pacer }

// backoff is the wait before retry attempt+1: exponential, with the upper
// half jittered so that callers throttled together do not return together.
func (e *Embedder) backoff(attempt int) time.Duration {
	return embedcall.Backoff(attempt, baseBackoff, maxBackoff, e.random)
}

// Compile-time check that the SDK client fits InvokeModelAPI.
var _ InvokeModelAPI = (*bedrockruntime.Client)(nil)
