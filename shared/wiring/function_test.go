package wiring

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/doclib/doclib/shared/settings"
)

// TestSearchFunctionSettingsErrorsSayWhatToSet: the search and MCP
// functions read their settings here, and a wrong or missing one stops the
// start with an error naming what to set.
func TestSearchFunctionSettingsErrorsSayWhatToSet(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, settings.EnvTable},
		{map[string]string{settings.EnvTable: "t", settings.EnvKeyLimit: "lots"}, settings.EnvKeyLimit},
		{map[string]string{settings.EnvTable: "t", settings.EnvIPLimit: "-1"}, settings.EnvIPLimit},
		{map[string]string{settings.EnvTable: "t", settings.EnvResponseTransfer: "TRICKLE"}, settings.EnvResponseTransfer},
		{map[string]string{settings.EnvTable: "t"}, "--opensearch-url"},
		{map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: "https://x", settings.EnvEmbedder: "hash", settings.EnvEmbedDimensions: "big"}, settings.EnvEmbedDimensions},
		{map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: "https://x", settings.EnvEmbedder: "hash", "DOCLIB_SEARCH_WEIGHTS": "semantic=2"}, "search rules"},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "embedded"}, settings.EnvSnapshotBucket},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "embedded", settings.EnvSnapshotBucket: "b", settings.EnvSnapshotPoll: "often"}, settings.EnvSnapshotPoll},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "embedded", settings.EnvSnapshotBucket: "b", settings.EnvSearchRangeFromKB: "4MB"}, settings.EnvSearchRangeFromKB},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "embedded", settings.EnvSnapshotBucket: "b", settings.EnvSearchPrefetch: "no"}, settings.EnvSearchPrefetch},
		{map[string]string{settings.EnvTable: "t", settings.EnvSearch: "bleve"}, settings.EnvSearch},
	} {
		_, err := SearchFunction(context.Background(), func(k string) string { return c.env[k] }, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.env, err, c.want)
		}
	}
}

// TestSearchFunctionStartsWithoutCalls: on OpenSearch, the start makes no
// call to the cluster, not even to one that refuses everything: what a
// first request can do lazily (the index check, opensearch.Checked) stays
// out of the cold start, and the role needs no right for it at init.
func TestSearchFunctionStartsWithoutCalls(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	var calls atomic.Int64
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer refuse.Close()
	env := map[string]string{settings.EnvTable: "t", settings.EnvOpenSearchURL: refuse.URL, settings.EnvEmbedder: "hash"}
	s, err := SearchFunction(context.Background(), func(k string) string { return env[k] }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || s.Service == nil || s.Limiter == nil {
		t.Fatalf("init: %+v, %v", s, err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("init made %d calls to OpenSearch, want none", n)
	}
}
