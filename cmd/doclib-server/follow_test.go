package main

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
)

const keyNew = "dlk_test_c_new_workspace_01"

// withNewWorkspace is the fixture plus a workspace imported after the server
// started: its library, a document and a key. Every workspace brings its own
// provider key, so that the searches of a test that waits are not metered.
func withNewWorkspace() *dataset.File {
	f := fixture.File()
	f.Workspaces = append(f.Workspaces, dataset.Workspace{ID: "ws_c", Name: "Cobalt", Plan: "team", AICredit: 100, Subscription: "active"})
	for i := range f.Workspaces {
		f.Workspaces[i].OwnProviderKey = true
	}
	f.Devices = append(f.Devices, dataset.Device{ID: "dev_c", WorkspaceID: "ws_c", Status: "active"})
	f.APIKeys = append(f.APIKeys, dataset.APIKey{ID: "key_c", WorkspaceID: "ws_c", DeviceID: "dev_c", Secret: keyNew, Libraries: []string{"*"}})
	f.Libraries = append(f.Libraries, dataset.Library{ID: "lib_c1", WorkspaceID: "ws_c", Name: "Cobalt Ops", Slug: "ops",
		Description: "Cobalt's runbooks.", CreatedAt: "2025-01-01T00:00:00Z", UpdatedAt: "2026-02-01T00:00:00Z", Schema: f.Libraries[1].Schema})
	f.Documents = append(f.Documents, newDocument("doc_c1_1", "lib_c1", "Renew the TLS certificate"))
	return f
}

func newDocument(id, lib, title string) dataset.Document {
	at := "2026-01-10T10:00:00Z"
	return dataset.Document{ID: id, LibraryID: lib, Slug: strings.ReplaceAll(id, "_", "-"), Title: title, Category: "Ops",
		Tags: []string{}, Applications: []string{"Certbot"}, FirstSeen: at, LastSeen: at, CreatedAt: at, UpdatedAt: at,
		Content: map[string]any{"summary": title + " before it is too late.", "steps": []any{"Open the console", "Do it"}}}
}

// searchIDs is a search's document IDs and whether it was the fallback.
func searchIDs(t *testing.T, base, key, q string) ([]string, bool) {
	t.Helper()
	status, body := get(t, base+"/search/documents?q="+q, key)
	if status != 200 {
		t.Fatalf("search %q: %d %.300s", q, status, body)
	}
	var res api.SearchResults
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range res.Documents {
		ids = append(ids, d.ID)
	}
	return ids, res.LowConfidence
}

// within polls cond until it holds, failing after two minutes: what it
// waits for (a scan of the table every 200 ms) takes about a second,
// and only a change that is never seen takes minutes, however busy the
// machine; it returns how long it took.
func within(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("%s: not within 2 minutes", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

func importFile(t *testing.T, tbl *dynamo.Table, f *dataset.File, gen string, prune bool) {
	t.Helper()
	d, err := dataset.Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Import(context.Background(), d, gen, dynamo.ImportOptions{Prune: prune}); err != nil {
		t.Fatal(err)
	}
}

// TestEmbeddedSearchFollowsTheTable: over --store dynamodb, what an import
// writes while the server runs is searchable within the poll's bound: a new
// workspace with its key (whose search, with the index built at start only,
// was an empty list), a new and a changed document, a removed one, and a
// key's new scope over a new library. Stopping the server stops the
// follower.
func TestEmbeddedSearchFollowsTheTable(t *testing.T) {
	tbl, _ := importedTable(t)
	base, out, stop := start(t, "--addr", "127.0.0.1:0", "--store", "dynamodb", "--table", tbl.Name, "--search-poll", "200ms", "--no-rate-limits")
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	if !strings.Contains(out.String(), "Search follows the table's changes") {
		t.Errorf("banner:\n%s", out)
	}

	f := withNewWorkspace()
	importFile(t, tbl, f, "g2", false)
	took := within(t, "a new workspace's document, by its new key", func() bool {
		ids, _ := searchIDs(t, base, keyNew, "certificate")
		return slices.Equal(ids, []string{"doc_c1_1"})
	})
	t.Logf("a new workspace searchable after %s", took)

	for i := range f.Documents {
		if f.Documents[i].ID == "doc_a1_3" {
			f.Documents[i].Title = "Provision a laptop with Autopilot"
		}
	}
	f.Documents = slices.DeleteFunc(f.Documents, func(d dataset.Document) bool { return d.ID == "doc_a1_5" })
	f.Edges = slices.DeleteFunc(f.Edges, func(e dataset.Edge) bool {
		return e.SourceDocumentID == "doc_a1_5" || e.TargetDocumentID == "doc_a1_5"
	})
	f.Documents = append(f.Documents, newDocument("doc_a1_6", "lib_a1", "Renew the VPN certificate"))
	importFile(t, tbl, f, "g3", true)
	took = within(t, "a new, a changed and a removed document", func() bool {
		vpn, _ := searchIDs(t, base, fixture.KeyFull, "vpn")
		autopilot, _ := searchIDs(t, base, fixture.KeyFull, "autopilot")
		offboard, _ := searchIDs(t, base, fixture.KeyFull, "offboard")
		return slices.Equal(vpn, []string{"doc_a1_6"}) && slices.Equal(autopilot, []string{"doc_a1_3"}) && !slices.Contains(offboard, "doc_a1_5")
	})
	t.Logf("document changes searchable after %s", took)

	f.Libraries = append(f.Libraries, dataset.Library{ID: "lib_c2", WorkspaceID: "ws_c", Name: "Cobalt Finance", Slug: "finance",
		Description: "Cobalt's money.", CreatedAt: "2025-01-01T00:00:00Z", UpdatedAt: "2026-02-01T00:00:00Z", Schema: f.Libraries[1].Schema})
	f.Documents = append(f.Documents, newDocument("doc_c2_1", "lib_c2", "Pay the supplier"))
	f.APIKeys[len(f.APIKeys)-1].Libraries = []string{"lib_c2"}
	importFile(t, tbl, f, "g4", false)
	within(t, "a key's new scope over a new library", func() bool {
		ids, fallback := searchIDs(t, base, keyNew, "certificate") // outside the scope now: the fallback
		supplier, _ := searchIDs(t, base, keyNew, "supplier")
		return fallback && slices.Equal(ids, []string{"doc_c2_1"}) && slices.Equal(supplier, []string{"doc_c2_1"})
	})

	stopped = true
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "indexer.(*Poller).Run") {
		t.Errorf("the follower still runs after the server stopped:\n%s", stacks)
	}
}
