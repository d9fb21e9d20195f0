package setup

import (
	"context"
	"flag"
	"strings"
	"testing"
)

func TestEmbedderBuild(t *testing.T) {
	ctx := context.Background()
	e, err := Embedder{}.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.ID(), "hash") {
		t.Errorf("default embedder is %q, want the offline hashing one", e.ID())
	}
	for _, c := range []struct {
		e    Embedder
		want string
	}{
		{Embedder{Kind: "word2vec"}, `not "word2vec"`},
		{Embedder{Kind: "openai", Model: "m"}, "needs a URL and a model"},
		{Embedder{Kind: "openai", URL: "http://x"}, "needs a URL and a model"},
		{Embedder{Kind: "hash", Dimensions: -1}, "0 (the model's default) or more"},
	} {
		_, err := c.e.Build(ctx)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.e, err, c.want)
		}
	}
}

func TestRules(t *testing.T) {
	r, err := Rules("bedrock/amazon.titan-embed-text-v2/1024", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Rules("bedrock/amazon.titan-embed-text-v2/1024", 0.6, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	if o.SemanticThreshold != 0.6 || o.RecordingsThreshold != 0.7 {
		t.Errorf("overrides not applied: %+v", o)
	}
	if r.SemanticThreshold == 0.6 {
		t.Errorf("defaults changed by an override")
	}
	if _, err := Rules("hash", 1.5, 0); err == nil {
		t.Error("a threshold above 1 was accepted")
	}
}

func TestOpenSearchNeedsURL(t *testing.T) {
	e, err := Embedder{}.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (OpenSearch{}).Build(context.Background(), e); err == nil || !strings.Contains(err.Error(), "--opensearch-url") {
		t.Errorf("error %v, want one asking for the URL", err)
	}
	if err := (OpenSearch{URL: "http://x", AWSService: "s3"}).Validate(); err == nil {
		t.Error("AWS service s3 accepted")
	}
	b, err := OpenSearch{URL: "http://localhost:9"}.Build(context.Background(), e)
	if err != nil || b == nil {
		t.Fatalf("backend %v, error %v", b, err)
	}
}

func TestFlagsTakeTheEnvironment(t *testing.T) {
	env := map[string]string{"DOCLIB_EMBEDDER": "openai", "DOCLIB_EMBED_URL": "http://e", "DOCLIB_EMBED_MODEL": "m",
		"DOCLIB_EMBED_API_KEY": "secret", "DOCLIB_OPENSEARCH_URL": "http://o", "DOCLIB_OPENSEARCH_USER": "u",
		"DOCLIB_OPENSEARCH_PASSWORD": "p"}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var e Embedder
	var o OpenSearch
	e.Flags(fs, func(k string) string { return env[k] })
	o.Flags(fs, func(k string) string { return env[k] })
	if err := fs.Parse([]string{"--embed-model", "n", "--opensearch-alias", "a"}); err != nil {
		t.Fatal(err)
	}
	want := Embedder{Kind: "openai", URL: "http://e", Model: "n", APIKey: "secret"}
	if e != want {
		t.Errorf("embedder %+v, want %+v", e, want)
	}
	if o != (OpenSearch{URL: "http://o", Alias: "a", Username: "u", Password: "p"}) {
		t.Errorf("opensearch %+v", o)
	}
	if fs.Lookup("embed-api-key") != nil || fs.Lookup("opensearch-password") != nil {
		t.Error("a secret is a flag")
	}
}
