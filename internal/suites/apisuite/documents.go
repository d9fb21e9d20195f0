package apisuite

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/doclib/doclib/shared/data/dataset"
)

// biggestLibrary is the full key's library with the most documents.
func (s *suite) biggestLibrary() string {
	best := ""
	for _, id := range s.m.visibleLibs(s.m.full) {
		if best == "" || len(s.m.docsByLib[id]) > len(s.m.docsByLib[best]) {
			best = id
		}
	}
	return best
}

// listPage fetches one page of a library's documents and checks its shape and
// echoes; it returns nil when the answer is not 200.
func (s *suite) listPage(t testing.TB, libID, query string, wantPage, wantSize int) *apiDocumentPage {
	t.Helper()
	r := s.get(t, s.reader(), "/libraries/"+esc(libID)+"/documents"+query)
	if r.status != http.StatusOK {
		t.Errorf("%s: want 200", r)
		return nil
	}
	var got apiDocumentPage
	raw := shape(t, r.at(), ok(t, r, &got), documentPageFields)
	for _, d := range items(raw, "documents") {
		shape(t, r.at()+" documents[]", d, listItemFields)
	}
	if got.Page != wantPage || got.PageSize != wantSize {
		t.Errorf("%s: page %d pageSize %d echoed, want %d %d", r.at(), got.Page, got.PageSize, wantPage, wantSize)
	}
	if len(got.Documents) > wantSize {
		t.Errorf("%s: %d documents on a page of %d", r.at(), len(got.Documents), wantSize)
	}
	checkSchema(t, r.at(), got.Schema, s.m.libs[libID])
	for _, d := range got.Documents {
		if s.m.docs[d.ID] == nil || s.m.libOf(d.ID) != libID {
			t.Errorf("%s: document %s is not of library %s", r.at(), d.ID, libID)
			continue
		}
		s.checkDocFields(t, r.at(), d, listItemFields)
	}
	return &got
}

// filtered is the library's documents passing keep, in list order.
func (s *suite) filtered(libID string, keep func(d *dataset.Document) bool) []string {
	var docs []*dataset.Document
	for _, d := range s.m.docsByLib[libID] {
		if keep(d) {
			docs = append(docs, d)
		}
	}
	slices.SortFunc(docs, byUpdated)
	return docIDs(docs)
}

func (s *suite) testDocumentsList(t *testing.T) {
	lib := s.biggestLibrary()
	all := s.filtered(lib, func(*dataset.Document) bool { return true })

	t.Run("every-page", func(t *testing.T) {
		// Pages of 25 in the decided order (updatedAt descending, then id),
		// without overlap or gap, then an empty page past the end.
		const size = 25
		var got []string
		pages := (len(all) + size - 1) / size
		for p := 1; p <= pages+1; p++ {
			page := s.listPage(t, lib, q("page", strconv.Itoa(p), "pageSize", strconv.Itoa(size)), p, size)
			if page == nil {
				return
			}
			if page.Total != len(all) {
				t.Errorf("page %d: total %d, want %d", p, page.Total, len(all))
			}
			if p == pages+1 && len(page.Documents) != 0 {
				t.Errorf("page %d, past the end: %d documents, want none", p, len(page.Documents))
			}
			got = append(got, ids(page.Documents)...)
		}
		if !slices.Equal(got, all) {
			t.Errorf("pages of %d put together:\n got %v\nwant %v", size, got, all)
		}
	})

	t.Run("page-size-capped", func(t *testing.T) {
		page := s.listPage(t, lib, q("pageSize", "1000"), 1, 100)
		if page != nil && !slices.Equal(ids(page.Documents), all[:min(100, len(all))]) {
			t.Errorf("pageSize=1000 (capped at 100): %v, want %v", ids(page.Documents), all[:min(100, len(all))])
		}
	})

	t.Run("defaults", func(t *testing.T) {
		page := s.listPage(t, lib, "", 1, 20)
		if page != nil && (!slices.Equal(ids(page.Documents), all[:min(20, len(all))]) || page.Total != len(all)) {
			t.Errorf("default page: %v total %d, want %v total %d", ids(page.Documents), page.Total, all[:min(20, len(all))], len(all))
		}
	})

	t.Run("filters", func(t *testing.T) {
		cat := mostUsed(s.m.labelCounts(lib, "categories"), len(all))
		tag := mostUsed(s.m.labelCounts(lib, "tags"), len(all))
		app := mostUsed(s.m.labelCounts(lib, "applications"), len(all))
		needle := s.searchNeedle(lib)
		cases := []struct {
			query string
			keep  func(d *dataset.Document) bool
		}{
			{q("category", cat), func(d *dataset.Document) bool { return d.Category == cat }},
			{q("tag", tag), func(d *dataset.Document) bool { return slices.Contains(d.Tags, tag) }},
			{q("application", app), func(d *dataset.Document) bool { return slices.Contains(d.Applications, app) }},
			{q("search", needle), func(d *dataset.Document) bool { return matchesSearch(d, needle, false) }},
			{q("category", cat, "tag", tag), func(d *dataset.Document) bool { return d.Category == cat && slices.Contains(d.Tags, tag) }},
			{q("category", "No such category"), func(*dataset.Document) bool { return false }},
			{q("search", "zqxjvw"), func(*dataset.Document) bool { return false }},
		}
		for _, c := range cases {
			want := s.filtered(lib, c.keep)
			page := s.listPage(t, lib, c.query+"&pageSize=100", 1, 100)
			if page == nil {
				continue
			}
			if !slices.Equal(ids(page.Documents), want[:min(100, len(want))]) || page.Total != len(want) {
				t.Errorf("%s: %v total %d, want %v total %d", c.query, ids(page.Documents), page.Total, want, len(want))
			}
		}
	})

	t.Run("bad-parameters", func(t *testing.T) {
		for _, v := range []string{"page=0", "pageSize=0", "pageSize=abc", "page=1.5", "page="} {
			r := s.get(t, s.reader(), "/libraries/"+lib+"/documents?"+v)
			s.expectError(t, r, http.StatusBadRequest, "bad_request")
		}
		// Parameters are checked before the library is looked up.
		s.expectError(t, s.get(t, s.reader(), "/libraries/no-such-library/documents?page=0"), http.StatusBadRequest, "bad_request")
		s.expectError(t, s.get(t, s.reader(), "/libraries/no-such-library/documents"), http.StatusNotFound, "not_found")
	})
}

// mostUsed is the label with the most documents that still narrows the list
// (fewer than all), ties by name.
func mostUsed(counts map[string]int, all int) string {
	best := ""
	for _, name := range sortedKeys(counts) {
		if n := counts[name]; n < all && (best == "" || n > counts[best]) {
			best = name
		}
	}
	return best
}

// searchNeedle picks a lower-case piece from inside a word of the library's
// titles that matches some documents but not all, and matches the same
// documents whether or not case is ignored (the spec says "substring"; it
// does not say whether case counts, so the suite does not depend on it).
func (s *suite) searchNeedle(lib string) string {
	docs := s.m.docsByLib[lib]
	for _, d := range docs {
		for _, w := range strings.Fields(d.Title) {
			if len(w) < 8 || strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLower(r) }) >= 0 {
				continue
			}
			needle := w[1:6] // inside the word: a substring, not a word
			n, same := 0, true
			for _, x := range docs {
				a, b := matchesSearch(x, needle, false), matchesSearch(x, needle, true)
				same = same && a == b
				if a {
					n++
				}
			}
			if same && n > 0 && n < len(docs) {
				return needle
			}
		}
	}
	panic(fmt.Sprintf("apisuite: no search needle for %s", lib))
}

// testDocument: GET /documents/{id} in full, for a document of each library
// the full key sees (the one with the most edges to other libraries), and the
// identifiers that do not resolve.
func (s *suite) testDocument(t *testing.T) {
	for _, lib := range s.m.visibleLibs(s.m.full) {
		d := s.m.busiest(lib, true)
		s.checkDocument(t, s.reader(), d.ID)
	}
	// Another workspace's document, with its own key.
	for _, l := range s.m.visibleLibs(s.m.individual) {
		s.checkDocument(t, s.m.individual, s.m.docsByLib[l][0].ID)
		break
	}
	t.Run("not-found", func(t *testing.T) {
		d := s.m.docsByLib[s.m.visibleLibs(s.m.full)[0]][0]
		other := ""
		for _, x := range s.m.file.Documents {
			if s.m.libs[x.LibraryID].WorkspaceID != s.m.full.WorkspaceID {
				other = x.ID
				break
			}
		}
		// A slug never resolves, nor does an ID of another case or workspace.
		for _, ref := range []string{d.Slug, "doc_no_such_document", strings.ToUpper(d.ID), other} {
			s.expectError(t, s.get(t, s.reader(), "/documents/"+esc(ref)), http.StatusNotFound, "not_found")
		}
	})
}

// checkDocument fetches a document as key and compares all of it.
func (s *suite) checkDocument(t testing.TB, key *dataset.APIKey, id string) {
	t.Helper()
	r := s.get(t, key, "/documents/"+id)
	var got apiDoc
	raw := shape(t, r.at(), ok(t, r, &got), documentFields)
	if got.ID != id {
		t.Errorf("%s: id %s", r.at(), got.ID)
		return
	}
	shape(t, r.at()+" library", raw["library"], libraryRefFields)
	s.checkDocFields(t, r.at(), got, documentFields)
	checkSchema(t, r.at(), got.Schema, s.m.libs[s.m.libOf(id)])
	s.checkDocEdges(t, r.at(), key, id, got.Edges, raw["edges"])
}
