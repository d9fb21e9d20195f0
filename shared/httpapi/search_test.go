package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/search"
)

func TestSearchValidation(t *testing.T) {
	s := newServer(t, options{keyLimit: 1000})
	cases := []struct {
		key, query string
		status     int
		code, says string
	}{
		{fixture.KeyFull, "", 400, "bad_request", "q is required"},
		{fixture.KeyFull, "q=a", 400, "bad_request", "2 to 512"},
		{fixture.KeyFull, "q=%20%20a%20%20", 400, "bad_request", "after trimming"},
		{fixture.KeyFull, "q=" + strings.Repeat("x", 513), 400, "bad_request", "got 513"},
		{fixture.KeyFull, "q=" + strings.Repeat("é", 513), 400, "bad_request", "got 513"}, // characters, not bytes
		{fixture.KeyFull, "q=okta&q=slack", 400, "bad_request", "q is given 2 times"},
		{fixture.KeyFull, "q=okta&libraryId=ops", 400, "bad_request", "libraryId"}, // a slug
		{fixture.KeyFull, "q=okta&libraryId=lib_a1%20", 400, "bad_request", "libraryId"},
		{fixture.KeyFull, "q=okta&page=0", 400, "bad_request", "page"},
		{fixture.KeyFull, "q=okta&pageSize=abc", 400, "bad_request", "pageSize"},
		{fixture.KeyFull, "q=okta&libraryId=lib_nope", 404, "not_found", `The parameter libraryId names no library visible to this API key: \"lib_nope\". It takes a lib_ ID`},
		{fixture.KeyFull, "q=okta&libraryId=lib_b1", 404, "not_found", ""},       // another workspace
		{fixture.KeyOneLibrary, "q=okta&libraryId=lib_a2", 404, "not_found", ""}, // outside scope
	}
	for _, c := range cases {
		r := s.get(t, c.key, "/search/documents?"+c.query)
		if r.status != c.status || errorCode(t, r) != c.code || !strings.Contains(string(r.body), c.says) {
			t.Errorf("%s: %d %s, want %d %s saying %q", c.query, r.status, r.body, c.status, c.code, c.says)
		}
	}
	if b := s.balance("ws_a"); b != 100 {
		t.Errorf("requests refused before billing spent credit: balance %d, want 100", b)
	}
	for _, q := range []string{"q=" + strings.Repeat("x", 512), "q=%20ok%20", "q=okta&pageSize=500", "q=okta&unknown=1"} {
		r := s.get(t, fixture.KeyFull, "/search/documents?"+q)
		if r.status != 200 {
			t.Errorf("%s: %d %s", q[:min(20, len(q))], r.status, r.body)
		}
	}
	if r := s.get(t, fixture.KeyFull, "/search/documents?q=okta&pageSize=500"); decode[api.SearchResults](t, r).PageSize != 100 {
		t.Error("pageSize above 100 is not capped")
	}
	if b := s.balance("ws_a"); b != 100-5 {
		t.Errorf("balance %d after 5 searches, want 95", b)
	}
	// A page far past the end is an empty page with the exact totals, its
	// number echoed as a value every JSON reader holds exactly. It used to
	// overflow the page's end and panic.
	for _, q := range []string{"q=okta&page=99999999999999999999", "q=okta&page=9223372036854775807&pageSize=100", "q=zzqqxx&page=99999999999999999999"} {
		r := s.get(t, fixture.KeyFull, "/search/documents?"+q)
		res := decode[api.SearchResults](t, r)
		if r.status != 200 || len(res.Documents) != 0 || res.Total == 0 || res.Page != 1<<53-1 {
			t.Errorf("%s: %d, %d hits of %d, page %d", q, r.status, len(res.Documents), res.Total, res.Page)
		}
	}
}

func TestSearchThatPanicsGivesItsCreditBack(t *testing.T) {
	s := newServer(t, options{backend: panickingBackend{}})
	r := s.get(t, fixture.KeyFull, "/search/documents?q=okta")
	if r.status != 500 || errorCode(t, r) != "internal" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if b := s.balance("ws_a"); b != 100 {
		t.Errorf("a search that panicked kept its credit: balance %d, want 100", b)
	}
}

type panickingBackend struct{}

func (panickingBackend) Match(context.Context, *search.Query) (*search.Matches, error) {
	panic("slice bounds out of range")
}
func (panickingBackend) MostActive(context.Context, *search.Query, search.Filter) ([]search.Hit, int, error) {
	panic("slice bounds out of range")
}

func TestSearchResponse(t *testing.T) {
	s := newServer(t, options{})
	r := s.get(t, fixture.KeyFull, "/search/documents?q=reset%20password")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	res := decode[api.SearchResults](t, r)
	if len(res.Documents) == 0 || res.Documents[0].ID != "doc_a1_1" || res.LowConfidence || res.Guidance != nil {
		t.Fatalf("results %+v", res)
	}
	top := res.Documents[0]
	if !slices.Contains(top.Relevance.Signals, "lexical") || top.Relevance.Score <= 0 || top.Relevance.Score > 1 ||
		top.Library != (api.DocumentRef{ID: "lib_a1", Name: "Operations"}) || !strings.Contains(string(top.Content), "Okta") {
		t.Errorf("top hit %+v", top)
	}
	if len(top.Edges.Outgoing) != 2 || len(top.Edges.Incoming) != 1 {
		t.Errorf("edges %+v", top.Edges)
	}
	if _, ok := res.Schemas["lib_a1"]; !ok || len(res.Schemas) != 1 {
		t.Errorf("schemas %v; want lib_a1 once", res.Schemas)
	}
	if res.Page != 1 || res.PageSize != 20 || res.Total != res.MatchedTotal || len(res.Facets.Libraries) == 0 ||
		res.Facets.Libraries[0] != (api.LibraryFacet{ID: "lib_a1", Name: "Operations", DocumentCount: res.MatchedTotal}) {
		t.Errorf("totals and facets %+v", res)
	}
	if strings.Contains(string(r.body), `"schema"`) {
		t.Error("a hit carries schema; docs/api.md: only the response's schemas")
	}
	// The one-library key gets the same document without the edges leaving its scope.
	one := decode[api.SearchResults](t, s.get(t, fixture.KeyOneLibrary, "/search/documents?q=reset%20password"))
	if len(one.Documents) == 0 || len(one.Documents[0].Edges.Outgoing) != 1 || len(one.Documents[0].Edges.Incoming) != 0 {
		t.Errorf("one-library edges %+v", one.Documents)
	}
	// The fallback: never an empty list, with guidance.
	low := decode[api.SearchResults](t, s.get(t, fixture.KeyFull, "/search/documents?q=zzqx%20blorf"))
	if !low.LowConfidence || len(low.Guidance) == 0 || len(low.Documents) == 0 || low.MatchedTotal != 0 ||
		!slices.Equal(low.Documents[0].Relevance.Signals, []string{"fallback"}) {
		t.Errorf("fallback %+v", low)
	}
	// HEAD answers like GET without a body (and is billed like one).
	if h := s.do(t, http.MethodHead, fixture.KeyFull, "/search/documents?q=okta"); h.status != 200 || len(h.body) != 0 {
		t.Errorf("HEAD: %d", h.status)
	}
}

// TestSearchBilling: a workspace with 3 credits gets exactly 3 searches, also
// concurrently; suspension comes first; an own provider key is never metered;
// a search that fails after it was paid for is refunded.
func TestSearchBilling(t *testing.T) {
	setCredit := func(ws string, credit int64, mutate func(*dataset.Workspace)) func(*dataset.File) {
		return func(f *dataset.File) {
			for i := range f.Workspaces {
				if f.Workspaces[i].ID == ws {
					f.Workspaces[i].AICredit = credit
					if mutate != nil {
						mutate(&f.Workspaces[i])
					}
				}
			}
		}
	}
	s := newServer(t, options{edit: setCredit("ws_a", 3, nil), keyLimit: 1000})
	var ok, broke, other atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			key := []string{fixture.KeyFull, fixture.KeyOneLibrary, fixture.KeyNoRecording}[i%3] // one workspace, three keys
			r := s.get(t, key, "/search/documents?q=okta")
			switch {
			case r.status == 200:
				ok.Add(1)
			case r.status == 402 && errorCode(t, r) == "insufficient_ai_credit":
				broke.Add(1)
			default:
				other.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if ok.Load() != 3 || broke.Load() != 9 || other.Load() != 0 || s.balance("ws_a") != 0 {
		t.Fatalf("ok %d, 402 %d, other %d, balance %d; want 3, 9, 0, 0", ok.Load(), broke.Load(), other.Load(), s.balance("ws_a"))
	}
	// Other endpoints keep working without credit.
	if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != 200 {
		t.Errorf("libraries without credit: %d", r.status)
	}

	// Suspended comes before insufficient credit.
	s = newServer(t, options{edit: setCredit("ws_a", 0, func(w *dataset.Workspace) { w.Subscription = "suspended" })})
	if r := s.get(t, fixture.KeyFull, "/search/documents?q=okta"); r.status != 402 || errorCode(t, r) != "subscription_suspended" {
		t.Errorf("suspended: %d %s", r.status, r.body)
	}
	// Validation still comes first.
	if r := s.get(t, fixture.KeyFull, "/search/documents?q=x"); r.status != 400 {
		t.Errorf("suspended with a bad q: %d", r.status)
	}

	// An own provider key is never metered, whatever the balance.
	s = newServer(t, options{edit: setCredit("ws_a", 0, func(w *dataset.Workspace) { w.OwnProviderKey = true })})
	for range 3 {
		if r := s.get(t, fixture.KeyFull, "/search/documents?q=okta"); r.status != 200 {
			t.Fatalf("own provider key: %d %s", r.status, r.body)
		}
	}
	if b := s.balance("ws_a"); b != 0 {
		t.Errorf("own provider key metered: balance %d", b)
	}

	// A backend failure is a clean 500, and the credit comes back.
	s = newServer(t, options{backend: failingBackend{errors.New("index at 10.0.0.7 corrupt")}})
	r := s.get(t, fixture.KeyFull, "/search/documents?q=okta")
	if r.status != 500 || errorCode(t, r) != "internal" || strings.Contains(string(r.body), "10.0.0.7") {
		t.Errorf("backend failure: %d %s", r.status, r.body)
	}
	if b := s.balance("ws_a"); b != 100 {
		t.Errorf("failed search not refunded: balance %d", b)
	}
	// An embedding provider that is down: the words answer, say that the
	// meaning signals did not run, and the credit comes back (the meaning
	// match it pays for did not run). Before, this was a 503.
	s = newServer(t, options{embedder: downEmbedder{}})
	r = s.get(t, fixture.KeyFull, "/search/documents?q=okta")
	var res api.SearchResults
	if r.status != 200 || json.Unmarshal(r.body, &res) != nil || strings.Contains(string(r.body), "timeout") {
		t.Fatalf("embedder down: %d %s", r.status, r.body)
	}
	if res.LowConfidence || len(res.Documents) == 0 || !slices.Equal(res.UnavailableSignals, []string{"semantic", "source_recordings"}) {
		t.Errorf("embedder down: %d hits, lowConfidence %v, unavailableSignals %v; want word matches, without semantic and source_recordings",
			len(res.Documents), res.LowConfidence, res.UnavailableSignals)
	}
	for _, h := range res.Documents {
		if slices.Contains(h.Relevance.Signals, "semantic") || slices.Contains(h.Relevance.Signals, "source_recordings") || h.Relevance.SemanticSimilarity != 0 {
			t.Errorf("embedder down: hit %s has signals %v, similarity %g", h.ID, h.Relevance.Signals, h.Relevance.SemanticSimilarity)
		}
	}
	if b := s.balance("ws_a"); b != 100 {
		t.Errorf("a search answered from words alone was billed: balance %d", b)
	}
	// With the embedder up, the answer names no unavailable signal.
	r = newServer(t, options{}).get(t, fixture.KeyFull, "/search/documents?q=okta")
	if strings.Contains(string(r.body), "unavailableSignals") {
		t.Errorf("a search with its meaning match names unavailable signals: %s", r.body)
	}
}

type failingBackend struct{ err error }

func (f failingBackend) Match(context.Context, *search.Query) (*search.Matches, error) {
	return nil, f.err
}
func (f failingBackend) MostActive(context.Context, *search.Query, search.Filter) ([]search.Hit, int, error) {
	return nil, 0, f.err
}

type downEmbedder struct{}

func (downEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.Join(search.ErrEmbedder, errors.New("dial tcp: i/o timeout"))
}
func (downEmbedder) Dimensions() int { return 256 }
func (downEmbedder) ID() string      { return "down" }
