package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// internals are what no message may show: Go's error texts, type names and
// formatting slips, which say nothing a user can act on.
var internals = []string{"context deadline exceeded", "context canceled", "strconv.", "dial tcp", "%!", "reflect",
	"*url.Error", "net.OpError", "json: cannot unmarshal", "main.", "client: ", "gojq", "<nil>", "invalid syntax"}

// TestMessagesSayWhatToDo runs commands with bad input and checks that each
// message names the mistake and what to do, in the user's terms.
func TestMessagesSayWhatToDo(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	// Answers when the client gives up (its --timeout 100ms), or after a
	// minute with an empty 200, which is no timeout: a busy machine cannot
	// make the client's timeout look like the server's answer.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	defer slow.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"libraries": "not a list"}`))
	}))
	defer other.Close()
	for _, c := range []struct {
		name string
		url  string
		args []string
		code int
		want []string
	}{
		{"unknown flag", "", []string{"libraries", "--bogus"}, 2, []string{"unknown flag: --bogus", "doclib libraries --help"}},
		{"not a number", "", []string{"traverse", "doc_it_001", "--depth", "two"}, 2, []string{`--depth takes a whole number such as 2, not "two"`}},
		{"not a duration", "", []string{"libraries", "--timeout", "soon"}, 2, []string{`--timeout takes a duration such as 30s or 2m, not "soon"`}},
		{"unknown library", "", []string{"documents", "no-such-library"}, 1, []string{"not_found", "doclib libraries"}},
		{"unknown library on search", "", []string{"search", "okta", "--library", "no-such-library"}, 1, []string{"not_found", "lib_… ID or a slug"}},
		{"unknown document", "", []string{"document", "doc_nope"}, 1, []string{"not_found", "starts with doc_", "doclib search"}},
		{"no fields", "", []string{"documents", "lib_it", "--json"}, 2, []string{"Specify one or more comma-separated fields for --json:", "\n  title\n"}},
		{"bad field", "", []string{"documents", "lib_it", "--json", "id,name"}, 2, []string{`unknown JSON field "name"`, "\n  title\n"}},
		{"bad jq", "", []string{"libraries", "--json", "id", "--jq", ".[] |"}, 2, []string{`--jq ".[] |" is not a jq expression`, "jqlang.org/manual"}},
		{"jq fails", "", []string{"libraries", "--json", "id", "--jq", ".id"}, 2, []string{`--jq ".id" failed on the output`}},
		{"jq alone", "", []string{"libraries", "--jq", ".[]"}, 2, []string{"name the fields with --json too"}},
		{"unreachable", closed.URL, []string{"libraries"}, 3, []string{"cannot reach the API at " + closed.URL, "nothing is listening there", "check the URL"}},
		{"not a doclib API", other.URL, []string{"libraries"}, 1, []string{"is not what a doclib API sends", "check that the URL is the API's base URL"}},
		{"timeout", slow.URL, []string{"libraries", "--timeout", "100ms", "--retries", "0"}, 3, []string{"did not answer in time", "--timeout 2m"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := c.url
			if url == "" {
				url = apiSrv.URL
			}
			r := newCLI(t, url, full).run(c.args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, c.code, r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("no %q in stderr:\n%s", w, r.stderr)
				}
			}
			for _, bad := range internals {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("stderr shows %q:\n%s", bad, r.stderr)
				}
			}
		})
	}
}
