package functions_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/doclib/doclib/internal/standin/fakebedrock"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
	"github.com/doclib/doclib/shared/wiring"
)

// fakeBedrockEmbedder is the embedder a reindex wires for the fake Bedrock
// (the same ID and dimensions, checked), its vectors computed in this
// process: what the fake answers over HTTP, decoded as the Bedrock client
// decodes it. Laying a million documents' index down takes 2.6 million
// embeddings; over HTTP, most of each is the round trip and the JSON of
// 1,024 numbers both ways, which change no value (a float32 printed
// shortest and parsed at 32 bits is itself). TestFakeBedrockEmbedderAnswersAsOverHTTP
// holds it to the HTTP path, bit for bit.
type fakeBedrockEmbedder struct {
	fake  *fakebedrock.Server
	id    string
	dims  int
	alloc func(dims int) []float32 // where vectors go (a vectorArena's, or the heap)
}

func newFakeBedrockEmbedder(ctx context.Context, tb testing.TB, s settings.Embedder, fake *fakebedrock.Server, alloc func(int) []float32) *fakeBedrockEmbedder {
	tb.Helper()
	wired, err := wiring.Embedder(ctx, s)
	if err != nil {
		tb.Fatal(err)
	}
	if alloc == nil {
		alloc = func(dims int) []float32 { return make([]float32, dims) }
	}
	return &fakeBedrockEmbedder{fake: fake, id: wired.ID(), dims: wired.Dimensions(), alloc: alloc}
}

func (e *fakeBedrockEmbedder) ID() string      { return e.id }
func (e *fakeBedrockEmbedder) Dimensions() int { return e.dims }

// Embed embeds texts on every core. A blank text gets a zero vector, as the
// client sends it no call; a text the client would cut to the model's limits
// is refused, since the cut is the client's and not copied here.
func (e *fakeBedrockEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	errs := make([]error, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(texts); i += workers {
				out[i], errs[i] = e.embed(texts[i])
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("fake bedrock in process: text %d: %w", i, err)
		}
	}
	return out, ctx.Err()
}

func (e *fakeBedrockEmbedder) embed(text string) ([]float32, error) {
	v := e.alloc(e.dims)
	if strings.TrimSpace(text) == "" {
		return v, nil
	}
	if utf8.RuneCountInString(text) > fakebedrock.MaxInputChars || fakebedrock.TokenCount(text) > fakebedrock.MaxInputTokens {
		return nil, fmt.Errorf("%d characters, %d tokens: over the model's limits, which the client cuts to; embed it over HTTP", utf8.RuneCountInString(text), fakebedrock.TokenCount(text))
	}
	got, err := e.fake.Embedding(text, e.dims)
	if err != nil {
		return nil, err
	}
	copy(v, got)
	// The client checks and normalises what it decoded.
	if err := search.CheckVectors([][]float32{v}, 1, e.dims); err != nil {
		return nil, err
	}
	return v, nil
}

// TestFakeBedrockEmbedderAnswersAsOverHTTP: the harness's in-process
// embedder gives the wired embedder's vectors over HTTP, bit for bit, for
// the texts of generated documents and recordings, a blank and a single
// character, with the same ID.
func TestFakeBedrockEmbedderAnswersAsOverHTTP(t *testing.T) {
	ctx := context.Background()
	fake := fakebedrock.New()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": srv.URL} {
		t.Setenv(k, v)
	}
	s := settings.SearchFromEnv(func(k string) string {
		return map[string]string{settings.EnvEmbedder: "bedrock", settings.EnvEmbedDimensions: "1024"}[k]
	}).Embedder
	overHTTP, err := wiring.Embedder(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	inProcess := newFakeBedrockEmbedder(ctx, t, s, fake, nil)
	if inProcess.ID() != overHTTP.ID() || inProcess.Dimensions() != overHTTP.Dimensions() {
		t.Fatalf("in process %s/%d, over HTTP %s/%d", inProcess.ID(), inProcess.Dimensions(), overHTTP.ID(), overHTTP.Dimensions())
	}

	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 60}))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{" ", "x"}
	for _, doc := range d.Documents {
		texts = append(texts, search.DocumentText(doc))
	}
	for _, r := range d.Recordings {
		texts = append(texts, search.RecordingText(r))
	}
	want, err := overHTTP.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := inProcess.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("text %d (%.40q): value %d is %g in process, %g over HTTP", i, texts[i], j, got[i][j], want[i][j])
			}
		}
	}
	if _, err := inProcess.Embed(ctx, []string{strings.Repeat("word ", 12_000)}); err == nil {
		t.Error("a text over the model's limits was embedded in process, where the client would cut it")
	}
}
