package dataset_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
)

type editCase struct {
	name     string
	edit     func(f *dataset.File)
	wants    []string
	exactly  string   // the only problem, when set
	unwanted []string // knock-on problems that point at the wrong fix
}

// runEdits breaks the fixture one way per case and loads it from JSON, as local
// mode and the import do.
func runEdits(t *testing.T, cases []editCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fixture.File()
			c.edit(f)
			ve := rejection(t, strings.NewReader(string(encode(t, f))))
			msg := ve.Error()
			for _, w := range c.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("message does not contain %q:\n%s", w, msg)
				}
			}
			if c.exactly != "" && (len(ve.Problems) != 1 || ve.More != 0 || ve.Problems[0] != c.exactly) {
				t.Errorf("problems %q, want exactly [%q]", ve.Problems, c.exactly)
			}
			for _, u := range c.unwanted {
				if strings.Contains(msg, u) {
					t.Errorf("message contains %q:\n%s", u, msg)
				}
			}
		})
	}
}

// accepts loads the edited fixture and fails on any problem.
func accepts(t *testing.T, edit func(f *dataset.File)) *doclib.DataSet {
	t.Helper()
	f := fixture.File()
	edit(f)
	d, err := dataset.Load(strings.NewReader(string(encode(t, f))))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// updatedAt not before createdAt holds for libraries as for documents, and a
// malformed timestamp is not also "before" the other one.
func TestTimestampOrder(t *testing.T) {
	runEdits(t, []editCase{
		{name: "library", edit: func(f *dataset.File) { f.Libraries[1].UpdatedAt = "2024-12-31T23:59:59Z" },
			exactly: "libraries[1] (lib_a2): updatedAt 2024-12-31T23:59:59Z is before createdAt 2025-01-01T00:00:00Z"},
		{name: "document", edit: func(f *dataset.File) { f.Documents[0].UpdatedAt = "2025-12-31T00:00:00Z" },
			exactly: "documents[0] (doc_a1_1): updatedAt 2025-12-31T00:00:00Z is before createdAt 2026-01-01T08:00:00Z"},
		{name: "malformed, not also before", edit: func(f *dataset.File) { f.Documents[0].UpdatedAt = "soon" },
			exactly: `documents[0] (doc_a1_1): updatedAt "soon" is not a timestamp of the form 2026-11-21T09:30:00Z (or with an offset such as +02:00 instead of Z)`},
	})
}

// The format's timestamps are RFC 3339 as time.Parse reads it; the message says
// what is accepted instead of naming RFC 3339, which allows more.
func TestTimestampForm(t *testing.T) {
	const form = "is not a timestamp of the form 2026-11-21T09:30:00Z"
	runEdits(t, []editCase{
		{name: "leap second", edit: func(f *dataset.File) { f.Recordings[0].ClientCreatedAt = "2016-12-31T23:59:60Z" },
			wants: []string{`recordings[0] (rec_a1): clientCreatedAt "2016-12-31T23:59:60Z" ` + form}},
		{name: "lower case t and z", edit: func(f *dataset.File) { f.Recordings[0].ClientCreatedAt = "2026-03-01t09:00:00z" },
			wants: []string{`clientCreatedAt "2026-03-01t09:00:00z" ` + form}},
		{name: "offset of 24 hours", edit: func(f *dataset.File) { f.Recordings[0].ClientCreatedAt = "2026-03-01T09:00:00+24:00" },
			wants: []string{`clientCreatedAt "2026-03-01T09:00:00+24:00" ` + form}},
	})
	d := accepts(t, func(f *dataset.File) { f.Recordings[0].ClientCreatedAt = "2026-03-01T11:00:00.5+02:00" })
	if got := d.Recordings[0].ClientCreatedAt; !got.Equal(time.Date(2026, 3, 1, 9, 0, 0, 5e8, time.UTC)) || got.Location() != time.UTC {
		t.Errorf("clientCreatedAt %v, want 09:00:00.5 UTC", got)
	}
}

// A secret's length is in characters and white space is any Unicode white space.
func TestSecrets(t *testing.T) {
	runEdits(t, []editCase{
		{name: "16 bytes, 8 characters", edit: func(f *dataset.File) { f.APIKeys[0].Secret = strings.Repeat("é", 8) },
			exactly: "apiKeys[0] (key_full): secret must be at least 16 characters with no white space; it has 8"},
		{name: "no-break space", edit: func(f *dataset.File) { f.APIKeys[0].Secret = "dlk_test_a\u00a0full_scope" },
			exactly: "apiKeys[0] (key_full): secret must be at least 16 characters with no white space; it holds U+00A0"},
		{name: "ideographic space", edit: func(f *dataset.File) { f.APIKeys[0].Secret = "dlk_test_a\u3000full_scope" },
			wants: []string{"it holds U+3000"}},
	})
	accepts(t, func(f *dataset.File) { f.APIKeys[0].Secret = strings.Repeat("é", 16) })
}

// A problem that follows from another is left out: it would point at the wrong fix.
func TestNoKnockOnProblems(t *testing.T) {
	runEdits(t, []editCase{
		{name: "document of a missing library", edit: func(f *dataset.File) { f.Documents[1].LibraryID = "lib_gone" }, // doc_a1_2: edges and rec_a12
			exactly: `documents[1] (doc_a1_2): libraryId "lib_gone" does not exist in libraries`},
		{name: "device of a missing workspace", edit: func(f *dataset.File) { f.Devices[0].WorkspaceID = "ws_gone" },
			exactly: `devices[0] (dev_a): workspaceId "ws_gone" does not exist in workspaces`},
		{name: "library of a missing workspace", edit: func(f *dataset.File) { f.Libraries[1].WorkspaceID = "ws_gone" }, // lib_a2: an edge from lib_a1
			exactly: `libraries[1] (lib_a2): workspaceId "ws_gone" does not exist in workspaces`, unwanted: []string{"different workspaces"}},
		{name: "section key used twice", edit: func(f *dataset.File) {
			f.Libraries[0].Schema = dataset.Schema{Version: 2, Sections: []dataset.Section{
				{Key: "summary", Title: "Summary", Type: "text"}, {Key: "summary", Title: "Steps", Type: "steps"}}}
		}, exactly: `libraries[0] (lib_a1): schema.sections[1].key "summary" is used twice`},
		{name: "schema missing", edit: func(f *dataset.File) { f.Libraries[0].Schema = dataset.Schema{} },
			exactly: `libraries[0] (lib_a1): schema is missing; give one such as {"version": 1, "sections": [{"key": "summary", "title": "Summary", "type": "text"}]}`},
		{name: "star twice", edit: func(f *dataset.File) { f.APIKeys[0].Libraries = []string{"*", "*"} },
			exactly: `apiKeys[0] (key_full): libraries lists "*" 2 times; use ["*"] alone for every library`},
		{name: "star mixed", edit: func(f *dataset.File) { f.APIKeys[0].Libraries = []string{"*", "lib_a1", "*"} },
			exactly: `apiKeys[0] (key_full): libraries mixes "*" with library IDs; use ["*"] alone for every library`},
	})
}

// The format's limits keep every accepted data set inside every backend
// (limits.go); each problem is reported once, naming the item.
func TestLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) } // 2 bytes, 1 character
	runEdits(t, []editCase{
		{name: "5 MB title, once", edit: func(f *dataset.File) { f.Documents[0].Title = strings.Repeat("x", 5_000_000) },
			exactly: "documents[0] (doc_a1_1): title is 5,000,000 characters long; at most 500 are allowed"},
		{name: "title in characters", edit: func(f *dataset.File) { f.Documents[0].Title = long(501) },
			exactly: "documents[0] (doc_a1_1): title is 501 characters long; at most 500 are allowed"},
		{name: "content", edit: func(f *dataset.File) { f.Documents[0].Content["summary"] = strings.Repeat("x", 2_000_000) },
			wants: []string{"documents[0] (doc_a1_1): content is 2,000,", " bytes written as JSON; at most 300,000 are allowed", "1 problem"}},
		{name: "content counts escapes", edit: func(f *dataset.File) { f.Documents[0].Content["summary"] = strings.Repeat("\x01", 60_000) },
			wants: []string{"documents[0] (doc_a1_1): content is 360,"}},
		{name: "recording", edit: func(f *dataset.File) { f.Recordings[0].Steps = []string{strings.Repeat("<", 60_000)} },
			wants: []string{"recordings[0] (rec_a1): questions and steps are 360,", "at most 300,000 are allowed"}},
		{name: "recording title", edit: func(f *dataset.File) { f.Recordings[0].Title = long(501) }, wants: []string{"recordings[0] (rec_a1): title is 501 characters"}},
		{name: "recording documents", edit: func(f *dataset.File) {
			for i := range 100 {
				f.Recordings[0].DocumentIDs = append(f.Recordings[0].DocumentIDs, fmt.Sprintf("doc_x%d", i))
			}
		}, wants: []string{"recordings[0] (rec_a1): documentIds lists 101 documents; at most 100 are allowed"}},
		{name: "tags", edit: func(f *dataset.File) {
			f.Documents[0].Tags = nil
			for i := range 51 {
				f.Documents[0].Tags = append(f.Documents[0].Tags, fmt.Sprint("t", i))
			}
		}, exactly: "documents[0] (doc_a1_1): tags has 51 values; at most 50 are allowed"},
		{name: "long tags, once", edit: func(f *dataset.File) { f.Documents[0].Tags = []string{long(101), long(102)} },
			exactly: `documents[0] (doc_a1_1): tags holds "` + long(40) + `"… (101 characters), of 101 characters; at most 100 are allowed`},
		{name: "category", edit: func(f *dataset.File) { f.Documents[0].Category = long(101) }, exactly: "documents[0] (doc_a1_1): category is 101 characters long; at most 100 are allowed"},
		{name: "edge label", edit: func(f *dataset.File) { f.Edges[0].Label = long(101) }, exactly: "edges[0] (doc_a1_1 -> doc_a1_2): label is 101 characters long; at most 100 are allowed"},
		{name: "workspace name", edit: func(f *dataset.File) { f.Workspaces[0].Name = long(201) }, exactly: "workspaces[0] (ws_a): name is 201 characters long; at most 200 are allowed"},
		{name: "description", edit: func(f *dataset.File) { f.Libraries[0].Description = long(10_001) }, exactly: "libraries[0] (lib_a1): description is 10,001 characters long; at most 10,000 are allowed"},
		{name: "section title", edit: func(f *dataset.File) {
			f.Libraries[1].Schema.Sections = append([]dataset.Section(nil), f.Libraries[1].Schema.Sections...) // the fixture's libraries share them
			f.Libraries[1].Schema.Sections[0].Title = long(201)
		},
			exactly: "libraries[1] (lib_a2): schema.sections[0].title is 201 characters long; at most 200 are allowed"},
		{name: "sections", edit: func(f *dataset.File) {
			for i := range 51 {
				f.Libraries[1].Schema.Sections = append(f.Libraries[1].Schema.Sections, dataset.Section{Key: fmt.Sprint("s", i), Title: "S", Type: "text"})
			}
		}, exactly: "libraries[1] (lib_a2): schema.sections has 53 sections; at most 50 are allowed"},
		{name: "previous slugs", edit: func(f *dataset.File) {
			for i := range 101 {
				f.Libraries[1].PreviousSlugs = append(f.Libraries[1].PreviousSlugs, fmt.Sprint("old-", i))
			}
		}, exactly: "libraries[1] (lib_a2): previousSlugs has 101 slugs; at most 100 are allowed"},
		{name: "key libraries", edit: func(f *dataset.File) {
			for i := range 1001 {
				f.APIKeys[1].Libraries = append(f.APIKeys[1].Libraries, fmt.Sprint("lib_x", i))
			}
		}, exactly: `apiKeys[1] (key_one): libraries lists 1002 libraries; at most 1000 are allowed (use ["*"] for every library of the workspace)`},
	})
	// At the limits, all is well.
	accepts(t, func(f *dataset.File) {
		f.Documents[0].Title = long(500)
		f.Documents[0].Content["summary"] = strings.Repeat("x", 299_000)
		f.Edges[0].Label = long(100)
		f.Workspaces[0].Name = long(200)
	})
}

// A library's derived label lists are bounded as a whole: many documents, each
// within its own limits, can still make them too large for the library's item.
func TestLibraryLabelLimit(t *testing.T) {
	f := fixture.File()
	base := f.Documents[0]
	for i := range 2000 {
		doc := base
		doc.ID, doc.Slug = fmt.Sprintf("doc_many_%d", i), fmt.Sprintf("many-%d", i)
		doc.Tags = []string{fmt.Sprintf("%04d %s", i, strings.Repeat("t", 95))} // 2,000 distinct tags of 100 characters
		f.Documents = append(f.Documents, doc)
	}
	_, err := dataset.Validate(f)
	var ve *dataset.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || !strings.HasPrefix(ve.Problems[0],
		"libraries[0] (lib_a1): the categories, tags and applications of its documents are ") {
		t.Fatalf("got %v", err)
	}
	f.Documents = f.Documents[:len(f.Documents)-1000] // 1,000 such tags fit
	if _, err := dataset.Validate(f); err != nil {
		t.Fatal(err)
	}
}
