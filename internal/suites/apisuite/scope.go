package apisuite

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/data/dataset"
)

// testScope: scope is a security boundary. A key that sees some libraries of
// its workspace learns nothing of the others: they answer as if they did not
// exist, and they leave no trace in lists, counts, edges, walks or search.
func (s *suite) testScope(t *testing.T) {
	m := s.m
	key := m.scoped
	inScope := m.visibleLibs(key)
	var outside []string // the same workspace's libraries the key does not see
	for _, id := range m.workspaceLibs(key.WorkspaceID) {
		if !m.sees(key, id) {
			outside = append(outside, id)
		}
	}
	var otherWS string // and a library of another workspace
	for _, l := range m.file.Libraries {
		if l.WorkspaceID != key.WorkspaceID {
			otherWS = l.ID
			break
		}
	}

	// Every path of the first library outside; the ID and slugs of the
	// others (the requests are counted: the per-IP limit is 300 a minute).
	t.Run("libraries-outside-answer-404", func(t *testing.T) {
		for i, id := range append(slices.Clone(outside), otherWS) {
			l := m.libs[id]
			subs := []string{""}
			if i == 0 {
				subs = []string{"", "/tags", "/categories", "/applications", "/graph", "/documents"}
			}
			for _, sub := range subs {
				s.expectError(t, s.get(t, key, "/libraries/"+id+sub), http.StatusNotFound, "not_found")
			}
			for _, slug := range append([]string{l.Slug}, l.PreviousSlugs...) {
				s.expectError(t, s.get(t, key, "/libraries/"+esc(slug)), http.StatusNotFound, "not_found")
			}
		}
	})

	t.Run("documents-outside-answer-404", func(t *testing.T) {
		for i, lib := range append(slices.Clone(outside), otherWS) {
			d := m.busiest(lib, true).ID
			subs := []string{""}
			if i == 0 {
				subs = []string{"", "/traverse", "/source-recordings"}
			}
			for _, sub := range subs {
				s.expectError(t, s.get(t, key, "/documents/"+d+sub), http.StatusNotFound, "not_found")
			}
		}
	})

	t.Run("libraries-inside", func(t *testing.T) {
		for _, id := range inScope {
			r := s.get(t, key, "/libraries/"+id)
			var got apiLibrary
			shape(t, r.at(), ok(t, r, &got), libraryFullFields)
			s.checkLibrary(t, r.at(), key, got)
			s.checkEdgeCount(t, r.at(), key, got) // no edge to a library out of scope counts
			s.checkGraph(t, key, id)
		}
	})

	border := m.border(key)
	if border == nil {
		t.Fatal("the demo data has no edge from the scoped key's libraries to one outside")
	}

	t.Run("document-edges", func(t *testing.T) {
		s.checkDocument(t, key, border.ID)
	})
	t.Run("traverse-stops-at-the-border", func(t *testing.T) {
		for _, dir := range []string{"both", "incoming"} {
			s.checkTraversal(t, key, border.ID, q("depth", "3", "direction", dir), dir, "", 3)
		}
	})
	t.Run("source-recordings", func(t *testing.T) {
		d := s.docWhere(key, func(d *dataset.Document) bool { return len(m.readableRecordings(d.ID)) > 0 })
		if d == nil {
			t.Skip("no readable recording in scope")
		}
		s.recordingsPage(t, key, d.ID, "", 1, 20)
	})
	t.Run("search", func(t *testing.T) {
		// Words from a document outside scope: whatever matches, nothing
		// outside scope may be a hit, a facet or a count (search checks it).
		outDoc := m.busiest(outside[0], true)
		got := s.search(t, key, q("q", strings.Join(words(outDoc.Title), " "), "pageSize", "100"), 1, 100)
		if got != nil && got.Total > len(m.visibleDocs(key)) {
			t.Errorf("total %d, but the key sees %d documents", got.Total, len(m.visibleDocs(key)))
		}
		got = s.search(t, key, q("q", nonsense, "pageSize", "100"), 1, 100)
		if got != nil && (!got.LowConfidence || got.Total != len(m.visibleDocs(key))) {
			t.Errorf("q=%q: lowConfidence %v total %d, want the fallback over the %d documents in scope",
				nonsense, got.LowConfidence, got.Total, len(m.visibleDocs(key)))
		}
		for _, id := range outside {
			s.expectError(t, s.get(t, key, "/search/documents"+q("q", "reset password", "libraryId", id)), http.StatusNotFound, "not_found")
		}
	})
}

// testBilling: the 402 codes, in the order of checks, and the workspaces that
// bring their own provider key.
func (s *suite) testBilling(t *testing.T) {
	m := s.m
	t.Run("insufficient-credit", func(t *testing.T) {
		for range 2 { // no fall back to word match alone, however often asked
			s.expectError(t, s.get(t, m.noCredit, "/search/documents"+q("q", "reset password")), http.StatusPaymentRequired, "insufficient_ai_credit")
		}
		// Validation comes before billing.
		s.expectError(t, s.get(t, m.noCredit, "/search/documents"+q("q", "x")), http.StatusBadRequest, "bad_request")
		// Everything else works.
		if r := s.get(t, m.noCredit, "/libraries"); r.status != http.StatusOK {
			t.Errorf("%s: want 200: only search needs credit", r)
		}
	})
	t.Run("subscription-suspended", func(t *testing.T) {
		s.expectError(t, s.get(t, m.suspended, "/search/documents"+q("q", "reset password")), http.StatusPaymentRequired, "subscription_suspended")
		// Lookup comes before billing: a library of another workspace is 404.
		other := ""
		for _, l := range m.file.Libraries {
			if l.WorkspaceID != m.suspended.WorkspaceID {
				other = l.ID
				break
			}
		}
		s.expectError(t, s.get(t, m.suspended, "/search/documents"+q("q", "reset password", "libraryId", other)), http.StatusNotFound, "not_found")
		if r := s.get(t, m.suspended, "/libraries"); r.status != http.StatusOK {
			t.Errorf("%s: want 200: only search is billed", r)
		}
	})
	t.Run("own-provider-key-is-not-metered", func(t *testing.T) {
		if w := m.workspaces[m.ownProvider.WorkspaceID]; w.AICredit != 0 {
			t.Logf("the own-provider workspace has %d credit in the demo data; the check is weaker", w.AICredit)
		}
		for range 3 {
			s.search(t, m.ownProvider, q("q", "reset password", "pageSize", "3"), 1, 3)
		}
	})
}

// border is the document key sees with the most edges into libraries it does
// not see (nil if none has any): its answers differ most from a wider key's.
func (m *model) border(key *dataset.APIKey) *dataset.Document {
	var border *dataset.Document
	bestOut := 0
	for _, d := range m.visibleDocs(key) {
		n := 0
		for _, e := range m.file.Edges {
			if (e.SourceDocumentID == d.ID && !m.seesDoc(key, e.TargetDocumentID)) || (e.TargetDocumentID == d.ID && !m.seesDoc(key, e.SourceDocumentID)) {
				n++
			}
		}
		if n > bestOut || (n == bestOut && border != nil && d.ID < border.ID) {
			border, bestOut = d, n
		}
	}
	if bestOut == 0 {
		return nil
	}
	return border
}
