// Package lambdaapp holds the few helpers doclib's Lambda functions share and
// that decide nothing about their wiring: the JSON logger, the start that
// turns a failed build into an init error, and the usage-key adapter. Each
// function's main (functions/<name>/main.go) wires its own handler from
// settings named in shared/settings.
package lambdaapp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/usageplan"
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

// Start hands h to the Lambda runtime, unless building it failed: then it
// logs err and exits, which Lambda reports as an init error.
func Start[H any](log *slog.Logger, h H, err error) {
	if err != nil {
		log.Error("init", "error", err)
		os.Exit(1)
	}
	lambda.Start(h)
}

// AuthorizerHandler is the REQUEST authorizer's Lambda handler.
type AuthorizerHandler func(context.Context, events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// StreamHandler is the indexer's Lambda handler.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

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
// for the usage plans of plans (settings.EnvUsagePlans' format; the stack's
// UsagePlans output).
func NewUsageKeys(ctx context.Context, plans string) (*UsageKeys, error) {
	p, err := usageplan.ParsePlans(plans)
	if err != nil {
		return nil, fmt.Errorf("usage keys: %s: %w", settings.EnvUsagePlans, err)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("usage keys: AWS configuration for API Gateway: %w", err)
	}
	return &UsageKeys{&usageplan.Syncer{Client: apigateway.NewFromConfig(cfg), Plans: p}}, nil
}
