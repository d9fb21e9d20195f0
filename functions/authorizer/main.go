// Command authorizer is API Gateway's REQUEST authorizer: it checks the bearer
// key and returns the policy, the context the functions trust and the usage
// identifier of the key's usage plan.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

func main() {
	log := lambdaapp.Logger(nil)
	h, err := newHandler(context.Background(), os.Getenv, log)
	lambdaapp.Start(log, h, err)
}

// newHandler wires the authorizer from the environment the stack sets: it
// reads keys, devices and workspaces from the table, nothing else.
func newHandler(ctx context.Context, getenv func(string) string, log *slog.Logger) (lambdaapp.AuthorizerHandler, error) {
	table, err := settings.Required(getenv, settings.EnvTable, "the stack gives every function its table's name")
	if err != nil {
		return nil, err
	}
	customer, err := settings.Required(getenv, settings.EnvCustomer, "the authorizer needs the stack's customer for the usage identifiers")
	if err != nil {
		return nil, err
	}
	help, err := settings.AccountHelpFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	t, err := dynamo.Connect(ctx, table)
	if err != nil {
		return nil, err
	}
	a := &apigw.Authorizer{Service: service.New(dynamo.NewStore(t), nil, service.WithLogger(log), service.WithAccountHelp(help)), Logger: log, Customer: customer}
	return a.Handle, nil
}
