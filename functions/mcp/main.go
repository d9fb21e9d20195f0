// Command mcp serves POST /mcp behind API Gateway: MCP's streamable HTTP,
// stateless, with the tools of `doclib mcp` calling the API's handler in
// process (shared/clients/mcpserver.Handler). It searches, so it is wired
// as the search function is: the table, Bedrock and the stack's search tier.
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

// newHandler wires the handler from the environment the stack sets, as the
// search function's is (no network call on OpenSearch; the embedded tier's
// segments are loaded in service).
func newHandler(ctx context.Context, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := wiring.SearchFunction(ctx, getenv, log) // the table, Bedrock, the search tier
	if err != nil {
		return nil, err
	}
	return apigw.NewMCPFunction(s.API, s.Service, s.Limiter, log), nil
}
