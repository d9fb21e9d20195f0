package main

import (
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: --version says which build it is. Issue 38: it said "dev"
// for every build but one installed at a release.
func TestVersion(t *testing.T) {
	for v, want := range map[string]string{"": "", "(devel)": "", "v1.2.3": "v1.2.3",
		"v0.0.0-20261128093839-ac4db668a73b+dirty": "v0.0.0-20261128093839-ac4db668a73b+dirty"} {
		if got := stampedVersion(&debug.BuildInfo{Main: debug.Module{Version: v}}); got != want {
			t.Errorf("recorded %q: %q, want %q", v, got, want)
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git to describe the checkout")
	}
	if err := exec.Command("git", "rev-parse", "--git-dir").Run(); err != nil {
		t.Skip("not in a git checkout")
	}
	// A build that recorded no version (go run, -buildvcs=false) names the
	// checkout's commit.
	if got := checkoutVersion(); !regexp.MustCompile(`^dev \([0-9a-zA-Z._-]+\)$`).MatchString(got) {
		t.Errorf("checkoutVersion() = %q, want dev (<commit>)", got)
	}
	// The binary, built as go build builds it here: a recorded version or
	// the commit, never "dev" alone.
	out, err := exec.Command(doclibBinary(t), "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "doclib version ") || strings.TrimSpace(string(out)) == "doclib version dev" {
		t.Errorf("doclib --version: %q, %v", out, err)
	}
}

// TestPageOutOfRangeSaysSo: piped, a page past the last one prints no line
// and exits 0, as gh answers a list with nothing in it, and says so on
// stderr, which is all that tells it from an empty library. At a terminal
// the footer says it.
func TestPageOutOfRangeSaysSo(t *testing.T) {
	c := newCLI(t, apiSrv.URL, full)
	c.piped = true
	for _, args := range [][]string{{"documents", "it-operations", "--page", "99"}, {"search", "reset password", "--page", "99"}, {"recordings", "doc_it_001", "--page", "99"}} {
		r := c.run(args...)
		// recordings writes text, not lines of items: its heading stays.
		lines := args[0] != "recordings" && r.stdout != ""
		if r.code != 0 || lines || !strings.Contains(r.stderr, "doclib: --page 99 is past the last page, ") || !strings.Contains(r.stderr, "Try --page ") {
			t.Errorf("%v: %s", args, r)
		}
	}
	if r := c.run("documents", "it-operations", "--page", "1"); r.code != 0 || strings.Contains(r.stderr, "past the last page") {
		t.Errorf("page 1: %s", r)
	}
	c.piped = false
	if r := c.run("documents", "it-operations", "--page", "99"); !strings.Contains(r.stdout, "past the last page") || r.stderr != "" {
		t.Errorf("at a terminal: %s", r)
	}
}
