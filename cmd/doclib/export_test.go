package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/clients/client"
)

func TestJSONFieldsAndJQ(t *testing.T) {
	n := &counter{}
	c := newCLI(t, apiSrv.URL, full)
	c.transport = n
	ac := apiClient(t, apiSrv.URL, full)
	libs, err := ac.Libraries(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	// --json alone lists the fields, as gh does, and sends nothing.
	r := c.run("libraries", "--json")
	if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "Specify one or more comma-separated fields for --json:\n  categories\n  createdAt\n") ||
		!strings.Contains(r.stderr, "\n  documentCount\n") || strings.Contains(r.stderr, "edgeCount") {
		t.Errorf("--json alone:\n%s", r)
	}
	// A field the command does not have is named, with the ones it has.
	r = c.run("search", "okta", "--json", "id,score")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown JSON field "score"`) || !strings.Contains(r.stderr, "\n  relevance\n") {
		t.Errorf("unknown field:\n%s", r)
	}
	if n.count("/libraries")+n.count("/search/documents") != 0 {
		t.Error("a refused --json sent a request")
	}

	// The selected fields, in the order named, and nothing else.
	out := c.ok("library", "it-operations", "--json", "name,id")
	if out != "{\n  \"name\": \"IT Operations\",\n  \"id\": \"lib_it\"\n}\n" {
		t.Errorf("library --json name,id:\n%s", out)
	}
	// No HTML escapes: "Accounts & access", not \u0026.
	if out := c.ok("categories", "lib_it", "--json", "name"); !strings.Contains(out, `"name": "Accounts & access"`) {
		t.Errorf("categories --json name:\n%s", out)
	}

	// --jq: strings print bare, one per line; objects as compact JSON;
	// numbers as numbers.
	var ids []string
	for _, l := range libs.Libraries {
		ids = append(ids, l.ID)
	}
	if out := c.ok("libraries", "--json", "id", "--jq", ".[].id"); out != strings.Join(ids, "\n")+"\n" {
		t.Errorf("--jq .[].id:\n%q, want %q", out, ids)
	}
	if out := c.ok("libraries", "--json", "id,documentCount", "--jq", ".[0]"); out != `{"documentCount":`+
		strconv.Itoa(libs.Libraries[0].DocumentCount)+`,"id":"`+ids[0]+`"}`+"\n" {
		t.Errorf("--jq .[0]:\n%s", out)
	}
	if out := c.ok("libraries", "--json", "id", "--jq", "length"); out != strconv.Itoa(len(ids))+"\n" {
		t.Errorf("--jq length: %q", out)
	}
	if out := c.ok("search", "reset", "password", "--json", "relevance", "--jq", ".[0].relevance.score"); !regexp.MustCompile(`^0\.\d+\n$`).MatchString(out) {
		t.Errorf("--jq score: %q", out)
	}
	// The README's example.
	out = c.ok("search", "okta", "--library", "it-operations", "--json", "id,title,relevance", "--jq", ".[] | [.id, .relevance.score] | @tsv")
	if !regexp.MustCompile(`^(doc_it_\d+\t0\.\d+\n)+$`).MatchString(out) {
		t.Errorf("--jq @tsv:\n%s", out)
	}
}

func TestOutputFollowsTheTerminal(t *testing.T) {
	tty := newCLI(t, apiSrv.URL, full)
	piped := newCLI(t, apiSrv.URL, full)
	piped.piped = true
	ac := apiClient(t, apiSrv.URL, full)
	ctx := context.Background()
	libs, err := ac.Libraries(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A terminal gets an aligned table under a header; a pipe one line per
	// library, its values separated by tabs, whole timestamps, no header.
	if out := tty.ok("libraries"); !strings.HasPrefix(out, "ID ") || strings.Contains(out, "\t") {
		t.Errorf("libraries on a terminal:\n%s", out)
	}
	out := piped.ok("libraries")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(libs.Libraries) {
		t.Fatalf("%d lines for %d libraries:\n%s", len(lines), len(libs.Libraries), out)
	}
	for i, l := range libs.Libraries {
		want := strings.Join([]string{l.ID, l.Name, strconv.Itoa(l.DocumentCount), l.UpdatedAt.UTC().Format(time.RFC3339)}, "\t")
		if lines[i] != want {
			t.Errorf("piped line %d: %q, want %q", i, lines[i], want)
		}
	}

	// Lists lose their footers and hints when piped; the data stays.
	docs, err := ac.Documents(ctx, "lib_it", client.DocumentsParams{Page: client.Page{PageSize: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if out := tty.ok("documents", "lib_it", "--page-size", "5"); !strings.Contains(out, "next: --page 2") {
		t.Errorf("documents on a terminal has no footer:\n%s", out)
	}
	out = piped.ok("documents", "lib_it", "--page-size", "5")
	if strings.Count(out, "\n") != 5 || !strings.HasPrefix(out, docs.Documents[0].ID+"\t"+docs.Documents[0].Title+"\t") || strings.Contains(out, "page") {
		t.Errorf("documents piped:\n%s", out)
	}
	r := piped.run("documents", "lib_it", "--tag", "no-such-tag")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "No documents match.") {
		t.Errorf("no documents, piped: the note belongs on stderr:\n%s", r)
	}

	// Search: ID, title, score, signals and library of each hit.
	res, err := ac.Search(ctx, client.SearchParams{Query: "reset password", Page: client.Page{PageSize: 3}})
	if err != nil {
		t.Fatal(err)
	}
	out = piped.ok("search", "reset", "password", "--page-size", "3")
	h := res.Documents[0]
	if first, _, _ := strings.Cut(out, "\n"); !regexp.MustCompile(`^`+regexp.QuoteMeta(h.ID+"\t"+h.Title+"\t")+`0\.\d{3}\t`+
		regexp.QuoteMeta(strings.Join(h.Relevance.Signals, ",")+"\t"+h.Library.ID)+`$`).MatchString(first) || strings.Count(out, "\n") != 3 {
		t.Errorf("search piped:\n%s", out)
	}
	r = piped.run("search", "zzqqxx", "blorp", "--page-size", "2")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, "\tfallback\t") || !strings.Contains(r.stderr, "LOW CONFIDENCE") {
		t.Errorf("fallback piped: the warning belongs on stderr:\n%s", r)
	}

	// One library: "field:<tab>value" lines.
	out = piped.ok("library", "it-operations")
	if !strings.HasPrefix(out, "id:\tlib_it\nname:\tIT Operations\ndocuments:\t60\n") {
		t.Errorf("library piped:\n%s", out)
	}
}
