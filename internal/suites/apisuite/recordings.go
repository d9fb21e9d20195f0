package apisuite

import (
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/doclib/doclib/shared/data/dataset"
)

// recordingsPage fetches a page of a document's source recordings and checks
// it against the demo data: totals, the readable recordings in order, each in
// full. It returns the IDs listed.
func (s *suite) recordingsPage(t testing.TB, key *dataset.APIKey, docID, query string, page, size int) []string {
	t.Helper()
	r := s.get(t, key, "/documents/"+docID+"/source-recordings"+query)
	var got apiRecordings
	raw := shape(t, r.at(), ok(t, r, &got), recordingsFields)
	for _, rec := range items(raw, "sourceRecordings") {
		o := shape(t, r.at()+" sourceRecordings[]", rec, recordingFields)
		for _, qa := range items(o, "questions") {
			shape(t, r.at()+" questions[]", qa, questionFields)
		}
	}
	readable := s.m.readableRecordings(docID)
	linked := s.m.recordingCount(docID)
	if got.Total != len(readable) || got.LinkedTotal != linked || got.PrivateTotal != linked-len(readable) {
		t.Errorf("%s: total %d linkedTotal %d privateTotal %d, want %d %d %d", r.at(),
			got.Total, got.LinkedTotal, got.PrivateTotal, len(readable), linked, linked-len(readable))
	}
	if got.Page != page || got.PageSize != size {
		t.Errorf("%s: page %d pageSize %d echoed, want %d %d", r.at(), got.Page, got.PageSize, page, size)
	}
	// guidance explains a gap, and is empty when there is none.
	if (linked-len(readable) == 0) != (got.Guidance == "") {
		t.Errorf("%s: guidance %q with %d of %d recordings unreadable", r.at(), got.Guidance, linked-len(readable), linked)
	}
	from := min((page-1)*size, len(readable))
	want := readable[from:min(from+size, len(readable))]
	var gotIDs []string
	for _, rec := range got.SourceRecordings {
		gotIDs = append(gotIDs, rec.ID)
	}
	if !slices.Equal(gotIDs, recordingIDs(want)) {
		t.Errorf("%s: recordings %v, want %v (shared only, clientCreatedAt descending, then id)", r.at(), gotIDs, recordingIDs(want))
		return gotIDs
	}
	for i, rec := range got.SourceRecordings {
		w := want[i]
		same := rec.Title == w.Title && rec.Status == w.Status && sameTime(rec.ClientCreatedAt, w.ClientCreatedAt) &&
			slices.Equal(rec.Steps, w.Steps) && len(rec.Questions) == len(w.Questions)
		wq := slices.Clone(w.Questions)
		slices.SortStableFunc(wq, func(a, b dataset.Question) int { return a.SequenceOrder - b.SequenceOrder })
		for j := 0; same && j < len(wq); j++ {
			g := rec.Questions[j]
			same = g.ID == wq[j].ID && g.Question == wq[j].Question && g.Response == wq[j].Response && g.SequenceOrder == wq[j].SequenceOrder
		}
		if !same {
			t.Errorf("%s: recording %s differs from the demo data (questions in sequenceOrder): %+v", r.at(), rec.ID, rec)
		}
	}
	return gotIDs
}

func recordingIDs(rs []*dataset.Recording) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// docWhere is the first document the key sees for which ok holds, by ID.
func (s *suite) docWhere(key *dataset.APIKey, keep func(d *dataset.Document) bool) *dataset.Document {
	var best *dataset.Document
	for _, d := range s.m.visibleDocs(key) {
		if keep(d) && (best == nil || d.ID < best.ID) {
			best = d
		}
	}
	return best
}

func (s *suite) testSourceRecordings(t *testing.T) {
	m := s.m
	key := m.full
	shared := func(id string) int { return len(m.readableRecordings(id)) }
	// The document with the most readable recordings and some private ones.
	var mixed *dataset.Document
	for _, d := range m.visibleDocs(key) {
		n := shared(d.ID)
		if n > 0 && n < m.recordingCount(d.ID) && (mixed == nil || n > shared(mixed.ID) || (n == shared(mixed.ID) && d.ID < mixed.ID)) {
			mixed = d
		}
	}
	if mixed == nil || shared(mixed.ID) < 2 {
		t.Fatal("the demo data has no document with several shared and some private recordings")
	}

	t.Run("every-page", func(t *testing.T) {
		var got []string
		n := shared(mixed.ID)
		for p := 1; p <= n+1; p++ { // pages of one, then one past the end
			got = append(got, s.recordingsPage(t, key, mixed.ID, q("page", strconv.Itoa(p), "pageSize", "1"), p, 1)...)
		}
		if want := recordingIDs(m.readableRecordings(mixed.ID)); !slices.Equal(got, want) {
			t.Errorf("pages of one put together: %v, want %v", got, want)
		}
	})
	t.Run("defaults-and-cap", func(t *testing.T) {
		s.recordingsPage(t, key, mixed.ID, "", 1, 20)
		s.recordingsPage(t, key, mixed.ID, q("pageSize", "51"), 1, 50)
	})
	t.Run("cases", func(t *testing.T) {
		for _, c := range []struct {
			name string
			keep func(d *dataset.Document) bool
		}{
			{"all-private", func(d *dataset.Document) bool { return m.recordingCount(d.ID) > 0 && shared(d.ID) == 0 }},
			{"all-shared", func(d *dataset.Document) bool {
				return m.recordingCount(d.ID) > 0 && shared(d.ID) == m.recordingCount(d.ID)
			}},
			{"no-recordings", func(d *dataset.Document) bool { return m.recordingCount(d.ID) == 0 }},
		} {
			if d := s.docWhere(key, c.keep); d != nil {
				s.recordingsPage(t, key, d.ID, "", 1, 20)
			} else {
				t.Errorf("%s: no such document in the demo data", c.name)
			}
		}
	})
	t.Run("individual-plan", func(t *testing.T) {
		// On the Individual plan nothing is readable, even what is marked shared.
		d := s.docWhere(m.individual, func(d *dataset.Document) bool {
			for _, r := range m.recsByDoc[d.ID] {
				if r.Shared {
					return true
				}
			}
			return false
		})
		if d == nil {
			t.Fatal("the demo data has no shared recording on the Individual plan")
		}
		s.recordingsPage(t, m.individual, d.ID, "", 1, 20)
	})
	t.Run("forbidden-without-recording-details", func(t *testing.T) {
		// Decided by the key alone, before any lookup: an unknown document is
		// 403 too. A bad parameter is checked first (400).
		for _, id := range []string{mixed.ID, "doc_no_such_document"} {
			s.expectError(t, s.get(t, m.fullNoRec, "/documents/"+id+"/source-recordings"), http.StatusForbidden, "forbidden")
		}
		s.expectError(t, s.get(t, m.fullNoRec, "/documents/"+mixed.ID+"/source-recordings?page=0"), http.StatusBadRequest, "bad_request")
	})
	t.Run("bad-parameters-and-not-found", func(t *testing.T) {
		for _, v := range []string{"page=0", "pageSize=0", "pageSize=x"} {
			s.expectError(t, s.get(t, key, "/documents/"+mixed.ID+"/source-recordings?"+v), http.StatusBadRequest, "bad_request")
		}
		s.expectError(t, s.get(t, key, "/documents/doc_no_such_document/source-recordings"), http.StatusNotFound, "not_found")
	})
}
