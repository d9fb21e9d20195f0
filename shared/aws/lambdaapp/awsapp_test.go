package lambdaapp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/doclib/doclib/shared/httpapi"
)

func TestSettingsErrorsSayWhatToSet(t *testing.T) {
	log := Logger(io.Discard)
	ctx := context.Background()
	t.Setenv("AWS_REGION", "us-east-1")
	for _, c := range []struct {
		env   map[string]string
		group string
		want  string
	}{
		{map[string]string{}, httpapi.GroupLibraries, EnvTable},
		{map[string]string{EnvTable: "t", EnvKeyLimit: "lots"}, httpapi.GroupLibraries, EnvKeyLimit},
		{map[string]string{EnvTable: "t", EnvIPLimit: "0"}, httpapi.GroupDocuments, EnvIPLimit},
		{map[string]string{EnvTable: "t"}, "admin", `no route group "admin"`},
		{map[string]string{EnvTable: "t"}, httpapi.GroupSearch, "--opensearch-url"},
		{map[string]string{EnvTable: "t", EnvOpenSearchURL: "https://x", EnvEmbedder: "hash", EnvEmbedDimensions: "big"}, httpapi.GroupSearch, EnvEmbedDimensions},
		{map[string]string{EnvTable: "t", EnvOpenSearchURL: "https://x", EnvEmbedder: "hash", "DOCLIB_SEARCH_WEIGHTS": "semantic=2"}, httpapi.GroupSearch, "search rules"},
	} {
		getenv := func(k string) string { return c.env[k] }
		_, err := API(ctx, c.group, getenv, log)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %s: error %v, want one naming %s", c.env, c.group, err, c.want)
		}
	}
	// Built without any request: cold starts make no network call here.
	h, err := API(ctx, httpapi.GroupLibraries, func(k string) string { return map[string]string{EnvTable: "t"}[k] }, log)
	if err != nil || h == nil {
		t.Errorf("libraries: %v", err)
	}
	if _, err := NewUsageKeys(ctx, "gold=abc"); err == nil || !strings.Contains(err.Error(), EnvUsagePlans) {
		t.Errorf("bad usage plans: %v", err)
	}
	if _, err := Authorizer(ctx, func(string) string { return "" }, log); err == nil || !strings.Contains(err.Error(), EnvTable) {
		t.Errorf("authorizer without a table: %v", err)
	}
	if _, err := Authorizer(ctx, func(k string) string { return map[string]string{EnvTable: "t"}[k] }, log); err == nil || !strings.Contains(err.Error(), EnvCustomer) {
		t.Errorf("authorizer without its customer: %v", err)
	}
	if h, err := Authorizer(ctx, func(k string) string { return map[string]string{EnvTable: "t", EnvCustomer: "acme"}[k] }, log); err != nil || h == nil {
		t.Errorf("authorizer: %v", err)
	}
}

// TestSearchFunctionStartsWithoutCalls: the search function's init makes no
// call to OpenSearch, not even to a cluster that refuses everything: what a
// first request can do lazily (the index check, opensearch.Checked) stays out
// of the cold start, and the role needs no right for it at init.
func TestSearchFunctionStartsWithoutCalls(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_REGION", "us-east-1")
	var calls atomic.Int64
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer refuse.Close()
	env := map[string]string{EnvTable: "t", EnvOpenSearchURL: refuse.URL, EnvEmbedder: "hash"}
	h, err := API(ctx, httpapi.GroupSearch, func(k string) string { return env[k] }, Logger(io.Discard))
	if err != nil || h == nil {
		t.Fatalf("init: %v", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("init made %d calls to OpenSearch, want none", n)
	}
	t.Setenv(EnvUsagePlans, "")
	ix, err := Indexer(ctx, func(k string) string { return env[k] }, Logger(io.Discard))
	if err != nil || ix == nil {
		t.Fatalf("indexer init: %v", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the indexer's init made %d calls to OpenSearch, want none", n)
	}
}
