// Package storetest is the behaviour suite of doclib.Store: every access
// pattern, checked against the validated fixture, for every store (the embedded
// one and DynamoDB run it).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
)

// Factory returns a store holding d.
type Factory func(t testing.TB, d *doclib.DataSet) doclib.Store

// Run runs the suite.
func Run(t *testing.T, f Factory) {
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	s := f(t, d)
	ctx := context.Background()
	byID := map[string]*doclib.Document{}
	for _, doc := range d.Documents {
		byID[doc.ID] = doc
	}

	t.Run("keys, workspaces, devices", func(t *testing.T) {
		k, err := s.APIKey(ctx, doclib.HashKey(fixture.KeyOneLibrary))
		if err != nil || k.ID != "key_one" || k.WorkspaceID != "ws_a" || k.DeviceID != "dev_a" || k.AllLibraries ||
			!slices.Equal(k.Libraries, []string{"lib_a1"}) || !k.RecordingDetails || !k.ExpiresAt.IsZero() || k.Hash != doclib.HashKey(fixture.KeyOneLibrary) {
			t.Errorf("one-library key: %+v, %v", k, err)
		}
		if k, err := s.APIKey(ctx, doclib.HashKey(fixture.KeyExpired)); err != nil || k.ExpiresAt.Year() != 2020 || !k.AllLibraries {
			t.Errorf("expired key: %+v, %v", k, err)
		}
		if _, err := s.APIKey(ctx, doclib.HashKey("dlk_no_such_key_000000")); !errors.Is(err, doclib.ErrNotFound) {
			t.Errorf("unknown key: %v, want ErrNotFound", err)
		}
		if w, err := s.Workspace(ctx, "ws_i"); err != nil || w.Plan != doclib.PlanIndividual || w.Subscription != "active" || w.Name != "Solo" {
			t.Errorf("workspace: %+v, %v", w, err)
		}
		if _, err := s.Workspace(ctx, "ws_nope"); !errors.Is(err, doclib.ErrNotFound) {
			t.Errorf("unknown workspace: %v", err)
		}
		if dv, err := s.Device(ctx, "ws_a", "dev_a_removed"); err != nil || dv.Status != doclib.DeviceRemoved {
			t.Errorf("device: %+v, %v", dv, err)
		}
		if _, err := s.Device(ctx, "ws_b", "dev_a"); !errors.Is(err, doclib.ErrNotFound) {
			t.Errorf("a device of another workspace: %v", err)
		}
	})

	t.Run("libraries", func(t *testing.T) {
		libs, err := s.Libraries(ctx, "ws_a")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range libs {
			ids = append(ids, l.ID)
		}
		if !slices.Equal(ids, []string{"lib_a3", "lib_a2", "lib_a1"}) {
			t.Fatalf("libraries %v, want by name", ids)
		}
		want := map[string]*doclib.Library{}
		for _, l := range d.Libraries {
			want[l.ID] = l
		}
		for _, l := range libs {
			if a, b := jsonOf(l), jsonOf(want[l.ID]); a != b {
				t.Errorf("library %s:\n got %s\nwant %s", l.ID, a, b)
			}
		}
		if libs, err := s.Libraries(ctx, "ws_nope"); err != nil || len(libs) != 0 {
			t.Errorf("libraries of no workspace: %v, %v", libs, err)
		}
		for _, ref := range []string{"lib_a1", "ops", "operations", "it"} {
			if l, err := s.Library(ctx, "ws_a", ref); err != nil || l.ID != "lib_a1" || l.EdgeCount != 3 || l.DocumentCount != 5 {
				t.Errorf("library %q: %+v, %v", ref, l, err)
			}
		}
		if l, err := s.Library(ctx, "ws_b", "ops"); err != nil || l.ID != "lib_b1" {
			t.Errorf("ws_b's ops: %+v, %v", l, err)
		}
		for _, c := range []struct{ ws, ref string }{{"ws_b", "lib_a1"}, {"ws_a", "nope"}, {"ws_b", "operations"}, {"ws_a", "lib_nope"}} {
			if _, err := s.Library(ctx, c.ws, c.ref); !errors.Is(err, doclib.ErrNotFound) {
				t.Errorf("library %s/%s: %v, want ErrNotFound", c.ws, c.ref, err)
			}
		}
	})

	t.Run("list documents", func(t *testing.T) {
		lib, err := s.Library(ctx, "ws_a", "lib_a1")
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			f             doclib.DocumentFilter
			offset, limit int
			want          []string
			total         int
		}{
			{doclib.DocumentFilter{}, 0, 100, []string{"doc_a1_1", "doc_a1_2", "doc_a1_3", "doc_a1_4", "doc_a1_5"}, 5},
			{doclib.DocumentFilter{}, 2, 2, []string{"doc_a1_3", "doc_a1_4"}, 5},
			{doclib.DocumentFilter{}, 9, 2, []string{}, 5},
			{doclib.DocumentFilter{Category: "Accounts"}, 0, 100, []string{"doc_a1_1", "doc_a1_2", "doc_a1_5"}, 3},
			{doclib.DocumentFilter{Category: "Accounts"}, 1, 1, []string{"doc_a1_2"}, 3},
			{doclib.DocumentFilter{Tag: "security"}, 0, 100, []string{"doc_a1_1", "doc_a1_2", "doc_a1_4"}, 3},
			{doclib.DocumentFilter{Application: "Okta", Tag: "security"}, 0, 100, []string{"doc_a1_1", "doc_a1_2"}, 2},
			{doclib.DocumentFilter{Application: "Okta", Tag: "security"}, 1, 1, []string{"doc_a1_2"}, 2},
			{doclib.DocumentFilter{Search: "okta"}, 0, 100, []string{"doc_a1_1", "doc_a1_2", "doc_a1_5"}, 3},
			{doclib.DocumentFilter{Search: "directory > people"}, 0, 100, []string{"doc_a1_1"}, 1},
			{doclib.DocumentFilter{Search: "unlock", Tag: "security"}, 0, 1, []string{"doc_a1_2"}, 1},
			{doclib.DocumentFilter{Search: "summary"}, 0, 100, []string{}, 0},
			{doclib.DocumentFilter{Category: "Nope"}, 0, 100, []string{}, 0},
		}
		for _, c := range cases {
			docs, total, err := s.ListDocuments(ctx, lib, c.f, c.offset, c.limit)
			if err != nil {
				t.Fatalf("%+v: %v", c.f, err)
			}
			got := []string{}
			for _, doc := range docs {
				got = append(got, doc.ID)
				if a, b := jsonOf(doc), jsonOf(byID[doc.ID]); a != b {
					t.Errorf("listed %s:\n got %s\nwant %s", doc.ID, a, b)
				}
			}
			if !slices.Equal(got, c.want) || total != c.total {
				t.Errorf("%+v offset %d limit %d: %v total %d, want %v total %d", c.f, c.offset, c.limit, got, total, c.want, c.total)
			}
		}
	})

	t.Run("documents and edges", func(t *testing.T) {
		ids := []string{"doc_a1_1", "doc_a2_1", "doc_nope", "doc_i1_1", "doc_a1_1"}
		docs, err := s.Documents(ctx, ids)
		if err != nil || len(docs) != 3 {
			t.Fatalf("documents: %d, %v", len(docs), err)
		}
		for id, doc := range docs {
			if a, b := jsonOf(doc), jsonOf(byID[id]); a != b {
				t.Errorf("document %s:\n got %s\nwant %s", id, a, b)
			}
		}
		docs, edges, err := s.DocumentsWithEdges(ctx, []string{"doc_a1_1", "doc_a1_5", "doc_nope", "doc_i1_1"}, nil)
		if err != nil || len(docs) != 3 || docs["doc_a1_1"].SharedRecordingCount != 2 || docs["doc_a1_1"].RecordingCount != 3 {
			t.Fatalf("documents with edges: %v, %v", docs, err)
		}
		if _, ok := edges["doc_i1_1"]; ok {
			t.Error("a document without edges has an entry")
		}
		want := map[string]*doclib.DocumentEdges{}
		for _, e := range d.Edges {
			if want[e.SourceID] == nil {
				want[e.SourceID] = &doclib.DocumentEdges{}
			}
			if want[e.TargetID] == nil {
				want[e.TargetID] = &doclib.DocumentEdges{}
			}
			want[e.SourceID].Outgoing = append(want[e.SourceID].Outgoing, e)
			want[e.TargetID].Incoming = append(want[e.TargetID].Incoming, e)
		}
		for _, id := range []string{"doc_a1_1", "doc_a1_5"} {
			w := want[id]
			slices.SortFunc(w.Outgoing, doclib.CompareEdges)
			slices.SortFunc(w.Incoming, doclib.CompareEdges)
			if a, b := jsonOf(edges[id]), jsonOf(w); a != b {
				t.Errorf("edges of %s:\n got %s\nwant %s", id, a, b)
			}
		}
	})

	t.Run("graph", func(t *testing.T) {
		docs, edges, truncated, err := s.Graph(ctx, "lib_a1", 2000, 5000)
		if err != nil || truncated {
			t.Fatalf("graph: %v %v", truncated, err)
		}
		var ids, es []string
		for _, doc := range docs {
			ids = append(ids, doc.ID)
			want := byID[doc.ID]
			if doc.Title != want.Title || doc.RecordingCount != want.RecordingCount || !doc.LastSeen.Equal(want.LastSeen) ||
				!slices.Equal(doc.Tags, want.Tags) || !slices.Equal(doc.Applications, want.Applications) || doc.Category != want.Category {
				t.Errorf("graph document %s: %+v", doc.ID, doc)
			}
		}
		for _, e := range edges {
			es = append(es, e.SourceID+">"+e.TargetID+":"+e.Label+":"+e.SourceTitle)
		}
		if !slices.Equal(ids, []string{"doc_a1_1", "doc_a1_2", "doc_a1_4", "doc_a1_3", "doc_a1_5"}) {
			t.Errorf("graph documents %v", ids)
		}
		if !slices.Equal(es, []string{"doc_a1_1>doc_a1_2:often next:Reset a user's password", "doc_a1_2>doc_a1_3:often next:Unlock a locked account",
			"doc_a1_3>doc_a1_4:alternative to:Provision a laptop"}) {
			t.Errorf("graph edges %v", es)
		}
	})

	t.Run("shared recordings", func(t *testing.T) {
		docs, _, err := s.DocumentsWithEdges(ctx, []string{"doc_a1_1", "doc_a1_4"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.SharedRecordings(ctx, docs["doc_a1_1"], 0, 10)
		if err != nil || len(recs) != 2 || recs[0].ID != "rec_a12" || recs[1].ID != "rec_a1" {
			t.Fatalf("recordings %v, %v", recs, err)
		}
		if q := recs[1].Questions; len(q) != 2 || q[0].ID != "ques_1" || q[1].SequenceOrder != 2 || recs[1].Steps[0] != "Opened Okta" ||
			recs[1].Title != "Password reset for Dana" || recs[1].Status != "processed" {
			t.Errorf("recording %+v", recs[1])
		}
		if page, _ := s.SharedRecordings(ctx, docs["doc_a1_1"], 1, 1); len(page) != 1 || page[0].ID != "rec_a1" {
			t.Errorf("page 2: %v", page)
		}
		if past, _ := s.SharedRecordings(ctx, docs["doc_a1_1"], 5, 1); len(past) != 0 {
			t.Errorf("past the end: %v", past)
		}
		if private, err := s.SharedRecordings(ctx, docs["doc_a1_4"], 0, 10); err != nil || len(private) != 0 {
			t.Errorf("a private recording listed: %v %v", private, err)
		}
	})
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), `"ExpiresAt":"0001-01-01T00:00:00Z"`, "")
}
