package apisuite

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/doclib/doclib/shared/data/dataset"
)

var signals = []string{"lexical", "fuzzy", "semantic", "source_recordings", "fallback"}

// search sends a search as key and checks everything a search answer must be
// for that key: shapes, hits against the demo data and the key's scope,
// ranking, schemas, facets. It returns nil when the answer is not 200.
func (s *suite) search(t testing.TB, key *dataset.APIKey, query string, page, size int) *apiSearch {
	t.Helper()
	r := s.get(t, key, "/search/documents"+query)
	if r.status != http.StatusOK {
		t.Errorf("%s: want 200", r)
		return nil
	}
	var got apiSearch
	generic := ok(t, r, &got)
	fields := searchFields
	if got.LowConfidence {
		fields = searchLowFields // guidance is present only with lowConfidence
	}
	raw := shape(t, r.at(), generic, fields)
	where := r.method + " " + r.path + " as " + key.ID
	for i, h := range items(raw, "documents") {
		o := shape(t, where+" hit", h, hitFields)
		shape(t, where+" hit library", o["library"], libraryRefFields)
		shape(t, where+" hit relevance", o["relevance"], relevanceFields)
		if i < len(got.Documents) {
			s.checkDocEdges(t, where+" hit", key, got.Documents[i].ID, got.Documents[i].Edges, o["edges"])
		}
	}
	facets := shape(t, where+" facets", raw["facets"], facetsFields)
	for _, f := range []string{"categories", "tags", "applications"} {
		for _, e := range items(facets, f) {
			shape(t, where+" facets."+f+"[]", e, labelFields)
		}
	}
	for _, e := range items(facets, "libraries") {
		shape(t, where+" facets.libraries[]", e, libraryFacetField)
	}

	if got.Page != page || got.PageSize != size {
		t.Errorf("%s: page %d pageSize %d echoed, want %d %d", where, got.Page, got.PageSize, page, size)
	}
	if want := max(0, min(size, got.Total-(page-1)*size)); len(got.Documents) != want {
		t.Errorf("%s: %d hits with total %d, want %d on this page", where, len(got.Documents), got.Total, want)
	}
	if page == 1 && len(got.Documents) == 0 && len(s.m.visibleDocs(key)) > 0 {
		t.Errorf("%s: an empty list; search never returns one while the key sees documents", where)
	}
	if got.LowConfidence {
		if len(got.Guidance) == 0 || slices.Contains(got.Guidance, "") {
			t.Errorf("%s: lowConfidence without guidance hints: %q", where, got.Guidance)
		}
	}

	hitLibs := map[string]bool{}
	for i, h := range got.Documents {
		if !s.m.seesDoc(key, h.ID) {
			t.Errorf("%s: hit %s is outside the key's scope", where, h.ID)
			continue
		}
		hitLibs[s.m.libOf(h.ID)] = true
		s.checkDocFields(t, where, h, hitFields)
		rel := h.Relevance
		for _, sig := range rel.Signals {
			if !slices.Contains(signals, sig) {
				t.Errorf("%s: hit %s has signal %q, not one of %v", where, h.ID, sig, signals)
			}
		}
		if got.LowConfidence && !slices.Equal(rel.Signals, []string{"fallback"}) {
			t.Errorf("%s: fallback hit %s has signals %v, want [fallback]", where, h.ID, rel.Signals)
		}
		if !got.LowConfidence && (len(rel.Signals) == 0 || slices.Contains(rel.Signals, "fallback")) {
			t.Errorf("%s: hit %s has signals %v in a confident answer", where, h.ID, rel.Signals)
		}
		if rel.Score < 0 || rel.Score > 1 || rel.SemanticSimilarity < -1 || rel.SemanticSimilarity > 1 {
			t.Errorf("%s: hit %s score %v semanticSimilarity %v out of range", where, h.ID, rel.Score, rel.SemanticSimilarity)
		}
		if i > 0 && !got.LowConfidence {
			p := got.Documents[i-1]
			if p.Relevance.Score < rel.Score || (p.Relevance.Score == rel.Score && p.ID > h.ID) {
				t.Errorf("%s: %s (score %v) ranked after %s (score %v): want best first, ties by id", where, h.ID, rel.Score, p.ID, p.Relevance.Score)
			}
		}
	}
	if g, w := sortedKeys(got.Schemas), sortedKeys(hitLibs); !slices.Equal(g, w) {
		t.Errorf("%s: schemas for %v, want one per library of the hits %v", where, g, w)
	}
	for id, sch := range got.Schemas {
		if l := s.m.libs[id]; l != nil {
			checkSchema(t, where+" schemas["+id+"]", sch, l)
		}
	}
	s.checkFacets(t, where, key, &got)
	return &got
}

// checkFacets: the facets break down the matched set, inside the key's scope.
func (s *suite) checkFacets(t testing.TB, where string, key *dataset.APIKey, got *apiSearch) {
	t.Helper()
	valid := map[string]map[string]bool{"categories": {}, "tags": {}, "applications": {}}
	for _, d := range s.m.visibleDocs(key) {
		valid["categories"][d.Category] = true
		for _, x := range d.Tags {
			valid["tags"][x] = true
		}
		for _, x := range d.Applications {
			valid["applications"][x] = true
		}
	}
	for name, entries := range map[string][]apiLabel{"categories": got.Facets.Categories, "tags": got.Facets.Tags, "applications": got.Facets.Applications} {
		labelSet(t, where+" facets."+name, entries) // no duplicates
		for _, e := range entries {
			if !valid[name][e.Name] {
				t.Errorf("%s: facets.%s has %q, used by no document the key sees", where, name, e.Name)
			}
			if e.DocumentCount < 1 || e.DocumentCount > got.MatchedTotal {
				t.Errorf("%s: facets.%s %q counts %d of %d matched", where, name, e.Name, e.DocumentCount, got.MatchedTotal)
			}
		}
	}
	// Every document has one category and one library: both facets add up to
	// the matched set.
	sum := 0
	for _, e := range got.Facets.Categories {
		sum += e.DocumentCount
	}
	if sum != got.MatchedTotal {
		t.Errorf("%s: the categories facet adds up to %d, matchedTotal is %d", where, sum, got.MatchedTotal)
	}
	sum = 0
	for _, e := range got.Facets.Libraries {
		sum += e.DocumentCount
		if !s.m.sees(key, e.ID) || s.m.libs[e.ID].Name != e.Name {
			t.Errorf("%s: facets.libraries has %s %q, not a library the key sees by that name", where, e.ID, e.Name)
		}
		if e.DocumentCount > len(s.m.docsByLib[e.ID]) {
			t.Errorf("%s: facets.libraries counts %d in %s, which holds %d", where, e.DocumentCount, e.ID, len(s.m.docsByLib[e.ID]))
		}
	}
	if sum != got.MatchedTotal {
		t.Errorf("%s: the libraries facet adds up to %d, matchedTotal is %d", where, sum, got.MatchedTotal)
	}
}

// words are the lower-cased runs of letters of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
}

// hasAllWords reports whether the document's title and content hold every word.
func hasAllWords(d *dataset.Document, ws []string) bool {
	have := map[string]bool{}
	for _, w := range words(d.Title) {
		have[w] = true
	}
	for _, str := range contentStrings(d.Content) {
		for _, w := range words(str) {
			have[w] = true
		}
	}
	for _, w := range ws {
		if !have[w] {
			return false
		}
	}
	return true
}

// searchWords picks up to three plain words (four letters or more) of the
// title of the biggest library's busiest document: a query with word matches.
func (s *suite) searchWords() (*dataset.Document, []string) {
	d := s.m.busiest(s.biggestLibrary(), false)
	var out []string
	for _, w := range strings.Fields(d.Title) {
		if len(out) < 3 && len(w) >= 4 && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 &&
			!slices.Contains(out, strings.ToLower(w)) {
			out = append(out, strings.ToLower(w))
		}
	}
	return d, out
}

// nonsense is a query of random letters that occur in no demo document: it
// matches nothing, so the answer is the fallback (docs/api.md).
const nonsense = "zqxwv jkqpf"

func (s *suite) testSearch(t *testing.T) {
	m := s.m
	key := m.full
	visible := m.visibleDocs(key)
	titleDoc, ws := s.searchWords()
	query := strings.Join(ws, " ")
	var first *apiSearch

	t.Run("ranked-and-paged", func(t *testing.T) {
		first = s.search(t, key, q("q", query, "pageSize", "100"), 1, 100)
		if first == nil {
			t.FailNow()
		}
		if first.LowConfidence || first.MatchedTotal != first.Total || first.Total > len(visible) {
			t.Errorf("q=%q: lowConfidence %v total %d matchedTotal %d (of %d visible): want a confident answer, total = matchedTotal without filters",
				query, first.LowConfidence, first.Total, first.MatchedTotal, len(visible))
		}
		all := first.Documents
		if first.Total > 100 {
			if next := s.search(t, key, q("q", query, "pageSize", "100", "page", "2"), 2, 100); next != nil {
				all = append(all, next.Documents...)
			}
		}
		if len(all) != first.Total || len(slices.Compact(sortedCopy(ids(all)))) != len(all) {
			t.Errorf("q=%q: %d hits over the pages, %d distinct, want total %d", query, len(all), len(slices.Compact(sortedCopy(ids(all)))), first.Total)
		}
		// Every visible document holding all the words is a word match.
		signalsOf := map[string][]string{}
		for _, h := range all {
			signalsOf[h.ID] = h.Relevance.Signals
		}
		for _, d := range visible {
			if hasAllWords(d, ws) && !slices.Contains(signalsOf[d.ID], "lexical") {
				t.Errorf("q=%q: %s holds every word but is not a lexical hit (signals %v)", query, d.ID, signalsOf[d.ID])
			}
		}
		if !slices.Contains(signalsOf[titleDoc.ID], "lexical") {
			t.Errorf("q=%q: %s, whose title holds the words, is not a lexical hit", query, titleDoc.ID)
		}
		// A smaller page is the same ranking cut differently.
		if second := s.search(t, key, q("q", query, "pageSize", "7", "page", "2"), 2, 7); second != nil && len(all) >= 14 {
			if g, w := ids(second.Documents), ids(all[7:14]); !slices.Equal(g, w) {
				t.Errorf("q=%q page 2 of 7: %v, want %v (hits 8 to 14 of the ranking)", query, g, w)
			}
		}
	})

	t.Run("facet-values-as-filters", func(t *testing.T) {
		if first == nil {
			t.Skip("no first answer")
		}
		pick := func(ls []apiLabel) string {
			best := apiLabel{}
			for _, l := range ls {
				if l.DocumentCount < first.MatchedTotal && l.DocumentCount > best.DocumentCount {
					best = l
				}
			}
			return best.Name
		}
		type filter struct {
			param, value string
			count        int
			keep         func(d *dataset.Document) bool
		}
		var filters []filter
		count := func(ls []apiLabel, v string) int {
			for _, l := range ls {
				if l.Name == v {
					return l.DocumentCount
				}
			}
			return 0
		}
		if v := pick(first.Facets.Categories); v != "" {
			filters = append(filters, filter{"category", v, count(first.Facets.Categories, v), func(d *dataset.Document) bool { return d.Category == v }})
		}
		if v := pick(first.Facets.Tags); v != "" {
			filters = append(filters, filter{"tag", v, count(first.Facets.Tags, v), func(d *dataset.Document) bool { return slices.Contains(d.Tags, v) }})
		}
		if v := pick(first.Facets.Applications); v != "" {
			filters = append(filters, filter{"application", v, count(first.Facets.Applications, v), func(d *dataset.Document) bool { return slices.Contains(d.Applications, v) }})
		}
		for _, l := range first.Facets.Libraries {
			if l.DocumentCount < first.MatchedTotal {
				id := l.ID
				filters = append(filters, filter{"libraryId", id, l.DocumentCount, func(d *dataset.Document) bool { return d.LibraryID == id }})
				break
			}
		}
		// Two kinds at least: a target whose search is lexical only (the
		// stand-in's fake cluster) matches fewer, more alike documents.
		if len(filters) < 2 {
			t.Fatalf("q=%q: facets too thin to test the filters: %+v", query, first.Facets)
		}
		for _, f := range filters {
			got := s.search(t, key, q("q", query, f.param, f.value, "pageSize", "100"), 1, 100)
			if got == nil {
				continue
			}
			// Rule 1: a facet value sent back narrows to exactly its count;
			// matchedTotal and the facets are of the query before filters.
			if got.Total != f.count || got.MatchedTotal != first.MatchedTotal || got.LowConfidence {
				t.Errorf("%s=%q: total %d matchedTotal %d lowConfidence %v, want total %d (the facet's count), matchedTotal %d",
					f.param, f.value, got.Total, got.MatchedTotal, got.LowConfidence, f.count, first.MatchedTotal)
			}
			for _, h := range got.Documents {
				if d := m.docs[h.ID]; d != nil && !f.keep(d) {
					t.Errorf("%s=%q: hit %s does not pass the filter", f.param, f.value, h.ID)
				}
			}
		}
	})

	t.Run("filters-matching-nothing-fall-back", func(t *testing.T) {
		// The filtered matched set is empty and no visible document passes
		// the filter: the fallback is every visible document.
		got := s.search(t, key, q("q", query, "category", "No such category", "pageSize", "5"), 1, 5)
		if got != nil && (!got.LowConfidence || got.Total != len(visible) || (first != nil && got.MatchedTotal != first.MatchedTotal)) {
			t.Errorf("lowConfidence %v total %d matchedTotal %d, want true, %d (every visible document), the unfiltered matchedTotal",
				got.LowConfidence, got.Total, got.MatchedTotal, len(visible))
		}
	})

	t.Run("nonsense-falls-back", func(t *testing.T) {
		for _, d := range m.file.Documents {
			for _, w := range strings.Fields(nonsense) {
				if matchesSearch(&d, w, true) {
					t.Fatalf("the nonsense query %q occurs in %s", nonsense, d.ID)
				}
			}
		}
		got := s.search(t, key, q("q", nonsense, "pageSize", "10"), 1, 10)
		if got == nil {
			return
		}
		if !got.LowConfidence || got.MatchedTotal != 0 || got.Total != len(visible) {
			t.Errorf("q=%q: lowConfidence %v matchedTotal %d total %d, want true 0 %d", nonsense, got.LowConfidence, got.MatchedTotal, got.Total, len(visible))
		}
		f := got.Facets
		if len(f.Categories)+len(f.Tags)+len(f.Applications)+len(f.Libraries) != 0 {
			t.Errorf("q=%q: facets of an empty matched set: %+v", nonsense, f)
		}
		// The most active visible documents.
		want := slices.Clone(visible)
		slices.SortFunc(want, m.byActivity)
		if g, w := ids(got.Documents), docIDs(want[:min(10, len(want))]); !slices.Equal(g, w) {
			t.Errorf("q=%q: fallback %v, want the most active %v", nonsense, g, w)
		}

		// With a filter some documents pass: the most active of those.
		cat := mostUsed(countCategories(visible), len(visible))
		got = s.search(t, key, q("q", nonsense, "category", cat, "pageSize", "100"), 1, 100)
		var pass []*dataset.Document
		for _, d := range want {
			if d.Category == cat {
				pass = append(pass, d)
			}
		}
		if got != nil && (!got.LowConfidence || got.Total != len(pass) || !slices.Equal(ids(got.Documents), docIDs(pass[:min(100, len(pass))]))) {
			t.Errorf("q=%q category=%q: lowConfidence %v total %d %v, want the %d documents of the category, most active first %v",
				nonsense, cat, got.LowConfidence, got.Total, ids(got.Documents), len(pass), docIDs(pass))
		}
	})

	t.Run("individual-plan-reads-no-recording", func(t *testing.T) {
		// No recording is readable on the Individual plan, so none can be a
		// reason for a hit: search with the words of one marked shared.
		var text string
		for _, r := range m.file.Recordings {
			if r.Shared && len(r.Questions) > 0 && m.seesDoc(m.individual, r.DocumentIDs[0]) {
				text = r.Questions[0].Question + " " + r.Questions[0].Response
				break
			}
		}
		if text == "" {
			t.Fatal("the demo data has no shared recording on the Individual plan")
		}
		got := s.search(t, m.individual, q("q", text[:min(len(text), 200)], "pageSize", "100"), 1, 100)
		if got == nil {
			return
		}
		for _, h := range got.Documents {
			if slices.Contains(h.Relevance.Signals, "source_recordings") {
				t.Errorf("hit %s has the source_recordings signal on the Individual plan", h.ID)
			}
		}
	})

	t.Run("page-size-capped", func(t *testing.T) {
		s.search(t, key, q("q", query, "pageSize", "500"), 1, 100)
	})

	t.Run("bad-parameters", func(t *testing.T) {
		other := ""
		for _, l := range m.file.Libraries {
			if l.WorkspaceID != key.WorkspaceID {
				other = l.ID
				break
			}
		}
		for _, c := range []struct {
			query  string
			status int
			code   string
		}{
			{"", 400, "bad_request"},
			{q("q", "a"), 400, "bad_request"},
			{q("q", strings.Repeat("x", 513)), 400, "bad_request"},
			{q("q", "reset", "libraryId", m.libs[m.visibleLibs(key)[0]].Slug), 400, "bad_request"},
			{q("q", "reset", "page", "0"), 400, "bad_request"},
			{q("q", "reset", "pageSize", "0"), 400, "bad_request"},
			{"?q=reset&q=password", 400, "bad_request"},
			{q("q", "reset", "libraryId", other), 404, "not_found"},
			{q("q", "reset", "libraryId", "lib_no_such_library"), 404, "not_found"},
		} {
			s.expectError(t, s.get(t, key, "/search/documents"+c.query), c.status, c.code)
		}
		// q of 512 characters is allowed.
		s.search(t, key, q("q", strings.Repeat("ab ", 170)+"ab", "pageSize", "1"), 1, 1)
	})
}

func countCategories(docs []*dataset.Document) map[string]int {
	out := map[string]int{}
	for _, d := range docs {
		out[d.Category]++
	}
	return out
}
