package functions_test

import (
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

// The sizing harness lays the table down in two imports instead of one,
// writing only what its searches read. A search reads the key's workspace,
// its libraries, the rate-limit and credit items, and then, for each hit,
// the document's partition below the recordings (its item and its edges,
// sk < "R"). So the table gets:
//
//   - tableBase: everything but the edges and the recordings, every
//     document's item among it (two items a document, where the whole data
//     set is about nine: 2.5 edges a document stored at both ends, and 1.7
//     recording items);
//   - tableHits: after a first pass of the harness's queries has named the
//     documents they answer, those documents' edges, at both ends, and the
//     documents at their other ends.
//
// What it skips: recordings (no search reads them), and the edges of
// documents no measured search answers. The library items still count every
// document and edge (they come from the validated data set), and every
// document is in the table, so a hit the first pass did not name is still
// answered, without its edges; the harness fails if one appears.

// tableBase is d without its edges and recordings.
func tableBase(d *doclib.DataSet) *doclib.DataSet {
	base := *d
	base.Edges, base.Recordings = nil, nil
	return &base
}

// tableHits is what the partitions of the documents named in hits hold
// beyond tableBase: their edges, and the documents at both ends of each,
// so that every edge item carries its ends' workspace. It names no
// workspace, library or key: written over tableBase's, they would only be
// written again, and an import lists the leftovers of the workspaces it
// names, which at a million documents is a scan of millions of items.
func tableHits(d *doclib.DataSet, hits map[string]bool) *doclib.DataSet {
	ends := map[string]bool{}
	out := &doclib.DataSet{}
	for _, e := range d.Edges {
		if hits[e.SourceID] || hits[e.TargetID] {
			out.Edges = append(out.Edges, e)
			ends[e.SourceID], ends[e.TargetID] = true, true
		}
	}
	for _, doc := range d.Documents {
		if hits[doc.ID] || ends[doc.ID] {
			out.Documents = append(out.Documents, doc)
		}
	}
	return out
}

// TestTableHitsHoldsTheHitsPartitions: every edge of a named document is in
// tableHits, with both its ends' documents; no other edge is, nor any
// recording; tableBase has every document and no edge.
func TestTableHitsHoldsTheHitsPartitions(t *testing.T) {
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 300}))
	if err != nil {
		t.Fatal(err)
	}
	hits := map[string]bool{d.Documents[0].ID: true, d.Documents[7].ID: true, d.Documents[150].ID: true}
	part := tableHits(d, hits)
	docs := map[string]bool{}
	for _, doc := range part.Documents {
		docs[doc.ID] = true
	}
	want := 0
	for _, e := range d.Edges {
		touches := hits[e.SourceID] || hits[e.TargetID]
		if touches {
			want++
			if !docs[e.SourceID] || !docs[e.TargetID] {
				t.Errorf("edge %s -> %s is in, not both its ends' documents", e.SourceID, e.TargetID)
			}
		}
	}
	if want == 0 || len(part.Edges) != want {
		t.Errorf("tableHits has %d edges, the hits touch %d", len(part.Edges), want)
	}
	for _, e := range part.Edges {
		if !hits[e.SourceID] && !hits[e.TargetID] {
			t.Errorf("edge %s -> %s touches no hit", e.SourceID, e.TargetID)
		}
	}
	for id := range hits {
		if !docs[id] {
			t.Errorf("hit %s is not in tableHits", id)
		}
	}
	if len(part.Recordings) != 0 || len(part.Workspaces) != 0 || len(part.Libraries) != 0 || len(part.APIKeys) != 0 {
		t.Errorf("tableHits names recordings, workspaces, libraries or keys: %d, %d, %d, %d", len(part.Recordings), len(part.Workspaces), len(part.Libraries), len(part.APIKeys))
	}
	base := tableBase(d)
	if len(base.Documents) != len(d.Documents) || len(base.Edges) != 0 || len(base.Recordings) != 0 || len(base.Libraries) != len(d.Libraries) {
		t.Errorf("tableBase has %d documents, %d edges, %d recordings, %d libraries", len(base.Documents), len(base.Edges), len(base.Recordings), len(base.Libraries))
	}
	if len(d.Edges) == 0 || len(d.Recordings) == 0 {
		t.Fatal("tableBase emptied the data set it was given")
	}
}
