package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
)

func validate(t *testing.T, f *dataset.File) *doclib.DataSet {
	t.Helper()
	d, err := dataset.Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// shrink is file A without things: B. It drops a document (and what links to
// it), an edge, an earlier slug and a key, and makes a shared recording private.
func shrink(f *dataset.File) *dataset.File {
	f.Documents = slices.DeleteFunc(f.Documents, func(d dataset.Document) bool { return d.ID == "doc_a1_5" })
	f.Edges = slices.DeleteFunc(f.Edges, func(e dataset.Edge) bool {
		return e.TargetDocumentID == "doc_a1_5" || (e.SourceDocumentID == "doc_a1_1" && e.TargetDocumentID == "doc_a2_1")
	})
	f.APIKeys = slices.DeleteFunc(f.APIKeys, func(k dataset.APIKey) bool { return k.ID == "key_future" })
	f.Libraries[0].PreviousSlugs = []string{"operations"} // "it" is gone
	for i := range f.Recordings {
		if f.Recordings[i].ID == "rec_a12" {
			f.Recordings[i].Shared = false
		}
	}
	// ws_b and ws_i are not in B: prune must leave them alone.
	f.Workspaces = f.Workspaces[:1]
	f.Devices = slices.DeleteFunc(f.Devices, func(d dataset.Device) bool { return d.WorkspaceID != "ws_a" })
	f.APIKeys = slices.DeleteFunc(f.APIKeys, func(k dataset.APIKey) bool { return k.WorkspaceID != "ws_a" })
	f.Libraries = slices.DeleteFunc(f.Libraries, func(l dataset.Library) bool { return l.WorkspaceID != "ws_a" })
	f.Documents = slices.DeleteFunc(f.Documents, func(d dataset.Document) bool { return !strings.HasPrefix(d.ID, "doc_a") })
	f.Recordings = slices.DeleteFunc(f.Recordings, func(r dataset.Recording) bool { return !strings.HasPrefix(r.DocumentIDs[0], "doc_a") })
	return f
}

func TestImportUpdatesAndPrunes(t *testing.T) {
	ctx := context.Background()
	a := validate(t, fixture.File())
	b := validate(t, shrink(fixture.File()))
	tbl := imported(t, a)
	store := dynamo.NewStore(tbl)

	// Without --prune: B's items overwrite A's; the recording made private leaves
	// the listing at once (privacy does not wait for a prune).
	if _, err := tbl.Import(ctx, b, "gB", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	docs, _, _ := store.DocumentsWithEdges(ctx, []string{"doc_a1_2"}, nil)
	if recs, err := store.SharedRecordings(ctx, docs["doc_a1_2"], 0, 10); err != nil || len(recs) != 0 || docs["doc_a1_2"].SharedRecordingCount != 0 {
		t.Errorf("a recording made private is still listed: %v %v", recs, err)
	}
	if _, err := store.Library(ctx, "ws_a", "it"); err != nil {
		t.Errorf("without --prune a removed slug stays until pruned: %v", err)
	}

	// With --prune: what B no longer holds is gone, exactly as in a fresh import of B.
	res, err := tbl.Import(ctx, b, "gB", dynamo.ImportOptions{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted == 0 {
		t.Fatal("prune deleted nothing")
	}
	if _, err := store.Library(ctx, "ws_a", "it"); !errors.Is(err, doclib.ErrNotFound) {
		t.Errorf("the removed slug still resolves: %v", err)
	}
	if _, err := store.APIKey(ctx, doclib.HashKey(fixture.KeyFuture)); !errors.Is(err, doclib.ErrNotFound) {
		t.Errorf("the removed key still works: %v", err)
	}
	if d, _ := store.Documents(ctx, []string{"doc_a1_5"}); len(d) != 0 {
		t.Error("the removed document is still there")
	}
	lib, _ := store.Library(ctx, "ws_a", "lib_a1")
	if list, total, _ := store.ListDocuments(ctx, lib, doclib.DocumentFilter{}, 0, 100); total != 4 || len(list) != 4 {
		t.Errorf("list after prune: %d of %d", len(list), total)
	}
	_, edges, _ := store.DocumentsWithEdges(ctx, []string{"doc_a1_1"}, nil)
	if e := edges["doc_a1_1"]; len(e.Outgoing) != 1 {
		t.Errorf("the removed edge is still there: %+v", e.Outgoing)
	}
	// Workspaces outside the file are untouched.
	if l, err := store.Library(ctx, "ws_b", "ops"); err != nil || l.ID != "lib_b1" {
		t.Errorf("prune touched ws_b: %v", err)
	}
	fresh := imported(t, b)
	got, want := dump(t, tbl), dump(t, fresh)
	// The pruned table also holds ws_b and ws_i, which B does not mention.
	var ours []string
	for _, line := range got {
		if !strings.Contains(line, `"ws_b`) && !strings.Contains(line, `"ws_i`) && !strings.Contains(line, `WS#ws_b`) && !strings.Contains(line, `WS#ws_i`) {
			ours = append(ours, line)
		}
	}
	var wantGen []string
	for _, line := range want {
		wantGen = append(wantGen, strings.ReplaceAll(line, `"gen":"g1"`, `"gen":"gB"`))
	}
	slices.Sort(wantGen)
	if !slices.Equal(ours, wantGen) {
		t.Errorf("after prune: %d items of ws_a, a fresh import of B has %d (first difference at %d)", len(ours), len(wantGen), firstDiff(ours, wantGen))
		for i := firstDiff(ours, wantGen); i < min(firstDiff(ours, wantGen)+2, len(ours), len(wantGen)); i++ {
			t.Logf("got  %.300s\nwant %.300s", ours[i], wantGen[i])
		}
	}
}

func TestImportRefusesWhatDynamoDBCannotHold(t *testing.T) {
	// dataset.Load caps content and labels well below these limits; this
	// check is the import's own, for whatever reaches it.
	d := validate(t, fixture.File())
	for _, doc := range d.Documents {
		if doc.ID == "doc_a1_1" {
			doc.Content = json.RawMessage(`{"summary":"` + strings.Repeat("x", 450*1024) + `"}`)
		}
	}
	for _, e := range d.Edges {
		if e.SourceID == "doc_a1_1" && e.TargetID == "doc_a1_2" {
			e.Label = strings.Repeat("long label ", 100)
		}
	}
	tbl := newTable(t)
	_, err := tbl.Import(context.Background(), d, "g1", dynamo.ImportOptions{})
	var re *dataset.ValidationError
	if !errors.As(err, &re) {
		t.Fatalf("not refused: %v", err)
	}
	// One sentence, then one line per problem: the document (stored twice) and
	// the edge (stored at both ends) are each named once.
	msg := err.Error()
	want := "the data set does not fit DynamoDB, nothing was written: 2 problems\n" +
		"  - document doc_a1_1 is 450 KB stored, over DynamoDB's 400 KB item limit; shorten its content\n" +
		"  - edge doc_a1_1 -> doc_a1_2 (long label long label long label long la…) has a key of "
	if !strings.HasPrefix(msg, want) || strings.Count(msg, "\n") != 2 || !strings.HasSuffix(msg, "over DynamoDB's 1024; shorten the edge label") {
		t.Fatalf("error:\n%s\nwant it to start:\n%s", msg, want)
	}
	if n := len(dump(t, tbl)); n != 0 {
		t.Errorf("a refused import wrote %d items", n)
	}
}
