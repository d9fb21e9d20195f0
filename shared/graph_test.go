package doclib_test

import (
	"testing"
	"time"

	doclib "github.com/doclib/doclib/shared"
)

func TestCompareActivity(t *testing.T) {
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	ordered := []doclib.Activity{
		{RecordingCount: 3, LastSeen: day, ID: "doc_z"},
		{RecordingCount: 2, LastSeen: day, ID: "doc_y"},
		{RecordingCount: 2, LastSeen: day.Add(-time.Hour), ID: "doc_a"},
		{RecordingCount: 2, LastSeen: day.Add(-time.Hour), ID: "doc_b"},
	}
	for i := range ordered {
		for j := range ordered {
			got := doclib.CompareActivity(ordered[i], ordered[j])
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Errorf("CompareActivity(%v, %v) = %d", ordered[i].ID, ordered[j].ID, got)
			}
		}
	}
}

func TestCapGraph(t *testing.T) {
	a, b, c := &doclib.Document{ID: "doc_a"}, &doclib.Document{ID: "doc_b"}, &doclib.Document{ID: "doc_c"}
	ab := &doclib.Edge{SourceID: "doc_a", TargetID: "doc_b", Support: 3}
	ac := &doclib.Edge{SourceID: "doc_a", TargetID: "doc_c", Support: 2}
	ba := &doclib.Edge{SourceID: "doc_b", TargetID: "doc_a", Support: 1}
	docs, edges := []*doclib.Document{a, b, c}, []*doclib.Edge{ab, ac, ba}
	for _, tc := range []struct {
		name              string
		maxDocs, maxEdges int
		docs, edges       int
		truncated         bool
	}{
		{"under both caps", 3, 3, 3, 3, false},
		{"documents cut: their edges go too", 2, 3, 2, 2, true},
		{"edges cut", 3, 2, 3, 2, true},
	} {
		gotDocs, gotEdges, truncated := doclib.CapGraph(docs, edges, tc.maxDocs, tc.maxEdges)
		if len(gotDocs) != tc.docs || len(gotEdges) != tc.edges || truncated != tc.truncated {
			t.Errorf("%s: %d documents, %d edges, truncated %v; want %d, %d, %v",
				tc.name, len(gotDocs), len(gotEdges), truncated, tc.docs, tc.edges, tc.truncated)
		}
	}
}
