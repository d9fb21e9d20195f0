package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/httpapi"
)

// fixturePaths are a request of every GET endpoint over the fixture.
var fixturePaths = []string{
	"/libraries",
	"/libraries/lib_a1",
	"/libraries/lib_a1/tags",
	"/libraries/lib_a1/categories",
	"/libraries/lib_a1/applications",
	"/libraries/lib_a1/graph",
	"/libraries/lib_a1/documents?pageSize=3",
	"/documents/doc_a1_1",
	"/documents/doc_a1_1/traverse?depth=3",
	"/documents/doc_a1_1/source-recordings",
	"/search/documents?q=reset+password",
}

func bearer(key string) string { return "Bearer " + key }

func TestConditionalGet(t *testing.T) {
	// A 304 to * counts against the key: room for every request here.
	s := newServer(t, options{keyLimit: 1000, ipLimit: 3000})
	for _, p := range fixturePaths {
		identity := http.Header{"Accept-Encoding": {"identity"}}
		first := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, identity)
		if first.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, first.status, first.body)
		}
		tag := first.header.Get("ETag")
		if len(tag) != 34 || tag[0] != '"' || strings.HasPrefix(tag, "W/") {
			t.Errorf("GET %s: ETag %q, want a strong tag of 32 hex digits", p, tag)
		}
		if first.header.Get("Cache-Control") != "private, no-cache" || first.header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("GET %s: Cache-Control %q, Vary %q", p, first.header.Get("Cache-Control"), first.header.Get("Vary"))
		}
		// Every form of If-None-Match that names the answer: alone, in a
		// list, weak, and *.
		for _, inm := range []string{tag, `"nope", ` + tag, "W/" + tag, "*", `"x" , W/` + tag + `,"y"`} {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				r := s.doWith(t, method, bearer(fixture.KeyFull), p, http.Header{"If-None-Match": {inm}, "Accept-Encoding": {"identity"}})
				if r.status != http.StatusNotModified || len(r.body) != 0 || r.header.Get("ETag") != tag {
					t.Errorf("%s %s with If-None-Match %s: %d, ETag %q, %d bytes; want 304 with the tag and no body",
						method, p, inm, r.status, r.header.Get("ETag"), len(r.body))
				}
				for _, h := range []string{"X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Cache-Control", "Vary"} {
					if r.header.Get(h) == "" {
						t.Errorf("%s %s: 304 without %s", method, p, h)
					}
				}
			}
		}
		for _, inm := range []string{`"0123"`, "W/\"x\"", `"` + strings.Repeat("0", 32) + `"`, tag[1 : len(tag)-1], ""} {
			r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"If-None-Match": {inm}})
			if r.status != http.StatusOK || !bytes.Equal(r.body, first.body) {
				t.Errorf("GET %s with If-None-Match %q: %d; want 200 with the answer", p, inm, r.status)
			}
		}
		head := s.doWith(t, http.MethodHead, bearer(fixture.KeyFull), p, identity)
		if head.header.Get("ETag") != tag {
			t.Errorf("HEAD %s: ETag %q, want the GET's %s", p, head.header.Get("ETag"), tag)
		}
	}
	// Errors carry no tag: they are not representations to revalidate.
	r := s.get(t, fixture.KeyFull, "/documents/doc_nope")
	if r.header.Get("ETag") != "" || r.header.Get("Cache-Control") != "" {
		t.Errorf("404: ETag %q, Cache-Control %q; want neither", r.header.Get("ETag"), r.header.Get("Cache-Control"))
	}
	r = s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), "/documents/doc_nope", http.Header{"If-None-Match": {"*"}})
	if r.status != http.StatusNotFound {
		t.Errorf("GET of a missing document with If-None-Match *: %d, want 404", r.status)
	}
}

// TestETagFollowsTheData: a change to a document changes the tag of every
// answer that shows it, and of none that does not.
func TestETagFollowsTheData(t *testing.T) {
	before := newServer(t, options{})
	after := newServer(t, options{edit: func(f *dataset.File) {
		for i := range f.Documents {
			if f.Documents[i].ID == "doc_a1_1" {
				f.Documents[i].Title += " (revised)"
			}
		}
	}})
	for _, c := range []struct {
		path    string
		changes bool
	}{
		{"/documents/doc_a1_1", true},
		{"/libraries/lib_a1/graph", true},
		{"/libraries/lib_a1/documents?pageSize=100", true},
		{"/libraries", false},
		{"/libraries/lib_a1/tags", false},
	} {
		a := before.get(t, fixture.KeyFull, c.path)
		b := after.get(t, fixture.KeyFull, c.path)
		if same := a.header.Get("ETag") == b.header.Get("ETag"); same == c.changes {
			t.Errorf("GET %s: ETag %s before the edit, %s after; changed: %v, want %v", c.path, a.header.Get("ETag"), b.header.Get("ETag"), !same, c.changes)
		}
		r := after.doWith(t, http.MethodGet, bearer(fixture.KeyFull), c.path, http.Header{"If-None-Match": {a.header.Get("ETag")}})
		if want := map[bool]int{true: http.StatusOK, false: http.StatusNotModified}[c.changes]; r.status != want {
			t.Errorf("GET %s with the tag from before the edit: %d, want %d", c.path, r.status, want)
		}
	}
}

// TestScopesNeverShareTags: keys of different scopes get different bytes,
// hence different tags, and one key's tag never revalidates another's answer.
func TestScopesNeverShareTags(t *testing.T) {
	s := newServer(t, options{})
	for _, p := range []string{"/libraries", "/documents/doc_a1_1", "/documents/doc_a1_1/traverse?depth=3", "/search/documents?q=reset+password"} {
		all := s.get(t, fixture.KeyFull, p)
		one := s.get(t, fixture.KeyOneLibrary, p)
		if bytes.Equal(all.body, one.body) {
			continue // the scopes see the same here
		}
		if all.header.Get("ETag") == one.header.Get("ETag") {
			t.Errorf("GET %s: keys of different scopes share ETag %s for different answers", p, all.header.Get("ETag"))
		}
		r := s.doWith(t, http.MethodGet, bearer(fixture.KeyOneLibrary), p, http.Header{"If-None-Match": {all.header.Get("ETag")}})
		if r.status != http.StatusOK || !bytes.Equal(r.body, one.body) {
			t.Errorf("GET %s with the wider key's tag: %d; want 200 with the narrower key's answer", p, r.status)
		}
	}
}

// Test304DoesNotCountAgainstTheKey: GitHub's rule. With a limit of 3, any
// number of 304s leave room for 2 more 200s after the first; the per-IP
// limit counts them all.
func Test304DoesNotCountAgainstTheKey(t *testing.T) {
	s := newServer(t, options{keyLimit: 3, ipLimit: 7})
	first := s.get(t, fixture.KeyFull, "/libraries")
	tag := first.header.Get("ETag")
	for i := range 4 {
		r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), "/libraries", http.Header{"If-None-Match": {tag}})
		if r.status != http.StatusNotModified || r.header.Get("X-RateLimit-Remaining") != "2" {
			t.Fatalf("304 number %d: %d, X-RateLimit-Remaining %q; want 304 with 2 left", i+1, r.status, r.header.Get("X-RateLimit-Remaining"))
		}
	}
	for _, want := range []string{"1", "0"} {
		if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != http.StatusOK || r.header.Get("X-RateLimit-Remaining") != want {
			t.Fatalf("200 after the 304s: %d, remaining %q, want 200 with %s left", r.status, r.header.Get("X-RateLimit-Remaining"), want)
		}
	}
	if r := s.get(t, fixture.KeyFull, "/libraries"); r.status != http.StatusTooManyRequests {
		t.Fatalf("fourth 200: %d, want 429 (the key's limit is 3)", r.status)
	}
	// 1 + 4 + 2 = 7 requests counted from this IP (the 429 gave its own
	// back): its limit of 7 is spent.
	if r := s.get(t, fixture.KeyOtherWS, "/libraries"); r.status != http.StatusTooManyRequests {
		t.Fatalf("another key from the same IP: %d, want 429: the per-IP limit counts 304s", r.status)
	}
}

// TestStarNeverGivesBack: If-None-Match: * matches any answer, so it gets a
// 304, but it proves the client holds nothing: the key's request is spent
// as a 200's would be. Before, 1,000 304s to * and then 100 200s fitted in
// one window of a key whose limit is 100.
func TestStarNeverGivesBack(t *testing.T) {
	const limit = 5
	s := newServer(t, options{keyLimit: limit, ipLimit: 1000})
	for i := range limit {
		inm := "*"
		if i%2 == 1 {
			inm = `"nope", *` // a list with * and no concrete match
		}
		r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), "/libraries", http.Header{"If-None-Match": {inm}})
		if want := strconv.Itoa(limit - 1 - i); r.status != http.StatusNotModified || r.header.Get("X-RateLimit-Remaining") != want {
			t.Fatalf("304 to %s number %d: %d, X-RateLimit-Remaining %q; want 304 with %s left", inm, i+1, r.status, r.header.Get("X-RateLimit-Remaining"), want)
		}
	}
	for _, inm := range []string{"*", ""} {
		if r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), "/libraries", http.Header{"If-None-Match": {inm}}); r.status != http.StatusTooManyRequests {
			t.Fatalf("after %d requests with If-None-Match *, one with %q: %d, want 429", limit, inm, r.status)
		}
	}
}

// Test304SearchIsBilled: a search answered 304 ran in full and spends its
// credit, as docs/api.md says of every search.
func Test304SearchIsBilled(t *testing.T) {
	s := newServer(t, options{})
	const p = "/search/documents?q=reset+password"
	start := s.balance("ws_a")
	first := s.get(t, fixture.KeyFull, p)
	r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"If-None-Match": {first.header.Get("ETag")}})
	if r.status != http.StatusNotModified {
		t.Fatalf("repeated search with its tag: %d, want 304", r.status)
	}
	if spent := start - s.balance("ws_a"); spent != 2 {
		t.Errorf("a 200 and a 304 search spent %d credits, want 2", spent)
	}
	// Billing comes before the answer: no credit, no 304.
	s = newServer(t, options{edit: func(f *dataset.File) {
		for i := range f.Workspaces {
			if f.Workspaces[i].ID == "ws_a" {
				f.Workspaces[i].AICredit = 1
			}
		}
	}})
	first = s.get(t, fixture.KeyFull, p)
	r = s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"If-None-Match": {first.header.Get("ETag")}})
	if r.status != http.StatusPaymentRequired || errorCode(t, r) != "insufficient_ai_credit" {
		t.Errorf("search with its tag and no credit left: %d %s, want 402 insufficient_ai_credit", r.status, r.body)
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func unzstd(t *testing.T, b []byte) []byte {
	t.Helper()
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompression(t *testing.T) {
	s := newServer(t, options{})
	const p = "/libraries/lib_a1/documents?pageSize=100"
	plain := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {"identity"}})
	if len(plain.body) < httpapi.MinCompressBytes || plain.header.Get("Content-Encoding") != "" {
		t.Fatalf("identity answer: %d bytes, Content-Encoding %q", len(plain.body), plain.header.Get("Content-Encoding"))
	}
	tag := plain.header.Get("ETag")
	for _, c := range []struct{ accept, want string }{
		{"gzip", "gzip"}, {"GZIP", "gzip"}, {"x-gzip", "gzip"}, {"zstd", "zstd"}, {"gzip, zstd", "zstd"},
		{"zstd;q=0.1, gzip;q=0.9", "gzip"}, {"zstd;q=0, gzip", "gzip"}, {"gzip;q=0", ""}, {"*", "zstd"},
		{"*;q=0.5, gzip", "gzip"}, {"zstd;q=0, *", "gzip"}, {"br", ""}, {"identity", ""},
		{"gzip;q=nonsense", ""}, {"deflate, br;q=1.0, zstd;q=0.8", "zstd"},
		// Weights as RFC 9110 writes them, 0 to 1 with three decimals at
		// most; any other is no weight, and takes nothing.
		{"gzip;q=0.001", "gzip"}, {"gzip;q=1.000", "gzip"}, {"gzip;q=1.", "gzip"}, {"gzip;q=0.0001", ""},
		{"gzip;q=2", ""}, {"zstd;q=2, gzip;q=0.5", "gzip"}, {"zstd;q=Inf, gzip;q=0.1", "gzip"},
		{"zstd;q=NaN, gzip;q=0.1", "gzip"}, {"zstd;q=-1, gzip;q=0.1", "gzip"}, {"zstd;q=1.5, gzip", "gzip"},
		{"zstd;q=1e0, gzip;q=0.1", "gzip"}, {"*;q=2", ""},
	} {
		r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {c.accept}})
		if got := r.header.Get("Content-Encoding"); got != c.want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", c.accept, got, c.want)
			continue
		}
		body := r.body
		switch c.want {
		case "gzip":
			body = gunzip(t, body)
		case "zstd":
			body = unzstd(t, body)
		}
		if !bytes.Equal(body, plain.body) {
			t.Errorf("Accept-Encoding %q: the body does not decode to the identity answer", c.accept)
		}
		wantTag := tag
		if c.want != "" {
			wantTag = strings.TrimSuffix(tag, `"`) + "-" + c.want + `"`
			if n, _ := strconv.Atoi(r.header.Get("Content-Length")); n != len(r.body) || n >= len(plain.body) {
				t.Errorf("Accept-Encoding %q: Content-Length %d for %d bytes sent, %d plain", c.accept, n, len(r.body), len(plain.body))
			}
		}
		if r.header.Get("ETag") != wantTag || r.header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: ETag %q, Vary %q; want %s and Accept-Encoding", c.accept, r.header.Get("ETag"), r.header.Get("Vary"), wantTag)
		}
	}
	// A coded tag revalidates in any coding, and the 304 names the tag of
	// the representation a 200 would send now.
	r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"If-None-Match": {strings.TrimSuffix(tag, `"`) + `-gzip"`}, "Accept-Encoding": {"zstd"}})
	if r.status != http.StatusNotModified || r.header.Get("ETag") != strings.TrimSuffix(tag, `"`)+`-zstd"` {
		t.Errorf("If-None-Match with the gzip tag, asking zstd: %d, ETag %q; want 304 with the zstd tag", r.status, r.header.Get("ETag"))
	}
	// Below MinCompressBytes nothing is compressed.
	small := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), "/libraries/lib_a1/tags", http.Header{"Accept-Encoding": {"gzip, zstd"}})
	if len(small.body) >= httpapi.MinCompressBytes || small.header.Get("Content-Encoding") != "" {
		t.Errorf("a %d-byte answer: Content-Encoding %q, want none under %d bytes", len(small.body), small.header.Get("Content-Encoding"), httpapi.MinCompressBytes)
	}
	// Uncompressed (a gateway compresses instead): never.
	// The tag is weak then: the gateway may send its gzip of these bytes,
	// and a strong tag would name bytes the client never got. It still
	// revalidates, weakly, in either form.
	u := newServer(t, options{config: func(c *httpapi.Config) { c.Uncompressed = true }})
	ur := u.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {"gzip, zstd"}})
	if ur.header.Get("Content-Encoding") != "" || !bytes.Equal(ur.body, plain.body) {
		t.Errorf("Uncompressed: Content-Encoding %q", ur.header.Get("Content-Encoding"))
	}
	if ur.header.Get("ETag") != "W/"+tag {
		t.Errorf("Uncompressed: ETag %q, want the weak W/%s", ur.header.Get("ETag"), tag)
	}
	for _, inm := range []string{"W/" + tag, tag} {
		r := u.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"If-None-Match": {inm}, "Accept-Encoding": {"gzip"}})
		if r.status != http.StatusNotModified || r.header.Get("ETag") != "W/"+tag {
			t.Errorf("Uncompressed, If-None-Match %s: %d, ETag %q; want 304 with W/%s", inm, r.status, r.header.Get("ETag"), tag)
		}
	}
}

func TestMaxAnswerBytes(t *testing.T) {
	const p = "/libraries/lib_a1/documents?pageSize=100"
	plain := newServer(t, options{}).doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {"identity"}})
	zipped := newServer(t, options{}).doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {"gzip"}})
	limit := (len(plain.body) + len(zipped.body)) / 2
	s := newServer(t, options{config: func(c *httpapi.Config) { c.MaxAnswerBytes = limit }})
	r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {"identity"}})
	if r.status != http.StatusBadRequest || errorCode(t, r) != "bad_request" || !strings.Contains(string(r.body), "Accept-Encoding: gzip") ||
		r.header.Get("ETag") != "" || r.header.Get("Cache-Control") != "" {
		t.Errorf("an answer over MaxAnswerBytes: %d %s, ETag %q; want 400 bad_request saying to ask for gzip, without a tag", r.status, r.body, r.header.Get("ETag"))
	}
	if r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {"gzip"}}); r.status != http.StatusOK {
		t.Errorf("the same answer in gzip, under the limit: %d", r.status)
	}
}

// TestAnswersAreEncodingJSON: every answer's bytes are what encoding/json
// writes for the shape they decode to (api.Appender's promise, end to end).
func TestAnswersAreEncodingJSON(t *testing.T) {
	s := newServer(t, options{})
	shapes := map[string]func() any{
		"/libraries": func() any { return new(api.LibraryList) }, "/libraries/lib_a1": func() any { return new(api.Library) },
		"/libraries/lib_a1/tags": func() any { return new(api.Tags) }, "/libraries/lib_a1/categories": func() any { return new(api.Categories) },
		"/libraries/lib_a1/applications": func() any { return new(api.Applications) }, "/libraries/lib_a1/graph": func() any { return new(api.Graph) },
		"/libraries/lib_a1/documents?pageSize=3": func() any { return new(api.DocumentPage) }, "/documents/doc_a1_1": func() any { return new(api.Document) },
		"/documents/doc_a1_1/traverse?depth=3":  func() any { return new(api.Traversal) },
		"/documents/doc_a1_1/source-recordings": func() any { return new(api.SourceRecordings) },
		"/search/documents?q=reset+password":    func() any { return new(api.SearchResults) },
	}
	for _, p := range fixturePaths {
		r := s.doWith(t, http.MethodGet, bearer(fixture.KeyFull), p, http.Header{"Accept-Encoding": {"identity"}})
		v := shapes[p]()
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.body, want.Bytes()) {
			t.Errorf("GET %s: the answer is not what encoding/json writes for it", p)
		}
	}
}
