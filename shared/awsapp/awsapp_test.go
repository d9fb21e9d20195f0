package awsapp

import (
	"context"
	"io"
	"strings"
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
	if _, err := usageKeys(ctx, "gold=abc"); err == nil || !strings.Contains(err.Error(), EnvUsagePlans) {
		t.Errorf("bad usage plans: %v", err)
	}
	if _, err := Authorizer(ctx, func(string) string { return "" }, log); err == nil || !strings.Contains(err.Error(), EnvTable) {
		t.Errorf("authorizer without a table: %v", err)
	}
}
