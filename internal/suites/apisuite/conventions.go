package apisuite

import (
	"net/http"
	"testing"

	doclib "github.com/doclib/doclib/shared"
)

// testConventions: docs/api.md's wire conventions that hold across endpoints.
func (s *suite) testConventions(t *testing.T) {
	lib := s.m.visibleLibs(s.m.full)[0]
	doc := s.m.docsByLib[lib][0].ID

	t.Run("request-ids-differ", func(t *testing.T) {
		seen := map[string]bool{}
		for range 2 {
			r := s.get(t, s.reader(), "/libraries")
			id := r.header.Get("X-Request-Id")
			if seen[id] {
				t.Errorf("X-Request-Id %q repeated", id)
			}
			seen[id] = true
		}
	})

	t.Run("head", func(t *testing.T) {
		r := s.do(t, http.MethodHead, "Bearer "+s.reader().Secret, "/libraries", true)
		// Behind API Gateway a method the API does not declare may be refused
		// by the gateway itself (403 Missing Authentication Token).
		if r.gateway && r.status == http.StatusForbidden {
			return
		}
		if r.status != http.StatusOK || len(r.body) != 0 {
			t.Errorf("%s: want 200 with no body", r)
		}
	})

	t.Run("methods", func(t *testing.T) {
		for _, c := range []struct{ method, path string }{
			{http.MethodPost, "/libraries"},
			{http.MethodDelete, "/documents/" + doc},
		} {
			r := s.do(t, c.method, "Bearer "+s.reader().Secret, c.path, true)
			s.expectError(t, r, http.StatusMethodNotAllowed, "method_not_allowed", http.StatusForbidden)
			if !r.gateway && r.header.Get("Allow") != "GET" {
				t.Errorf("%s: Allow %q, want GET", r, r.header.Get("Allow"))
			}
		}
	})

	t.Run("unknown-paths", func(t *testing.T) {
		for _, p := range []string{"/nope", "/libraries/" + lib + "/nope", "/documents"} {
			r := s.get(t, s.reader(), p)
			// API Gateway answers a path it has no resource for with
			// 403 {"message": "Missing Authentication Token"}.
			s.expectError(t, r, http.StatusNotFound, "not_found", http.StatusForbidden)
		}
	})

	t.Run("unknown-parameter-ignored", func(t *testing.T) {
		r := s.get(t, s.reader(), "/libraries"+q("colour", "blue"))
		if r.status != http.StatusOK {
			t.Errorf("%s: unknown parameters are ignored; want 200", r)
		}
	})

	t.Run("parameter-twice", func(t *testing.T) {
		for _, p := range []string{
			"/libraries/" + lib + "/documents?page=1&page=2",
			"/documents/" + doc + "/traverse?depth=1&depth=2",
		} {
			s.expectError(t, s.get(t, s.reader(), p), http.StatusBadRequest, "bad_request")
		}
	})
}

// testAuthentication: every 401 code, in the error shape.
func (s *suite) testAuthentication(t *testing.T) {
	m := s.m
	for _, c := range []struct {
		name, auth, path string
		code             string
		// gateway: API Gateway may answer itself (no key at all, or a header
		// its authorizer's identity validation rejects as not a bearer key).
		gateway bool
	}{
		{"missing", "", "/libraries", "unauthorised", true},
		{"missing-on-search", "", "/search/documents?q=reset", "unauthorised", true},
		{"not-bearer", "Basic " + m.full.Secret, "/libraries", "unauthorised", true},
		{"empty-bearer", "Bearer ", "/libraries", "unauthorised", true},
		{"wrong", "Bearer dlk_demo_no_such_key_0000", "/libraries", "unauthorised", false},
		{"prefix-of-a-key", "Bearer " + m.full.Secret[:len(m.full.Secret)-3], "/libraries", "unauthorised", false},
		{"expired", "Bearer " + m.expired.Secret, "/libraries", "api_key_expired", false},
		{"expired-on-search", "Bearer " + m.expired.Secret, "/search/documents?q=reset", "api_key_expired", false},
		{"removed-device", "Bearer " + m.removed.Secret, "/libraries", "api_key_device_removed", false},
		{"archived-device", "Bearer " + m.archived.Secret, "/documents/" + m.file.Documents[0].ID, "api_key_device_removed", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.do(t, http.MethodGet, c.auth, c.path, false)
			if c.gateway {
				s.expectError(t, r, http.StatusUnauthorized, c.code, http.StatusUnauthorized, http.StatusForbidden)
			} else {
				s.expectError(t, r, http.StatusUnauthorized, c.code)
			}
			// RFC 6750: a bearer challenge, whose words tell an MCP client
			// (or any other) that the API takes a key and no OAuth.
			if want := doclib.Challenge(c.auth != ""); !r.gateway && r.header.Get("WWW-Authenticate") != want {
				t.Errorf("%s: WWW-Authenticate %q, want %q", r, r.header.Get("WWW-Authenticate"), want)
			}
		})
	}
	// Authentication comes before routing: no key on an unknown path is 401.
	t.Run("missing-on-unknown-path", func(t *testing.T) {
		r := s.do(t, http.MethodGet, "", "/nope", false)
		if r.unrouted {
			return // the gateway routes first (RoutesBeforeAuth): 404 not_found, checked in shape
		}
		s.expectError(t, r, http.StatusUnauthorized, "unauthorised", http.StatusUnauthorized, http.StatusForbidden)
	})
}
