package embedmodel_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedmodel"
	"github.com/doclib/doclib/shared/backend/openai"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestDoclibsClientMeetsTheModel embeds the model's sanity pair through
// doclib's own openai embedder: a paraphrase sits far closer than an
// unrelated sentence.
func TestDoclibsClientMeetsTheModel(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{})
	ctx := t.Context()
	e, err := openai.New(ctx, openai.Config{BaseURL: srv.URL, Model: srv.Model})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dimensions() != embedmodel.Dimensions || e.ID() != "openai/"+embedmodel.Model {
		t.Fatalf("Dimensions %d, ID %q; want %d and openai/%s", e.Dimensions(), e.ID(), embedmodel.Dimensions, embedmodel.Model)
	}
	vs, err := e.Embed(ctx, []string{"cat sat on the mat", "feline rested on the rug", "stock markets fell"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if n := math.Sqrt(cosine(v, v)); math.Abs(n-1) > 1e-4 {
			t.Errorf("vector %d has length %.6f, want 1", i, n)
		}
	}
	// Measured here: 0.705 and 0.194. The tolerance allows another CPU's
	// arithmetic, not another model.
	paraphrase, unrelated := cosine(vs[0], vs[1]), cosine(vs[0], vs[2])
	t.Logf("cat/feline %.3f, cat/stocks %.3f", paraphrase, unrelated)
	if math.Abs(paraphrase-0.70) > 0.05 {
		t.Errorf("cat/feline cosine %.3f, want 0.70 ± 0.05", paraphrase)
	}
	if unrelated > 0.35 || paraphrase-unrelated < 0.3 {
		t.Errorf("cat/stocks cosine %.3f against cat/feline %.3f: the unrelated pair should be under 0.35 and 0.3 below", unrelated, paraphrase)
	}
}

// embedResponse is OpenAI's answer, as its API reference documents it.
type embedResponse struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func post(t *testing.T, url, body string) (int, embedResponse) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("POST %s: Content-Type %q", body, ct)
	}
	var r embedResponse
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("POST %s: %s is not OpenAI's shape: %v", body, b, err)
	}
	return resp.StatusCode, r
}

func floats(t *testing.T, raw json.RawMessage) []float32 {
	t.Helper()
	var v []float32
	if err := json.Unmarshal(raw, &v); err == nil {
		return v
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("embedding %.40s is neither floats nor base64", raw)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		t.Fatalf("embedding %.40s: bad base64 (%v)", raw, err)
	}
	v = make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// TestOpenAIsShape: answers and refusals as OpenAI's API reference gives
// them, so that a client written for OpenAI works unchanged.
func TestOpenAIsShape(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{})
	url := srv.URL + "/embeddings"

	status, one := post(t, url, `{"model":"use-lite","input":"reset a password"}`)
	if status != 200 || one.Object != "list" || one.Model != "use-lite" || len(one.Data) != 1 ||
		one.Data[0].Object != "embedding" || one.Data[0].Index != 0 {
		t.Fatalf("a string input: %d %+v", status, one)
	}
	v := floats(t, one.Data[0].Embedding)
	if len(v) != 512 || math.Abs(cosine(v, v)-1) > 1e-5 {
		t.Errorf("a vector of %d dimensions and squared length %.6f, want 512 and 1", len(v), cosine(v, v))
	}
	if one.Usage.PromptTokens < 3 || one.Usage.TotalTokens != one.Usage.PromptTokens {
		t.Errorf("usage %+v: want the word pieces counted, total = prompt", one.Usage)
	}

	// A list keeps its order, and base64 carries the same float32s.
	status, two := post(t, url, `{"model":"use-lite","input":["stock markets fell","reset a password"],"encoding_format":"base64"}`)
	if status != 200 || len(two.Data) != 2 || two.Data[0].Index != 0 || two.Data[1].Index != 1 {
		t.Fatalf("a list: %d %+v", status, two)
	}
	if c := cosine(floats(t, two.Data[1].Embedding), v); c < 0.9999 {
		t.Errorf("the same text alone and second in a list: cosine %.6f, want 1", c)
	}
	if c := cosine(floats(t, two.Data[0].Embedding), v); c > 0.9 {
		t.Errorf("two different texts: cosine %.6f", c)
	}

	for _, c := range []struct {
		body        string
		status      int
		param, code string
	}{
		{`{"model":"use-lite","input":""}`, 400, "input", ""},
		{`{"model":"use-lite","input":["a",""]}`, 400, "input", ""},
		{`{"model":"use-lite","input":[]}`, 400, "input", ""},
		{`{"model":"use-lite","input":[[1,2,3]]}`, 400, "input", ""},
		{`{"model":"use-lite"}`, 400, "input", ""},
		{`{"model":"use-lite","input":"a","encoding_format":"int8"}`, 400, "encoding_format", ""},
		{`{"model":"use-lite","input":"a","dimensions":256}`, 400, "dimensions", ""},
		{`{"input":"a"}`, 400, "model", ""},
		{`{"model":"text-embedding-3-small","input":"a"}`, 404, "model", "model_not_found"},
		{`{"model":"use-lite","input":[` + strings.Repeat(`"a",`, 2048) + `"a"]}`, 400, "input", ""}, // 2,049 texts
		{`not json`, 400, "", ""},
		{`["model","input"]`, 400, "", ""},
	} {
		status, r := post(t, url, c.body)
		if status != c.status || r.Error == nil || r.Error.Message == "" || r.Data != nil {
			t.Errorf("%.60s: %d %+v, want %d with an error", c.body, status, r, c.status)
			continue
		}
		if r.Error.Type != "invalid_request_error" {
			t.Errorf("%.60s: error type %q", c.body, r.Error.Type)
		}
		if got := ""; r.Error.Param != nil {
			got = *r.Error.Param
			if got != c.param {
				t.Errorf("%.60s: param %q, want %q", c.body, got, c.param)
			}
		} else if c.param != "" {
			t.Errorf("%.60s: param null, want %q", c.body, c.param)
		}
		if (r.Error.Code == nil) != (c.code == "") || (r.Error.Code != nil && *r.Error.Code != c.code) {
			t.Errorf("%.60s: code %v, want %q", c.body, r.Error.Code, c.code)
		}
	}

	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/embeddings: %s, want 405", resp.Status)
	}
	resp, err = http.Get(srv.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "use-lite" {
		t.Errorf("GET /v1/models: %+v, %v", models, err)
	}
}

// embed posts texts and returns their vectors and the tokens counted.
func embed(t *testing.T, srv *embedmodel.Server, texts ...string) ([][]float32, int) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"model": srv.Model, "input": texts})
	status, r := post(t, srv.URL+"/embeddings", string(b))
	if status != 200 || len(r.Data) != len(texts) {
		t.Fatalf("embed %q: %d %+v", texts, status, r)
	}
	vs := make([][]float32, len(texts))
	for _, d := range r.Data {
		vs[d.Index] = floats(t, d.Embedding)
	}
	return vs, r.Usage.PromptTokens
}

// TestCapitalsAndLength: ALL-CAPS text is lower-cased (the vocabulary is
// cased, and capitals fall apart into rare pieces), ordinary text keeps its
// case, and a text is cut to its first MaxTokens word pieces.
func TestCapitalsAndLength(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{MaxTokens: 8})
	vs, _ := embed(t, srv, "THE CAT SAT ON THE MAT", "the cat sat on the mat", "NASA launched a rocket", "nasa launched a rocket")
	if c := cosine(vs[0], vs[1]); c < 0.9999 {
		t.Errorf("capitals against lower case: cosine %.4f, want the same vector", c)
	}
	if c := cosine(vs[2], vs[3]); c > 0.99 {
		t.Errorf("NASA in a sentence against nasa: cosine %.4f; mixed-case text should keep its case", c)
	}

	words := strings.Fields("one two three four five six seven eight nine ten eleven twelve")
	long := strings.Join(words, " ")
	other := strings.Join(append(words[:10:10], "stock", "markets"), " ")
	short := strings.Join(words[:3], " ")
	vs, tokens := embed(t, srv, long, other, short)
	if c := cosine(vs[0], vs[1]); c < 0.9999 {
		t.Errorf("two texts alike in their first 8 word pieces: cosine %.4f, want the same vector", c)
	}
	if c := cosine(vs[0], vs[2]); c > 0.99 {
		t.Errorf("a 3-word text and a 12-word one: cosine %.4f, want different vectors", c)
	}
	if tokens > 8+8+8 || tokens < 8+8+3 {
		t.Errorf("usage counts %d word pieces, want 8 + 8 + 3 to 8", tokens)
	}
}

// TestAQueryGoesAheadOfBulkWork: a one-text request sent while a bulk
// request is being embedded is answered before it, having waited for one
// chunk at the most. The bulk request is slowed to 10 texts a second, so it
// takes 200 s at least: the test fails only if a query's round trip over
// loopback took longer than that (at a load of 30 on 2 cores, the whole test
// took 15 to 32 s, the server's start included).
func TestAQueryGoesAheadOfBulkWork(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{Chunk: 2, Knobs: embedmodel.Knobs{Rate: 10}})
	ctx := t.Context()
	texts := make([]string, 2000)
	for i := range texts {
		texts[i] = fmt.Sprintf("document %d of a bulk batch", i)
	}
	b, _ := json.Marshal(map[string]any{"model": srv.Model, "input": texts})
	bulkDone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/embeddings", bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		bulkDone <- err
	}()
	// The event: the server has started the bulk request's chunks.
	for {
		h, err := srv.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h.Embedded > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	vs, _ := embed(t, srv, "reset a password")
	if len(vs[0]) != 512 {
		t.Fatalf("the query's vector has %d dimensions", len(vs[0]))
	}
	select {
	case err := <-bulkDone:
		t.Fatalf("the bulk request (2,000 texts at 10 a second) ended before the query was answered: %v", err)
	default:
	}
	h, err := srv.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Queued == 0 || h.Embedded >= 1+len(texts) {
		t.Errorf("after the query: %+v, want the bulk request's chunks still queued", h)
	}
}

// TestAnAbandonedRequestIsDropped: the chunks of a request whose client has
// gone (a timeout) are not computed. At 2 texts a second, the 40 texts take
// 20 s; the test fails only if the client's leaving took 18 s to reach the
// server.
func TestAnAbandonedRequestIsDropped(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{Knobs: embedmodel.Knobs{Rate: 2}})
	texts := make([]string, 40)
	for i := range texts {
		texts[i] = fmt.Sprint("text ", i)
	}
	b, _ := json.Marshal(map[string]any{"model": srv.Model, "input": texts})
	ctx, cancel := context.WithCancel(t.Context())
	sent := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/embeddings", bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		sent <- err
	}()
	wait := func(done func(embedmodel.Health) bool) embedmodel.Health {
		for {
			h, err := srv.Health(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if done(h) {
				return h
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait(func(h embedmodel.Health) bool { return h.Embedded > 0 }) // the first chunk
	cancel()
	if err := <-sent; err == nil {
		t.Fatal("the request ended before it was abandoned")
	}
	h := wait(func(h embedmodel.Health) bool { return h.Queued == 0 })
	if h.Embedded >= len(texts) {
		t.Errorf("%d texts embedded for a client that left after the first chunk", h.Embedded)
	}
	t.Logf("%d of %d texts embedded", h.Embedded, len(texts))
}

// TestKnobs: a slow server and a failing one, as tests of the client need
// them, set at start and at run time.
func TestKnobs(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{Knobs: embedmodel.Knobs{FailStatus: 503, FailCount: 2}})
	ctx := t.Context()
	body := `{"model":"use-lite","input":"a"}`
	for i, want := range []int{503, 503, 200, 200} {
		status, r := post(t, srv.URL+"/embeddings", body)
		if status != want {
			t.Fatalf("request %d: %d, want %d", i, status, want)
		}
		if want != 200 && (r.Error == nil || r.Error.Type != "server_error") {
			t.Errorf("request %d: %+v, want a server_error", i, r)
		}
	}

	// Every request fails until the knob is cleared.
	if err := srv.Control(ctx, embedmodel.Knobs{FailStatus: 429}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if status, _ := post(t, srv.URL+"/embeddings", body); status != 429 {
			t.Fatalf("with failStatus 429: %d", status)
		}
	}
	if err := srv.Control(ctx, embedmodel.Knobs{}); err != nil {
		t.Fatal(err)
	}
	if status, _ := post(t, srv.URL+"/embeddings", body); status != 200 {
		t.Fatalf("knobs cleared: %d", status)
	}

	// Slow: 40 texts at 100 a second take 0.4 s at least, and a delay adds
	// to that. Only lower bounds: a busy machine is slower, never faster.
	if err := srv.Control(ctx, embedmodel.Knobs{Rate: 100, DelayMs: 300}); err != nil {
		t.Fatal(err)
	}
	h, err := srv.Health(ctx)
	if err != nil || h.Rate != 100 || h.DelayMs != 300 {
		t.Fatalf("health %+v, %v", h, err)
	}
	texts := make([]string, 40)
	for i := range texts {
		texts[i] = fmt.Sprint("text ", i)
	}
	start := time.Now()
	embed(t, srv, texts...)
	if d := time.Since(start); d < 700*time.Millisecond {
		t.Errorf("40 texts at 100 a second with a 300 ms delay took %s, want 0.7 s at least", d)
	}
}

// BenchmarkServer measures the server's texts a second on this machine:
// queries one at a time, as searches send them, and the demo data set's
// documents (about 1,000 characters, like an abstract) 64 to a request, as
// doclib's openai embedder batches an index build.
//
//	go test ./internal/suites/embedmodel -run '^$' -bench Server -benchtime 20x
func BenchmarkServer(b *testing.B) {
	srv := embedmodel.Start(b, embedmodel.Options{})
	d, err := demo.Load()
	if err != nil {
		b.Fatal(err)
	}
	var docs []string
	for _, doc := range d.Documents {
		docs = append(docs, search.DocumentText(doc))
	}
	queries := []string{"reset a password", "how do I file an expense report", "vpn not connecting",
		"onboard a new hire", "close the month in NetSuite", "rotate the database credentials"}
	run := func(b *testing.B, batch func(i int) []string) {
		client := &http.Client{}
		texts := 0
		for i := 0; b.Loop(); i++ {
			in := batch(i)
			body, _ := json.Marshal(map[string]any{"model": srv.Model, "input": in})
			resp, err := client.Post(srv.URL+"/embeddings", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatal(resp.Status)
			}
			texts += len(in)
		}
		b.ReportMetric(float64(texts)/b.Elapsed().Seconds(), "texts/s")
	}
	b.Run("queries", func(b *testing.B) {
		run(b, func(i int) []string { return []string{queries[i%len(queries)]} })
	})
	b.Run("documents", func(b *testing.B) {
		run(b, func(i int) []string {
			start := (i * 64) % len(docs)
			return docs[start:min(start+64, len(docs))]
		})
	})
}
