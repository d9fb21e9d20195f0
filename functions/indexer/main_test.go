package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
		{map[string]string{settings.EnvTable: "t"}, "--opensearch-url"},
		{map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: "https://x", settings.EnvUsagePlans: "gold=abc"}, settings.EnvUsagePlans},
	} {
		_, err := newHandler(context.Background(), func(k string) string { return c.env[k] }, lambdaapp.Logger(io.Discard))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.want)
		}
	}
}

// TestStartsWithoutCalls: the indexer's init makes no call to OpenSearch; the
// index is checked, and created when missing, before the first batch writes.
func TestStartsWithoutCalls(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	var calls atomic.Int64
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer refuse.Close()
	env := map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: refuse.URL, settings.EnvEmbedder: "hash"}
	h, err := newHandler(context.Background(), func(k string) string { return env[k] }, lambdaapp.Logger(io.Discard))
	if err != nil || h == nil {
		t.Fatalf("init: %v", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the indexer's init made %d calls to OpenSearch, want none", n)
	}
}
