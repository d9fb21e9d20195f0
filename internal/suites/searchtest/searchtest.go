// Package searchtest is the backend-neutral search suite: the rules of
// GET /search/documents (docs/api.md, "Search semantics") as properties that
// every search.Backend must satisfy on the same data with the same embedder. The
// embedded engine runs it always; the OpenSearch backend runs it when a cluster
// is reachable.
package searchtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// Factory builds a backend holding d, whose texts are embedded by e.
type Factory func(t testing.TB, d *doclib.DataSet, e search.Embedder) search.Backend

// The fixture's workspace ws_a: every library, and the one-library scope.
var (
	wsA        = []string{"lib_a1", "lib_a2", "lib_a3"}
	oneLibrary = []string{"lib_a1"}
	acme       = []string{"lib_finance", "lib_it", "lib_sales"}
)

type env struct {
	t testing.TB
	s *search.Searcher
	d *doclib.DataSet
}

func newEnv(t testing.TB, f Factory, d *doclib.DataSet) *env {
	t.Helper()
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, d: d, s: &search.Searcher{Backend: f(t, d, e), Embedder: search.Cached(e, 0), Rules: search.DefaultRules(e.ID())}}
}

func (v *env) search(text string, libs []string, f search.Filter, offset, limit int) *search.Response {
	v.t.Helper()
	r, err := v.s.Search(context.Background(), search.Request{Text: text, Libraries: libs, Filter: f, Offset: offset, Limit: limit})
	if err != nil {
		v.t.Fatalf("search %q: %v", text, err)
	}
	return r
}

func fixtureData(t testing.TB) *doclib.DataSet {
	t.Helper()
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func demoData(t testing.TB) *doclib.DataSet {
	t.Helper()
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func hit(r *search.Response, id string) *search.Hit {
	for i := range r.Hits {
		if r.Hits[i].DocumentID == id {
			return &r.Hits[i]
		}
	}
	return nil
}

func ids(r *search.Response) []string {
	out := make([]string, len(r.Hits))
	for i, h := range r.Hits {
		out[i] = h.DocumentID
	}
	return out
}

// Run runs the suite against the backends that f builds.
func Run(t *testing.T, f Factory) {
	t.Run("signals", func(t *testing.T) { signals(t, newEnv(t, f, fixtureData(t))) })
	t.Run("facets and totals", func(t *testing.T) { facetsAndTotals(t, newEnv(t, f, demoData(t))) })
	t.Run("paging and order", func(t *testing.T) { pagingAndOrder(t, newEnv(t, f, demoData(t))) })
	t.Run("fallback", func(t *testing.T) { fallback(t, newEnv(t, f, fixtureData(t))) })
	t.Run("scope", func(t *testing.T) { scope(t, f) })
}

func signals(t *testing.T, v *env) {
	cases := []struct {
		name, query, doc string
		want             []string
	}{
		// Every word of a distinctive phrase is in the document.
		{"lexical", "reset password", "doc_a1_1", []string{search.SignalLexical}},
		// A typo: near misses of every word, and not a word match.
		{"fuzzy", "pasword resett", "doc_a1_1", []string{search.SignalFuzzy}},
		// "notebook" is not in "Provision a laptop" (a listed synonym); the stem
		// of "provisioning" is, so the near miss may fire too (it holds a share
		// of the query's weight), but never the word match.
		{"semantic", "notebook provisioning", "doc_a1_3", []string{search.SignalSemantic}},
		// Said only in the shared recording behind doc_a2_1.
		{"source recordings", fixture.RecordingPhrase, "doc_a2_1", []string{search.SignalSourceRecordings}},
	}
	for _, c := range cases {
		r := v.search(c.query, wsA, search.Filter{}, 0, 20)
		h := hit(r, c.doc)
		if r.LowConfidence || h == nil {
			t.Errorf("%s: %q did not find %s: %v", c.name, c.query, c.doc, ids(r))
			continue
		}
		for _, s := range c.want {
			if !slices.Contains(h.Signals, s) {
				t.Errorf("%s: %q -> %s signals %v, want %s", c.name, c.query, c.doc, h.Signals, s)
			}
		}
		if c.name == "fuzzy" && slices.Contains(h.Signals, search.SignalLexical) {
			t.Errorf("fuzzy and lexical fired together: %v", h.Signals)
		}
		if c.name == "semantic" && slices.Contains(h.Signals, search.SignalLexical) {
			t.Errorf("semantic case fired a word match: %v", h.Signals)
		}
		if h.Score <= 0 || h.Score > 1 {
			t.Errorf("%s: score %f outside (0, 1]", c.name, h.Score)
		}
	}
	// The same phrase in a private recording never counts: doc_a1_4 is not matched.
	r := v.search(fixture.RecordingPhrase, wsA, search.Filter{}, 0, 20)
	if hit(r, "doc_a1_4") != nil {
		t.Errorf("a private recording's text made doc_a1_4 match: %v", ids(r))
	}
	// On the Individual plan no recording counts, even one the index still
	// holds from before a plan change.
	r, err := v.s.Search(context.Background(), search.Request{Text: fixture.RecordingPhrase, Libraries: wsA, Limit: 20, NoRecordings: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Hits {
		if slices.Contains(h.Signals, search.SignalSourceRecordings) {
			t.Errorf("NoRecordings: %s matched by its recordings: %v", h.DocumentID, h.Signals)
		}
	}
	if h := hit(r, "doc_a2_1"); h != nil && !r.LowConfidence {
		t.Errorf("NoRecordings: doc_a2_1 matched on a phrase only its recording holds: %v", h.Signals)
	}
	// semanticSimilarity is reported whether or not semantic fired.
	r = v.search("reset password", wsA, search.Filter{}, 0, 20)
	for _, h := range r.Hits {
		if h.SemanticSimilarity == 0 {
			t.Errorf("%s: no semanticSimilarity", h.DocumentID)
		}
	}
}

func facetsAndTotals(t *testing.T, v *env) {
	for _, q := range []string{"okta", "invoice approval", "salesforce", "password"} {
		r := v.search(q, acme, search.Filter{}, 0, 100)
		if r.LowConfidence || r.MatchedTotal == 0 {
			t.Fatalf("%q matched nothing", q)
		}
		if r.Total != r.MatchedTotal {
			t.Errorf("%q without filters: total %d != matchedTotal %d", q, r.Total, r.MatchedTotal)
		}
		sum := func(fs []search.Facet) int {
			n := 0
			for _, f := range fs {
				n += f.DocumentCount
			}
			return n
		}
		// Every document has one category and one library.
		if sum(r.Facets.Categories) != r.MatchedTotal || sum(r.Facets.Libraries) != r.MatchedTotal {
			t.Errorf("%q: categories sum %d, libraries sum %d, matchedTotal %d", q, sum(r.Facets.Categories), sum(r.Facets.Libraries), r.MatchedTotal)
		}
		// Rule 1: a facet value sent back as the filter gives exactly its count.
		check := func(kind string, fs []search.Facet, filter func(string) search.Filter) {
			for _, fv := range fs {
				fr := v.search(q, acme, filter(fv.Name), 0, 100)
				if fr.Total != fv.DocumentCount || fr.MatchedTotal != r.MatchedTotal || fr.LowConfidence {
					t.Errorf("%q %s=%s: total %d (facet %d), matchedTotal %d (was %d)", q, kind, fv.Name, fr.Total, fv.DocumentCount, fr.MatchedTotal, r.MatchedTotal)
				}
				for _, h := range fr.Hits {
					if !slices.Contains(ids(r), h.DocumentID) {
						t.Errorf("%q %s=%s: %s was not in the unfiltered matches", q, kind, fv.Name, h.DocumentID)
					}
				}
				if fmt.Sprint(fr.Facets) != fmt.Sprint(r.Facets) {
					t.Errorf("%q %s=%s: facets changed with a filter", q, kind, fv.Name)
				}
			}
		}
		check("category", r.Facets.Categories, func(s string) search.Filter { return search.Filter{Category: s} })
		check("tag", r.Facets.Tags, func(s string) search.Filter { return search.Filter{Tag: s} })
		check("application", r.Facets.Applications, func(s string) search.Filter { return search.Filter{Application: s} })
		check("libraryId", r.Facets.Libraries, func(s string) search.Filter { return search.Filter{LibraryID: s} })
		// Facets are ordered by count, then name.
		for _, fs := range [][]search.Facet{r.Facets.Categories, r.Facets.Tags, r.Facets.Applications, r.Facets.Libraries} {
			if !slices.IsSortedFunc(fs, func(a, b search.Facet) int {
				if a.DocumentCount != b.DocumentCount {
					return b.DocumentCount - a.DocumentCount
				}
				return strings.Compare(a.Name, b.Name)
			}) {
				t.Errorf("%q: facet not in order: %v", q, fs)
			}
		}
	}
	// Filters combine, and every hit passes them.
	f := search.Filter{LibraryID: "lib_it", Application: "Okta"}
	r := v.search("password", acme, f, 0, 100)
	for _, id := range ids(r) {
		for _, d := range v.d.Documents {
			if d.ID == id && (d.LibraryID != "lib_it" || !slices.Contains(d.Applications, "Okta")) {
				t.Errorf("%s does not pass %+v", id, f)
			}
		}
	}
}

func pagingAndOrder(t *testing.T, v *env) {
	const q = "okta"
	all := v.search(q, acme, search.Filter{}, 0, 100)
	if all.Total < 10 {
		t.Fatalf("%q has %d matches; the test needs at least 10", q, all.Total)
	}
	for i := 1; i < len(all.Hits); i++ {
		a, b := all.Hits[i-1], all.Hits[i]
		if a.Score < b.Score || (a.Score == b.Score && a.DocumentID > b.DocumentID) {
			t.Errorf("order at %d: %s %.6f before %s %.6f", i, a.DocumentID, a.Score, b.DocumentID, b.Score)
		}
	}
	var paged []string
	for off := 0; off < all.Total; off += 3 {
		p := v.search(q, acme, search.Filter{}, off, 3)
		if p.Total != all.Total {
			t.Errorf("page at %d: total %d, want %d", off, p.Total, all.Total)
		}
		paged = append(paged, ids(p)...)
	}
	if !slices.Equal(paged, ids(all)) {
		t.Errorf("pages of 3 give %v, one page gives %v", paged, ids(all))
	}
	past := v.search(q, acme, search.Filter{}, all.Total+5, 3)
	if len(past.Hits) != 0 || past.Total != all.Total || past.LowConfidence {
		t.Errorf("past the end: %d hits, total %d, low %v", len(past.Hits), past.Total, past.LowConfidence)
	}
	// The same search twice gives the same answer.
	if again := v.search(q, acme, search.Filter{}, 0, 100); fmt.Sprint(again.Hits) != fmt.Sprint(all.Hits) {
		t.Error("two identical searches differ")
	}
}

func fallback(t *testing.T, v *env) {
	visible := 0
	for _, d := range v.d.Documents {
		if slices.Contains(wsA, d.LibraryID) {
			visible++
		}
	}
	r := v.search("zzqx blorf", wsA, search.Filter{}, 0, 100)
	if !r.LowConfidence || len(r.Guidance) == 0 || r.MatchedTotal != 0 || r.Total != visible || len(r.Hits) != visible {
		t.Fatalf("nonsense: low %v guidance %v matched %d total %d hits %d; want the %d visible documents", r.LowConfidence, r.Guidance, r.MatchedTotal, r.Total, len(r.Hits), visible)
	}
	for i, h := range r.Hits {
		if !slices.Equal(h.Signals, []string{search.SignalFallback}) || h.Score != 0 {
			t.Errorf("fallback hit %s: signals %v score %f", h.DocumentID, h.Signals, h.Score)
		}
		if i > 0 { // most active first
			prev, cur := docOf(v.d, r.Hits[i-1].DocumentID), docOf(v.d, h.DocumentID)
			if search.MoreActive(prev, cur) > 0 {
				t.Errorf("fallback order: %s before %s", prev.ID, cur.ID)
			}
		}
	}
	// Filters are honoured when something passes them...
	r = v.search("zzqx blorf", wsA, search.Filter{Category: "Accounts"}, 0, 100)
	if !r.LowConfidence || r.Total != 3 {
		t.Errorf("fallback with a filter: low %v total %d, want the 3 Accounts documents", r.LowConfidence, r.Total)
	}
	for _, h := range r.Hits {
		if docOf(v.d, h.DocumentID).Category != "Accounts" {
			t.Errorf("fallback hit %s does not pass the filter", h.DocumentID)
		}
	}
	// ...and dropped when nothing does.
	r = v.search("zzqx blorf", wsA, search.Filter{Category: "No such category"}, 0, 100)
	if !r.LowConfidence || r.Total != visible || !strings.Contains(strings.Join(r.Guidance, " "), "category") {
		t.Errorf("fallback with an impossible filter: low %v total %d guidance %v", r.LowConfidence, r.Total, r.Guidance)
	}
	// A query that matches, but not with the filter, falls back and says so.
	r = v.search("reset password", wsA, search.Filter{Category: "Payables"}, 0, 100)
	if !r.LowConfidence || r.MatchedTotal == 0 || !strings.Contains(r.Guidance[0], "matched") {
		t.Errorf("filtered-out match: low %v matched %d guidance %v", r.LowConfidence, r.MatchedTotal, r.Guidance)
	}
	// The list is empty only when the key sees no document at all.
	if r := v.search("zzqx blorf", []string{"lib_nobody"}, search.Filter{}, 0, 100); len(r.Hits) != 0 || r.Total != 0 {
		t.Errorf("no visible document: %d hits", len(r.Hits))
	}
}

func docOf(d *doclib.DataSet, id string) *search.Doc {
	for _, doc := range d.Documents {
		if doc.ID == id {
			return &search.Doc{ID: doc.ID, LibraryID: doc.LibraryID, Category: doc.Category, Tags: doc.Tags,
				Applications: doc.Applications, RecordingCount: doc.RecordingCount, LastSeen: doc.LastSeen}
		}
	}
	return nil
}

// scope: nothing outside the visible libraries is returned, counted or allowed
// to shift a ranking. Hidden libraries stuffed with the query's words change
// nothing for a key that cannot see them.
func scope(t *testing.T, f Factory) {
	plain := newEnv(t, f, fixtureData(t))
	file := fixture.File()
	for i := range 30 {
		lib := []string{"lib_a2", "lib_a3", "lib_b1"}[i%3]
		file.Documents = append(file.Documents, dataset.Document{ID: fmt.Sprintf("doc_stuffed_%d", i), LibraryID: lib,
			Slug: fmt.Sprintf("stuffed-%d", i), Title: "Reset password Okta reset password", Category: "Accounts",
			Tags: []string{"security"}, Applications: []string{"Okta"}, DeviceCount: 1,
			FirstSeen: "2026-01-01T00:00:00Z", LastSeen: "2026-09-01T00:00:00Z", CreatedAt: "2026-01-01T00:00:00Z", UpdatedAt: "2026-01-01T00:00:00Z",
			Content: map[string]any{"summary": "Reset a password in Okta; password reset for Okta users."}})
	}
	stuffedData, err := dataset.Validate(file)
	if err != nil {
		t.Fatal(err)
	}
	stuffed := newEnv(t, f, stuffedData)
	for _, q := range []string{"reset password", "okta", "pasword", "notebook provisioning", "zzqx blorf"} {
		a := plain.search(q, oneLibrary, search.Filter{}, 0, 100)
		b := stuffed.search(q, oneLibrary, search.Filter{}, 0, 100)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%q: hidden documents changed the answer for a one-library key:\n%+v\n%+v", q, *a, *b)
		}
		for _, h := range b.Hits {
			if h.LibraryID != "lib_a1" {
				t.Errorf("%q: %s from %s outside scope", q, h.DocumentID, h.LibraryID)
			}
		}
		for _, fv := range b.Facets.Libraries {
			if fv.Name != "lib_a1" {
				t.Errorf("%q: library facet %s outside scope", q, fv.Name)
			}
		}
	}
	// The full-scope key does see them.
	if r := stuffed.search("reset password", wsA, search.Filter{}, 0, 100); r.MatchedTotal <= plain.search("reset password", wsA, search.Filter{}, 0, 100).MatchedTotal {
		t.Error("the stuffed documents are not found even in scope; the test proves nothing")
	}
}
