package embedmodel_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/embedmodel"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/openai"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// What a real sentence encoder does to search, with the calibrated rules:
// its unrelated texts sit near 0.5 where the offline embedder's sit near 0,
// and search must mean the same with both.

// searcherOver builds the embedded engine over d with the model behind srv,
// as doclib-server --embedder openai does.
func searcherOver(t *testing.T, srv *embedmodel.Server, d *doclib.DataSet) *search.Searcher {
	t.Helper()
	e, err := openai.New(t.Context(), openai.Config{BaseURL: srv.URL, Model: srv.Model})
	if err != nil {
		t.Fatal(err)
	}
	s, err := localsearch.Searcher(t.Context(), d, e, settings.Rules{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// These tests measure what the model's vectors do, not how fast it
	// answers: on a busy machine a query can take seconds, and past the
	// default budget the search would run on words.
	s.EmbedBudget = 2 * time.Minute
	return s
}

func visible(d *doclib.DataSet) []string {
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	return libs
}

// down is an embedder that is down: a search over it runs on words alone.
type down struct{ search.Embedder }

func (down) Embed(context.Context, []string) ([][]float32, error) {
	return nil, search.ErrEmbedder
}

// TestRandomLettersMatchNothingByMeaning: over the demo data, with the model
// and its calibrated thresholds, 1,000 queries of random letters match
// exactly what the word signals alone match (nearly always nothing: then the
// answer is the fallback), so the model relates them to nothing: the
// calibrated threshold is above what random letters reach.
func TestRandomLettersMatchNothingByMeaning(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{})
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := searcherOver(t, srv, d)
	c := s.Calibration()
	if c == nil || c.Embedder != "openai/"+srv.Model {
		t.Fatalf("calibration %+v: want one of the model", c)
	}
	r := s.EffectiveRules()
	t.Logf("chance %.3f, p95 %.3f, random letters' best %.3f to %.3f: semantic threshold %.3f",
		c.Documents.P50, c.Documents.P95, c.Documents.GibberishMedian, c.Documents.GibberishMax, r.SemanticThreshold)
	if r.SemanticThreshold <= c.Documents.P50 || r.SemanticThreshold < c.Documents.GibberishMax {
		t.Errorf("threshold %.3f: not above the chance level %.3f and what random letters reached %.3f", r.SemanticThreshold, c.Documents.P50, c.Documents.GibberishMax)
	}
	words := &search.Searcher{Backend: s.Backend, Embedder: search.Cached(down{s.Embedder}, 0), Rules: s.Rules}
	libs := visible(d)
	rng := rand.New(rand.NewPCG(13, 7))
	fallbacks := 0
	for range 1000 {
		q := search.RandomLetters(rng, nil)
		got, err := s.Search(t.Context(), search.Request{Text: q, Libraries: libs, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if got.MeaningUnavailable != nil {
			t.Fatalf("%q: the model did not answer in time (%v); the test measures nothing then", q, got.MeaningUnavailable)
		}
		want, err := words.Search(t.Context(), search.Request{Text: q, Libraries: libs, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if got.MatchedTotal != want.MatchedTotal || got.LowConfidence != want.LowConfidence {
			first := search.Hit{}
			if len(got.Hits) > 0 {
				first = got.Hits[0]
			}
			t.Fatalf("%q matched %d documents (the words alone %d); first %s with signals %v at similarity %.3f, threshold %.3f",
				q, got.MatchedTotal, want.MatchedTotal, first.DocumentID, first.Signals, first.SemanticSimilarity, r.SemanticThreshold)
		}
		if got.LowConfidence {
			fallbacks++
		}
	}
	if fallbacks < 950 {
		t.Errorf("only %d of 1,000 random-letter queries got the fallback", fallbacks)
	}
	t.Logf("%d of 1,000 random-letter queries got the fallback; the rest matched by words alone", fallbacks)
}

// fiveDocuments is a data set of five unrelated documents, as a new user
// makes one: the case in which unrelated texts looked alike.
const fiveDocuments = `{
 "workspaces": [{"id": "ws_1", "name": "Acme", "plan": "team", "aiCredit": 100, "ownProviderKey": false, "subscription": "active"}],
 "devices": [{"id": "dev_1", "workspaceId": "ws_1", "status": "active"}],
 "apiKeys": [{"id": "key_1", "workspaceId": "ws_1", "deviceId": "dev_1", "secret": "dlk_five_documents", "libraries": ["*"], "recordingDetails": true}],
 "libraries": [{"id": "lib_ops", "workspaceId": "ws_1", "name": "Operations", "slug": "ops", "description": "",
   "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
   "schema": {"version": 1, "sections": [{"key": "summary", "title": "Summary", "type": "text"}, {"key": "steps", "title": "Steps", "type": "steps"}]}}],
 "documents": [
  {"id": "doc_1", "libraryId": "lib_ops", "slug": "rotate", "title": "Rotate the production database password", "category": "Security", "tags": ["passwords"], "applications": ["AWS Secrets Manager"], "deviceCount": 1,
   "firstSeen": "2026-01-01T00:00:00Z", "lastSeen": "2026-01-05T00:00:00Z", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-05T00:00:00Z",
   "content": {"summary": "Rotate the password of the production database every 90 days.", "steps": ["Open AWS Secrets Manager and find the database secret.", "Choose Rotate secret immediately.", "Check that the application reconnects."]}},
  {"id": "doc_2", "libraryId": "lib_ops", "slug": "invoice", "title": "Approve a vendor invoice", "category": "Finance", "tags": ["approvals"], "applications": ["NetSuite"], "deviceCount": 1,
   "firstSeen": "2026-01-01T00:00:00Z", "lastSeen": "2026-01-04T00:00:00Z", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-04T00:00:00Z",
   "content": {"summary": "Check an invoice against its purchase order before approving it.", "steps": ["Open the invoice in NetSuite.", "Compare the amount with the purchase order.", "Click Approve."]}},
  {"id": "doc_3", "libraryId": "lib_ops", "slug": "vpn", "title": "Connect to the VPN", "category": "Network", "tags": ["remote"], "applications": ["GlobalProtect"], "deviceCount": 1,
   "firstSeen": "2026-01-01T00:00:00Z", "lastSeen": "2026-01-03T00:00:00Z", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-03T00:00:00Z",
   "content": {"summary": "Reach the office network from home.", "steps": ["Install the GlobalProtect client.", "Sign in with your work account.", "Pick the nearest gateway."]}},
  {"id": "doc_4", "libraryId": "lib_ops", "slug": "supplies", "title": "Order office supplies", "category": "Office", "tags": ["purchasing"], "applications": ["Staples"], "deviceCount": 1,
   "firstSeen": "2026-01-01T00:00:00Z", "lastSeen": "2026-01-02T00:00:00Z", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-02T00:00:00Z",
   "content": {"summary": "Order paper, pens and toner for the office.", "steps": ["Open the supplies catalogue.", "Add what is needed to the basket.", "Send the order for approval."]}},
  {"id": "doc_5", "libraryId": "lib_ops", "slug": "onboard", "title": "Welcome a new hire on their first day", "category": "People", "tags": ["onboarding"], "applications": ["Slack"], "deviceCount": 1,
   "firstSeen": "2026-01-01T00:00:00Z", "lastSeen": "2026-01-01T00:00:00Z", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
   "content": {"summary": "Give a new colleague a good first day.", "steps": ["Meet them at reception.", "Introduce them to the team on Slack.", "Walk them through the week's plan."]}}
 ]
}`

// TestFiveDocumentsAreNotAlike: on five unrelated documents, a query about
// none of them ("kubernetes autoscaling") matches none by meaning: the
// answer is the fallback. A query about one finds it, by meaning as well as
// words, and no other document by meaning.
func TestFiveDocumentsAreNotAlike(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{})
	d, err := dataset.Load(strings.NewReader(fiveDocuments))
	if err != nil {
		t.Fatal(err)
	}
	s := searcherOver(t, srv, d)
	libs := visible(d)
	th := s.EffectiveRules().SemanticThreshold
	res, err := s.Search(t.Context(), search.Request{Text: "kubernetes autoscaling", Libraries: libs, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !res.LowConfidence || res.MatchedTotal != 0 {
		t.Errorf("kubernetes autoscaling matched %d of five unrelated documents (threshold %.3f): %+v", res.MatchedTotal, th, res.Hits)
	}
	for _, h := range res.Hits {
		if h.SemanticSimilarity >= th {
			t.Errorf("%s: similarity %.3f at or above the threshold %.3f", h.DocumentID, h.SemanticSimilarity, th)
		}
	}
	res, err = s.Search(t.Context(), search.Request{Text: "change the secret of our main database", Libraries: libs, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].DocumentID != "doc_1" {
		t.Fatalf("a paraphrase of one document's task: %+v", res.Hits)
	}
	for _, h := range res.Hits[1:] {
		for _, sig := range h.Signals {
			if sig == search.SignalSemantic {
				t.Errorf("%s matches the database query by meaning too (similarity %.3f, threshold %.3f)", h.DocumentID, h.SemanticSimilarity, th)
			}
		}
	}
}

// TestWordsWhenTheModelIsDownOrLate: with the model answering 503, and then
// too slowly, searches answer from words, saying why; once it answers again
// (and the gate's ten seconds are over), the meaning match is back.
func TestWordsWhenTheModelIsDownOrLate(t *testing.T) {
	srv := embedmodel.Start(t, embedmodel.Options{})
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := searcherOver(t, srv, d)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	libs := visible(d)
	ask := func(q string) *search.Response {
		t.Helper()
		res, err := s.Search(t.Context(), search.Request{Text: q, Libraries: libs, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := ask("reset a user's password"); res.MeaningUnavailable != nil {
		t.Fatalf("with the model up: %v", res.MeaningUnavailable)
	}
	if err := srv.Control(t.Context(), embedmodel.Knobs{FailStatus: 503}); err != nil {
		t.Fatal(err)
	}
	// The client retries a 503 with backoff; the budget ends the wait.
	s.EmbedBudget = 5 * time.Second
	res := ask("unlock an okta account")
	if res.MeaningUnavailable == nil || !strings.Contains(res.MeaningUnavailable.Error(), "503") && !strings.Contains(res.MeaningUnavailable.Error(), "budget") ||
		res.Total == 0 || res.LowConfidence {
		t.Fatalf("with the model answering 503: %v, %d results (low confidence %v); want word matches, saying why",
			res.MeaningUnavailable, res.Total, res.LowConfidence)
	}
	// Slower than the budget: words, saying it was late.
	s.EmbedBudget = 300 * time.Millisecond
	if err := srv.Control(t.Context(), embedmodel.Knobs{DelayMs: 3000}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"offboard an employee", "approve an expense report"} {
		if res = ask(q); res.MeaningUnavailable == nil || !strings.Contains(res.MeaningUnavailable.Error(), "budget") {
			t.Fatalf("%q with the model late: %v; want words, saying the budget passed", q, res.MeaningUnavailable)
		}
	}
	// Three in a row: the gate shuts, and the model is not asked.
	if res = ask("rotate access keys"); !errors.Is(res.MeaningUnavailable, search.ErrMeaningSkipped) {
		t.Fatalf("a search after three failures: %v, want the gate shut", res.MeaningUnavailable)
	}
	if err := srv.Control(t.Context(), embedmodel.Knobs{}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Second)
	s.EmbedBudget = 2 * time.Minute
	if res = ask("provision a laptop"); res.MeaningUnavailable != nil {
		t.Fatalf("with the model back, after the gate's ten seconds: %v", res.MeaningUnavailable)
	}
}
