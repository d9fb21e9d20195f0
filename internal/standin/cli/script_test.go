package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptInstallsDynaliteOnly runs scripts/standin, copied with
// scripts/tools into an empty folder, with npm and go replaced by programs
// that only record their arguments: the script must install dynalite and
// nothing else (the MCP inspector cost a fresh machine 53 s and the stand-in
// never uses it), and hand every argument, -c values included, to the
// stand-in's command.
func TestScriptInstallsDynaliteOnly(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	root := t.TempDir()
	for _, name := range []string{"standin", "tools"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "scripts", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "scripts", name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "calls")
	recorder := "#!/bin/sh\necho \"$(basename \"$0\") $*\" >> " + log + "\n"
	// go build -o FILE writes a FILE that records how it is run, as the
	// stand-in's own command line.
	goBuild := recorder + "if [ \"$1\" = build ] && [ \"$2\" = -o ]; then mkdir -p \"$(dirname \"$3\")\"; printf '%s' '" + recorder + "' > \"$3\"; chmod +x \"$3\"; fi\n"
	for name, body := range map[string]string{"npm": recorder, "go": goBuild} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// node answers no version: nothing is installed yet.
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, filepath.Join(root, "scripts", "standin"), "-c", "search=embedded", "--customer", "acme")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/standin: %v\n%s", err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(calls) != 3 {
		t.Fatalf("calls: %q, want one npm install, one go build and the stand-in", calls)
	}
	if !strings.HasPrefix(calls[0], "npm install") || !strings.Contains(calls[0], "dynalite@") {
		t.Errorf("first call %q, want npm install of dynalite", calls[0])
	}
	for _, c := range calls {
		if strings.Contains(c, "inspector") {
			t.Errorf("scripts/standin installs the MCP inspector: %q", c)
		}
	}
	// Built first (with a line on screen), then run: go run would build
	// in silence.
	if want := "go build -o .tools/standin/standin ./internal/standin/cmd/standin"; calls[1] != want {
		t.Errorf("second call %q, want %q", calls[1], want)
	}
	if want := "standin -c search=embedded --customer acme"; calls[2] != want {
		t.Errorf("third call %q, want %q", calls[2], want)
	}
}
