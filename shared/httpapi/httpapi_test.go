package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

func TestAuthentication(t *testing.T) {
	s := newServer(t, options{})
	cases := []struct {
		name, header string
		status       int
		code         string
	}{
		{"missing", "", 401, "unauthorised"},
		{"not bearer", "Basic " + fixture.KeyFull, 401, "unauthorised"},
		{"empty bearer", "Bearer ", 401, "unauthorised"},
		{"wrong key", "Bearer dlk_test_wrong_key_000000", 401, "unauthorised"},
		{"prefix of a key", "Bearer " + fixture.KeyFull[:20], 401, "unauthorised"},
		{"expired", "Bearer " + fixture.KeyExpired, 401, "api_key_expired"},
		{"removed device", "Bearer " + fixture.KeyRemoved, 401, "api_key_device_removed"},
		{"archived device", "Bearer " + fixture.KeyArchived, 401, "api_key_device_removed"},
		{"future expiry", "Bearer " + fixture.KeyFuture, 200, ""},
		{"scheme in lower case", "bearer " + fixture.KeyFull, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.doAuth(t, http.MethodGet, c.header, "/libraries")
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.code != "" && errorCode(t, r) != c.code {
				t.Errorf("code %q, want %q", errorCode(t, r), c.code)
			}
			if c.status == 401 && r.header.Get("X-RateLimit-Limit") != "" {
				t.Errorf("a rejected key must not get the key's rate-limit headers")
			}
			// Every 401 names its scheme (RFC 9110, 11.6.1), and a refused
			// key gets an error and words an MCP client can show.
			want := ""
			switch {
			case c.status == 401 && c.header == "":
				want = `Bearer realm="doclib"`
			case c.status == 401:
				want = `Bearer realm="doclib", error="invalid_token", error_description="The API key was refused (the body says why). This API takes a doclib API key as Authorization: Bearer <API_KEY>; it uses no OAuth."`
			}
			if got := r.header.Get("WWW-Authenticate"); got != want {
				t.Errorf("WWW-Authenticate %q, want %q", got, want)
			}
		})
	}
	// A missing key on an unknown path is still 401: authentication comes first.
	if r := s.get(t, "", "/nowhere"); r.status != 401 {
		t.Errorf("unknown path without key: %d, want 401", r.status)
	}
	// An OAuth client that discovers or registers (the MCP inspector does,
	// after a 401 from /mcp) is told that there is no OAuth, not that it
	// forgot a key; with a key, such a path is an unknown path.
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/register"} {
		r := s.get(t, "", p)
		if r.status != 401 || errorCode(t, r) != "unauthorised" || !strings.Contains(string(r.body), "uses no OAuth") {
			t.Errorf("%s without a key: %d %s", p, r.status, r.body)
		}
		if r := s.get(t, fixture.KeyFull, p); r.status != 404 {
			t.Errorf("%s with a key: %d, want 404", p, r.status)
		}
	}
	if r := s.get(t, "", "/registered"); strings.Contains(string(r.body), "OAuth") {
		t.Errorf("/registered is no OAuth path: %s", r.body)
	}
	// The root without a key says where to start, still as a 401.
	if r := s.get(t, "", "/"); r.status != 401 || errorCode(t, r) != "unauthorised" || !strings.Contains(string(r.body), "GET /libraries") || !strings.Contains(string(r.body), "docs/api.md") {
		t.Errorf("GET / without a key: %d %s", r.status, r.body)
	}
	if r := s.get(t, "", "/libraries"); strings.Contains(string(r.body), "docs/api.md") {
		t.Errorf("the root's words on another path: %s", r.body)
	}
}

func TestLibraries(t *testing.T) {
	s := newServer(t, options{})
	got := decode[api.LibraryList](t, s.get(t, fixture.KeyFull, "/libraries"))
	var ids []string
	for _, l := range got.Libraries {
		ids = append(ids, l.ID)
		if l.EdgeCount != nil {
			t.Errorf("%s: edgeCount is only on GET /libraries/{id}", l.ID)
		}
	}
	// By name: Compliance, Finance, Operations.
	if want := []string{"lib_a3", "lib_a2", "lib_a1"}; !slices.Equal(ids, want) {
		t.Fatalf("libraries %v, want %v", ids, want)
	}
	ops := got.Libraries[2]
	if ops.Name != "Operations" || ops.DocumentCount != 5 || ops.Description == "" ||
		!slices.Equal(ops.Categories, []string{"Accounts", "Devices", "Security"}) ||
		!slices.Equal(ops.Tags, []string{"daily", "monthly", "offboarding", "onboarding", "security"}) ||
		ops.CreatedAt.Format("2006-01-02") != "2025-01-01" {
		t.Errorf("lib_a1 = %+v", ops)
	}
	one := decode[api.LibraryList](t, s.get(t, fixture.KeyOneLibrary, "/libraries"))
	if len(one.Libraries) != 1 || one.Libraries[0].ID != "lib_a1" {
		t.Errorf("one-library key sees %+v", one.Libraries)
	}
	other := decode[api.LibraryList](t, s.get(t, fixture.KeyOtherWS, "/libraries"))
	if len(other.Libraries) != 1 || other.Libraries[0].ID != "lib_b1" {
		t.Errorf("other workspace sees %+v", other.Libraries)
	}
}

func TestLibraryByIDAndSlugs(t *testing.T) {
	s := newServer(t, options{})
	for _, ref := range []string{"lib_a1", "ops", "operations", "it"} {
		r := s.get(t, fixture.KeyFull, "/libraries/"+ref)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", ref, r.status, r.body)
		}
		l := decode[api.Library](t, r)
		if l.ID != "lib_a1" || l.EdgeCount == nil || *l.EdgeCount != 3 {
			t.Errorf("%s: got %s edgeCount %v; want lib_a1 with 3 edges inside it", ref, l.ID, l.EdgeCount)
		}
	}
	// The same slug in another workspace resolves to that workspace's library.
	if l := decode[api.Library](t, s.get(t, fixture.KeyOtherWS, "/libraries/ops")); l.ID != "lib_b1" {
		t.Errorf("ws_b /libraries/ops = %s, want lib_b1", l.ID)
	}
	for _, c := range []struct{ key, ref string }{
		{fixture.KeyFull, "lib_b1"},       // another workspace's library
		{fixture.KeyFull, "nope"},         // no such slug
		{fixture.KeyOneLibrary, "lib_a2"}, // outside scope
		{fixture.KeyOneLibrary, "finance"},
		{fixture.KeyOtherWS, "operations"}, // ws_a's old slug
		{fixture.KeyFull, "LIB_A1"},
	} {
		r := s.get(t, c.key, "/libraries/"+c.ref)
		if r.status != 404 || errorCode(t, r) != "not_found" {
			t.Errorf("%s: %d %s, want 404 not_found", c.ref, r.status, r.body)
		}
		for _, sub := range []string{"/tags", "/categories", "/applications", "/graph", "/documents"} {
			if r := s.get(t, c.key, "/libraries/"+c.ref+sub); r.status != 404 {
				t.Errorf("%s%s: %d, want 404", c.ref, sub, r.status)
			}
		}
	}
}

func TestLabels(t *testing.T) {
	s := newServer(t, options{})
	tags := decode[api.Tags](t, s.get(t, fixture.KeyFull, "/libraries/ops/tags"))
	wantTags := []api.Label{lbl("daily", 1), lbl("monthly", 1), lbl("offboarding", 1), lbl("onboarding", 1), lbl("security", 3)}
	if !slices.Equal(tags.Tags, wantTags) {
		t.Errorf("tags %v, want %v", tags.Tags, wantTags)
	}
	cats := decode[api.Categories](t, s.get(t, fixture.KeyFull, "/libraries/lib_a1/categories"))
	if want := []api.Label{lbl("Accounts", 3), lbl("Devices", 1), lbl("Security", 1)}; !slices.Equal(cats.Categories, want) {
		t.Errorf("categories %v, want %v", cats.Categories, want)
	}
	apps := decode[api.Applications](t, s.get(t, fixture.KeyFull, "/libraries/lib_a1/applications"))
	want := []api.Label{lbl("AWS Console", 1), lbl("Google Workspace", 1), lbl("Intune", 1), lbl("Okta", 3), lbl("Slack", 1)}
	if !slices.Equal(apps.Applications, want) {
		t.Errorf("applications %v, want %v", apps.Applications, want)
	}
	// Every label value is accepted by the matching filter and counts agree.
	for _, l := range apps.Applications {
		p := decode[api.DocumentPage](t, s.get(t, fixture.KeyFull, "/libraries/lib_a1/documents?application="+urlQuery(l.Name)))
		if p.Total != l.DocumentCount {
			t.Errorf("application %q: filter total %d, label count %d", l.Name, p.Total, l.DocumentCount)
		}
	}
	empty := decode[api.Tags](t, s.get(t, fixture.KeyIndividual, "/libraries/freelance/tags"))
	if empty.Tags == nil || len(empty.Tags) != 0 {
		t.Errorf("a library without tags gives %v, want []", empty.Tags)
	}
}

func urlQuery(s string) string { return strings.ReplaceAll(s, " ", "%20") }

func TestDocumentsList(t *testing.T) {
	s := newServer(t, options{})
	p := decode[api.DocumentPage](t, s.get(t, fixture.KeyFull, "/libraries/ops/documents"))
	var ids []string
	for _, d := range p.Documents {
		ids = append(ids, d.ID)
	}
	// updatedAt desc, then id (a1_2 and a1_3 share an updatedAt).
	if want := []string{"doc_a1_1", "doc_a1_2", "doc_a1_3", "doc_a1_4", "doc_a1_5"}; !slices.Equal(ids, want) {
		t.Fatalf("order %v, want %v", ids, want)
	}
	if p.Total != 5 || p.Page != 1 || p.PageSize != 20 || p.Schema.Version != 2 || len(p.Schema.Sections) != 3 {
		t.Errorf("page fields: total %d page %d size %d schema %+v", p.Total, p.Page, p.PageSize, p.Schema)
	}
	if d := p.Documents[0]; d.RecordingCount != 3 || d.DeviceCount != 2 || !strings.Contains(string(d.Content), "Reset a password in Okta") {
		t.Errorf("first item %+v", d)
	}
	cases := []struct {
		query string
		want  []string
		total int
	}{
		{"category=Accounts", []string{"doc_a1_1", "doc_a1_2", "doc_a1_5"}, 3},
		{"tag=security", []string{"doc_a1_1", "doc_a1_2", "doc_a1_4"}, 3},
		{"application=Okta&tag=security", []string{"doc_a1_1", "doc_a1_2"}, 2},
		{"search=OKTA", []string{"doc_a1_1", "doc_a1_2", "doc_a1_5"}, 3},                  // content and title, any case
		{"search=unlock", []string{"doc_a1_2"}, 1},                                        // title and steps
		{"search=directory%20%3E%20people", []string{"doc_a1_1"}, 1},                      // a step's text
		{"search=summary", []string{}, 0},                                                 // section keys are not text
		{"category=Nope", []string{}, 0},                                                  // unknown value: empty, not an error
		{"pageSize=2", []string{"doc_a1_1", "doc_a1_2"}, 5},                               // first page
		{"pageSize=2&page=3", []string{"doc_a1_5"}, 5},                                    // last page
		{"pageSize=2&page=4", []string{}, 5},                                              // past the end
		{"page=99999999999999999999999", []string{}, 5},                                   // far past the end
		{"pageSize=2&page=2&unknown=1&utm_source=x", []string{"doc_a1_3", "doc_a1_4"}, 5}, // unknown parameters ignored
		{"category=", []string{"doc_a1_1", "doc_a1_2", "doc_a1_3", "doc_a1_4", "doc_a1_5"}, 5},
	}
	for _, c := range cases {
		r := s.get(t, fixture.KeyFull, "/libraries/lib_a1/documents?"+c.query)
		if r.status != 200 {
			t.Errorf("%s: %d %s", c.query, r.status, r.body)
			continue
		}
		p := decode[api.DocumentPage](t, r)
		got := []string{}
		for _, d := range p.Documents {
			got = append(got, d.ID)
		}
		if !slices.Equal(got, c.want) || p.Total != c.total {
			t.Errorf("%s: got %v total %d, want %v total %d", c.query, got, p.Total, c.want, c.total)
		}
		if strings.Contains(c.query, "page=9999") && p.Page != 1<<53-1 {
			t.Errorf("%s: page echoed as %d, want 2^53-1, the largest exact JSON integer", c.query, p.Page)
		}
	}
}

func TestPaginationBounds(t *testing.T) {
	s := newServer(t, options{})
	for _, c := range []struct {
		path     string
		status   int
		pageSize int
	}{
		{"/libraries/lib_a1/documents?pageSize=100", 200, 100},
		{"/libraries/lib_a1/documents?pageSize=101", 200, 100},
		{"/libraries/lib_a1/documents?pageSize=99999999999999999999", 200, 100},
		{"/documents/doc_a1_1/source-recordings?pageSize=50", 200, 50},
		{"/documents/doc_a1_1/source-recordings?pageSize=51", 200, 50},
		{"/documents/doc_a1_1/source-recordings?pageSize=7", 200, 7},
		{"/libraries/lib_a1/documents?page=0", 400, 0},
		{"/libraries/lib_a1/documents?page=-1", 400, 0},
		{"/libraries/lib_a1/documents?pageSize=0", 400, 0},
		{"/libraries/lib_a1/documents?pageSize=1.5", 400, 0},
		{"/libraries/lib_a1/documents?page=abc", 400, 0},
		{"/libraries/lib_a1/documents?page=", 400, 0},
		{"/libraries/lib_a1/documents?page=+2", 400, 0},
		{"/libraries/lib_a1/documents?page=1&page=2", 400, 0},
		{"/libraries/lib_a1/documents?tag=a&tag=b", 400, 0},
		{"/libraries/lib_a1/documents?search=" + strings.Repeat("x", 513), 400, 0},
		{"/libraries/lib_a1/documents?search=%zz", 400, 0},
		{"/documents/doc_a1_1/source-recordings?page=0", 400, 0},
		{"/libraries?x=1&x=2", 200, 0}, // unknown parameters, even repeated, are ignored
	} {
		r := s.get(t, fixture.KeyFull, c.path)
		if r.status != c.status {
			t.Errorf("%s: %d, want %d: %s", c.path, r.status, c.status, r.body)
			continue
		}
		if c.status == 400 {
			if errorCode(t, r) != "bad_request" {
				t.Errorf("%s: code %s", c.path, errorCode(t, r))
			}
			continue
		}
		if c.pageSize > 0 {
			p := decode[struct{ PageSize int }](t, r)
			if p.PageSize != c.pageSize {
				t.Errorf("%s: pageSize echoed %d, want %d", c.path, p.PageSize, c.pageSize)
			}
		}
	}
	// The message names the parameter.
	r := s.get(t, fixture.KeyFull, "/libraries/lib_a1/documents?pageSize=zero")
	if !strings.Contains(string(r.body), "pageSize") {
		t.Errorf("400 message does not name the parameter: %s", r.body)
	}
}

func TestDocument(t *testing.T) {
	s := newServer(t, options{})
	r := s.get(t, fixture.KeyFull, "/documents/doc_a1_1")
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	d := decode[api.Document](t, r)
	if d.ID != "doc_a1_1" || d.Title != "Reset a user's password" || d.Category != "Accounts" ||
		d.RecordingCount != 3 || d.Library != (api.DocumentRef{ID: "lib_a1", Name: "Operations"}) ||
		d.Schema.Version != 2 || !slices.Equal(d.Tags, []string{"security", "daily"}) {
		t.Errorf("document %+v", d)
	}
	// Content comes in the template's order.
	if !strings.HasPrefix(string(d.Content), `{"summary":`) || !strings.Contains(string(d.Content), `"prerequisites":["Okta admin role"],"steps":[`) {
		t.Errorf("content %s", d.Content)
	}
	if !strings.Contains(string(r.body), "Directory > People") {
		t.Errorf("content is HTML-escaped: %s", d.Content)
	}
	if !strings.Contains(string(r.body), `"firstSeen":"2026-01-01T08:00:00Z"`) {
		t.Errorf("timestamps must be RFC 3339 UTC with Z: %s", r.body)
	}
	wantOut := []api.OutgoingEdge{
		{TargetDocumentID: "doc_a1_2", TargetDocumentTitle: "Unlock a locked account", TargetLibraryID: "lib_a1", Label: "often next", EdgeType: "data", RecordingCount: 6, Support: 5},
		{TargetDocumentID: "doc_a2_1", TargetDocumentTitle: "Approve a vendor invoice", TargetLibraryID: "lib_a2", Label: "alternative to", EdgeType: "semantic", Support: 1},
	}
	if !slices.Equal(d.Edges.Outgoing, wantOut) {
		t.Errorf("outgoing %+v, want %+v", d.Edges.Outgoing, wantOut)
	}
	wantIn := []api.IncomingEdge{{SourceDocumentID: "doc_a2_2", SourceDocumentTitle: "Close the month", SourceLibraryID: "lib_a2", Label: "often next", EdgeType: "data", RecordingCount: 1, Support: 1, LowConfidence: true}}
	if !slices.Equal(d.Edges.Incoming, wantIn) {
		t.Errorf("incoming %+v, want %+v", d.Edges.Incoming, wantIn)
	}
	// A semantic edge is never low-confidence, whatever its support.
	if d.Edges.Outgoing[1].LowConfidence {
		t.Error("semantic edge marked lowConfidence")
	}
	// The one-library key sees the document without the edges that leave its scope.
	one := decode[api.Document](t, s.get(t, fixture.KeyOneLibrary, "/documents/doc_a1_1"))
	if len(one.Edges.Outgoing) != 1 || one.Edges.Outgoing[0].TargetDocumentID != "doc_a1_2" || len(one.Edges.Incoming) != 0 {
		t.Errorf("one-library edges %+v", one.Edges)
	}
	// A document without edges has empty arrays, not null.
	r = s.get(t, fixture.KeyIndividual, "/documents/doc_i1_1")
	if !strings.Contains(string(r.body), `"edges":{"outgoing":[],"incoming":[]}`) || !strings.Contains(string(r.body), `"tags":[]`) {
		t.Errorf("empty arrays: %s", r.body)
	}
	for _, c := range []struct{ key, id string }{
		{fixture.KeyFull, "reset-password"}, // a slug never resolves
		{fixture.KeyFull, "doc_nope"},
		{fixture.KeyFull, "doc_b1_1"},       // another workspace
		{fixture.KeyOneLibrary, "doc_a2_1"}, // outside scope
		{fixture.KeyFull, "lib_a1"},
	} {
		for _, sub := range []string{"", "/traverse"} {
			r := s.get(t, c.key, "/documents/"+c.id+sub)
			if r.status != 404 || errorCode(t, r) != "not_found" {
				t.Errorf("%s%s: %d %s, want 404", c.id, sub, r.status, r.body)
			}
		}
	}
}

func TestGraph(t *testing.T) {
	s := newServer(t, options{})
	g := decode[api.Graph](t, s.get(t, fixture.KeyFull, "/libraries/ops/graph"))
	var ids []string
	for _, d := range g.Documents {
		ids = append(ids, d.ID)
	}
	// recordingCount desc, lastSeen desc, id.
	if want := []string{"doc_a1_1", "doc_a1_2", "doc_a1_4", "doc_a1_3", "doc_a1_5"}; !slices.Equal(ids, want) {
		t.Errorf("graph documents %v, want %v", ids, want)
	}
	var edges []string
	for _, e := range g.Edges {
		edges = append(edges, fmt.Sprintf("%s>%s:%d:%v", e.SourceDocumentID, e.TargetDocumentID, e.Support, e.LowConfidence))
	}
	// Only edges with both ends in the library; support desc.
	if want := []string{"doc_a1_1>doc_a1_2:5:false", "doc_a1_2>doc_a1_3:2:true", "doc_a1_3>doc_a1_4:0:false"}; !slices.Equal(edges, want) {
		t.Errorf("graph edges %v, want %v", edges, want)
	}
	if g.Truncated || g.Schema.Version != 2 || g.Edges[0].SourceDocumentTitle != "Reset a user's password" {
		t.Errorf("truncated %v schema %+v first edge %+v", g.Truncated, g.Schema, g.Edges[0])
	}
}

func TestTraverse(t *testing.T) {
	s := newServer(t, options{})
	type node struct {
		id    string
		depth int
	}
	nodesOf := func(tr api.Traversal) []node {
		var out []node
		for _, n := range tr.Nodes {
			out = append(out, node{n.ID, n.Depth})
		}
		return out
	}
	cases := []struct {
		key, query string
		nodes      []node
		edges      int
		schemas    []string
	}{
		{fixture.KeyFull, "", []node{{"doc_a1_1", 0}, {"doc_a1_2", 1}, {"doc_a2_1", 1}, {"doc_a2_2", 1}}, 3, []string{"lib_a1", "lib_a2"}},
		{fixture.KeyFull, "?direction=outgoing&depth=3", []node{{"doc_a1_1", 0}, {"doc_a1_2", 1}, {"doc_a2_1", 1}, {"doc_a1_3", 2}, {"doc_a2_2", 2}, {"doc_a1_4", 3}}, 6, []string{"lib_a1", "lib_a2"}},
		{fixture.KeyFull, "?direction=incoming&depth=2", []node{{"doc_a1_1", 0}, {"doc_a2_2", 1}, {"doc_a2_1", 2}}, 2, []string{"lib_a1", "lib_a2"}},
		{fixture.KeyFull, "?direction=outgoing&depth=3&label=often%20next", []node{{"doc_a1_1", 0}, {"doc_a1_2", 1}, {"doc_a1_3", 2}}, 2, []string{"lib_a1"}},
		{fixture.KeyFull, "?label=nothing-has-this", []node{{"doc_a1_1", 0}}, 0, []string{"lib_a1"}},
		// The one-library key never enters lib_a2: doc_a2_2 -> doc_a1_1 is dropped too.
		{fixture.KeyOneLibrary, "?depth=3", []node{{"doc_a1_1", 0}, {"doc_a1_2", 1}, {"doc_a1_3", 2}, {"doc_a1_4", 3}}, 3, []string{"lib_a1"}},
	}
	for _, c := range cases {
		r := s.get(t, c.key, "/documents/doc_a1_1/traverse"+c.query)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", c.query, r.status, r.body)
		}
		tr := decode[api.Traversal](t, r)
		if got := nodesOf(tr); !slices.Equal(got, c.nodes) {
			t.Errorf("%s: nodes %v, want %v", c.query, got, c.nodes)
		}
		if len(tr.Edges) != c.edges {
			t.Errorf("%s: %d edges, want %d: %+v", c.query, len(tr.Edges), c.edges, tr.Edges)
		}
		var libs []string
		for id := range tr.Schemas {
			libs = append(libs, id)
		}
		slices.Sort(libs)
		if !slices.Equal(libs, c.schemas) {
			t.Errorf("%s: schemas %v, want %v", c.query, libs, c.schemas)
		}
		for _, n := range tr.Nodes {
			if _, ok := tr.Schemas[n.LibraryID]; !ok || len(n.Content) == 0 {
				t.Errorf("%s: node %s has no schema or content", c.query, n.ID)
			}
		}
		if tr.RootDocumentID != "doc_a1_1" {
			t.Errorf("root %s", tr.RootDocumentID)
		}
	}
	// From doc_a1_4 the one-library key cannot reach doc_a1_5 through lib_a3.
	tr := decode[api.Traversal](t, s.get(t, fixture.KeyOneLibrary, "/documents/doc_a1_4/traverse?direction=outgoing&depth=3"))
	if len(tr.Nodes) != 1 || len(tr.Edges) != 0 {
		t.Errorf("walk left the scope: %+v", tr)
	}
	full := decode[api.Traversal](t, s.get(t, fixture.KeyFull, "/documents/doc_a1_4/traverse?direction=outgoing&depth=3"))
	if got := nodesOf(full); !slices.Equal(got, []node{{"doc_a1_4", 0}, {"doc_a3_1", 1}, {"doc_a1_5", 2}}) {
		t.Errorf("full walk %v", got)
	}
	echo := decode[map[string]any](t, s.get(t, fixture.KeyFull, "/documents/doc_a1_1/traverse"))
	if echo["direction"] != "both" || echo["maxDepth"] != float64(1) || echo["label"] != nil {
		t.Errorf("defaults echoed: %v %v %v", echo["direction"], echo["maxDepth"], echo["label"])
	}
	for _, q := range []string{"depth=0", "depth=4", "depth=x", "depth=%2B2", "depth=2.0", "direction=up", "direction=", "depth=1&depth=2", "label=a&label=b"} {
		r := s.get(t, fixture.KeyFull, "/documents/doc_a1_1/traverse?"+q)
		if r.status != 400 || errorCode(t, r) != "bad_request" {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
}

func TestSourceRecordings(t *testing.T) {
	s := newServer(t, options{})
	r := s.get(t, fixture.KeyFull, "/documents/doc_a1_1/source-recordings")
	sr := decode[api.SourceRecordings](t, r)
	if len(sr.SourceRecordings) != 2 || sr.SourceRecordings[0].ID != "rec_a12" || sr.SourceRecordings[1].ID != "rec_a1" {
		t.Fatalf("recordings %+v", sr.SourceRecordings)
	}
	if sr.Total != 2 || sr.LinkedTotal != 3 || sr.PrivateTotal != 1 || sr.Page != 1 || sr.PageSize != 20 {
		t.Errorf("totals %+v", sr)
	}
	if !strings.Contains(sr.Guidance, "private") {
		t.Errorf("guidance %q", sr.Guidance)
	}
	q := sr.SourceRecordings[1].Questions
	if len(q) != 2 || q[0].ID != "ques_1" || q[0].SequenceOrder != 1 || q[1].ID != "ques_2" {
		t.Errorf("questions not in sequence order: %+v", q)
	}
	if strings.Contains(string(r.body), "rec_a1_private") || strings.Contains(string(r.body), "Private reset") {
		t.Error("a private recording leaked")
	}
	page2 := decode[api.SourceRecordings](t, s.get(t, fixture.KeyFull, "/documents/doc_a1_1/source-recordings?pageSize=1&page=2"))
	if len(page2.SourceRecordings) != 1 || page2.SourceRecordings[0].ID != "rec_a1" || page2.Total != 2 {
		t.Errorf("page 2: %+v", page2)
	}
	all := decode[api.SourceRecordings](t, s.get(t, fixture.KeyFull, "/documents/doc_a1_2/source-recordings"))
	if all.Total != 1 || all.PrivateTotal != 0 || all.Guidance != "" {
		t.Errorf("all shared: %+v", all)
	}
	private := decode[api.SourceRecordings](t, s.get(t, fixture.KeyFull, "/documents/doc_a1_4/source-recordings"))
	if private.Total != 0 || private.LinkedTotal != 1 || private.PrivateTotal != 1 || !strings.Contains(private.Guidance, "authoritative") ||
		private.SourceRecordings == nil {
		t.Errorf("all private: %+v", private)
	}
	none := decode[api.SourceRecordings](t, s.get(t, fixture.KeyFull, "/documents/doc_a1_3/source-recordings"))
	if none.Total != 0 || none.LinkedTotal != 0 || none.Guidance != "" {
		t.Errorf("no recordings: %+v", none)
	}
	// On the Individual plan nothing is readable, even a recording marked shared.
	ind := decode[api.SourceRecordings](t, s.get(t, fixture.KeyIndividual, "/documents/doc_i1_1/source-recordings"))
	if ind.Total != 0 || ind.LinkedTotal != 1 || ind.PrivateTotal != 1 || !strings.Contains(ind.Guidance, "Individual plan") {
		t.Errorf("individual plan: %+v", ind)
	}
	// Without recording-details access: 403, decided by the key before any lookup.
	for _, id := range []string{"doc_a1_1", "doc_nope", "doc_b1_1"} {
		r := s.get(t, fixture.KeyNoRecording, "/documents/"+id+"/source-recordings")
		if r.status != 403 || errorCode(t, r) != "forbidden" {
			t.Errorf("%s without access: %d %s", id, r.status, r.body)
		}
	}
	for _, c := range []struct{ key, id string }{{fixture.KeyOneLibrary, "doc_a2_1"}, {fixture.KeyFull, "doc_b1_1"}} {
		if r := s.get(t, c.key, "/documents/"+c.id+"/source-recordings"); r.status != 404 {
			t.Errorf("%s out of scope: %d", c.id, r.status)
		}
	}
}

func TestMethodsAndPaths(t *testing.T) {
	s := newServer(t, options{})
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		for _, p := range []string{"/libraries", "/libraries/ops", "/documents/doc_a1_1/traverse"} {
			r := s.do(t, m, fixture.KeyFull, p)
			if r.status != 405 || r.header.Get("Allow") != "GET" || errorCode(t, r) != "method_not_allowed" {
				t.Errorf("%s %s: %d Allow %q %s", m, p, r.status, r.header.Get("Allow"), r.body)
			}
		}
	}
	r := s.do(t, "HEAD", fixture.KeyFull, "/libraries")
	if r.status != 200 || len(r.body) != 0 || r.header.Get("Content-Length") == "" {
		t.Errorf("HEAD: %d %q", r.status, r.body)
	}
	for _, p := range []string{"/", "/nope", "/libraries/", "/libraries/ops/", "/libraries/ops/unknown", "/documents",
		"/documents/doc_a1_1/edges", "/libraries//ops", "/libraries/ops/../ops", "/LIBRARIES"} {
		r := s.get(t, fixture.KeyFull, p)
		if r.status != 404 || errorCode(t, r) != "not_found" {
			t.Errorf("%s: %d %s", p, r.status, r.body)
		}
	}
	// Route before parameters: a bad parameter on an unknown path is 404.
	if r := s.get(t, fixture.KeyFull, "/nope?page=0"); r.status != 404 {
		t.Errorf("unknown path with bad parameter: %d", r.status)
	}
	// Parameters before permission: 400 beats 403 for a key without recording access.
	if r := s.get(t, fixture.KeyNoRecording, "/documents/doc_a1_1/source-recordings?page=0"); r.status != 400 {
		t.Errorf("bad parameter without access: %d, want 400", r.status)
	}
	// Parameters before lookup: 400 beats 404.
	if r := s.get(t, fixture.KeyFull, "/libraries/nope/documents?page=0"); r.status != 400 {
		t.Errorf("bad parameter on unknown library: %d, want 400", r.status)
	}
}

func TestRequestIDsAreUnique(t *testing.T) {
	s := newServer(t, options{})
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		id := s.get(t, fixture.KeyFull, "/libraries").header.Get("X-Request-Id")
		if seen[id] {
			t.Fatalf("request ID %s repeated", id)
		}
		seen[id] = true
	}
}

func TestPanicIsCleanInternalError(t *testing.T) {
	s := newServer(t, options{wrap: func(st doclib.Store) doclib.Store { return panicStore{Store: st} }})
	r := s.get(t, fixture.KeyFull, "/documents/doc_a1_1")
	if r.status != 500 || errorCode(t, r) != "internal" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	for _, leak := range []string{"secret", "docs-prod", "10.0.0.7", "goroutine", ".go:"} {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("500 body leaks %q: %s", leak, r.body)
		}
	}
	// The server goes on serving.
	if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != 200 {
		t.Errorf("after a panic: %d", r.status)
	}
}

func TestRateLimitHeaders(t *testing.T) {
	s := newServer(t, options{keyLimit: 3, ipLimit: 1000})
	for i := 1; i <= 3; i++ {
		r := s.get(t, fixture.KeyFull, "/libraries")
		if r.status != 200 || r.header.Get("X-RateLimit-Limit") != "3" ||
			r.header.Get("X-RateLimit-Remaining") != strconv.Itoa(3-i) ||
			r.header.Get("X-RateLimit-Reset") != strconv.FormatInt(testNow.Unix()+30, 10) {
			t.Fatalf("request %d: %d %v", i, r.status, r.header)
		}
	}
	r := s.get(t, fixture.KeyFull, "/libraries")
	if r.status != 429 || errorCode(t, r) != "rate_limited" || r.header.Get("Retry-After") != "30" ||
		r.header.Get("X-RateLimit-Remaining") != "0" || r.header.Get("X-RateLimit-Limit") != "3" {
		t.Fatalf("over the limit: %d %v %s", r.status, r.header, r.body)
	}
	// Errors past authentication carry the headers too, and count.
	other := s.get(t, fixture.KeyOneLibrary, "/libraries/lib_a2")
	if other.status != 404 || other.header.Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("404 with quota: %d %v", other.status, other.header)
	}
	// Another key has its own quota.
	if r := s.get(t, fixture.KeyOtherWS, "/libraries"); r.status != 200 {
		t.Errorf("other key: %d", r.status)
	}
}

// TestKeyBucketsAreWorkspaceScoped: key IDs are not checked across
// workspaces on import, so two workspaces can hold a key of the same ID. Each
// still has its own quota: one workspace's traffic never throttles another's.
func TestKeyBucketsAreWorkspaceScoped(t *testing.T) {
	now := func() time.Time { return testNow }
	svc := service.New(memory.New(fixtureData(t)), now)
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{Service: svc, Limiter: memory.NewLimiter(), KeyLimit: 1, IPLimit: 1000, Now: now,
		Authenticate: func(r *http.Request) (*doclib.Principal, error) {
			p, err := svc.Authenticate(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			if err != nil {
				return nil, err
			}
			same := *p
			same.KeyID = "key_reused" // as two imports into one table can leave it
			return &same, nil
		}}))
	defer srv.Close()
	status := func(key string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/libraries", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := []int{status(fixture.KeyFull), status(fixture.KeyOtherWS), status(fixture.KeyFull)}; !slices.Equal(got, []int{200, 200, 429}) {
		t.Errorf("statuses %v, want 200 200 429: each workspace's key has its own bucket", got)
	}
}

func TestRateLimitWindowAndIP(t *testing.T) {
	now := testNow
	clock := func() time.Time { return now }
	s := newServer(t, options{keyLimit: 100, ipLimit: 2, clock: clock})
	for i := 0; i < 2; i++ {
		if r := s.get(t, "dlk_guess_"+strconv.Itoa(i)+"_0000000000", "/libraries"); r.status != 401 {
			t.Fatalf("guess %d: %d", i, r.status)
		}
	}
	// The IP is limited before the key is checked, so guessing is throttled too.
	r := s.get(t, "dlk_guess_x_000000000000", "/libraries")
	if r.status != 429 || r.header.Get("Retry-After") != "30" || r.header.Get("X-RateLimit-Limit") != "2" {
		t.Fatalf("IP limit: %d %v", r.status, r.header)
	}
	if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != 429 {
		t.Errorf("a good key from a limited IP: %d", r.status)
	}
	now = now.Add(31 * time.Second) // next window
	if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != 200 {
		t.Errorf("next window: %d", r.status)
	}
	now = time.Date(2026, 11, 22, 12, 5, 59, 500_000_000, time.UTC)
	s2 := newServer(t, options{keyLimit: 1, clock: clock})
	s2.get(t, fixture.KeyFull, "/libraries")
	if r := s2.get(t, fixture.KeyFull, "/libraries"); r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After under a second must round up to 1: %q", r.header.Get("Retry-After"))
	}
}

func lbl(name string, n int) api.Label { return api.Label{Name: name, DocumentCount: n} }

// TestRefusedRequestConsumesNoQuota: a request the per-key limit refuses gives
// back what the per-IP limit took, so one key over its limit cannot use up the
// quota of its IP address for the other keys behind it.
func TestRefusedRequestConsumesNoQuota(t *testing.T) {
	s := newServer(t, options{keyLimit: 1, ipLimit: 3})
	if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != 200 {
		t.Fatalf("first: %d", r.status)
	}
	for i := 0; i < 5; i++ { // refused by the key limit: the IP count stays at 1
		if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != 429 || !strings.Contains(string(r.body), "API key") {
			t.Fatalf("over the key limit: %d %s", r.status, r.body)
		}
	}
	if r := s.get(t, fixture.KeyOtherWS, "/libraries"); r.status != 200 {
		t.Fatalf("another key from the same IP: %d %s", r.status, r.body)
	}
	// A wrong key is not refused by a limit: it counts against the IP (key guessing).
	if r := s.get(t, "dlk_guess_000000000000", "/libraries"); r.status != 401 {
		t.Fatalf("wrong key: %d", r.status)
	}
	r := s.get(t, fixture.KeyOneLibrary, "/libraries")
	if r.status != 429 || !strings.Contains(string(r.body), "IP address") || r.header.Get("X-RateLimit-Limit") != "3" {
		t.Fatalf("the IP's fourth counted request: %d %v %s", r.status, r.header, r.body)
	}
}
