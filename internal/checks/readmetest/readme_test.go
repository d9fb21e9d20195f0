package readmetest

import (
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCommandsSplitsAsTheShellDoes(t *testing.T) {
	readme := "text\n```sh\n" +
		"tool --port 8000 &     # a comment, with 'quotes\n" +
		"export A=1 B=x\n" +
		"X=1 Y='two words' go run ./cmd/a --flag \\\n" +
		"  --other 'q=a b'\n" +
		"a | b -x && c; d 2>&1\n" +
		"# only a comment\n" +
		"echo \"<the printed key>\" ${API}libraries\n" +
		"```\n```json\n{\"not\": \"shell\"}\n```\n```text\nshared   not a command\n```\n"
	got, err := Commands(readme)
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Line: 3, Args: []string{"tool", "--port", "8000"}},
		{Line: 4, Args: []string{"export", "A=1", "B=x"}},
		{Line: 5, Env: []string{"X=1", "Y=two words"}, Args: []string{"go", "run", "./cmd/a", "--flag", "--other", "q=a b"}},
		{Line: 7, Args: []string{"a"}},
		{Line: 7, Args: []string{"b", "-x"}},
		{Line: 7, Args: []string{"c"}},
		{Line: 7, Args: []string{"d", "2>&1"}},
		{Line: 9, Args: []string{"echo", "<the printed key>", "${API}libraries"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Commands:\n got %+v\nwant %+v", got, want)
	}
	if _, err := Commands("```sh\necho 'open\n```\n"); err == nil {
		t.Error("an unclosed quote was not reported")
	}
}

// fakeEnv is a repository with scripts/tools, one program (./cmd/app, whose
// only flag is --port and whose subcommand is serve) and one library package.
func fakeEnv(t *testing.T, toolsInstalled bool) Env {
	root := t.TempDir()
	for _, f := range []struct {
		name string
		mode os.FileMode
	}{{"scripts/tools", 0o755}, {"scripts/notes", 0o644}, {".tools/x/bin/x", 0o755}} {
		if err := os.MkdirAll(filepath.Join(root, path.Dir(f.name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f.name), nil, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return Env{
		Root:     root,
		LookPath: func(name string) (string, error) { return "", errors.New("not found") },
		Package: func(pkg string) (string, error) {
			switch pkg {
			case "./cmd/app":
				return "main", nil
			case "./lib":
				return "lib", nil
			}
			return "", errors.New("no such package")
		},
		Help: func(pkg string, args []string) (string, error) {
			if len(args) > 0 && args[0] != "serve" {
				return "", errors.New("unknown command")
			}
			return "Usage: app [serve]\n  --port N   the port\n", nil
		},
		ToolsInstalled: toolsInstalled,
	}
}

func TestCheckPassesAGoodREADME(t *testing.T) {
	readme := "**Prerequisites:** `docker` and `frob`.\n\n```sh\n" +
		"./scripts/tools\n.tools/x/bin/x --anything &\ngo run ./cmd/app serve --port 1\n" +
		"go install ./cmd/app\napp --port=2 | frob -q\nA=1 go test ./lib\ndocker run x\n```\n"
	for _, installed := range []bool{true, false} {
		problems, err := Check(readme, fakeEnv(t, installed))
		if err != nil || len(problems) > 0 {
			t.Errorf("tools installed %v: %v %q", installed, err, problems)
		}
	}
}

func TestCheckFindsWhatCannotRun(t *testing.T) {
	readme := "```sh\n" +
		".tools/x/bin/x          # before the install script\n" +
		"./scripts/tools\n" +
		".tools/y/bin/y          # not installed by it\n" +
		"frobnicate --all        # a made-up command\n" +
		"./scripts/notes         # not executable\n" +
		"./scripts/gone\n" +
		"go run ./cmd/missing\n" +
		"go run ./lib\n" +
		"go run ./cmd/app --prot 1\n" +
		"go run ./cmd/app srve\n" +
		"go test ./nothing\n" +
		"app --port 1            # never installed\n" +
		"```\n"
	problems, err := Check(readme, fakeEnv(t, true))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:2: .tools/x/bin/x: .tools/x/bin/x exists only after ./scripts/tools has run",
		"README.md:4: .tools/y/bin/y: .tools/y/bin/y does not exist",
		"README.md:5: frobnicate --all: frobnicate is not on PATH and the README's prerequisites do not name it",
		"README.md:6: ./scripts/notes: ./scripts/notes is not an executable file",
		"README.md:7: ./scripts/gone: ./scripts/gone does not exist",
		"README.md:8: go run ./cmd/missing: ./cmd/missing is not a package of this module",
		"README.md:9: go run ./lib: ./lib is package lib, not a program",
		"README.md:10: go run ./cmd/app --prot 1: app has no flag --prot",
		"README.md:11: go run ./cmd/app srve: app srve --help fails: unknown command",
		"README.md:12: go test ./nothing: ./nothing is not a package of this module",
		"README.md:13: app --port 1: app is not on PATH",
	}
	if len(problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d:\n got %s\nwant %s...", i, problems[i], w)
		}
	}
}

// TestREADMECommandsRun checks the real README against this repository, with
// the project's programs built once to ask them for --help.
func TestREADMECommandsRun(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	root := strings.TrimSpace(string(out))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	tools := os.Getenv("DOCLIB_REQUIRE_DYNALITE") != ""
	if !tools {
		t.Log("DOCLIB_REQUIRE_DYNALITE is not set, so ./scripts/tools has not run here: the .tools/ paths are not looked at (source scripts/tools to check them)")
	}
	bin := t.TempDir()
	built := map[string]bool{}
	env := Env{
		Root:     root,
		LookPath: exec.LookPath,
		Package: func(pkg string) (string, error) {
			cmd := exec.Command("go", "list", "-f", "{{.Name}}", pkg)
			cmd.Dir = root
			out, err := cmd.Output()
			return strings.TrimSpace(string(out)), err
		},
		Help: func(pkg string, args []string) (string, error) {
			exe := filepath.Join(bin, path.Base(pkg))
			if !built[pkg] {
				cmd := exec.Command("go", "build", "-o", exe, pkg)
				cmd.Dir = root
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go build %s: %v\n%s", pkg, err, out)
				}
				built[pkg] = true
			}
			out, err := exec.Command(exe, append(args, "--help")...).CombinedOutput()
			if err != nil {
				return "", errors.New(strings.TrimSpace(string(out)))
			}
			return string(out), nil
		},
		ToolsInstalled: tools,
	}
	problems, err := Check(string(readme), env)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
