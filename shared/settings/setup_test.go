package settings

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/search"
)

func TestRules(t *testing.T) {
	const titan = "bedrock/amazon.titan-embed-text-v2:0/1024"
	def, err := Rules{}.Build(titan)
	if err != nil {
		t.Fatal(err)
	}
	if def != search.DefaultRules(titan) {
		t.Errorf("no overrides: %+v", def)
	}
	o, err := Rules{SemanticThreshold: 0.6, RecordingsThreshold: 0.7, Weights: "semantic=0.1, lexical=0.6", Feedback: "off"}.Build(titan)
	if err != nil {
		t.Fatal(err)
	}
	want := def
	want.SemanticThreshold, want.RecordingsThreshold, want.Weights.Semantic, want.Weights.Lexical = 0.6, 0.7, 0.1, 0.6
	want.Feedback.Docs = 0
	// Thresholds set explicitly are marked so: a calibration leaves them.
	want.Fixed = search.FixedSemantic | search.FixedRecordings
	if o != want {
		t.Errorf("overrides: %+v, want %+v", o, want)
	}
	for _, bad := range []Rules{{SemanticThreshold: 1.5}, {Weights: "semantic=0.9"}, {Weights: "meaning=0.3"}, {Weights: "semantic"}, {Weights: "semantic=high"}, {Feedback: "no"}} {
		if _, err := bad.Build(titan); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	// From the environment (the Lambdas' configuration).
	var r Rules
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	r.Flags(fs, func(k string) string {
		return map[string]string{"DOCLIB_SEMANTIC_THRESHOLD": "0.5", "DOCLIB_SEARCH_WEIGHTS": "recordings=0.1"}[k]
	})
	if got, err := r.Build(titan); err != nil || got.SemanticThreshold != 0.5 || got.Weights.Recordings != 0.1 {
		t.Errorf("from the environment: %+v %v", got, err)
	}
	r = Rules{}
	r.Flags(flag.NewFlagSet("x", flag.ContinueOnError), func(k string) string {
		return map[string]string{"DOCLIB_RECORDINGS_THRESHOLD": "high"}[k]
	})
	if _, err := r.Build(titan); err == nil || !strings.Contains(err.Error(), "DOCLIB_RECORDINGS_THRESHOLD") {
		t.Errorf("a bad number in the environment: %v", err)
	}
}

func TestEmbedderValidate(t *testing.T) {
	if err := (Embedder{}).Validate(); err != nil {
		t.Errorf("the default embedder: %v", err)
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
		err := c.e.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.e, err, c.want)
		}
	}
}

func TestSearchValidate(t *testing.T) {
	for _, c := range []struct {
		s    Search
		want string
	}{
		{Search{}, "--opensearch-url"},
		{Search{Tier: TierOpenSearch, OpenSearch: OpenSearch{URL: "http://x", AWSService: "s3"}}, "es (a managed domain) or aoss"},
		{Search{Tier: TierEmbedded}, "--snapshot-bucket"},
		{Search{Tier: "Embedded", Snapshots: Snapshots{Bucket: "b"}}, `not "Embedded"`},
		{Search{Tier: TierEmbedded, Snapshots: Snapshots{Bucket: "b"}, Embedder: Embedder{Kind: "openai"}}, "needs a URL and a model"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "search settings: ") {
			t.Errorf("%+v: error %v, want one containing %q", c.s, err, c.want)
		}
	}
	if err := (Search{Tier: TierEmbedded, Snapshots: Snapshots{Bucket: "b"}}).Validate(); err != nil {
		t.Errorf("the embedded tier with its bucket: %v", err)
	}
	if err := (Search{OpenSearch: OpenSearch{URL: "http://x"}}).Validate(); err != nil {
		t.Errorf("OpenSearch with its URL: %v", err)
	}
}

func TestFlagsTakeTheEnvironment(t *testing.T) {
	env := map[string]string{"DOCLIB_EMBEDDER": "openai", "DOCLIB_EMBED_URL": "http://e", "DOCLIB_EMBED_MODEL": "m",
		"DOCLIB_EMBED_API_KEY": "secret", "DOCLIB_OPENSEARCH_URL": "http://o", "DOCLIB_OPENSEARCH_USER": "u",
		"DOCLIB_OPENSEARCH_PASSWORD": "p", "DOCLIB_EMBED_DIMENSIONS": "512"}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var e Embedder
	var o OpenSearch
	e.Flags(fs, func(k string) string { return env[k] })
	o.Flags(fs, func(k string) string { return env[k] })
	if err := fs.Parse([]string{"--embed-model", "n", "--opensearch-alias", "a"}); err != nil {
		t.Fatal(err)
	}
	want := Embedder{Kind: "openai", URL: "http://e", Model: "n", APIKey: "secret", Dimensions: 512}
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

func TestBadDimensionsInTheEnvironment(t *testing.T) {
	var e Embedder
	e.Flags(flag.NewFlagSet("x", flag.ContinueOnError), func(k string) string {
		return map[string]string{"DOCLIB_EMBED_DIMENSIONS": "large"}[k]
	})
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "DOCLIB_EMBED_DIMENSIONS") {
		t.Errorf("error %v", err)
	}
}

// TestEmbedderPacing: the pacing bounds come from the environment (what the
// Lambdas read), a flag overrides them, and a bad value in either is refused
// with the variable or flag named.
func TestEmbedderPacing(t *testing.T) {
	env := map[string]string{"DOCLIB_EMBED_BATCH": "16", "DOCLIB_EMBED_CONCURRENCY": "2", "DOCLIB_EMBED_TIMEOUT": "45s"}
	var e Embedder
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	e.Flags(fs, func(k string) string { return env[k] })
	if err := fs.Parse([]string{"-embed-concurrency", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Validate(); err != nil || e.Batch != 16 || e.Concurrency != 3 || e.Timeout != 45*time.Second {
		t.Errorf("batch %d, concurrency %d, timeout %s (%v); want 16 from the environment, 3 from the flag, 45s", e.Batch, e.Concurrency, e.Timeout, err)
	}
	if s := SearchFromEnv(func(k string) string { return env[k] }); s.Embedder.Batch != 16 || s.Embedder.Concurrency != 2 || s.Embedder.Timeout != 45*time.Second {
		t.Errorf("a Lambda's settings: %+v", s.Embedder)
	}
	for key, bad := range map[string]string{"DOCLIB_EMBED_BATCH": "many", "DOCLIB_EMBED_CONCURRENCY": "1.5", "DOCLIB_EMBED_TIMEOUT": "30"} {
		var e Embedder
		e.Flags(flag.NewFlagSet("x", flag.ContinueOnError), func(k string) string { return map[string]string{key: bad}[k] })
		if err := e.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: %v, want an error naming it", key, bad, err)
		}
	}
	for _, bad := range []Embedder{{Batch: -1}, {Concurrency: -1}, {Timeout: -time.Second}} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--embed-") {
			t.Errorf("%+v: %v, want an error naming the flags", bad, err)
		}
	}
}
