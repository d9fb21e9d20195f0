package settings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	doclib "github.com/doclib/doclib/shared"
)

// TestEnvNamesLiveInEnvGo: env.go is the one place that spells a DOCLIB_*
// variable's name; every other program file uses its constants, so that the
// stack, the functions and the tools cannot drift apart. Tests may spell the
// names out.
func TestEnvNamesLiveInEnvGo(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root %s has no go.mod: %v", root, err)
	}
	owner := filepath.Join(root, "shared", "settings", "env.go")
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "cdk.out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || path == owner {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(v, "DOCLIB_") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: the literal %s names an environment variable: use its constant in shared/settings/env.go", rel, lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Errorf("checked only %d files under %s: is the walk skipping the code?", files, root)
	}
}

func TestAPIFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	a, err := APIFromEnv(env(map[string]string{EnvTable: "t"}))
	if err != nil || a != (API{Table: "t", KeyLimit: doclib.KeyLimit, IPLimit: doclib.IPLimit, AccountHelp: doclib.DefaultAccountHelp, Streaming: true}) {
		t.Errorf("defaults: %+v, %v", a, err)
	}
	// The transfer mode: STREAM by default, BUFFERED as the stack may say,
	// anything else refused with what to set.
	if a, err := APIFromEnv(env(map[string]string{EnvTable: "t", EnvResponseTransfer: TransferBuffered})); err != nil || a.Streaming {
		t.Errorf("BUFFERED: %+v, %v", a, err)
	}
	if _, err := APIFromEnv(env(map[string]string{EnvTable: "t", EnvResponseTransfer: "stream"})); err == nil || !strings.Contains(err.Error(), TransferStream) {
		t.Errorf("a transfer mode API Gateway does not name: %v", err)
	}
	a, err = APIFromEnv(env(map[string]string{EnvTable: "t", EnvKeyLimit: "5", EnvIPLimit: "7", EnvAccountHelp: "Open the Acme app to {action}."}))
	if err != nil || a.KeyLimit != 5 || a.IPLimit != 7 || a.AccountHelp.Ask("renew") != "Open the Acme app to renew." {
		t.Errorf("limits: %+v, %v", a, err)
	}
	for _, kv := range []map[string]string{{}, {EnvTable: "t", EnvKeyLimit: "lots"}, {EnvTable: "t", EnvIPLimit: "0"}, {EnvTable: "t", EnvAccountHelp: "Ask your admin."}} {
		if _, err := APIFromEnv(env(kv)); err == nil {
			t.Errorf("%v accepted", kv)
		} else if !strings.Contains(err.Error(), "DOCLIB_") {
			t.Errorf("%v: %v does not name the variable", kv, err)
		}
	}
}
