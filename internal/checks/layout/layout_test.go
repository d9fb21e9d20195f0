// Package layout_test checks that the package maps in README.md and
// docs/design.md match the packages go list reports: a map that names a
// package that is gone, or misses a new one, fails here rather than mislead a
// newcomer.
package layout_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module's folder.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// packages are the module's packages, as paths relative to its root.
func packages(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var rel []string
	for _, d := range strings.Fields(string(out)) {
		r, err := filepath.Rel(dir, d)
		if err != nil {
			t.Fatal(err)
		}
		if r != "." {
			rel = append(rel, filepath.ToSlash(r))
		}
	}
	return rel
}

// section returns the lines of the fenced block under the heading of file.
func section(t *testing.T, file, heading string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	in, fenced := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case in && fenced && !strings.HasPrefix(line, "```"):
			lines = append(lines, line)
		case strings.HasPrefix(line, "#"):
			if in && !fenced {
				return lines
			}
			in = strings.TrimLeft(line, "# ") == heading
		case in && strings.HasPrefix(line, "```"):
			if fenced {
				return lines
			}
			fenced = true
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s: no code block under %q", file, heading)
	}
	return lines
}

// entries are the paths a map's lines start with: "shared/api   the wire
// types" names shared/api; "a, b   text" names a and b; a path ending in "/"
// names a folder and every package below it; "# Clients" is a heading.
func entries(lines []string) []string {
	var out []string
	for _, line := range lines {
		if strings.HasPrefix(line, "#") {
			continue
		}
		head, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
		for _, p := range strings.Split(head, ", ") {
			if p = strings.TrimSpace(p); p != "" && !strings.ContainsAny(p, " |") {
				out = append(out, p)
			}
		}
	}
	return out
}

func TestREADMELayoutMatchesGoList(t *testing.T) {
	dir := root(t)
	pkgs := packages(t, dir)
	named := entries(section(t, filepath.Join(dir, "README.md"), "Layout"))
	covered := func(p string) bool {
		for _, e := range named {
			if e == p || (strings.HasSuffix(e, "/") && strings.HasPrefix(p+"/", e)) {
				return true
			}
		}
		return false
	}
	for _, p := range pkgs {
		if !covered(p) {
			t.Errorf("README.md's Layout does not name %s", p)
		}
	}
	for _, e := range named {
		if strings.HasSuffix(e, "/") {
			if st, err := os.Stat(filepath.Join(dir, e)); err != nil || !st.IsDir() {
				t.Errorf("README.md's Layout names %s, which is not a folder", e)
			}
		} else if !slices.Contains(pkgs, e) {
			t.Errorf("README.md's Layout names %s, which is not a package", e)
		}
	}
}

var sharedPath = regexp.MustCompile(`shared(/[a-z][a-z0-9]*)*`)

func TestDesignPackageMapMatchesGoList(t *testing.T) {
	dir := root(t)
	var shared []string
	for _, p := range packages(t, dir) {
		if p == "shared" || strings.HasPrefix(p, "shared/") {
			shared = append(shared, p)
		}
	}
	named := map[string]bool{}
	for _, line := range section(t, filepath.Join(dir, "docs", "design.md"), "Packages") {
		for _, m := range sharedPath.FindAllString(line, -1) {
			named[m] = true
		}
	}
	for _, p := range shared {
		if !named[p] {
			t.Errorf("docs/design.md's package map does not name %s", p)
		}
	}
	for p := range named {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || !st.IsDir() {
			t.Errorf("docs/design.md's package map names %s, which is not a folder", p)
		} else if !slices.Contains(shared, p) && !isGroup(dir, p) {
			t.Errorf("docs/design.md's package map names %s, which is neither a package nor a group of packages", p)
		}
	}
}

// isGroup reports whether p is a folder that only groups packages.
func isGroup(dir, p string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, p, "*.go"))
	return len(files) == 0
}
