package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/settings"
)

// TestWiredFromTheSettings: the search function starts from
// wiring.SearchFunction, whose tests cover each setting and the start
// without calls: a missing setting stops it with an error naming what to
// set, and a valid set gives a handler.
func TestWiredFromTheSettings(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	log := lambdaapp.Logger(io.Discard)
	if _, err := newHandler(context.Background(), func(string) string { return "" }, log); err == nil || !strings.Contains(err.Error(), settings.EnvTable) {
		t.Errorf("no settings: %v, want an error naming %s", err, settings.EnvTable)
	}
	env := map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: "https://x", settings.EnvEmbedder: "hash"}
	if h, err := newHandler(context.Background(), func(k string) string { return env[k] }, log); err != nil || h == nil {
		t.Errorf("init: %v", err)
	}
}
