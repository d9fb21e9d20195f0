package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/api"
)

func TestContentFollowsTheTemplate(t *testing.T) {
	schema := api.Schema{Version: 1, Sections: []api.Section{
		{Key: "summary", Title: "Summary", Type: "text"},
		{Key: "steps", Title: "Steps", Type: "steps"},
		{Key: "notes", Title: "Notes", Type: "list"},
		{Key: "empty", Title: "Nothing here", Type: "text"},
	}}
	content := json.RawMessage(`{"notes":["Check MFA."],"steps":["Open Okta.","Reset it."],"summary":"Reset a password.","extra":["kept"]}`)
	var b bytes.Buffer
	if err := Content(&b, content, schema); err != nil {
		t.Fatal(err)
	}
	want := "## Summary\nReset a password.\n\n## Steps\n1. Open Okta.\n2. Reset it.\n\n## Notes\n- Check MFA.\n\n## extra\n- kept\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if err := Content(&b, json.RawMessage(`[1]`), schema); err == nil {
		t.Error("content that is not an object was accepted")
	}
}

func TestDocument(t *testing.T) {
	d := &api.Document{DocumentItem: api.DocumentItem{ID: "doc_1", Title: "Reset a password", Category: "Accounts", Tags: []string{"security"},
		RecordingCount: 3, DeviceCount: 2, LastSeen: api.Time{Time: time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC)},
		Content: json.RawMessage(`{"summary":"Reset it."}`)},
		Schema:  api.Schema{Sections: []api.Section{{Key: "summary", Title: "Summary", Type: "text"}}},
		Library: api.DocumentRef{ID: "lib_it", Name: "IT"},
		Edges: api.Edges{Outgoing: []api.OutgoingEdge{{TargetDocumentID: "doc_2", TargetDocumentTitle: "Unlock", Label: "often next", EdgeType: "data", Support: 1, LowConfidence: true}},
			Incoming: []api.IncomingEdge{{SourceDocumentID: "doc_3", SourceDocumentTitle: "Onboard", Label: "alternative to", EdgeType: "semantic"}}},
	}
	var b bytes.Buffer
	if err := Document(&b, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Reset a password\n", "Library: IT (lib_it)", "Tags: security", "Recorded 3 times on 2 devices, last seen 2026-03-05",
		"## Summary\nReset it.", "## Next\n- Unlock (doc_2): often next, seen in 1 recording (low confidence)", "## Before\n- Onboard (doc_3): alternative to, related by meaning"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
