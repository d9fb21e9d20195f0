package layout_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/doclib/doclib"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath, Name string
	Imports          []string // of its non-test files
	Deps             []string // everything it links, transitively
}

// list runs go list -json -deps=false over patterns, from the module's root.
func list(t *testing.T, patterns ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Name,Imports,Deps"}, patterns...)...)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(patterns, " "), err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// backend matches the packages of the AWS SDK, the OpenSearch client and the
// full-text engine, and doclib's own packages that wrap them.
var backend = regexp.MustCompile(`^github\.com/aws/aws-sdk-go-v2|opensearch|bleve|^` + regexp.QuoteMeta(module) + `/shared/(backend|aws|wiring)/`)

// TestSettingsAreALeaf: reading a setting links no backend, so the CLI and a
// function that does not search do not carry one.
func TestSettingsAreALeaf(t *testing.T) {
	for _, p := range list(t, "./shared/settings") {
		for _, d := range p.Deps {
			if backend.MatchString(d) || d == module+"/shared/wiring" {
				t.Errorf("%s links %s: settings name and parse, and import no backend (build it in a main with shared/wiring)", p.ImportPath, d)
			}
		}
	}
}

// TestFunctionsLinkOnlyWhatTheyUse: the functions that do not search link no
// search backend and no embedder.
func TestFunctionsLinkOnlyWhatTheyUse(t *testing.T) {
	searching := regexp.MustCompile(`opensearch|bleve|bedrock|/shared/backend/(localsearch|snapshot|openai|offline)$`)
	for _, p := range list(t, "./functions/authorizer", "./functions/documents", "./functions/libraries", "./cmd/doclib") {
		for _, d := range p.Deps {
			if searching.MatchString(d) {
				t.Errorf("%s links %s, which only searching and indexing need", p.ImportPath, d)
			}
		}
	}
}

// TestWiringAndInternalImports: shared/wiring, which builds the backends
// that settings choose, is imported by mains only; and no package of the
// product imports internal/ (test support) outside its tests.
func TestWiringAndInternalImports(t *testing.T) {
	for _, p := range list(t, "./...") {
		internal := strings.HasPrefix(p.ImportPath, module+"/internal/")
		for _, imp := range p.Imports {
			if imp == module+"/shared/wiring" && p.Name != "main" {
				t.Errorf("%s imports shared/wiring: only a program's main builds backends", p.ImportPath)
			}
			if !internal && strings.HasPrefix(imp, module+"/internal/") {
				t.Errorf("%s imports %s: the product does not depend on test support; move what it needs to shared/ or to the command", p.ImportPath, imp)
			}
		}
	}
	if !slices.ContainsFunc(list(t, "./functions/search"), func(p pkg) bool { return slices.Contains(p.Imports, module+"/shared/wiring") }) {
		t.Error("functions/search does not import shared/wiring: the check above would pass vacuously")
	}
}

// groups are internal/'s folders by role; each has a README that names its
// packages (internal/README.md says what each group is).
var groups = []string{"standin", "suites", "checks"}

// TestInternalIsGroupedByRole: every package under internal/ is in one of the
// groups, and its group's README names it, so that a new helper package
// lands somewhere a reader looks.
func TestInternalIsGroupedByRole(t *testing.T) {
	dir := root(t)
	readmes := map[string]string{}
	for _, g := range append([]string{""}, groups...) {
		b, err := os.ReadFile(filepath.Join(dir, "internal", g, "README.md"))
		if err != nil {
			t.Fatalf("internal/%s needs a README saying what its packages stand in for or check: %v", g, err)
		}
		readmes[g] = string(b)
	}
	for _, g := range groups {
		if !strings.Contains(readmes[""], "`"+g+"/`") {
			t.Errorf("internal/README.md does not name the group %s/", g)
		}
	}
	n := 0
	for _, p := range packages(t, dir) {
		rel, ok := strings.CutPrefix(p, "internal/")
		if !ok {
			continue
		}
		n++
		g, sub, _ := strings.Cut(rel, "/")
		if !slices.Contains(groups, g) {
			t.Errorf("%s is in no group: put it under internal/%s/, whichever its role is", p, strings.Join(groups, "/, internal/"))
			continue
		}
		name := g // the group's own package, internal/standin
		if sub != "" {
			name = sub
		}
		if !strings.Contains(readmes[g], "`"+name+"`") && !strings.Contains(readmes[g], "`"+name+"/") && !strings.Contains(readmes[g], "(`"+path.Base(name)+"`") {
			t.Errorf("internal/%s/README.md does not name %s", g, name)
		}
	}
	if n < 20 {
		t.Errorf("found %d packages under internal/: the walk is broken", n)
	}
}
