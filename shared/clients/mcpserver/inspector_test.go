package mcpserver

// These tests drive the server with a real MCP client nobody here wrote: the
// MCP inspector (@modelcontextprotocol/inspector) in CLI mode, a Node.js
// program that ./scripts/test installs into .tools/inspector. They skip when
// it is missing, unless DOCLIB_REQUIRE_MCP_INSPECTOR is set (./scripts/test
// sets it), in which case they fail.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpinspector "github.com/doclib/doclib/internal/suites/inspector"
)

// inspector returns the inspector's executable, or skips (or fails) the test.
func inspector(t *testing.T) string { return mcpinspector.Path(t) }

// inspectorRun is one run of the inspector CLI.
type inspectorRun struct {
	exit   int
	stdout []byte
	stderr string
}

// runInspector runs `mcp-inspector --cli args...` (mcpinspector.Run),
// checking that no demo key it may carry is in its output.
func runInspector(t *testing.T, bin string, args ...string) inspectorRun {
	t.Helper()
	r := mcpinspector.Run(t, bin, []string{keyFull, keyOneLibrary, keyNoAICredit}, args...)
	return inspectorRun{exit: r.Exit, stdout: r.Stdout, stderr: r.Stderr}
}

// inspectorResult is what the inspector prints for tools/call.
type inspectorResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r inspectorRun) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.stdout, v); err != nil {
		t.Fatalf("the inspector's output (exit %d) is not the JSON expected: %v\nstdout:\n%s\nstderr:\n%s", r.exit, err, r.stdout, r.stderr)
	}
}

func (r inspectorRun) call(t *testing.T) inspectorResult {
	t.Helper()
	var res inspectorResult
	r.decode(t, &res)
	if res.IsError || r.exit != 0 {
		t.Fatalf("tool error (exit %d): %s\nstderr:\n%s", r.exit, r.stdout, r.stderr)
	}
	return res
}

func (r inspectorResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// checkWithInspector runs the same checks over any transport: target is
// what follows --cli on the inspector's command line.
func checkWithInspector(t *testing.T, bin string, target ...string) {
	run := func(args ...string) inspectorRun {
		t.Helper()
		return runInspector(t, bin, append(slices.Clone(target), args...)...)
	}

	t.Run("tools/list", func(t *testing.T) {
		var list struct {
			Tools []struct {
				Name         string         `json:"name"`
				InputSchema  map[string]any `json:"inputSchema"`
				OutputSchema map[string]any `json:"outputSchema"`
			} `json:"tools"`
		}
		r := run("--method", "tools/list", "--strict")
		if r.exit != 0 {
			t.Fatalf("tools/list --strict: exit %d (6 means a schema portability error)\n%s", r.exit, r.stderr)
		}
		r.decode(t, &list)
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
			if tool.OutputSchema == nil {
				t.Errorf("%s: no output schema", tool.Name)
			}
			if tool.Name == "search_documents" {
				q, _ := tool.InputSchema["properties"].(map[string]any)["query"].(map[string]any)
				if q["minLength"] != 2.0 || q["maxLength"] != 512.0 {
					t.Errorf("search_documents.query as the inspector sees it: %v", q)
				}
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, toolNames) {
			t.Errorf("tools %v, want %v", names, toolNames)
		}
		// --strict reports portability problems on stderr: there are none.
		if strings.Contains(r.stderr, "Warning: tool") {
			t.Errorf("the inspector warns about the schemas:\n%s", r.stderr)
		}
	})

	t.Run("search_documents", func(t *testing.T) {
		res := run("--method", "tools/call", "--tool-name", "search_documents", "--tool-arg", "query=reset password").call(t)
		var out struct {
			Hits []struct {
				ID      string   `json:"id"`
				Title   string   `json:"title"`
				Signals []string `json:"signals"`
			} `json:"hits"`
			LowConfidence bool `json:"lowConfidence"`
		}
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
			t.Fatalf("structuredContent: %v\n%s", err, res.StructuredContent)
		}
		if out.LowConfidence || len(out.Hits) == 0 || !strings.Contains(strings.ToLower(out.Hits[0].Title), "password") || len(out.Hits[0].Signals) == 0 {
			t.Fatalf("search for reset password: %+v", out)
		}
		if !strings.Contains(res.text(), out.Hits[0].Title) || !strings.Contains(res.text(), out.Hits[0].ID) {
			t.Errorf("text lacks the first hit:\n%s", res.text())
		}
	})

	t.Run("get_document", func(t *testing.T) {
		res := run("--method", "tools/call", "--tool-name", "get_document", "--tool-arg", "id=doc_it_001").call(t)
		var doc struct {
			Title   string            `json:"title"`
			Content map[string]any    `json:"content"`
			Library map[string]string `json:"library"`
		}
		if err := json.Unmarshal(res.StructuredContent, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Title != "Reset a user's password in Okta" || doc.Library["id"] != "lib_it" || doc.Content["summary"] == nil {
			t.Errorf("document %+v", doc)
		}
		text := res.text()
		if !strings.HasPrefix(text, "# Reset a user's password in Okta") || !strings.Contains(text, "## Steps\n1. ") ||
			strings.Index(text, "## Summary") > strings.Index(text, "## Steps") {
			t.Errorf("text:\n%s", text)
		}
	})

	t.Run("errors are tool errors", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--tool-name", "get_document", "--tool-arg", "id=doc_x"}, "not_found: "},
			{[]string{"--tool-name", "search_documents", "--tool-arg", "query=a"}, "bad_request: "},
			// Argument errors name the argument and what it takes, in words.
			{[]string{"--tool-name", "search_documents", "--tool-arg", "query=reset password", "--tool-arg", "pageSize=500"},
				"bad_request: pageSize must be a whole number from 1 to 100, not 500."},
			{[]string{"--tool-name", "traverse_graph", "--tool-arg", "id=doc_it_001", "--tool-arg", "direction=sideways"},
				`bad_request: direction must be one of outgoing, incoming, both, not "sideways".`},
			{[]string{"--tool-name", "get_source_recordings", "--tool-arg", "id=doc_it_001", "--tool-arg", "extra=1"},
				`bad_request: "extra" is not an argument of this tool; it takes id, page, pageSize.`},
		} {
			r := run(append([]string{"--method", "tools/call"}, tc.args...)...)
			var res inspectorResult
			r.decode(t, &res)
			if r.exit == 0 || !res.IsError || !strings.HasPrefix(res.text(), tc.want) {
				t.Errorf("%v: exit %d, isError %v, text %q; want a tool error starting %q", tc.args, r.exit, res.IsError, res.text(), tc.want)
			}
			for _, bad := range internals {
				if strings.Contains(res.text(), bad) {
					t.Errorf("%v: %q shows %q", tc.args, res.text(), bad)
				}
			}
		}
	})
}

// The inspector against Run's streamable HTTP transport, in process.
func TestInspectorOverHTTP(t *testing.T) {
	bin := inspector(t)
	url, _, _ := runHTTP(t, newAPI(t))
	checkWithInspector(t, bin, url, "--transport", "http")
}

// The inspector starting `doclib mcp` as a child over stdio, as an agent's
// MCP configuration does. It needs the CLI (cmd/doclib), built here.
func TestInspectorOverStdioWithDoclibMCP(t *testing.T) {
	bin := inspector(t)
	root := mcpinspector.ModuleRoot(t)
	if _, err := os.Stat(filepath.Join(root, "cmd", "doclib")); err != nil {
		t.Skip("cmd/doclib does not exist yet: `doclib mcp` cannot be tested over stdio")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		mcpinspector.Unavailable(t, "go is not on PATH: cannot build cmd/doclib")
	}
	doclib := filepath.Join(t.TempDir(), "doclib")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", doclib, "./cmd/doclib")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cmd/doclib does not build yet, so `doclib mcp` is not tested over stdio: %v\n%s", err, out)
	}
	a := newAPI(t)
	// The inspector passes the child only a default environment and these.
	checkWithInspector(t, bin, "-e", "DOCLIB_URL="+a.URL, "-e", "DOCLIB_API_KEY="+keyFull, doclib, "mcp")

	// Without a key it still serves: the tools are listed, and every call
	// says which variable to set and where.
	t.Run("no API key", func(t *testing.T) {
		r := runInspector(t, bin, "-e", "DOCLIB_URL="+a.URL, doclib, "mcp", "--method", "tools/list")
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		r.decode(t, &list)
		if r.exit != 0 || len(list.Tools) != len(toolNames) {
			t.Fatalf("tools/list without a key: exit %d, %d tools\n%s", r.exit, len(list.Tools), r.stderr)
		}
		for _, tool := range []string{"list_libraries", "get_document"} {
			r := runInspector(t, bin, "-e", "DOCLIB_URL="+a.URL, doclib, "mcp", "--method", "tools/call", "--tool-name", tool, "--tool-arg", "id=doc_it_001")
			var res inspectorResult
			r.decode(t, &res)
			if !res.IsError || !strings.HasPrefix(res.text(), "missing_api_key: ") ||
				!strings.Contains(res.text(), `"env": {"DOCLIB_API_KEY": "YOUR_KEY"}`) {
				t.Errorf("%s without a key: isError %v, %q", tool, res.IsError, res.text())
			}
		}
	})

	// Scope holds through the whole chain.
	r := runInspector(t, bin, "-e", "DOCLIB_URL="+a.URL, "-e", "DOCLIB_API_KEY="+keyOneLibrary, doclib, "mcp",
		"--method", "tools/call", "--tool-name", "list_libraries")
	var libs struct {
		Libraries []struct {
			ID string `json:"id"`
		} `json:"libraries"`
	}
	if err := json.Unmarshal(r.call(t).StructuredContent, &libs); err != nil || len(libs.Libraries) != 1 || libs.Libraries[0].ID != "lib_finance" {
		t.Errorf("one-library key: %+v %v", libs, err)
	}
}
