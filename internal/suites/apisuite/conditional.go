package apisuite

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/openapicheck"
	"github.com/doclib/doclib/shared/data/dataset"
)

// strongTag is an entity tag as the API writes it: strong (no W/), quoted.
var strongTag = regexp.MustCompile(`^"[0-9a-f]{32}(-(gzip|zstd))?"$`)

// getRoutes match the paths of every GET endpoint, in the spec's order.
var getRoutes = []struct {
	name string
	path *regexp.Regexp
}{
	{"GET /libraries", regexp.MustCompile(`^/libraries$`)},
	{"GET /libraries/{id}", regexp.MustCompile(`^/libraries/[^/?]+$`)},
	{"GET /libraries/{id}/tags", regexp.MustCompile(`^/libraries/[^/?]+/tags$`)},
	{"GET /libraries/{id}/categories", regexp.MustCompile(`^/libraries/[^/?]+/categories$`)},
	{"GET /libraries/{id}/applications", regexp.MustCompile(`^/libraries/[^/?]+/applications$`)},
	{"GET /libraries/{id}/graph", regexp.MustCompile(`^/libraries/[^/?]+/graph$`)},
	{"GET /libraries/{id}/documents", regexp.MustCompile(`^/libraries/[^/?]+/documents(\?|$)`)},
	{"GET /documents/{id}", regexp.MustCompile(`^/documents/[^/?]+$`)},
	{"GET /documents/{id}/traverse", regexp.MustCompile(`^/documents/[^/?]+/traverse(\?|$)`)},
	{"GET /documents/{id}/source-recordings", regexp.MustCompile(`^/documents/[^/?]+/source-recordings(\?|$)`)},
	{"GET /search/documents", regexp.MustCompile(`^/search/documents\?`)},
}

// checkCacheHeaders: every 200 carries a strong ETag, Cache-Control
// "private, no-cache" and Vary: Accept-Encoding (docs/design.md).
func checkCacheHeaders(t testing.TB, r *response) {
	t.Helper()
	if tag := r.header.Get("ETag"); !strongTag.MatchString(tag) {
		t.Errorf("%s: ETag %q, want a strong quoted tag", r, tag)
	}
	if cc := r.header.Get("Cache-Control"); cc != "private, no-cache" {
		t.Errorf("%s: Cache-Control %q, want private, no-cache", r, cc)
	}
	if !varies(r.header) {
		t.Errorf("%s: Vary %q, want Accept-Encoding", r, r.header.Values("Vary"))
	}
}

// testConditional revalidates an answer of every GET endpoint that the
// suite already has (every 200 was checked for its ETag as it came): the
// same request with the tag in If-None-Match gets 304 with no body, the
// same tag, its own X-Request-Id and the key's X-RateLimit-*, and does not
// count against the key's limit. Then compression (zstd and gzip decode to
// the same JSON, each with a tag of its own) and scope (two keys never share
// a tag for different bytes). The per-IP budget is tight (the suite's
// header): it sends one request an endpoint and four more.
func (s *suite) testConditional(t *testing.T) {
	m := s.m
	s.mu.Lock()
	paths := make([]string, 0, len(s.answers))
	for p := range s.answers {
		paths = append(paths, p)
	}
	s.mu.Unlock()
	slices.Sort(paths)
	// Consecutive 304s with one key in one window leave the same quota.
	lastRemaining := map[*dataset.APIKey][2]int64{}
	for _, rt := range getRoutes {
		i := slices.IndexFunc(paths, func(p string) bool { return rt.path.MatchString(p) && s.m.works(s.answers[p].key) })
		if i < 0 {
			t.Errorf("%s: the suite got no 200 of it to revalidate", rt.name)
			continue
		}
		p := paths[i]
		a := s.answers[p]
		tag := a.r.header.Get("ETag")
		r := s.getWith(t, a.key, p, http.Header{"If-None-Match": {tag}, "Accept-Encoding": {"gzip"}})
		if r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("%s with If-None-Match %s: want 304 with no body", r, tag)
			continue
		}
		if r.header.Get("ETag") != tag || r.header.Get("X-Request-Id") == a.r.header.Get("X-Request-Id") {
			t.Errorf("%s: a 304 carries the tag %s and its own X-Request-Id; got ETag %q, X-Request-Id %q",
				r, tag, r.header.Get("ETag"), r.header.Get("X-Request-Id"))
		}
		remaining, reset := s.checkQuotaHeaders(t, r, s.KeyLimit)
		if last, ok := lastRemaining[a.key]; ok && last[1] == reset && last[0] != int64(remaining) {
			t.Errorf("%s: X-RateLimit-Remaining %d after the last 304's %d: a 304 does not count against the key's limit",
				r, remaining, last[0])
		}
		lastRemaining[a.key] = [2]int64{int64(remaining), reset}
	}

	t.Run("compression", func(t *testing.T) {
		i := slices.IndexFunc(paths, func(p string) bool {
			return getRoutes[6].path.MatchString(p) && len(s.answers[p].r.body) > 4096
		})
		if i < 0 {
			t.Fatal("the suite got no page of documents over 4 KB")
		}
		a := s.answers[paths[i]]
		// Go's transport asked for gzip and decoded it: the tag says so.
		zipped := a.r.header.Get("ETag")
		if !strings.HasSuffix(zipped, `-gzip"`) {
			t.Errorf("%s: %d bytes asked in gzip, ETag %s: want a gzip answer's tag", a.r, len(a.r.body), zipped)
		}
		identity := strings.TrimSuffix(strings.TrimSuffix(zipped, `"`), "-gzip") + `"`
		r := s.getWith(t, a.key, paths[i], http.Header{"Accept-Encoding": {"gzip;q=0.5, zstd"}})
		if r.status != http.StatusOK || r.header.Get("Content-Encoding") != "zstd" {
			t.Fatalf("%s with Accept-Encoding \"gzip;q=0.5, zstd\": want 200 in zstd, got %q", r, r.header.Get("Content-Encoding"))
		}
		got, err := openapicheck.Decode("zstd", r.body)
		if err != nil || !bytes.Equal(got, a.r.body) {
			t.Errorf("%s in zstd: does not decode to the answer gzip decoded to (%v)", r, err)
		}
		if want := strings.TrimSuffix(identity, `"`) + `-zstd"`; r.header.Get("ETag") != want {
			t.Errorf("%s in zstd: ETag %q, want %q", r, r.header.Get("ETag"), want)
		}
		// A coded tag revalidates the answer in any coding: the JSON behind
		// both is the same.
		nm := s.getWith(t, a.key, paths[i], http.Header{"If-None-Match": {r.header.Get("ETag")}, "Accept-Encoding": {"identity"}})
		if nm.status != http.StatusNotModified || nm.header.Get("ETag") != identity {
			t.Errorf("%s with If-None-Match %s and no coding: want 304 with the identity tag %s", nm, r.header.Get("ETag"), identity)
		}
	})

	t.Run("scopes-never-share-tags", func(t *testing.T) {
		border := m.border(m.scoped)
		if border == nil {
			t.Skip("the demo has no document whose edges differ by scope")
		}
		p := "/documents/" + border.ID
		narrow, ok := s.answers[p]
		if !ok || narrow.key != m.scoped {
			narrow = answer{m.scoped, s.get(t, m.scoped, p)}
		}
		wide := s.get(t, m.full, p)
		if wide.status != http.StatusOK || narrow.r.status != http.StatusOK || bytes.Equal(wide.body, narrow.r.body) {
			t.Fatalf("%s, %s: want 200 with edges that differ by scope", wide, narrow.r)
		}
		if wide.header.Get("ETag") == narrow.r.header.Get("ETag") {
			t.Errorf("keys of different scopes got the same ETag %s for different answers", wide.header.Get("ETag"))
		}
		// The wider key's tag is stale for the narrower key: the whole answer.
		cross := s.getWith(t, m.scoped, p, http.Header{"If-None-Match": {wide.header.Get("ETag")}, "Accept-Encoding": {"gzip"}})
		if cross.status != http.StatusOK {
			t.Errorf("%s with another scope's tag: want 200 with this key's answer", cross)
		}
	})
}

// varies reports whether Vary names Accept-Encoding.
func varies(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Accept-Encoding") {
				return true
			}
		}
	}
	return false
}

// getWith is get with extra request headers. A request that names its own
// Accept-Encoding gets the body as sent: Go's transport decodes only what
// it asked for itself.
func (s *suite) getWith(t testing.TB, key *dataset.APIKey, path string, h http.Header) *response {
	t.Helper()
	r, err := s.sendWith(http.MethodGet, "Bearer "+key.Secret, path, h)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	switch coding := r.header.Get("Content-Encoding"); {
	case r.status == http.StatusNotModified:
		s.checkNotModified(t, r)
	case coding != "":
		plain := *r
		var err error
		if plain.body, err = openapicheck.Decode(coding, r.body); err != nil {
			t.Errorf("%s: body is not %s: %v", r, coding, err)
			break
		}
		s.checkCommon(t, &plain, s.m.works(key))
	default:
		s.checkCommon(t, r, s.m.works(key))
	}
	if r.status == http.StatusOK || r.status == http.StatusNotModified {
		s.countSearch(key, path)
	}
	return r
}

// checkNotModified: a 304 carries X-Request-Id and the key's quota, and
// nothing else of a body.
func (s *suite) checkNotModified(t testing.TB, r *response) {
	t.Helper()
	if r.header.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id header", r)
	}
	if n, err := strconv.Atoi(r.header.Get("Content-Length")); err == nil && n != 0 {
		t.Errorf("%s: Content-Length %d on a 304", r, n)
	}
	s.checkQuotaHeaders(t, r, s.KeyLimit)
}
