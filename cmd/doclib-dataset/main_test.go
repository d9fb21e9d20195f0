package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/demoapi"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/httpapi"
)

const examples = "../../docs/examples"

var fixed = func() time.Time { return time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC) }

// convert runs the command and returns the data set it wrote.
func convert(t *testing.T, args ...string) (file string, stderr string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "out.json")
	var out, errb bytes.Buffer
	if code := run(context.Background(), append(args, "--out", file), &out, &errb, fixed); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return file, errb.String()
}

// get serves file with the real handler and returns the JSON answer to path.
func get(t *testing.T, file, key, path string, want int) map[string]any {
	t.Helper()
	d, err := dataset.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := demoapi.ServiceOf(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{Service: svc}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %v", path, resp.StatusCode, want, body)
	}
	return body
}

func secret(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f dataset.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.APIKeys) != 1 {
		t.Fatalf("%d keys, want 1", len(f.APIKeys))
	}
	return f.APIKeys[0].Secret
}

func TestMinimalExampleIsServed(t *testing.T) {
	file := filepath.Join(examples, "minimal.json")
	lib := get(t, file, "dlk_example_all_libraries_replace_me", "/libraries/helpdesk", 200)
	if lib["id"] != "lib_it" || lib["documentCount"] != 2.0 || lib["edgeCount"] != 1.0 {
		t.Errorf("library by its earlier slug: %v", lib)
	}
	doc := get(t, file, "dlk_example_all_libraries_replace_me", "/documents/doc_reset_password/source-recordings", 200)
	if b := jsonText(doc); !strings.Contains(b, "rec_reset_1") {
		t.Errorf("source recordings: %s", b)
	}
	get(t, file, "dlk_example_it_only_replace_me", "/documents/doc_approve_invoice", 404)
}

func TestFromMarkdownExample(t *testing.T) {
	file, stderr := convert(t, "from-markdown", filepath.Join(examples, "markdown"))
	if !strings.Contains(stderr, "new random secret") {
		t.Errorf("stderr does not say the key is random: %s", stderr)
	}
	// Counts in words that agree with them, and how to get the key.
	if !strings.Contains(stderr, "Wrote 2 libraries and 3 documents") || !strings.Contains(stderr, "export DOCLIB_API_KEY=$(jq -r '.apiKeys[0].secret' "+file+")") {
		t.Errorf("stderr: %s", stderr)
	}
	key := secret(t, file)
	if !regexp.MustCompile(`^dlk_[0-9a-f]{48}$`).MatchString(key) {
		t.Errorf("secret %q is not a random dlk_ secret", key)
	}
	if file2, _ := convert(t, "from-markdown", filepath.Join(examples, "markdown")); secret(t, file2) == key {
		t.Error("two runs wrote the same secret")
	}
	libs := get(t, file, key, "/libraries", 200)
	if b := jsonText(libs); !strings.Contains(b, `"id":"lib_finance"`) || !strings.Contains(b, `"name":"it-operations"`) {
		t.Errorf("libraries: %s", b)
	}
	b := jsonText(get(t, file, key, "/documents/doc_it-operations_003", 200))
	for _, want := range []string{`"title":"Reset a user's password"`, `"Open the Okta admin console and go to Directory > People."`,
		`"summary":"Use this when a user is locked out of Okta and cannot use self-service."`, `"category":"Accounts"`} {
		if !strings.Contains(b, want) {
			t.Errorf("document lacks %s: %s", want, b)
		}
	}
}

// jsonText is v as JSON, without HTML escapes, to look for text in.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return b.String()
}

func TestFromCSVExample(t *testing.T) {
	file, _ := convert(t, "from-csv", filepath.Join(examples, "steps.csv"))
	b := jsonText(get(t, file, secret(t, file), "/documents/doc_sales-operations_001", 200))
	for _, want := range []string{`"title":"Create a quote"`, `"Choose \"Create PDF\" and email it to the customer."`, `"tags":["pricing","quotes"]`} {
		if !strings.Contains(b, want) {
			t.Errorf("document lacks %s: %s", want, b)
		}
	}
}

func TestBadInputIsNamedByFileAndLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no steps", []string{"from-markdown", filepath.Dir(write("a/lib/x.md", "# Title\n\nNo list.\n"))}, "lib/x.md: no numbered list"},
		{"no title", []string{"from-markdown", filepath.Dir(write("b/lib/x.md", "1. a step\n"))}, "lib/x.md:1: no heading"},
		{"front matter key", []string{"from-markdown", filepath.Dir(write("c/lib/x.md", "---\ncategory: A\nowner: me\n---\n# T\n1. s\n"))},
			`lib/x.md:3: front matter key "owner" is not one of library, category, tags, applications`},
		{"csv column", []string{"from-csv", write("d.csv", "library,title,stepz\n")}, `d.csv:1: column "stepz" is not one of`},
		{"csv empty step", []string{"from-csv", write("e.csv", "library,title,step\nL,T,one\nL,T,\n")}, "e.csv:3: step is empty"},
		{"csv fields", []string{"from-csv", write("f.csv", "library,title,step\nL,T,a,b\n")}, "f.csv:2: this row has a different number of fields"},
		{"csv twice", []string{"from-csv", write("g.csv", "library,title,category,step\nL,T,A,one\nL,T,B,two\n")}, `g.csv:3: category of "T" is already given on line 2`},
		{"too long", []string{"from-csv", write("h.csv", "library,title,step\nL,"+strings.Repeat("x", 501)+",one\n")}, "h.csv:2: documents[0]"},
		// Issue 38: a library named in one file's front matter and another's
		// folder, which differ only in case, made the same ID, and the problem
		// named no file.
		{"library twice", []string{"from-markdown", filepath.Dir(write("j/a.md", "---\nlibrary: Onboarding\n---\n# A\n1. s\n")) + write("j/onboarding/b.md", "# B\n1. s\n")[:0]},
			`onboarding/b.md: its library "onboarding" and the library "Onboarding" of `},
		{"library problem", []string{"from-csv", write("k.csv", "library,title,step\n"+strings.Repeat("L", 201)+",T,one\n")}, "k.csv:2: libraries[0]"},
		{"workspace problem", []string{"from-csv", write("l.csv", "library,title,step\nL,T,one\n"), "--workspace-name", strings.Repeat("W", 201)},
			"--workspace, --workspace-name (the workspace, device and key this command makes): workspaces[0]"},
		{"check", []string{"check", write("i.json", `{"workspaces": [{"id": "ws_1", "name": "A", "plan": "gold", "subscription": "active"}]}`)},
			`i.json: data set rejected, nothing was loaded: 1 problem\n  - workspaces[0] (ws_1): plan "gold" is not one of`},
		{"missing", []string{"check", filepath.Join(dir, "nope.json")}, "nope.json does not exist; check the path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), c.args, &out, &errb, fixed); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if want := strings.ReplaceAll(c.want, `\n`, "\n"); !strings.Contains(errb.String(), want) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", errb.String(), want)
			}
		})
	}
}

// TestCountsTakeTheirWords: "Wrote 1 library and 1 document", not "1
// libraries".
func TestCountsTakeTheirWords(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "one.csv")
	if err := os.WriteFile(csv, []byte("library,title,step\nL,T,one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr := convert(t, "from-csv", csv); !strings.Contains(stderr, "Wrote 1 library and 1 document to ") {
		t.Errorf("stderr: %s", stderr)
	}
}
