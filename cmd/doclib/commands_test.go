package main

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
)

func TestEveryCommandAsTextAndJSON(t *testing.T) {
	c := newCLI(t, apiSrv.URL, full)
	ac := apiClient(t, apiSrv.URL, full)
	ctx := context.Background()
	contains := func(out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("no %q in\n%s", w, out)
			}
		}
	}

	t.Run("libraries", func(t *testing.T) {
		want, err := ac.Libraries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := c.ok("libraries")
		if !regexp.MustCompile(`(?m)^ID +NAME +DOCUMENTS +UPDATED\n`).MatchString(out) ||
			!regexp.MustCompile(`(?m)^lib_it +IT Operations +60 +\d{4}-\d\d-\d\d$`).MatchString(out) {
			t.Errorf("not an aligned table:\n%s", out)
		}
		var got []api.Library
		decode(t, c.every("libraries"), &got)
		same(t, "libraries", got, want.Libraries)
	})

	t.Run("library", func(t *testing.T) {
		want, err := ac.Library(ctx, "it-operations")
		if err != nil {
			t.Fatal(err)
		}
		contains(c.ok("library", "it-operations"), "IT Operations (lib_it)", "Documents:   60", "Edges:", "Categories:  Accounts & access")
		var got api.Library
		decode(t, c.every("library", "it-operations"), &got)
		same(t, "library", got, want)
		if got.EdgeCount == nil {
			t.Error("no edgeCount")
		}
	})

	t.Run("labels", func(t *testing.T) {
		tags, err1 := ac.Tags(ctx, "lib_it")
		cats, err2 := ac.Categories(ctx, "lib_it")
		apps, err3 := ac.Applications(ctx, "lib_it")
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatal(err1, err2, err3)
		}
		contains(c.ok("tags", "lib_it"), "TAG", "DOCUMENTS", tags.Tags[0].Name)
		contains(c.ok("categories", "lib_it"), "CATEGORY", cats.Categories[0].Name)
		contains(c.ok("applications", "lib_it"), "APPLICATION", apps.Applications[0].Name)
		var gt, gc, ga []api.Label
		decode(t, c.every("tags", "lib_it"), &gt)
		decode(t, c.every("categories", "lib_it"), &gc)
		decode(t, c.every("applications", "lib_it"), &ga)
		same(t, "tags", gt, tags.Tags)
		same(t, "categories", gc, cats.Categories)
		same(t, "applications", ga, apps.Applications)
	})

	t.Run("graph", func(t *testing.T) {
		want, err := ac.Graph(ctx, "lib_it")
		if err != nil {
			t.Fatal(err)
		}
		out := c.ok("graph", "lib_it")
		first := want.Documents[0]
		contains(out, "60 documents and 142 edges, most active first.", first.Title+" ("+first.ID+")", "  → ")
		if strings.Contains(out, "Truncated") {
			t.Error("the demo graph is whole")
		}
		dot := c.ok("graph", "lib_it", "--format", "dot")
		if !strings.HasPrefix(dot, `digraph "lib_it" {`) || strings.Count(dot, " -> ") != len(want.Edges) {
			t.Errorf("DOT with %d edge lines for %d edges", strings.Count(dot, " -> "), len(want.Edges))
		}
		var got api.Graph
		decode(t, c.every("graph", "lib_it"), &got)
		same(t, "graph", got, want)
	})

	t.Run("documents", func(t *testing.T) {
		p := client.DocumentsParams{Page: client.Page{Page: 2, PageSize: 5}, Tag: "security"}
		want, err := ac.Documents(ctx, "lib_it", p)
		if err != nil {
			t.Fatal(err)
		}
		out := c.ok("documents", "lib_it", "--tag", "security", "--page", "2", "--page-size", "5")
		pages := (want.Total + 4) / 5
		contains(out, "ID", "TITLE", "CATEGORY", "UPDATED", want.Documents[0].ID, want.Documents[0].Title)
		if pages > 2 {
			contains(out, "page 2 of "+strconv.Itoa(pages)+" ("+strconv.Itoa(want.Total)+" documents) — next: --page 3")
		}
		var got []api.DocumentItem
		decode(t, c.every("documents", "lib_it", "--tag", "security", "--page", "2", "--page-size", "5"), &got)
		same(t, "documents", got, want.Documents)
		contains(c.ok("documents", "lib_it", "--tag", "no-such-tag"), "No documents match.", "doclib categories|tags|applications lib_it")
	})

	t.Run("document", func(t *testing.T) {
		want, err := ac.Document(ctx, "doc_it_001")
		if err != nil {
			t.Fatal(err)
		}
		out := c.ok("document", "doc_it_001")
		contains(out, "# "+want.Title+"\n", "ID: doc_it_001 · Library: IT Operations (lib_it)", "## Summary", "## Steps\n1. ", "## Next")
		// Sections come in the template's order.
		last := -1
		for _, s := range want.Schema.Sections {
			if i := strings.Index(out, "## "+s.Title+"\n"); i >= 0 {
				if i < last {
					t.Errorf("section %q out of the template's order", s.Title)
				}
				last = i
			}
		}
		var got api.Document
		decode(t, c.every("document", "doc_it_001"), &got)
		same(t, "document", got, want)
	})

	t.Run("traverse", func(t *testing.T) {
		want, err := ac.Traverse(ctx, "doc_it_001", client.TraverseParams{Direction: "outgoing", Depth: 2})
		if err != nil {
			t.Fatal(err)
		}
		out := c.ok("traverse", "doc_it_001", "--direction", "outgoing", "--depth", "2")
		contains(out, "within 2 hops of doc_it_001 (direction outgoing, every label)", "\nReset a user's password in Okta (doc_it_001)\n", "\n  → ", "\n    → ")
		var got api.Traversal
		decode(t, c.every("traverse", "doc_it_001", "--direction", "outgoing", "--depth", "2"), &got)
		same(t, "traverse", got, want)
		contains(c.ok("traverse", "doc_it_001", "--label", "often next"), `label "often next"`)
	})

	t.Run("recordings", func(t *testing.T) {
		want, err := ac.SourceRecordings(ctx, "doc_it_001", client.Page{PageSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		out := c.ok("recordings", "doc_it_001", "--page-size", "1")
		contains(out, want.Guidance, want.SourceRecordings[0].Title, "Questions:\n- Q: ", "Steps:\n1. ", "— next: --page 2")
		var got []api.SourceRecording
		decode(t, c.every("recordings", "doc_it_001", "--page-size", "1"), &got)
		same(t, "recordings", got, want.SourceRecordings)
		// No recordings at all, and recordings none of which can be read.
		contains(c.ok("recordings", "doc_it_004"), "No recordings are linked to this document.")
		solo := newCLI(t, apiSrv.URL, individual)
		first := solo.ok("graph", "lib_solo", "--json", "documents", "--jq", ".documents[0].id")
		out = solo.ok("recordings", strings.TrimSpace(first))
		contains(out, "can be read here", "Individual plan", "authoritative account")
		if n := strings.Count(out, "authoritative account"); n != 1 {
			t.Errorf("the document is said to be the account %d times:\n%s", n, out)
		}
	})

	t.Run("search", func(t *testing.T) {
		p := client.SearchParams{Query: "reset password", Page: client.Page{PageSize: 3}}
		want, err := ac.Search(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		out := c.ok("search", "reset", "password", "--page-size", "3")
		h := want.Documents[0]
		contains(out, strconv.Itoa(want.Total)+" results", "1. "+h.Title+"\n", h.ID+" · "+h.Library.Name+" ("+h.Library.ID+")",
			"signals: "+strings.Join(h.Relevance.Signals, ", "), "score ", "Matched documents by facet:", "Libraries: ", "Narrow with --library")
		if strings.Contains(out, "LOW CONFIDENCE") {
			t.Errorf("a good match flagged low confidence:\n%s", out)
		}
		var got []api.SearchHit
		decode(t, c.every("search", "reset", "password", "--page-size", "3"), &got)
		same(t, "search", got, want.Documents)

		out = c.ok("search", "zzqqxx", "blorp")
		if !strings.HasPrefix(out, "LOW CONFIDENCE") {
			t.Errorf("the low-confidence warning is not first:\n%s", out)
		}
		contains(out, "suggestions", "not matches", "  * ", "signals: fallback", "suggestions) — next: --page 2")
		decode(t, c.every("search", "zzqqxx", "blorp"), &got)
		for _, h := range got {
			if !slices.Equal(h.Relevance.Signals, []string{"fallback"}) {
				t.Errorf("a fallback hit's signals in JSON: %v", h.Relevance.Signals)
			}
		}
		// Filters reach the API, and --library takes an ID, a slug or an
		// earlier slug as every other command does.
		for _, lib := range []string{"lib_finance", "finance", "accounting"} {
			decode(t, c.ok("search", "invoice", "--library", lib, "--json", "id,library"), &got)
			if len(got) == 0 {
				t.Errorf("--library %s: no hits", lib)
			}
			for _, d := range got {
				if d.Library.ID != "lib_finance" {
					t.Errorf("--library %s gave %s", lib, d.Library.ID)
				}
			}
		}
	})
}

func TestAllWalksEveryPage(t *testing.T) {
	n := &counter{}
	c := newCLI(t, apiSrv.URL, full)
	c.transport = n
	ac := apiClient(t, apiSrv.URL, full)
	ctx := context.Background()

	var docs []api.DocumentItem
	decode(t, c.ok("documents", "lib_it", "--all", "--page-size", "7", "--json", "id,title"), &docs)
	first, err := ac.Documents(ctx, "lib_it", client.DocumentsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != first.Total {
		t.Errorf("--all: %d documents; want %d", len(docs), first.Total)
	}
	if got, want := n.count("/libraries/lib_it/documents"), (first.Total+6)/7; got != want {
		t.Errorf("%d requests for pages of 7, want %d", got, want)
	}
	seen := map[string]bool{}
	for _, d := range docs {
		if seen[d.ID] {
			t.Errorf("%s twice", d.ID)
		}
		seen[d.ID] = true
	}
	out := c.ok("documents", "lib_it", "--all", "--page-size", "9")
	if rows := strings.Count(out, "\ndoc_it_"); rows != first.Total || !strings.Contains(out, strconv.Itoa(first.Total)+" documents.") {
		t.Errorf("%d rows of %d:\n%s", rows, first.Total, out)
	}

	// Recordings: a document with three readable recordings, one per page.
	want, err := ac.SourceRecordings(ctx, "doc_it_020", client.Page{})
	if err != nil || want.Total < 2 {
		t.Fatalf("doc_it_020 has %d readable recordings (%v)", want.Total, err)
	}
	var recs []api.SourceRecording
	decode(t, c.ok("recordings", "doc_it_020", "--all", "--page-size", "1", "--json", "id"), &recs)
	if len(recs) != want.Total || n.count("/documents/doc_it_020/source-recordings") != want.Total {
		t.Errorf("--all: %d of %d recordings in %d requests", len(recs), want.Total, n.count("/documents/doc_it_020/source-recordings"))
	}
	out = c.ok("recordings", "doc_it_020", "--all", "--page-size", "1")
	if strings.Count(out, "\n## ") != want.Total || strings.Contains(out, "next:") {
		t.Errorf("--all text:\n%s", out)
	}

	// Search: every hit.
	hits, err := ac.Search(ctx, client.SearchParams{Query: "reset password"})
	if err != nil {
		t.Fatal(err)
	}
	var res []api.SearchHit
	decode(t, c.ok("search", "reset", "password", "--all", "--page-size", "4", "--json", "id"), &res)
	if len(res) != hits.Total || hits.Total < 5 {
		t.Errorf("--all: %d hits of %d", len(res), hits.Total)
	}

	// Suggestions are not walked: each page would spend a credit on
	// documents nothing matched.
	before := n.count("/search/documents")
	r := c.run("search", "zzqxv", "--all", "--page-size", "3", "--json", "id,relevance")
	decode(t, r.stdout, &res)
	if r.code != 0 || len(res) != 3 || !slices.Equal(res[0].Relevance.Signals, []string{"fallback"}) || n.count("/search/documents")-before != 1 ||
		!strings.Contains(r.stderr, "--all stopped after the first page of") {
		t.Errorf("%d requests for a low-confidence --all:\n%s", n.count("/search/documents")-before, r)
	}

	// Nothing at all: the first page as the API sent it, never pageSize 0.
	if out := c.ok("documents", "lib_it", "--all", "--json", "id", "--tag", "no-such-tag"); out != "[]\n" {
		t.Errorf("empty --all: %q, want []", out)
	}
}

func TestCompletion(t *testing.T) {
	c := newCLI(t, apiSrv.URL, full)
	out := c.ok("completion", "bash")
	if !strings.Contains(out, "bash completion") || !strings.Contains(out, "doclib") {
		t.Errorf("not a bash completion script:\n%.300s", out)
	}
	for _, sh := range []string{"zsh", "fish", "powershell"} {
		if c.ok("completion", sh) == "" {
			t.Errorf("no %s script", sh)
		}
	}
	// Library arguments complete to the IDs the key sees.
	out = c.ok("__complete", "documents", "")
	if !strings.Contains(out, "lib_it\tIT Operations") || !strings.Contains(out, "lib_finance") {
		t.Errorf("library completion:\n%s", out)
	}
	if out := c.ok("__complete", "traverse", "doc_it_001", "--direction", ""); !strings.Contains(out, "outgoing") {
		t.Errorf("--direction completion:\n%s", out)
	}
}

func TestHelpHasExamplesEverywhere(t *testing.T) {
	c := newCLI(t, apiSrv.URL, full)
	root := (&app{getenv: func(string) string { return "" }}).newRoot()
	var paths [][]string
	var visit func(path []string, cmds []*cobra.Command)
	visit = func(path []string, cmds []*cobra.Command) {
		for _, cmd := range cmds {
			p := append(append([]string{}, path...), cmd.Name())
			paths = append(paths, p)
			visit(p, cmd.Commands())
		}
	}
	visit(nil, root.Commands())
	if len(paths) < 15 {
		t.Fatalf("only %d commands", len(paths))
	}
	for _, p := range paths {
		out := c.ok(append(p, "--help")...)
		if !strings.Contains(out, "Examples:\n") {
			t.Errorf("doclib %s --help has no examples", strings.Join(p, " "))
		}
	}
	out := c.ok("--help")
	for _, want := range []string{"Configuration (the first one set wins)", "--url, then DOCLIB_URL, then \"url\" in the config file",
		"--api-key-file FILE, then DOCLIB_API_KEY", "Exit codes:\n  0    success\n  1    the API answered with an error",
		"  2    usage", "  3    the API could not be reached", "  130  interrupted", "libraries    List the libraries the key can see", "completion", "mcp"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the root help", want)
		}
	}
}
