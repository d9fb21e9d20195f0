package search

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	doclib "github.com/doclib/doclib/shared"
)

// IndexDoc is what a search backend indexes for one document: the fields that
// filter, break down and order it, its text for the word matches, and the
// vectors of the meaning matches. The embedded engine builds the same from a
// data set; OpenSearch stores it as one index document.
type IndexDoc struct {
	Doc
	WorkspaceID string
	// Title, Body and Labels are the texts of the word matches: the title, the
	// content strings in template order, and category, tags and applications.
	Title  string
	Body   []string
	Labels []string
	// Vector is the embedding of DocumentText.
	Vector []float32
	// Recordings are the embeddings of RecordingText of the readable recordings
	// behind the document (shared, not on the Individual plan).
	Recordings []RecordingVector
}

// RecordingVector is one readable recording's embedding.
type RecordingVector struct {
	ID     string
	Vector []float32
}

// Index is where an indexer puts documents: a search backend's write side.
// Both calls are idempotent.
type Index interface {
	Upsert(ctx context.Context, docs []IndexDoc) error
	Delete(ctx context.Context, ids []string) error
}

// Committer is an Index that holds its writes until Commit: the snapshot
// writer of the embedded tier, which publishes a whole new snapshot per
// commit. An indexer commits once per batch, after its Upserts and Deletes,
// so that a burst of changes costs one snapshot; a failed commit fails the
// batch's documents, whose records then come back.
//
// A Commit that fails with ErrCommitConflict lost a race with another
// writer, which published in between: the Committer has dropped the writes
// it held, and redoing them (reading the documents again) over what the
// other writer published succeeds unless a third one wins again.
type Committer interface {
	Commit(ctx context.Context) error
}

// ErrCommitConflict is a Commit that another writer's publish overtook.
var ErrCommitConflict = errors.New("search: another writer published first; redo the writes over what it published")

// DocumentText is what a document's vector is made from, for every backend: the
// title twice (it says what the document is about), then the content in
// template order. Labels are left out: tags such as "urgent" say how a document
// is filed, not what it is about, and measured, they blurred the vectors
// (docs/search.md).
func DocumentText(doc *doclib.Document) string {
	var b strings.Builder
	b.WriteString(doc.Title)
	b.WriteString(". ")
	b.WriteString(doc.Title)
	for _, s := range doclib.ContentStrings(doc.Content) {
		b.WriteString(". ")
		b.WriteString(s)
	}
	return b.String()
}

// RecordingText is what a recording's vector is made from: its title,
// questions and answers, and steps.
func RecordingText(r *doclib.Recording) string {
	var b strings.Builder
	b.WriteString(r.Title)
	for _, q := range r.Questions {
		b.WriteString(". ")
		b.WriteString(q.Question)
		b.WriteString(" ")
		b.WriteString(q.Response)
	}
	for _, s := range r.Steps {
		b.WriteString(". ")
		b.WriteString(s)
	}
	return b.String()
}

// Labels are a document's category, tags and applications: words a person
// searches with ("security", "NetSuite"), and so part of its text.
func Labels(doc *doclib.Document) []string {
	out := make([]string, 0, 1+len(doc.Tags)+len(doc.Applications))
	out = append(out, doc.Category)
	out = append(out, doc.Tags...)
	return append(out, doc.Applications...)
}

// Readable reports whether a recording may influence search: shared, in a
// workspace not on the Individual plan (docs/api.md, "Authentication and scope").
func Readable(r *doclib.Recording, plan doclib.Plan) bool {
	return r.Shared && plan != doclib.PlanIndividual
}

// NewIndexDoc assembles what a backend indexes for a document from its
// readable recordings and their vectors (in the same order as recs).
func NewIndexDoc(doc *doclib.Document, vector []float32, recs []*doclib.Recording, recVectors [][]float32) IndexDoc {
	d := IndexDoc{
		Doc: Doc{ID: doc.ID, LibraryID: doc.LibraryID, Category: doc.Category, Tags: doc.Tags,
			Applications: doc.Applications, RecordingCount: doc.RecordingCount, LastSeen: doc.LastSeen},
		WorkspaceID: doc.WorkspaceID, Title: doc.Title, Body: doclib.ContentStrings(doc.Content),
		Labels: Labels(doc), Vector: vector,
	}
	for i, r := range recs {
		d.Recordings = append(d.Recordings, RecordingVector{ID: r.ID, Vector: recVectors[i]})
	}
	return d
}

// DocsFromData builds the index documents of a data set with an embedder, in
// batches: what a reindex loads
// (OpenSearch's, or the embedded tier's snapshot). Readable recordings only (Readable).
func DocsFromData(ctx context.Context, d *doclib.DataSet, e Embedder, batch int, yield func([]IndexDoc) error) error {
	// A document whose workspace is missing counts as on the Individual plan:
	// privacy first, as the indexer and the embedded engine do.
	plans := map[string]doclib.Plan{}
	for _, w := range d.Workspaces {
		plans[w.ID] = w.Plan
	}
	planOf := func(ws string) doclib.Plan {
		if p, ok := plans[ws]; ok {
			return p
		}
		return doclib.PlanIndividual
	}
	recs := map[string][]*doclib.Recording{}
	for _, r := range d.Recordings {
		for _, id := range r.DocumentIDs {
			recs[id] = append(recs[id], r)
		}
	}
	if batch <= 0 {
		batch = 100
	}
	for start := 0; start < len(d.Documents); start += batch {
		docs := d.Documents[start:min(start+batch, len(d.Documents))]
		var texts []string
		readable := make([][]*doclib.Recording, len(docs))
		for i, doc := range docs {
			texts = append(texts, DocumentText(doc))
			for _, r := range recs[doc.ID] {
				if Readable(r, planOf(doc.WorkspaceID)) {
					readable[i] = append(readable[i], r)
					texts = append(texts, RecordingText(r))
				}
			}
		}
		vecs, err := e.Embed(ctx, texts)
		if err == nil {
			err = CheckVectors(vecs, len(texts), e.Dimensions())
		}
		if err != nil {
			return fmt.Errorf("search: embed documents %d to %d: %w", start, start+len(docs)-1, err)
		}
		out := make([]IndexDoc, len(docs))
		k := 0
		for i, doc := range docs {
			v := vecs[k]
			k++
			rv := vecs[k : k+len(readable[i])]
			k += len(readable[i])
			out[i] = NewIndexDoc(doc, v, readable[i], rv)
		}
		if err := yield(out); err != nil {
			return err
		}
	}
	return nil
}

// DocSet is what an in-memory Index holds between two Commits: index
// documents by ID, and whether they changed since they were last taken.
type DocSet struct {
	docs  map[string]IndexDoc
	dirty bool
}

// NewDocSet holds docs, a later one replacing an earlier one of the same ID,
// unchanged.
func NewDocSet(docs []IndexDoc) *DocSet {
	s := &DocSet{docs: make(map[string]IndexDoc, len(docs))}
	for _, d := range docs {
		s.docs[d.ID] = d
	}
	return s
}

// Upsert replaces docs.
func (s *DocSet) Upsert(docs []IndexDoc) {
	for _, d := range docs {
		s.docs[d.ID] = d
	}
	s.dirty = s.dirty || len(docs) > 0
}

// Delete removes the documents of ids.
func (s *DocSet) Delete(ids []string) {
	for _, id := range ids {
		if _, ok := s.docs[id]; ok {
			delete(s.docs, id)
			s.dirty = true
		}
	}
}

// Dirty reports whether the documents changed since MarkClean (false for a
// nil set).
func (s *DocSet) Dirty() bool { return s != nil && s.dirty }

// MarkClean records that the documents were taken.
func (s *DocSet) MarkClean() { s.dirty = false }

// Sorted returns the documents by ID.
func (s *DocSet) Sorted() []IndexDoc {
	return slices.SortedFunc(maps.Values(s.docs), func(a, b IndexDoc) int { return strings.Compare(a.ID, b.ID) })
}
