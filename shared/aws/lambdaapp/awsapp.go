package lambdaapp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/indexer"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

// Logger writes JSON lines to standard output, which Lambda sends to the
// function's log group.
func Logger(w io.Writer) *slog.Logger {
	if w == nil {
		w = os.Stdout
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// table connects to the table named by EnvTable.
func table(ctx context.Context, getenv func(string) string) (*dynamo.Table, error) {
	name := getenv(EnvTable)
	if name == "" {
		return nil, fmt.Errorf("awsapp: %s is not set: the stack gives every function its table's name", EnvTable)
	}
	return dynamo.Connect(ctx, name)
}

func limit(getenv func(string) string, key string, def int) (int, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("awsapp: %s=%q must be a whole number of requests per minute, 1 or more", key, v)
	}
	return n, nil
}

// searchSettings reads the embedder, OpenSearch and rules settings from the
// environment with the same declarations the programs' flags use.
func searchSettings(getenv func(string) string) (settings.Embedder, settings.OpenSearch, settings.Rules) {
	fs := flag.NewFlagSet("env", flag.ContinueOnError)
	var e settings.Embedder
	var o settings.OpenSearch
	var r settings.Rules
	e.Flags(fs, getenv) // declaring a flag stores its default: the environment's value
	o.Flags(fs, getenv)
	r.Flags(fs, getenv)
	return e, o, r
}

// searchBackend builds the embedder and the OpenSearch backend.
func searchBackend(ctx context.Context, getenv func(string) string) (search.Embedder, *opensearch.Backend, settings.Rules, error) {
	es, os, rs := searchSettings(getenv)
	if err := os.Validate(); err != nil {
		return nil, nil, rs, fmt.Errorf("awsapp: %w", err)
	}
	e, err := es.Build(ctx)
	if err != nil {
		return nil, nil, rs, fmt.Errorf("awsapp: embedder: %w", err)
	}
	b, err := os.Build(ctx, e)
	if err != nil {
		return nil, nil, rs, fmt.Errorf("awsapp: %w", err)
	}
	return e, b, rs, nil
}

// API builds the handler of one group of routes (httpapi.GroupLibraries,
// GroupDocuments or GroupSearch). Only the search group needs the embedder
// and OpenSearch; the others never build them, which keeps their cold starts
// small.
func API(ctx context.Context, group string, getenv func(string) string, log *slog.Logger) (apigw.ProxyHandler, error) {
	t, err := table(ctx, getenv)
	if err != nil {
		return nil, err
	}
	keyLimit, err := limit(getenv, EnvKeyLimit, doclib.KeyLimit)
	if err != nil {
		return nil, err
	}
	ipLimit, err := limit(getenv, EnvIPLimit, doclib.IPLimit)
	if err != nil {
		return nil, err
	}
	var opts []service.Option
	switch group {
	case httpapi.GroupSearch:
		e, b, rs, err := searchBackend(ctx, getenv)
		if err != nil {
			return nil, err
		}
		rules, err := rs.Build(e.ID())
		if err != nil {
			return nil, fmt.Errorf("awsapp: %w", err)
		}
		// No call at init: the index is checked before the first search
		// (opensearch.Checked), which is the only request that needs it.
		opts = append(opts, service.WithSearch(&search.Searcher{Backend: &opensearch.Checked{Backend: b}, Embedder: search.Cached(e, 0), Rules: rules,
			EmbedBudget: search.DefaultEmbedBudget}, dynamo.NewLedger(t)))
	case httpapi.GroupLibraries, httpapi.GroupDocuments:
	default:
		return nil, fmt.Errorf("awsapp: no route group %q", group)
	}
	opts = append(opts, service.WithLogger(log))
	svc := service.New(dynamo.NewStore(t), nil, opts...)
	h := httpapi.NewServer(httpapi.Config{Service: svc, Limiter: dynamo.NewLimiter(t), KeyLimit: keyLimit, IPLimit: ipLimit,
		Logger: log, RequestID: apigw.RequestID, Authenticate: apigw.Principal(time.Now)})
	return apigw.Handler(h), nil
}

// AuthorizerHandler is the REQUEST authorizer's Lambda handler.
type AuthorizerHandler func(context.Context, events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// Authorizer builds the REQUEST authorizer: it reads keys, devices and
// workspaces from the table, nothing else.
func Authorizer(ctx context.Context, getenv func(string) string, log *slog.Logger) (AuthorizerHandler, error) {
	t, err := table(ctx, getenv)
	if err != nil {
		return nil, err
	}
	customer := getenv(EnvCustomer)
	if customer == "" {
		return nil, fmt.Errorf("awsapp: %s is not set: the authorizer needs the stack's customer for the usage identifiers", EnvCustomer)
	}
	a := &apigw.Authorizer{Service: service.New(dynamo.NewStore(t), nil, service.WithLogger(log)), Logger: log, Customer: customer}
	return a.Handle, nil
}

// StreamHandler is the indexer's Lambda handler.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// Indexer builds the stream-fed indexer. Its init makes no network call.
// Before a batch first writes, it makes sure the index exists and was built
// for this embedder: a new stack gets an empty index that the stream fills
// as data is imported, and an index of another embedder stops the function
// (every batch fails, the alarms fire) rather than mix vectors of two
// models; doclib-admin reindex cures that. The check is repeated at most
// every indexer.DefaultCheckEvery: a reindex may swap the alias to an index
// of another embedder under it, and then its batches fail until they match
// again.
func Indexer(ctx context.Context, getenv func(string) string, log *slog.Logger) (StreamHandler, error) {
	t, err := table(ctx, getenv)
	if err != nil {
		return nil, err
	}
	e, b, _, err := searchBackend(ctx, getenv)
	if err != nil {
		return nil, err
	}
	t.ConsistentRead = true // a re-read after a stream record must see that record's write
	store := dynamo.NewStore(t)
	// Init makes no call: the index is checked (and created when missing)
	// before the first batch writes, and again every few minutes, since a
	// reindex may have swapped the alias to an index of another embedder.
	check := func(ctx context.Context) error {
		created, err := b.EnsureIndex(ctx)
		if errors.Is(err, opensearch.ErrIncompatible) {
			return fmt.Errorf("%w; run doclib-admin reindex with this function's embedder, or deploy the index's", err)
		}
		if created {
			log.Warn("indexer: the alias had gone; created an empty index behind it", "alias", b.Alias(), "embedder", e.ID())
		}
		return err
	}
	x := &indexer.Indexer{Source: store, Embedder: e, Index: b, Logger: log, CheckIndex: check}
	if plans := getenv(EnvUsagePlans); plans != "" {
		u, err := NewUsageKeys(ctx, plans)
		if err != nil {
			return nil, err
		}
		x.Usage, x.Keys = u, store
	}
	return x.Handle, nil
}

// UsageKeys registers doclib keys with API Gateway's usage plans (the
// indexer's indexer.UsageKeys), by their usage identifiers.
type UsageKeys struct{ Syncer *usageplan.Syncer }

// Put registers h in the usage plan of tier.
func (u *UsageKeys) Put(ctx context.Context, h doclib.KeyHash, tier string) error {
	return u.Syncer.Put(ctx, usageplan.Value(u.Syncer.Plans.Customer, h), tier)
}

// Delete removes h's registration.
func (u *UsageKeys) Delete(ctx context.Context, h doclib.KeyHash) error {
	return u.Syncer.Delete(ctx, usageplan.Value(u.Syncer.Plans.Customer, h))
}

// NewUsageKeys connects to API Gateway with the default AWS configuration,
// for the usage plans of plans (EnvUsagePlans' format; the stack's
// UsagePlans output).
func NewUsageKeys(ctx context.Context, plans string) (*UsageKeys, error) {
	p, err := usageplan.ParsePlans(plans)
	if err != nil {
		return nil, fmt.Errorf("awsapp: %s: %w", EnvUsagePlans, err)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("awsapp: AWS configuration for API Gateway: %w", err)
	}
	return &UsageKeys{&usageplan.Syncer{Client: apigateway.NewFromConfig(cfg), Plans: p}}, nil
}

// Builder builds a function's handler from the environment.
type Builder[H any] func(ctx context.Context, getenv func(string) string, log *slog.Logger) (H, error)

// Main is every function's main: it builds the handler once per container and
// hands it to the Lambda runtime. A failed build is logged and exits, which
// Lambda reports as an init error.
func Main[H any](build Builder[H]) {
	log := Logger(nil)
	h, err := build(context.Background(), os.Getenv, log)
	if err != nil {
		log.Error("init", "err", err)
		os.Exit(1)
	}
	lambda.Start(h)
}

// APIGroup is the Builder of one group of routes (see API).
func APIGroup(group string) Builder[apigw.ProxyHandler] {
	return func(ctx context.Context, getenv func(string) string, log *slog.Logger) (apigw.ProxyHandler, error) {
		return API(ctx, group, getenv, log)
	}
}
