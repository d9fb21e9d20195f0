package main

// TestMCPConformance runs the server scenarios of the MCP conformance tool
// (@modelcontextprotocol/conformance, a Node.js program nobody here wrote)
// against the /mcp of a running doclib-server. scripts/tools installs the tool
// and the Node 22 it needs into .tools/conformance and exports their paths;
// the test skips without them unless DOCLIB_REQUIRE_MCP_CONFORMANCE is set
// (scripts/test sets it), in which case it fails. docs/mcp.md, section
// "Conformance", lists the results and says why the scenarios that do not
// apply do not.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/data/demo"
)

// Environment variables read by the conformance test (scripts/tools sets them).
const (
	// envConformance is the path of the tool's entry script
	// (node_modules/@modelcontextprotocol/conformance/dist/index.js).
	envConformance = "DOCLIB_MCP_CONFORMANCE"
	// envNode22 is the Node 22 that runs it (the tool crashes on Node 20);
	// without it, the node on PATH if that is Node 22 or newer.
	envNode22 = "DOCLIB_NODE22"
	// envRequireConformance turns a missing tool from a skip into a failure,
	// so that CI cannot pass by skipping the conformance test.
	envRequireConformance = "DOCLIB_REQUIRE_MCP_CONFORMANCE"
	// conformanceTimeout bounds one run of the tool (one scenario).
	conformanceTimeout = 2 * time.Minute
)

// conformanceApplies are the server scenarios of the tool that apply to
// doclib's /mcp: the test fails if one of their checks fails or warns,
// unless conformanceExpected names that check.
var conformanceApplies = []string{
	"server-initialize",
	"ping",
	"logging-set-level",
	"tools-list",
	"resources-list",
	"prompts-list",
	"server-sse-polling",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

// conformanceNoKey are the applicable scenarios that run against /mcp
// directly, without the proxy that adds the API key: the request a
// DNS-rebinding page makes carries no key, since a bearer key, unlike a
// cookie, is not something a browser adds by itself.
var conformanceNoKey = []string{"dns-rebinding-protection"}

// conformanceExpected are the checks of applicable scenarios that do not
// succeed by design, by scenario and check ID, with the reason. An entry
// whose check succeeds, or no longer runs, fails the test: the list (and
// docs/mcp.md) must then be brought up to date.
var conformanceExpected = map[string]string{
	"server-sse-polling/server-sse-polling-session": "WARNING: /mcp is stateless and issues no Mcp-Session-Id, " +
		"so there is no session to resume (docs/mcp.md); the scenario goes on without one",
	"server-sse-multiple-streams/server-sse-multiple-streams-session": "WARNING: /mcp is stateless and issues no Mcp-Session-Id; " +
		"the scenario posts its concurrent requests only with a session ID, so it stops there",
	"dns-rebinding-protection/localhost-host-valid-accepted": "FAILURE: the scenario's own request with a localhost Host carries " +
		"no API key (the tool cannot send one), and /mcp answers every request without a key 401",
}

// conformanceNotApplicable are the tool's other server scenarios, with why
// they do not apply. They are not run. Every server scenario of the tool is
// in conformanceApplies or here: a new version of the tool with another
// scenario fails the test until the scenario is placed.
var conformanceNotApplicable = map[string]string{
	"completion-complete": "completes an argument of the reference server's prompt test_prompt_with_arguments; " +
		"doclib has no prompts and declares no completions capability",
	"tools-call-simple-text":        "calls the reference server's tool test_simple_text; doclib's tools are its own (docs/mcp.md)",
	"tools-call-image":              "calls the reference server's tool test_image_content; doclib's tools return no images",
	"tools-call-audio":              "calls the reference server's tool test_audio_content; doclib's tools return no audio",
	"tools-call-embedded-resource":  "calls the reference server's tool test_embedded_resource; doclib's tools embed no resources",
	"tools-call-mixed-content":      "calls the reference server's tool test_multiple_content_types; doclib's tools answer text and structured content",
	"tools-call-with-logging":       "calls the reference server's tool test_tool_with_logging; a stateless JSON answer carries no notifications",
	"tools-call-error":              "calls the reference server's tool test_error_handling; doclib's tool errors are tested in shared/clients/mcpserver",
	"tools-call-with-progress":      "calls the reference server's tool test_tool_with_progress; a stateless JSON answer carries no progress notifications",
	"tools-call-sampling":           "calls the reference server's tool test_sampling; doclib never asks the client to sample",
	"tools-call-elicitation":        "calls the reference server's tool test_elicitation; doclib never elicits input",
	"elicitation-sep1034-defaults":  "calls the reference server's tool test_elicitation_sep1034_defaults; doclib never elicits input",
	"elicitation-sep1330-enums":     "calls the reference server's tool test_elicitation_sep1330_enums; doclib never elicits input",
	"json-schema-2020-12":           "lists the reference server's tool json_schema_2020_12_tool; doclib has no such tool",
	"resources-read-text":           "reads the reference server's resource test://static-text; doclib serves no resources",
	"resources-read-binary":         "reads the reference server's resource test://static-binary; doclib serves no resources",
	"resources-templates-read":      "reads the reference server's resource template test://template/{id}/data; doclib serves no resources",
	"resources-subscribe":           "subscribes to a reference server's resource; doclib serves no resources, and a stateless server keeps no subscriptions",
	"resources-unsubscribe":         "unsubscribes from a reference server's resource; doclib serves no resources",
	"prompts-get-simple":            "gets the reference server's prompt test_simple_prompt; doclib has no prompts",
	"prompts-get-with-args":         "gets the reference server's prompt test_prompt_with_arguments; doclib has no prompts",
	"prompts-get-embedded-resource": "gets the reference server's prompt test_prompt_with_embedded_resource; doclib has no prompts",
	"prompts-get-with-image":        "gets the reference server's prompt test_prompt_with_image; doclib has no prompts",
}

func TestMCPConformance(t *testing.T) {
	node, tool := conformanceTool(t)

	// Every server scenario of the tool is placed.
	listed := conformanceServerScenarios(t, node, tool)
	for _, s := range listed {
		_, skip := conformanceNotApplicable[s]
		if !slices.Contains(conformanceApplies, s) && !skip {
			t.Errorf("the conformance tool has a server scenario %q that the test does not place: "+
				"add it to conformanceApplies or conformanceNotApplicable (with why), and to docs/mcp.md", s)
		}
	}
	for _, s := range append(slices.Collect(maps.Keys(conformanceNotApplicable)), conformanceApplies...) {
		if !slices.Contains(listed, s) {
			t.Errorf("the test places scenario %q, which the conformance tool no longer has", s)
		}
	}

	base, _, stop := start(t, "--addr", "127.0.0.1:0")
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop the server: %v", err)
		}
	})
	// The tool has no way to send an Authorization header (no option, no
	// variable): a proxy in front of the server adds the full-scope demo key
	// to every request and changes nothing else (the Host header reaches the
	// server as the tool sent it).
	proxied := keyProxy(t, base, fullScopeKey(t))

	seen := map[string]bool{}
	for _, scenario := range conformanceApplies {
		t.Run(scenario, func(t *testing.T) {
			mcpURL := proxied + "/mcp"
			if slices.Contains(conformanceNoKey, scenario) {
				mcpURL = base + "/mcp"
			}
			checks := runConformance(t, node, tool, mcpURL, scenario)
			succeeded := 0
			for _, c := range checks {
				id := scenario + "/" + c.ID
				why, expected := conformanceExpected[id]
				switch c.Status {
				case "SUCCESS":
					succeeded++
					if expected {
						t.Errorf("%s succeeds now; remove it from conformanceExpected and from docs/mcp.md (it said: %s)", id, why)
					}
				case "FAILURE", "WARNING":
					if expected {
						t.Logf("%s %s, as expected: %s", id, c.Status, why)
					} else {
						t.Errorf("%s %s: %s: %s\ndetails: %s", id, c.Status, c.Description, c.ErrorMessage, c.Details)
					}
				default: // INFO: what the tool saw
				}
				if expected {
					seen[id] = true
				}
			}
			t.Logf("%s: %d checks, %d succeeded", scenario, len(checks), succeeded)
		})
	}
	for id, why := range conformanceExpected {
		if !seen[id] {
			t.Errorf("the expected non-success %s (%s) did not occur: remove it from conformanceExpected and docs/mcp.md", id, why)
		}
	}
}

// conformanceCheck is one check of a scenario, as the tool writes it to
// checks.json.
type conformanceCheck struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Status       string          `json:"status"` // SUCCESS, FAILURE, WARNING or INFO
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// conformanceTool returns the Node 22 and the tool's entry script, or skips
// (or fails) the test.
func conformanceTool(t *testing.T) (node, tool string) {
	t.Helper()
	unavailable := func(why string) {
		t.Helper()
		if os.Getenv(envRequireConformance) != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	tool = os.Getenv(envConformance)
	if tool == "" {
		unavailable(envConformance + " is not set: run `source scripts/tools conformance` (or ./scripts/test), which installs the MCP conformance tool")
	}
	if _, err := os.Stat(tool); err != nil {
		unavailable("the MCP conformance tool is not installed (" + err.Error() + "): run scripts/tools conformance")
	}
	node = os.Getenv(envNode22)
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			unavailable("no " + envNode22 + " and no node on PATH: the MCP conformance tool is a Node.js program")
		}
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		unavailable("run " + node + " --version: " + err.Error())
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	if major, _ := strconv.Atoi(strings.Split(v, ".")[0]); major < 22 {
		unavailable(node + " is Node " + v + "; the MCP conformance tool needs Node 22 or newer: set " + envNode22)
	}
	return node, tool
}

// conformanceEnv is the environment of the tool: its own HOME, and none of
// our DOCLIB_ variables or the tool's MCP_ ones.
func conformanceEnv(t *testing.T) []string {
	env := []string{"HOME=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCLIB_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "MCP_") {
			env = append(env, kv)
		}
	}
	return env
}

// runTool runs the tool with args, time-boxed, and returns its exit code
// and output (stdout and stderr together).
func runTool(t *testing.T, node, tool string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{tool}, args...)...)
	cmd.Env = conformanceEnv(t)
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the conformance tool did not finish within %s: %v\n%s", conformanceTimeout, args, out.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	default:
		t.Fatalf("run the conformance tool: %v", err)
		return 0, ""
	}
}

var (
	scenarioLine = regexp.MustCompile(`^\s+- (\S+)`)
	// ansiEscape is a terminal colour: the tool colours its report always.
	ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// conformanceServerScenarios lists the tool's server scenarios (all suites).
func conformanceServerScenarios(t *testing.T, node, tool string) []string {
	t.Helper()
	code, out := runTool(t, node, tool, "list", "--server")
	if code != 0 {
		t.Fatalf("conformance list --server: exit %d\n%s", code, out)
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if m := scenarioLine.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --server listed no scenarios:\n%s", out)
	}
	return names
}

// runConformance runs one server scenario against mcpURL and returns its
// checks. The tool exits 1 when a check fails; which failures matter is the
// caller's to say, from the checks.
func runConformance(t *testing.T, node, tool, mcpURL, scenario string) []conformanceCheck {
	t.Helper()
	dir := t.TempDir()
	code, out := runTool(t, node, tool, "server", "--url", mcpURL, "--scenario", scenario, "--output-dir", dir)
	t.Logf("conformance server --scenario %s: exit %d\n%s", scenario, code, ansiEscape.ReplaceAllString(out, ""))
	found, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if len(found) != 1 {
		t.Fatalf("the conformance tool wrote %d checks.json for %s, want 1 (exit %d)", len(found), scenario, code)
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("%s: %v", found[0], err)
	}
	if len(checks) == 0 {
		t.Fatalf("scenario %s made no checks", scenario)
	}
	for _, c := range checks {
		if strings.Contains(string(c.Details), fullScopeKey(t)) || strings.Contains(c.ErrorMessage, fullScopeKey(t)) {
			t.Errorf("the API key appears in the checks of %s: the proxy must add it after the tool", scenario)
		}
	}
	return checks
}

// keyProxy serves, on a loopback address of its own, every request by
// forwarding it to base with the header "Authorization: Bearer key" added,
// and returns its URL. The Host header is forwarded as received.
func keyProxy(t *testing.T, base, key string) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = target.Scheme, target.Host
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+key)
		},
		FlushInterval: -1, // event streams as they come
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// fullScopeKey is the demo key that sees everything.
func fullScopeKey(t *testing.T) string {
	t.Helper()
	for _, k := range demo.Keys {
		if k.Name == "full" {
			return k.Secret
		}
	}
	t.Fatal("no demo key named full")
	return ""
}
