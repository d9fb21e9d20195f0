package layout_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside matches a reference to the specification the project was written
// from, which lay beside the first checkouts (../shared/spec/read-api.md and
// decisions.md) and which a clone does not have: the project's own API
// reference is docs/api.md, with docs/openapi.yaml and docs/dataset.md. (The
// public test collections and OpenSearch's API description that tools take
// as arguments are inputs a user downloads, not references.)
var outside = regexp.MustCompile(`shared/spec\b|\bread-api\.md\b|\bdecisions\.md\b`)

// TestTheRepositoryIsSelfContained reads every tracked text file: none may
// send the reader to the specification outside the repository.
func TestTheRepositoryIsSelfContained(t *testing.T) {
	dir := root(t)
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	self := filepath.Join("internal", "checks", "layout", "selfcontained_test.go")
	checked := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == self || name == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue // deleted in the work tree, or not a file
		}
		if strings.IndexByte(string(b[:min(len(b), 8000)]), 0) >= 0 {
			continue // binary
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d names a file outside the repository (cite docs/api.md, docs/openapi.yaml or docs/dataset.md): %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d files read: the listing is wrong", checked)
	}
}
