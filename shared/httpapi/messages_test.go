package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/httpapi"
)

// leaks are what a message must never hold: library internals a user cannot
// act on.
var leaks = []string{`\u003c`, `\u003e`, `\u0026`, "strconv", "parse", "invalid syntax", "context deadline",
	"context canceled", "reflect", "%!", "json:", "<nil>", "runtime error", "goroutine"}

// goTypeName matches a qualified Go name such as url.EscapeError or
// *doclib.Error.
var goTypeName = regexp.MustCompile(`\*?\b[a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]*\b`)

// Every endpoint, sent every kind of bad input, answers below 500 in the
// error shape with a message in the user's terms: no Go error text, no
// escaped HTML, no type names, and not the whole of a huge value back.
func TestBadInputMessages(t *testing.T) {
	s := newServer(t, options{noLimiter: true})
	huge := strings.Repeat("x", 5000)
	bad := []string{
		"page=abc", "page=-1", "page=0", "page=1.5", "page=+2", "page=0x10", "page=1e3", "page=", "page=%E2%88%9E",
		"pageSize=abc", "pageSize=-99999999999999999999999", "pageSize=0",
		"page=1&page=2", "pageSize=1&pageSize=1",
		"%zz", "a=%zz", "page=1;pageSize=2", "search=%ff",
		"search=" + huge, "category=" + huge,
	}
	perPath := map[string][]string{
		"/documents/{id}/traverse": {"depth=abc", "depth=0", "depth=4", "depth=99999999999999999999", "depth=-1", "depth=%00",
			"direction=sideways", "direction=OUTGOING", "direction=" + huge, "direction=a&direction=b", "depth=1&depth=1"},
		"/search/documents": {"", "q=", "q=%20", "q=" + huge, "q=a&q=b", "q=okta&libraryId=ops", "q=okta&libraryId=lib_zzz",
			"q=okta&libraryId=" + huge, "q=okta&libraryId=%3Cscript%3E", "q=okta&page=abc", "q=okta&pageSize=99999999999999999999x"},
	}
	ids := []string{"nope", "lib_zzz", "doc_zzz", "%3Cscript%3E", "%00", "%E2%80%AE", huge, "doc_a1_1%22%7D"}
	auths := [][]string{nil, {"Basic abc"}, {"Bearer"}, {"Bearer  "}, {"Token " + fixture.KeyFull}, {"Bearer <API_KEY>"},
		{"Bearer " + fixture.KeyFull, "Bearer " + fixture.KeyFull}, {"Bearer caf\u00e9"}, {"Bearer " + huge}}

	n := 0
	for _, rt := range httpapi.Routes {
		path := strings.ReplaceAll(rt.Path, "{id}", "lib_a1")
		if strings.HasPrefix(rt.Path, "/documents/") {
			path = strings.ReplaceAll(rt.Path, "{id}", "doc_a1_1")
		}
		for _, q := range append(bad, perPath[rt.Path]...) {
			checkMessage(t, s, path+"?"+q, []string{"Bearer " + fixture.KeyFull})
			n++
		}
		if strings.Contains(rt.Path, "{id}") {
			for _, id := range ids {
				checkMessage(t, s, strings.ReplaceAll(rt.Path, "{id}", id), []string{"Bearer " + fixture.KeyFull})
				n++
			}
		}
		for _, a := range auths {
			checkMessage(t, s, path, a)
			n++
		}
		checkMessage(t, s, path+"/"+huge, []string{"Bearer " + fixture.KeyFull})
		checkMessage(t, s, path, []string{"Bearer " + fixture.KeyNoRecording}) // 403 on source recordings
		n += 2
	}
	t.Logf("%d requests checked", n)
}

// checkMessage sends a GET and checks its error body, if any. Only a backend
// failure (serverError) may answer 5xx.
func checkMessage(t *testing.T, s *testServer, target string, auth []string, serverError ...bool) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header["Authorization"] = auth
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	name := target[:min(len(target), 100)]
	if resp.StatusCode >= 500 && len(serverError) == 0 {
		t.Errorf("%s: %d %s", name, resp.StatusCode, raw)
	}
	if resp.StatusCode < 400 {
		return
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Errorf("%s: %d body is not the error shape: %s", name, resp.StatusCode, raw)
		return
	}
	for _, leak := range leaks {
		if strings.Contains(string(raw), leak) {
			t.Errorf("%s: body holds %q: %s", name, leak, raw)
		}
	}
	if m := goTypeName.FindString(e.Error.Message); m != "" {
		t.Errorf("%s: message names %q: %s", name, m, e.Error.Message)
	}
	if len(e.Error.Message) > 1000 {
		t.Errorf("%s: message of %d bytes echoes too much: %.200s", name, len(e.Error.Message), e.Error.Message)
	}
}

// slowStore fails every document read as a backend that ran out of time, or
// was cut short, fails: with the context's error wrapped in its own.
type slowStore struct {
	doclib.Store
	err error
}

func (s slowStore) DocumentsWithEdges(context.Context, []string, *doclib.Scope) (map[string]*doclib.Document, map[string]*doclib.DocumentEdges, error) {
	return nil, nil, fmt.Errorf("dynamo: get document: operation error DynamoDB: Query, %w", s.err)
}

// A backend that times out or is cancelled answers 503 unavailable with a
// sentence, never the context's own words.
func TestBackendTimeoutMessage(t *testing.T) {
	for _, cause := range []error{context.DeadlineExceeded, context.Canceled} {
		s := newServer(t, options{wrap: func(st doclib.Store) doclib.Store { return slowStore{st, cause} }})
		for _, path := range []string{"/documents/doc_a1_1", "/documents/doc_a1_1/traverse", "/documents/doc_a1_1/source-recordings"} {
			r := s.get(t, fixture.KeyFull, path)
			if r.status != http.StatusServiceUnavailable || errorCode(t, r) != doclib.EUnavailable {
				t.Errorf("%v on %s: %d %s, want 503 unavailable", cause, path, r.status, r.body)
			}
			checkMessage(t, s, path, []string{"Bearer " + fixture.KeyFull}, true)
		}
	}
}
