package dataset_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/data/dataset"
)

func encode(t *testing.T, f *dataset.File) []byte {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFixtureLoadsWithDerivedValues(t *testing.T) {
	d, err := dataset.Load(bytes.NewReader(encode(t, fixture.File())))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i, doc := range d.Documents {
		byID[doc.ID] = i
	}
	if got := d.Documents[byID["doc_a1_1"]].RecordingCount; got != 3 {
		t.Errorf("doc_a1_1 recordingCount %d, want 3 (2 shared, 1 private)", got)
	}
	if got := d.Documents[byID["doc_a1_3"]].RecordingCount; got != 0 {
		t.Errorf("doc_a1_3 recordingCount %d, want 0", got)
	}
	lib := d.Libraries[0]
	if lib.ID != "lib_a1" || lib.DocumentCount != 5 || lib.EdgeCount != 3 || len(lib.Categories) != 3 || lib.Categories[0].Name != "Accounts" || lib.Categories[0].DocumentCount != 3 {
		t.Errorf("lib_a1 derived values: %+v", lib)
	}
	if d.APIKeys[0].Hash == ([32]byte{}) || !d.APIKeys[0].AllLibraries {
		t.Errorf("key not hashed or scope wrong: %+v", d.APIKeys[0])
	}
	if e := d.Edges[0]; e.SourceTitle != "Reset a user's password" || e.TargetLibraryID != "lib_a1" {
		t.Errorf("edge not denormalised: %+v", e)
	}
	if got := string(d.Documents[0].Content); !strings.HasPrefix(got, `{"summary":"Reset`) || !strings.HasSuffix(got, `"Click Reset Password"]}`) {
		t.Errorf("content not in template order: %s", got)
	}
}

// TestRejections breaks the fixture one way at a time: each file is refused as a
// whole and the message names the item and the problem.
func TestRejections(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(f *dataset.File)
		raw   string // used instead of edit when set
		wants []string
	}{
		{name: "unknown top-level field", raw: `{"workspaces": [], "librarys": []}`, wants: []string{`unknown field "librarys"`}},
		{name: "unknown item field", raw: `{"workspaces": [{"id": "ws_x", "name": "X", "plan": "team", "subscription": "active", "colour": "red"}]}`,
			wants: []string{`workspaces[0] (ws_x)`, `unknown field "colour"`}},
		{name: "wrong type", raw: `{"workspaces": [{"id": "ws_x", "name": "X", "plan": "team", "subscription": "active", "aiCredit": "lots"}]}`,
			wants: []string{`workspaces[0] (ws_x)`, `"aiCredit"`, "whole number"}},
		{name: "not JSON", raw: `{"workspaces": [`, wants: []string{"workspaces: the file ends too early, at line 1, column 17 (byte offset 16)"}},
		{name: "two objects", raw: `{} {}`, wants: []string{"exactly one object"}},
		{name: "top level not an object", raw: `[{"id": "ws_x"}]`, wants: []string{"top level must be a JSON object"}},
		{name: "array given twice", raw: `{"workspaces": [], "workspaces": []}`, wants: []string{`"workspaces" is given twice`}},
		{name: "array of the wrong type", raw: `{"documents": {"id": "doc_1"}}`, wants: []string{`"documents" must be an array`}},
		{name: "truncated inside an item", raw: `{"workspaces": [{"id": "ws_x", "na`, wants: []string{"workspaces[0] (ws_x): the file ends too early, at line 1, column 35"}},
		{name: "bad items are all named, the rest still checked", raw: `{"workspaces": [
			{"id": "ws_x", "name": "X", "plan": "team", "subscription": "active", "colour": "red"},
			{"id": "ws_y", "name": "Y", "plan": 7, "subscription": "active"},
			{"id": "ws_z", "name": "Z", "plan": "team", "subscription": "active"}],
			"devices": [{"id": "dev_1", "workspaceId": "ws_z", "status": "active", "os": "mac"}]}`,
			wants: []string{`workspaces[0] (ws_x): unknown field "colour"`, `workspaces[1] (ws_y): field "plan"`, `devices[0] (dev_1): unknown field "os"`, "3 problems"}},
		{name: "duplicate document", edit: func(f *dataset.File) {
			f.Documents = append(f.Documents, f.Documents[0])
			f.Documents[len(f.Documents)-1].Slug = "another"
		}, wants: []string{`documents[10] (doc_a1_1): id "doc_a1_1" is used twice`}},
		{name: "dangling edge", edit: func(f *dataset.File) { f.Edges[0].TargetDocumentID = "doc_gone" },
			wants: []string{`edges[0] (doc_a1_1 -> doc_gone): targetDocumentId "doc_gone" does not exist`}},
		{name: "dangling library", edit: func(f *dataset.File) { f.Documents[2].LibraryID = "lib_gone" },
			wants: []string{`documents[2] (doc_a1_3): libraryId "lib_gone" does not exist`}},
		{name: "key for a missing workspace", edit: func(f *dataset.File) { f.APIKeys[1].WorkspaceID = "ws_gone" },
			wants: []string{`apiKeys[1] (key_one): workspaceId "ws_gone" does not exist`}},
		{name: "key scope in another workspace", edit: func(f *dataset.File) { f.APIKeys[1].Libraries = []string{"lib_b1"} },
			wants: []string{`apiKeys[1] (key_one)`, `"lib_b1", which belongs to workspace ws_b`}},
		{name: "bad plan", edit: func(f *dataset.File) { f.Workspaces[0].Plan = "gold" },
			wants: []string{`workspaces[0] (ws_a): plan "gold" is not one of "individual", "team", "enterprise"`}},
		{name: "bad device status", edit: func(f *dataset.File) { f.Devices[0].Status = "lost" }, wants: []string{`devices[0] (dev_a): status "lost"`}},
		{name: "bad edge type", edit: func(f *dataset.File) { f.Edges[1].EdgeType = "guess" }, wants: []string{`edges[1]`, `edgeType "guess"`}},
		{name: "bad recording status", edit: func(f *dataset.File) { f.Recordings[0].Status = "done" }, wants: []string{`recordings[0] (rec_a1): status "done"`}},
		{name: "bad timestamp", edit: func(f *dataset.File) { f.Documents[1].UpdatedAt = "2026-13-01" },
			wants: []string{`documents[1] (doc_a1_2): updatedAt "2026-13-01" is not a timestamp of the form 2026-11-21T09:30:00Z`}},
		{name: "timestamp without zone", edit: func(f *dataset.File) { f.Recordings[0].ClientCreatedAt = "2026-03-01T09:00:00" },
			wants: []string{`recordings[0] (rec_a1): clientCreatedAt`}},
		{name: "missing timestamp", edit: func(f *dataset.File) { f.Libraries[0].CreatedAt = "" }, wants: []string{`libraries[0] (lib_a1): createdAt is missing`}},
		{name: "content section not in template", edit: func(f *dataset.File) { f.Documents[5].Content["prerequisites"] = []any{"x"} },
			wants: []string{`documents[5] (doc_a2_1): content has section "prerequisites"`}},
		{name: "content wrong type", edit: func(f *dataset.File) { f.Documents[0].Content["steps"] = "just one" },
			wants: []string{`documents[0] (doc_a1_1): content.steps must be an array of strings`}},
		{name: "slug taken by another library", edit: func(f *dataset.File) { f.Libraries[1].PreviousSlugs = []string{"operations"} },
			wants: []string{`libraries[1] (lib_a2): previousSlugs[0] "operations" is already a slug of library lib_a1`}},
		{name: "bad slug", edit: func(f *dataset.File) { f.Libraries[1].Slug = "Finance Team" }, wants: []string{`libraries[1] (lib_a2): slug "Finance Team"`}},
		{name: "bad id prefix", edit: func(f *dataset.File) { f.Documents[0].ID = "document_1" }, wants: []string{`id "document_1" must be "doc_"`}},
		{name: "edge across workspaces", edit: func(f *dataset.File) { f.Edges[0].TargetDocumentID = "doc_b1_1" }, wants: []string{"different workspaces"}},
		{name: "duplicate edge", edit: func(f *dataset.File) { f.Edges = append(f.Edges, f.Edges[0]) }, wants: []string{"already edges[0]"}},
		{name: "self loop", edit: func(f *dataset.File) { f.Edges[0].TargetDocumentID = "doc_a1_1" }, wants: []string{"to itself"}},
		{name: "duplicate secret", edit: func(f *dataset.File) { f.APIKeys[1].Secret = f.APIKeys[0].Secret }, wants: []string{"same as the secret of key key_full"}},
		{name: "short secret", edit: func(f *dataset.File) { f.APIKeys[0].Secret = "short" }, wants: []string{"apiKeys[0] (key_full): secret must be at least 16"}},
		{name: "empty scope", edit: func(f *dataset.File) { f.APIKeys[0].Libraries = nil }, wants: []string{"libraries is empty"}},
		{name: "dangling recording", edit: func(f *dataset.File) { f.Recordings[0].DocumentIDs = []string{"doc_gone"} }, wants: []string{`recordings[0] (rec_a1): documentIds lists "doc_gone"`}},
		{name: "duplicate sequence order", edit: func(f *dataset.File) { f.Recordings[0].Questions[1].SequenceOrder = 2 }, wants: []string{"sequenceOrder 2 is used twice"}},
		{name: "negative support", edit: func(f *dataset.File) { f.Edges[0].Support = -1 }, wants: []string{"support -1 must not be negative"}},
		{name: "lastSeen before firstSeen", edit: func(f *dataset.File) { f.Documents[0].LastSeen = "2025-01-01T00:00:00Z" }, wants: []string{"lastSeen"}},
		{name: "many problems listed together", edit: func(f *dataset.File) {
			for i := range f.Documents {
				f.Documents[i].LibraryID = "lib_gone"
			}
		}, wants: []string{"10 problems", "documents[0]", "documents[9]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.raw)
			if c.raw == "" {
				f := fixture.File()
				c.edit(f)
				raw = encode(t, f)
			}
			d, err := dataset.Load(bytes.NewReader(raw))
			if err == nil || d != nil {
				t.Fatalf("accepted; want a rejection")
			}
			var ve *dataset.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v, want *ValidationError", err, err)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message does not contain %q:\n%s", w, err)
				}
			}
		})
	}
}

// TestLoadFileSaysWhatIsWrong: a path that is not a readable file gets a
// sentence naming it and what to do, without the operating system's words.
func TestLoadFileSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "no data-set file at " + filepath.Join(dir, "missing.json") + ": check the path"},
		{dir, "is a folder"},
	} {
		_, err := dataset.LoadFile(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "open "+c.path) {
			t.Errorf("LoadFile(%s): %v; want a message with %q", c.path, err, c.want)
		}
	}
}
