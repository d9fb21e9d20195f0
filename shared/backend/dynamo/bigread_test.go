package dynamo_test

import (
	"context"
	"testing"

	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

// TestDocumentsNearTheSizeLimit: BatchGetItem answers at most 16 MB (dynalite
// about 1.4 MB), so documents near the content limit come back a few per
// call, the rest unprocessed. Every call that returns some is progress, not a
// failure to back off from: 40 documents of about 300 KB (10 calls on
// dynalite) all arrive.
func TestDocumentsNearTheSizeLimit(t *testing.T) {
	f := demo.BigAnswers(demo.BigOptions{Documents: 40, Links: 2})
	d, err := dataset.Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	s := dynamo.NewStore(imported(t, d))
	var ids []string
	for _, doc := range d.Documents {
		if doc.LibraryID == demo.BigLibrary {
			ids = append(ids, doc.ID)
		}
	}
	got, err := s.Documents(context.Background(), ids)
	if err != nil || len(got) != len(ids) {
		t.Fatalf("%d of %d documents near the size limit: %v", len(got), len(ids), err)
	}
	docs, _, err := s.DocumentsWithEdges(context.Background(), ids, nil)
	if err != nil || len(docs) != len(ids) {
		t.Fatalf("with edges: %d of %d: %v", len(docs), len(ids), err)
	}
}
