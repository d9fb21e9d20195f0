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
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, settings.EnvTable},
		{map[string]string{settings.EnvTable: "t", settings.EnvKeyLimit: "lots"}, settings.EnvKeyLimit},
		{map[string]string{settings.EnvTable: "t", settings.EnvIPLimit: "0"}, settings.EnvIPLimit},
	} {
		_, err := newHandler(context.Background(), func(k string) string { return c.env[k] }, lambdaapp.Logger(io.Discard))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.want)
		}
	}
	// Built without any request: cold starts make no network call here.
	env := map[string]string{settings.EnvTable: "t"}
	if h, err := newHandler(context.Background(), func(k string) string { return env[k] }, lambdaapp.Logger(io.Discard)); err != nil || h == nil {
		t.Errorf("init: %v", err)
	}
}
