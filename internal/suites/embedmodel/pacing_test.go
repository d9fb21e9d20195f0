package embedmodel_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedmodel"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/openai"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// The tests of doclib's client against a slow or failing model
// (embedcall.Pacer). None measures time: what they count is the texts the
// model embedded (Health.Embedded), which a text sent twice would raise.
// They run in parallel: each model is held to a few texts a second, far
// below what the machine computes.

// embedded is the model's count of texts embedded so far.
func embedded(t *testing.T, srv *embedmodel.Server) int {
	t.Helper()
	h, err := srv.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return h.Embedded
}

// waitFor polls the model's health until done says so.
func waitFor(t *testing.T, srv *embedmodel.Server, done func(embedmodel.Health) bool) {
	t.Helper()
	for {
		h, err := srv.Health(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if done(h) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// demoTexts are distinct texts of the demo data set, as an index embeds
// them.
func demoTexts(t *testing.T, n int) []string {
	t.Helper()
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, doc := range d.Documents[:n] {
		out = append(out, search.DocumentText(doc))
	}
	return out
}

// TestSlowModelIndexesEveryTextOnce: a model that embeds 3 texts a second
// indexes the demo data set (347 texts: its documents and their readable
// recordings, as doclib-server embeds them at start) through doclib's
// openai embedder with its defaults, without an error, and embeds each text
// once: no request timed out and was sent again. With the former client
// (batches of 64, 4 at once, 30 s each) it failed: each request waited
// behind the others past its time.
func TestSlowModelIndexesEveryTextOnce(t *testing.T) {
	t.Parallel()
	srv := embedmodel.Start(t, embedmodel.Options{Knobs: embedmodel.Knobs{Rate: 3}})
	ctx := t.Context()
	e, err := openai.New(ctx, openai.Config{BaseURL: srv.URL, Model: srv.Model})
	if err != nil {
		t.Fatal(err)
	}
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	before := embedded(t, srv)
	var total int
	docs, _, err := localsearch.IndexDocs(ctx, d, e, localsearch.Options{Progress: func(_, n int) { total = n }})
	if err != nil {
		t.Fatal(err)
	}
	got := embedded(t, srv) - before
	s := e.Stats()
	t.Logf("%d documents, %d texts: the model embedded %d; %d requests, %d timeouts, %d retries, rate %.1f texts/s, batch %d, %d at once",
		len(docs), total, got, s.Requests, s.Timeouts, s.Retries, s.Rate, s.Batch, s.Concurrency)
	if total < 300 || got != total {
		t.Errorf("the model embedded %d texts for an index of %d; want each once", got, total)
	}
}

// TestModelDownForAWhile: a model that answers 503 for 20 s, from the
// moment a bulk call starts, is ridden out: the call ends without an error
// once it is back, and the 503s embedded nothing, so every text was
// embedded once. The former client gave up after its 4 retries (about 7 s).
func TestModelDownForAWhile(t *testing.T) {
	t.Parallel()
	srv := embedmodel.Start(t, embedmodel.Options{Knobs: embedmodel.Knobs{Rate: 10}})
	ctx := t.Context()
	e, err := openai.New(ctx, openai.Config{BaseURL: srv.URL, Model: srv.Model})
	if err != nil {
		t.Fatal(err)
	}
	texts := demoTexts(t, 60)
	before := embedded(t, srv)
	if err := srv.Control(ctx, embedmodel.Knobs{Rate: 10, FailStatus: http.StatusServiceUnavailable}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.Embed(ctx, texts)
		done <- err
	}()
	time.Sleep(20 * time.Second) // "a while": the outage, not a measure
	if err := srv.Control(ctx, embedmodel.Knobs{Rate: 10}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a model down for 20 s: %v", err)
	}
	s := e.Stats()
	t.Logf("%d requests answered, %d busy answers, %d cuts, %d retries", s.Requests, s.Overloaded, s.Cuts, s.Retries)
	if s.Overloaded == 0 || s.Cuts == 0 {
		t.Errorf("stats %+v: the 503s were not seen, or did not cut the requests at once", s)
	}
	if got := embedded(t, srv) - before; got != len(texts) {
		t.Errorf("the model embedded %d texts for %d; want each once", got, len(texts))
	}
}

// TestTimedOutRequestIsNotComputed: requests that time out while the model
// works on another client's bulk request (80 s of work) are abandoned: the
// model drops them unread, and their texts, sent again in halves that fit
// their time, are embedded once. The former client sent the same request
// again whole, 5 times, and gave up.
func TestTimedOutRequestIsNotComputed(t *testing.T) {
	t.Parallel()
	srv := embedmodel.Start(t, embedmodel.Options{Knobs: embedmodel.Knobs{Rate: 3}})
	ctx := t.Context()
	e, err := openai.New(ctx, openai.Config{BaseURL: srv.URL, Model: srv.Model, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	before := embedded(t, srv)
	hog := make([]string, 240)
	for i := range hog {
		hog[i] = fmt.Sprintf("another client's text number %d", i)
	}
	body, _ := json.Marshal(map[string]any{"model": srv.Model, "input": hog})
	hogDone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/embeddings", bytes.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
		hogDone <- err
	}()
	waitFor(t, srv, func(h embedmodel.Health) bool { return h.Queued > 10 }) // the other client's work is queued

	texts := demoTexts(t, 16)
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		t.Fatalf("behind another client's work: %v", err)
	}
	if err := search.CheckVectors(vs, len(texts), embedmodel.Dimensions); err != nil {
		t.Fatal(err)
	}
	s := e.Stats()
	t.Logf("%d requests answered, %d timed out, %d retries", s.Requests, s.Timeouts, s.Retries)
	if s.Timeouts == 0 {
		t.Fatal("no request timed out: the test did not make the case it means")
	}
	if err := <-hogDone; err != nil {
		t.Fatalf("the other client: %v", err)
	}
	if got, want := embedded(t, srv)-before, len(hog)+len(texts); got != want {
		t.Errorf("the model embedded %d texts for %d (the other client's %d and our %d); a timed-out request was computed", got, want, len(hog), len(texts))
	}
}
