package setup

import (
	"context"
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
	if _, err := (OpenSearch{}).Build(context.Background(), 256); err == nil || !strings.Contains(err.Error(), "URL") {
		t.Errorf("error %v, want one asking for the URL", err)
	}
	b, err := OpenSearch{URL: "http://localhost:9"}.Build(context.Background(), 256)
	if err != nil || b == nil {
		t.Fatalf("backend %v, error %v", b, err)
	}
}
