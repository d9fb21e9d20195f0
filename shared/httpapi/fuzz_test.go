package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// FuzzRequests sends arbitrary paths, query strings and methods through the whole
// handler: it must never answer 5xx, and every error must be in the error shape.
// The corpus under testdata/fuzz/FuzzRequests keeps what earlier runs found.
func FuzzRequests(f *testing.F) {
	paths := []string{"/libraries", "/libraries/lib_a1", "/libraries/ops", "/libraries/operations/tags", "/libraries/lib_a1/categories",
		"/libraries/lib_a1/applications", "/libraries/lib_a1/graph", "/libraries/lib_a1/documents", "/documents/doc_a1_1",
		"/documents/doc_a1_1/traverse", "/documents/doc_a1_1/source-recordings", "/search/documents", "/libraries/%2e%2e/x", "/documents/doc_a1_1/../x"}
	searches := []string{"q=reset%20password", "q=okta&libraryId=lib_a1&category=Accounts&tag=security&application=Okta&page=2&pageSize=1",
		"q=zzqx", "q=a", "q=%20%20x%20", "q=okta&libraryId=ops", "q=okta&libraryId=lib_b1", "q=" + strings.Repeat("x", 513), "q=pasword&q=reset"}
	for i, q := range searches {
		f.Add("GET", "/search/documents", q, uint8(i))
	}
	queries := []string{"", "page=2&pageSize=1", "pageSize=1000", "page=0", "category=Accounts&tag=security&application=Okta&search=okta",
		"depth=3&direction=incoming&label=often%20next", "depth=9", "page=1&page=1", "search=%ff", "a=%zz", "pageSize=-1", "page=18446744073709551616"}
	for i, p := range paths {
		for j, q := range queries {
			f.Add("GET", p, q, uint8(i+j))
		}
	}
	f.Add("DELETE", "/libraries", "", uint8(0))
	f.Add("GET", "/libraries/\x00", "", uint8(1))
	d := fixtureData(f)
	keys := []string{fixture.KeyFull, fixture.KeyOneLibrary, fixture.KeyNoRecording, fixture.KeyIndividual, fixture.KeyExpired, "", "nonsense"}
	h := httpapi.NewServer(httpapi.Config{Service: service.New(memoryStoreFrom(d), nil, searchOptions(f, d, options{}, memory.NewLedger(d.Workspaces)))})
	f.Fuzz(func(t *testing.T, method, path, rawQuery string, key uint8) {
		if method == "" || !validToken(method) {
			method = "GET"
		}
		if path == "" || path[0] != '/' {
			path = "/" + path
		}
		req := &http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: rawQuery}, Header: http.Header{},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, RemoteAddr: "192.0.2.1:1234", Host: "example.com"}
		req = req.WithContext(t.Context())
		if k := keys[int(key)%len(keys)]; k != "" {
			req.Header.Set("Authorization", "Bearer "+k)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q ? %q: %d %s", method, path, rawQuery, rec.Code, rec.Body)
		}
		if rec.Header().Get("X-Request-Id") == "" {
			t.Fatalf("no X-Request-Id")
		}
		body := rec.Body.Bytes()
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("%s %q ? %q: body is not JSON: %q", method, path, rawQuery, body)
		}
		if rec.Code >= 400 {
			var e struct {
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %q ? %q: %d without the error shape: %s", method, path, rawQuery, rec.Code, body)
			}
		}
	})
}

func validToken(s string) bool {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == '(' || c == ')' || c == ',' || c == '/' || c == ':' || c == ';' || c == '<' || c == '>' || c == '"' {
			return false
		}
	}
	return true
}
