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
		{map[string]string{settings.EnvTable: "t", settings.EnvKeyLimit: "lots"}, settings.EnvKeyLimit},
		{map[string]string{settings.EnvTable: "t"}, "--opensearch-url"},
		{map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: "https://x", settings.EnvEmbedder: "hash", settings.EnvEmbedDimensions: "big"}, settings.EnvEmbedDimensions},
		{map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: "https://x", settings.EnvEmbedder: "hash", "DOCLIB_SEARCH_WEIGHTS": "semantic=2"}, "search rules"},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "embedded"}, settings.EnvSnapshotBucket},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "embedded", settings.EnvSnapshotBucket: "b", settings.EnvSnapshotPoll: "often"}, settings.EnvSnapshotPoll},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "bleve"}, settings.EnvSearch},
	} {
		_, err := newHandler(context.Background(), func(k string) string { return c.env[k] }, lambdaapp.Logger(io.Discard))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.want)
		}
	}
}

// TestStartsWithoutCalls: the search function's init makes no call to
// OpenSearch, not even to a cluster that refuses everything: what a first
// request can do lazily (the index check, opensearch.Checked) stays out of the
// cold start, and the role needs no right for it at init.
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
		t.Errorf("init made %d calls to OpenSearch, want none", n)
	}
}
