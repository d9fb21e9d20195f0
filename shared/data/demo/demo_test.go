package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
)

func encode(t testing.TB, f *dataset.File) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The embedded demo.json must be exactly what the generator writes, so it can
// never drift from the code.
func TestEmbeddedJSONMatchesGenerator(t *testing.T) {
	got := encode(t, Generate(Options{}))
	if !bytes.Equal(got, JSON) {
		i := 0
		for i < len(got) && i < len(JSON) && got[i] == JSON[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("demo.json is out of date (first difference at byte %d, near %q); run `go generate ./shared/data/demo`",
			i, string(JSON[lo:min(len(JSON), i+40)]))
	}
	if !bytes.Equal(encode(t, Generate(Options{Documents: DemoDocuments, Seed: 1})), JSON) {
		t.Error("Options{} and Options{Documents: 200, Seed: 1} should give the same demo set")
	}
}

// The streaming encoder writes what encoding/json writes for the whole file, in
// both forms.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for _, n := range []int{DemoDocuments, CompactAbove + 1} {
		f := Generate(Options{Documents: n, Seed: 3})
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if n <= CompactAbove {
			enc.SetIndent("", "  ")
		}
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
		if got := encode(t, f); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%d documents: Encode differs from json.Encoder (%d vs %d bytes)", n, len(got), want.Len())
		}
	}
	if got := string(encode(t, &dataset.File{})); got != "{}\n" {
		t.Errorf("empty file encodes as %q", got)
	}
	if !bytes.HasSuffix(JSON, []byte("}\n")) || !bytes.HasPrefix(JSON, []byte("{\n  \"workspaces\": [\n    {\n      \"id\"")) {
		t.Error("demo.json should be indented with two spaces and end with a newline")
	}
}

func TestDemoCounts(t *testing.T) {
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	libs := map[string]*doclib.Library{}
	for _, l := range d.Libraries {
		libs[l.ID] = l
	}
	wantDocs := map[string]int{"lib_it": 60, "lib_finance": 50, "lib_sales": 45, "lib_solo": 15,
		"lib_northwind": 10, "lib_byok": 10, "lib_paused": 10}
	if len(d.Libraries) != len(wantDocs) || len(d.Documents) != 200 {
		t.Fatalf("got %d libraries and %d documents, want 7 and 200", len(d.Libraries), len(d.Documents))
	}
	for id, n := range wantDocs {
		if l := libs[id]; l == nil || l.DocumentCount != n {
			t.Errorf("library %s: want %d documents", id, n)
		}
	}

	// Libraries: slugs, old slugs and templates.
	wantLib := []struct {
		id, ws, name, slug string
		prev               []string
		version            int
	}{
		{"lib_it", "ws_acme", "IT Operations", "it-operations", []string{"it", "helpdesk"}, 2},
		{"lib_finance", "ws_acme", "Finance", "finance", []string{"accounting"}, 1},
		{"lib_sales", "ws_acme", "Sales Operations", "sales-operations", []string{}, 2},
		{"lib_solo", "ws_solo", "Freelance Admin", "freelance-admin", []string{}, 1},
		{"lib_northwind", "ws_nocredit", "Warehouse Operations", "warehouse", []string{}, 1},
		{"lib_byok", "ws_byok", "Research Operations", "research-ops", []string{}, 1},
		{"lib_paused", "ws_suspended", "Office Management", "office", []string{}, 1},
	}
	for _, w := range wantLib {
		l := libs[w.id]
		if l.WorkspaceID != w.ws || l.Name != w.name || l.Slug != w.slug || !slices.Equal(l.PreviousSlugs, w.prev) || l.Schema.Version != w.version {
			t.Errorf("library %s = %s %q %s %v v%d; want %s %q %s %v v%d", w.id, l.WorkspaceID, l.Name, l.Slug,
				l.PreviousSlugs, l.Schema.Version, w.ws, w.name, w.slug, w.prev, w.version)
		}
		if len(l.Categories) < 2 || len(l.Tags) < 2 || len(l.Applications) < 2 {
			t.Errorf("library %s should have several categories, tags and applications", w.id)
		}
	}
	if s := libs["lib_it"].Schema.Sections; len(s) != 4 || s[1].Title != "Before you start" || s[1].Type != "list" || s[3].Key != "troubleshooting" {
		t.Errorf("version 2 template = %+v", s)
	}

	// Documents.
	docs := map[string]*doclib.Document{}
	titles := map[string]bool{}
	updated := map[string]int{}
	low, high := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, doc := range d.Documents {
		docs[doc.ID] = doc
		key := doc.LibraryID + "/" + doc.Title
		if titles[key] {
			t.Errorf("%s: title %q is used twice in %s", doc.ID, doc.Title, doc.LibraryID)
		}
		titles[key] = true
		updated[doc.UpdatedAt.String()]++
		if n := len(doc.Tags); n < 1 || n > 4 {
			t.Errorf("%s: %d tags", doc.ID, n)
		}
		if n := len(doc.Applications); n < 1 || n > 3 {
			t.Errorf("%s: %d applications", doc.ID, n)
		}
		if doc.DeviceCount < 1 || doc.DeviceCount > 12 {
			t.Errorf("%s: deviceCount %d", doc.ID, doc.DeviceCount)
		}
		for _, ts := range []time.Time{doc.FirstSeen, doc.LastSeen, doc.CreatedAt, doc.UpdatedAt} {
			if ts.Before(low) || !ts.Before(high) {
				t.Errorf("%s: timestamp %s outside 2025-2026", doc.ID, ts)
			}
		}
		var content map[string]any
		if err := json.Unmarshal(doc.Content, &content); err != nil {
			t.Fatal(err)
		}
		sections := libs[doc.LibraryID].Schema.Sections
		if len(content) != len(sections) {
			t.Errorf("%s: content has %d sections, the template %d", doc.ID, len(content), len(sections))
		}
		if steps, _ := content["steps"].([]any); len(steps) < 4 || len(steps) > 10 {
			t.Errorf("%s: %d steps", doc.ID, len(steps))
		}
		if s, _ := content["summary"].(string); len(s) < 80 || strings.Contains(strings.ToLower(s), "lorem") {
			t.Errorf("%s: summary %q", doc.ID, s)
		}
	}
	ties := 0
	for _, n := range updated {
		if n > 1 {
			ties += n
		}
	}
	if ties == 0 || ties > len(d.Documents)/5 {
		t.Errorf("%d documents share an updatedAt; want some, but few", ties)
	}
	if doc := docs["doc_it_001"]; doc == nil || doc.Title != "Reset a user's password in Okta" || doc.Slug != "reset-a-users-password-in-okta" {
		t.Errorf("doc_it_001 = %+v", doc)
	}

	// Edges.
	if len(d.Edges) != 500 {
		t.Errorf("got %d edges, want 500", len(d.Edges))
	}
	kinds := map[string]int{}
	lowSupport, cross, semanticLow := 0, 0, 0
	internal := map[string]int{}
	out := map[string][]*doclib.Edge{}
	for _, e := range d.Edges {
		kinds[e.Type+"/"+e.Label]++
		if e.LowConfidence() {
			lowSupport++
			if e.Support < 1 {
				t.Errorf("low-support data edge %s -> %s has support %d", e.SourceID, e.TargetID, e.Support)
			}
		}
		if e.Type == doclib.EdgeSemantic && e.Support > 0 && e.Support < doclib.LowSupport {
			semanticLow++
		}
		if e.RecordingCount < e.Support {
			t.Errorf("edge %s -> %s: recordingCount %d below support %d", e.SourceID, e.TargetID, e.RecordingCount, e.Support)
		}
		if e.SourceLibraryID != e.TargetLibraryID {
			cross++
			acme := []string{"lib_it", "lib_finance", "lib_sales"}
			if !slices.Contains(acme, e.SourceLibraryID) || !slices.Contains(acme, e.TargetLibraryID) {
				t.Errorf("cross-library edge %s -> %s outside ws_acme", e.SourceID, e.TargetID)
			}
		} else {
			internal[e.SourceLibraryID]++
		}
		out[e.SourceID] = append(out[e.SourceID], e)
	}
	for _, k := range []string{"data/often next", "data/alternative to", "semantic/often next", "semantic/alternative to"} {
		if kinds[k] == 0 {
			t.Errorf("no %s edge", k)
		}
	}
	if lowSupport < 30 || cross < 20 || semanticLow == 0 {
		t.Errorf("%d low-support data edges (want 30+), %d cross-library (want 20+), %d semantic with support 1-2 (want some)",
			lowSupport, cross, semanticLow)
	}
	for id := range wantDocs {
		if internal[id] < 5 {
			t.Errorf("library %s has %d internal edges", id, internal[id])
		}
	}
	// A depth-3 walk along "often next" data edges from doc_it_001 reaches real documents.
	at, path := "doc_it_001", []string{"doc_it_001"}
	for range 3 {
		var next string
		for _, e := range out[at] {
			if e.Label == "often next" && e.Type == doclib.EdgeData && !slices.Contains(path, e.TargetID) {
				next = e.TargetID
				break
			}
		}
		if next == "" {
			t.Fatalf("the chain from doc_it_001 stops at %s (path %v)", at, path)
		}
		at, path = next, append(path, next)
	}

	// Recordings.
	shared, private, twoDocs := 0, 0, 0
	statuses := map[string]int{}
	perDoc := map[string][2]int{} // shared, private
	soloShared := 0
	quesIDs := map[string]bool{}
	for _, r := range d.Recordings {
		if r.Shared {
			shared++
		} else {
			private++
		}
		statuses[r.Status]++
		if len(r.DocumentIDs) == 2 {
			twoDocs++
		}
		for _, id := range r.DocumentIDs {
			c := perDoc[id]
			if r.Shared {
				c[0]++
			} else {
				c[1]++
			}
			perDoc[id] = c
		}
		if r.Shared && docs[r.DocumentIDs[0]].LibraryID == "lib_solo" {
			soloShared++
		}
		if n := len(r.Questions); n < 1 || n > 4 {
			t.Errorf("%s: %d questions", r.ID, n)
		}
		for i, q := range r.Questions {
			if q.SequenceOrder != i+1 || quesIDs[q.ID] || q.Response == "" {
				t.Errorf("%s: question %+v", r.ID, q)
			}
			quesIDs[q.ID] = true
		}
		if n := len(r.Steps); n < 3 || n > 8 {
			t.Errorf("%s: %d steps", r.ID, n)
		}
	}
	patterns := map[string]int{}
	for _, doc := range d.Documents {
		c := perDoc[doc.ID]
		if doc.RecordingCount != c[0]+c[1] {
			t.Errorf("%s: recordingCount %d, want %d", doc.ID, doc.RecordingCount, c[0]+c[1])
		}
		switch {
		case c[0] > 0 && c[1] > 0:
			patterns["mixed"]++
		case c[0] > 0:
			patterns["only shared"]++
		case c[1] > 0:
			patterns["only private"]++
		default:
			patterns["none"]++
		}
	}
	for _, p := range []string{"mixed", "only shared", "only private", "none"} {
		if patterns[p] < 5 {
			t.Errorf("%d documents with %s recordings; want several", patterns[p], p)
		}
	}
	if shared == 0 || private == 0 || twoDocs == 0 || soloShared == 0 || statuses["processing"] == 0 || statuses["failed"] == 0 ||
		statuses["processed"] < len(d.Recordings)*3/4 {
		t.Errorf("recordings: %d shared, %d private, %d with two documents, %d shared in lib_solo, statuses %v",
			shared, private, twoDocs, soloShared, statuses)
	}
	for _, c := range []struct {
		id             string
		shared, privat int
	}{{"doc_it_001", 2, 1}, {"doc_it_002", 2, 0}, {"doc_it_003", 0, 2}, {"doc_it_004", 0, 0}} {
		if got := perDoc[c.id]; got != [2]int{c.shared, c.privat} {
			t.Errorf("%s: %d shared and %d private recordings, want %d and %d", c.id, got[0], got[1], c.shared, c.privat)
		}
	}

	t.Logf("documents per library: %v", wantDocs)
	t.Logf("edges: %v; %d cross-library, %d low-support data, %d semantic with support 1-2", kinds, cross, lowSupport, semanticLow)
	t.Logf("recordings: %d (%d shared, %d private, %d with two documents), statuses %v; documents by recordings %v",
		len(d.Recordings), shared, private, twoDocs, statuses, patterns)
}

func TestKeys(t *testing.T) {
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	byHash := map[doclib.KeyHash]*doclib.APIKey{}
	for _, k := range d.APIKeys {
		byHash[k.Hash] = k
	}
	devices := map[string]*doclib.Device{}
	for _, dv := range d.Devices {
		devices[dv.ID] = dv
	}
	workspaces := map[string]*doclib.Workspace{}
	for _, w := range d.Workspaces {
		workspaces[w.ID] = w
		active := false
		for _, dv := range d.Devices {
			active = active || dv.WorkspaceID == w.ID && dv.Status == doclib.DeviceActive
		}
		if !active {
			t.Errorf("workspace %s has no active device", w.ID)
		}
	}
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name, secret, ws string
		all              bool
		libraries        []string
		recordingDetails bool
		expired          bool
		deviceStatus     string
		check            func(*doclib.Workspace) bool
	}{
		{"full", "dlk_demo_full_scope", "ws_acme", true, nil, true, false, "active", nil},
		{"one-library", "dlk_demo_one_library", "ws_acme", false, []string{"lib_finance"}, true, false, "active", nil},
		{"no-recordings", "dlk_demo_no_recordings", "ws_acme", true, nil, false, false, "active", nil},
		{"expired", "dlk_demo_expired_key", "ws_acme", true, nil, true, true, "active", nil},
		{"removed-device", "dlk_demo_removed_device", "ws_acme", true, nil, true, false, "removed", nil},
		{"archived-device", "dlk_demo_archived_device", "ws_acme", true, nil, true, false, "archived", nil},
		{"individual-plan", "dlk_demo_individual_plan", "ws_solo", true, nil, true, false, "active",
			func(w *doclib.Workspace) bool { return w.Plan == doclib.PlanIndividual }},
		{"no-ai-credit", "dlk_demo_no_ai_credit", "ws_nocredit", true, nil, true, false, "active",
			func(w *doclib.Workspace) bool {
				return w.AICredit == 0 && !w.OwnProviderKey && w.Subscription == "active"
			}},
		{"own-provider", "dlk_demo_own_provider", "ws_byok", true, nil, true, false, "active",
			func(w *doclib.Workspace) bool {
				return w.AICredit == 0 && w.OwnProviderKey && w.Plan == doclib.PlanEnterprise
			}},
		{"suspended", "dlk_demo_suspended", "ws_suspended", true, nil, true, false, "active",
			func(w *doclib.Workspace) bool { return w.Subscription == "suspended" && w.AICredit > 0 }},
	}
	if len(Keys) != len(cases) || len(d.APIKeys) != len(cases) {
		t.Fatalf("%d Keys and %d keys in the data set, want %d", len(Keys), len(d.APIKeys), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if k := Keys[i]; k.Name != c.name || k.Secret != c.secret || k.WorkspaceID != c.ws || k.Description == "" {
				t.Errorf("Keys[%d] = %+v", i, k)
			}
			k := byHash[doclib.HashKey(c.secret)]
			if k == nil {
				t.Fatalf("no key with secret %s", c.secret)
			}
			if k.WorkspaceID != c.ws || k.AllLibraries != c.all || !slices.Equal(k.Libraries, c.libraries) || k.RecordingDetails != c.recordingDetails {
				t.Errorf("key %s = %+v", c.secret, k)
			}
			if expired := !k.ExpiresAt.IsZero() && k.ExpiresAt.Before(now); expired != c.expired {
				t.Errorf("key %s expiresAt %s; want expired %v", c.secret, k.ExpiresAt, c.expired)
			}
			if dv := devices[k.DeviceID]; dv == nil || dv.Status != c.deviceStatus || dv.WorkspaceID != c.ws {
				t.Errorf("key %s device %s = %+v, want status %s", c.secret, k.DeviceID, dv, c.deviceStatus)
			}
			w := workspaces[c.ws]
			if c.check != nil && !c.check(w) {
				t.Errorf("workspace %s = %+v", c.ws, w)
			}
			if c.check == nil && (w.Plan != doclib.PlanTeam || w.AICredit != 1000 || w.Subscription != "active") {
				t.Errorf("workspace %s = %+v", c.ws, w)
			}
		})
	}
}

func TestGenerateIsDeterministicAndValid(t *testing.T) {
	a := encode(t, Generate(Options{Documents: 5000, Seed: 7}))
	b := encode(t, Generate(Options{Documents: 5000, Seed: 7}))
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same options differ")
	}
	d, err := dataset.Load(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Documents) != 5000 || len(d.Edges) != 12500 {
		t.Errorf("got %d documents and %d edges, want 5000 and 12500", len(d.Documents), len(d.Edges))
	}
	if c := encode(t, Generate(Options{Documents: 5000, Seed: 8})); bytes.Equal(a, c) {
		t.Error("different seeds give the same data set")
	}
	// Odd sizes validate too.
	for _, n := range []int{1, 7, 8, 50, 199, 201, 1234} {
		f := Generate(Options{Documents: n, Seed: uint64(n)})
		if _, err := dataset.Validate(f); err != nil {
			t.Errorf("%d documents: %v", n, err)
		}
		if want := max(n, MinDocuments); len(f.Documents) != want {
			t.Errorf("%d documents requested, %d generated, want %d", n, len(f.Documents), want)
		}
	}
}

func TestGenerateLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("100000 documents take a few seconds")
	}
	start := time.Now()
	f := Generate(Options{Documents: 100000, Seed: 1})
	generated := time.Since(start)
	d, err := dataset.Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, l := range d.Libraries {
		counts[l.ID] = l.DocumentCount
		if l.ID == "lib_it" && (l.DocumentCount <= 2000 || l.EdgeCount <= 5000) {
			t.Errorf("lib_it has %d documents and %d edges; want more than the graph cap (2000 and 5000)", l.DocumentCount, l.EdgeCount)
		}
	}
	// The busy core of lib_it fills the graph to both caps, so that benchmarks of
	// the graph measure the largest response the API gives.
	docs, edges, truncated, err := memory.New(d).Graph(context.Background(), "lib_it", 2000, 5000)
	if err != nil || len(docs) != 2000 || len(edges) != 5000 || !truncated {
		t.Errorf("lib_it graph: %d documents, %d edges, truncated %v, %v; want both caps reached", len(docs), len(edges), truncated, err)
	}
	if len(d.Edges) != 250000 || len(d.Recordings) < 130000 || len(d.Recordings) > 170000 {
		t.Errorf("%d edges and %d recordings; want 250000 and about 150000", len(d.Edges), len(d.Recordings))
	}
	t.Logf("generated in %s, validated in %s: %s, %d edges, %d recordings", generated.Round(time.Millisecond),
		(time.Since(start) - generated).Round(time.Millisecond), fmt.Sprint(counts), len(d.Edges), len(d.Recordings))
}
