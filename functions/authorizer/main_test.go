package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/settings"
)

func TestSettingsErrorsSayWhatToSet(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	build := func(env map[string]string) (lambdaapp.AuthorizerHandler, error) {
		return newHandler(context.Background(), func(k string) string { return env[k] }, lambdaapp.Logger(io.Discard))
	}
	if _, err := build(nil); err == nil || !strings.Contains(err.Error(), settings.EnvTable) {
		t.Errorf("authorizer without a table: %v", err)
	}
	if _, err := build(map[string]string{settings.EnvTable: "t"}); err == nil || !strings.Contains(err.Error(), settings.EnvCustomer) {
		t.Errorf("authorizer without its customer: %v", err)
	}
	if h, err := build(map[string]string{settings.EnvTable: "t", settings.EnvCustomer: "acme"}); err != nil || h == nil {
		t.Errorf("authorizer: %v", err)
	}
}
