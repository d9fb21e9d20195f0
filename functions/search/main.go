// Command search serves the search routes (httpapi.Routes, group "search")
// behind API Gateway: the shared handler over the table and the stack's
// search tier, OpenSearch or the embedded engine over the indexer's snapshots.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/wiring"
)

func main() {
	log := lambdaapp.Logger(nil)
	h, err := newHandler(context.Background(), os.Getenv, log)
	lambdaapp.Start(log, h, err)
}

// newHandler wires the handler from the environment the stack sets. On
// OpenSearch it makes no network call (the index is checked before the
// first search); on the embedded tier it loads the snapshot in service.
func newHandler(ctx context.Context, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := wiring.SearchFunction(ctx, getenv, log) // the table, Bedrock, the search tier
	if err != nil {
		return nil, err
	}
	return apigw.NewFunction(s.API, s.Service, s.Limiter, log), nil
}
