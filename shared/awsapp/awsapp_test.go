package awsapp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/fakeopensearch"
	"github.com/doclib/doclib/shared/embed"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/opensearch"
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
	if _, err := usageKeys(ctx, "gold=abc"); err == nil || !strings.Contains(err.Error(), EnvUsagePlans) {
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

// TestSearchFunctionChecksTheIndex: the search function reads the index's
// _meta at cold start and refuses to start on an index of another embedder or
// mapping version, rather than compare one model's vectors with another's.
func TestSearchFunctionChecksTheIndex(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_REGION", "us-east-1")
	hashing, err := embed.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	build := func(url string) (string, error) {
		var logs strings.Builder
		env := map[string]string{EnvTable: "t", EnvOpenSearchURL: url, EnvEmbedder: "hash"}
		h, err := API(ctx, httpapi.GroupSearch, func(k string) string { return env[k] }, Logger(&logs))
		if err == nil && h == nil {
			t.Fatal("no handler and no error")
		}
		return logs.String(), err
	}
	for _, c := range []struct {
		name string
		meta map[string]any
		want string
	}{
		{"another embedder", map[string]any{"embedder": "bedrock/amazon.titan-embed-text-v2:0/1024", "schema": 1}, `holds vectors of embedder "bedrock/amazon.titan-embed-text-v2:0/1024"`},
		{"another mapping version", map[string]any{"embedder": hashing.ID(), "schema": 0}, "mapping version 0"},
		{"no _meta", nil, "mapping version 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cluster := fakeopensearch.Start(t)
			cluster.CreateIndex("doclib-documents-1", opensearch.DefaultAlias, c.meta)
			_, err := build(cluster.URL)
			if !errors.Is(err, opensearch.ErrIncompatible) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "doclib-admin reindex") {
				t.Errorf("init error %v: want one naming the mismatch (%s) and the cure", err, c.want)
			}
		})
	}
	t.Run("this embedder's index", func(t *testing.T) {
		cluster := fakeopensearch.Start(t)
		cluster.CreateIndex("doclib-documents-1", opensearch.DefaultAlias, map[string]any{"embedder": hashing.ID(), "schema": 1})
		if _, err := build(cluster.URL); err != nil {
			t.Fatal(err)
		}
		if reqs := cluster.Requests(); !slices.Equal(reqs, []string{"GET /" + opensearch.DefaultAlias + "/_mapping"}) {
			t.Errorf("requests %v: want one read of the mapping", reqs)
		}
	})
	t.Run("no index yet, read-only role", func(t *testing.T) {
		cluster := fakeopensearch.Start(t)
		readOnly := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut || r.Method == http.MethodDelete {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, `{"Message":"User: arn:aws:sts::123456789012:assumed-role/search is not authorized to perform: es:ESHttpPut"}`)
				return
			}
			cluster.ServeHTTP(w, r)
		}))
		defer readOnly.Close()
		logs, err := build(readOnly.URL)
		if err != nil {
			t.Fatalf("a search function started before the indexer created the index: %v", err)
		}
		if !strings.Contains(logs, "no index behind the alias yet") {
			t.Errorf("logs %s", logs)
		}
	})
	t.Run("mapping unreadable", func(t *testing.T) {
		down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
		}))
		defer down.Close()
		if _, err := build(down.URL); err == nil || !strings.Contains(err.Error(), "OpenSearch index") {
			t.Errorf("init error %v", err)
		}
	})
}
