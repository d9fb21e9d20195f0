package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// libs says which demo libraries a run listed: the key's scope shows which
// key was used (oneLibrary sees lib_finance only, full sees lib_it too).
func libs(out string) string {
	switch {
	case strings.Contains(out, "lib_it"):
		return "full"
	case strings.Contains(out, "lib_finance"):
		return "one"
	}
	return "none"
}

func TestConfigPrecedence(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	c := newCLI(t, "", "")
	cfg := writeFile(t, filepath.Join(c.configDir, "doclib", "config.json"),
		`{"url": "`+apiSrv.URL+`", "apiKey": "`+oneLibrary+`"}`, 0o600)

	// The default config file alone.
	r := c.run("libraries", "-v")
	if r.code != 0 || libs(r.stdout) != "one" || strings.Contains(r.stderr, "warning") {
		t.Fatalf("config file only: %s", r)
	}
	if !strings.Contains(r.stderr, "doclib: API "+apiSrv.URL+" (from the config file "+cfg+"); API key from the config file "+cfg) {
		t.Errorf("verbose does not say where the settings came from:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "doclib: GET "+apiSrv.URL+"/libraries → 200 in ") {
		t.Errorf("verbose does not log the request:\n%s", r.stderr)
	}

	// The environment beats the file.
	c.env["DOCLIB_API_KEY"] = full
	if out := c.ok("libraries"); libs(out) != "full" {
		t.Errorf("DOCLIB_API_KEY did not beat the file:\n%s", out)
	}
	c.env["DOCLIB_URL"] = closed.URL
	if r := c.run("libraries"); r.code != 3 || !strings.Contains(r.stderr, closed.URL) {
		t.Errorf("DOCLIB_URL did not beat the file: %s", r)
	}

	// Flags beat the environment.
	if out := c.ok("libraries", "--url", apiSrv.URL); libs(out) != "full" {
		t.Errorf("--url did not beat DOCLIB_URL:\n%s", out)
	}
	keyFile := writeFile(t, filepath.Join(t.TempDir(), "key"), oneLibrary+"\n", 0o600)
	if out := c.ok("libraries", "--url", apiSrv.URL, "--api-key-file", keyFile); libs(out) != "one" {
		t.Errorf("--api-key-file did not beat DOCLIB_API_KEY:\n%s", out)
	}

	// --config names another file, used instead of the default one.
	other := writeFile(t, filepath.Join(t.TempDir(), "other.json"), `{"url": "`+apiSrv.URL+`", "apiKey": "`+full+`"}`, 0o600)
	c.env = map[string]string{}
	if out := c.ok("libraries", "--config", other); libs(out) != "full" {
		t.Errorf("--config was not used:\n%s", out)
	}

	// With no file, no environment and no flag, the default URL.
	c.configDir = t.TempDir()
	c.env["DOCLIB_API_KEY"] = full
	c.transport = refuse{}
	if r := c.run("libraries"); r.code != 3 || !strings.Contains(r.stderr, defaultURL) {
		t.Errorf("not the default URL: %s", r)
	}
}

func TestConfigFileProblems(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		args          []string
		want          string
	}{
		{"not JSON", `url = "x"`, nil, "invalid character"},
		{"unknown field", `{"url": "http://x", "api_key": "k"}`, nil, `unknown field "api_key"`},
		{"more after the object", `{"url": "http://x"} {"apiKey": "k"}`, nil, "more after the JSON object"},
		{"null", `null`, nil, "not a JSON object"},
		{"missing --config", "", []string{"--config", filepath.Join(dir, "nope.json")}, "no such file"},
		{"missing key file", "", []string{"--api-key-file", filepath.Join(dir, "nope")}, "--api-key-file"},
		{"empty key file", "", []string{"--api-key-file", writeFile(t, filepath.Join(dir, "empty"), "\n", 0o600)}, "is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newCLI(t, apiSrv.URL, full)
			if c.content != "" {
				writeFile(t, filepath.Join(cl.configDir, "doclib", "config.json"), c.content, 0o600)
			}
			r := cl.run(append(c.args, "libraries")...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("want exit 2 and %q: %s", c.want, r)
			}
		})
	}
}

func TestFilesHoldingAKeyMustBePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits do not describe Windows ACLs")
	}
	c := newCLI(t, apiSrv.URL, "")
	cfg := writeFile(t, filepath.Join(c.configDir, "doclib", "config.json"), `{"apiKey": "`+full+`"}`, 0o644)
	r := c.run("libraries")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: "+cfg+" holds an API key and other users can read it (mode 0644); run: chmod 600 "+cfg) {
		t.Errorf("no warning for a readable config file: %s", r)
	}
	// A file with no key is not a secret.
	writeFile(t, cfg, `{"url": "`+apiSrv.URL+`"}`, 0o644)
	c.env["DOCLIB_API_KEY"] = full
	if r := c.run("libraries"); strings.Contains(r.stderr, "warning") {
		t.Errorf("a warning for a config file without a key: %s", r)
	}
	keyFile := writeFile(t, filepath.Join(t.TempDir(), "key"), full, 0o640)
	if r := c.run("libraries", "--api-key-file", keyFile); r.code != 0 || !strings.Contains(r.stderr, "warning: "+keyFile) {
		t.Errorf("no warning for a readable key file: %s", r)
	}
}

// TestDefaultConfigLocation drives the real entry point, which finds the
// config file with os.UserConfigDir.
func TestDefaultConfigLocation(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
	t.Setenv("AppData", filepath.Join(home, "appdata"))
	dir, err := os.UserConfigDir()
	if err != nil || !strings.HasPrefix(dir, home) {
		t.Skipf("user config dir %q (%v) is not under the test's home", dir, err)
	}
	writeFile(t, filepath.Join(dir, "doclib", "config.json"), `{"url": "`+apiSrv.URL+`", "apiKey": "`+oneLibrary+`"}`, 0o600)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"libraries"}, func(string) string { return "" }, &out, &errb)
	if code != 0 || libs(out.String()) != "one" {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	noKeys(t, result{code, out.String(), errb.String()})
}

func TestKeyIsNeverPrinted(t *testing.T) {
	const secret = "sk-not-a-doclib-key-5531" // unknown to the API: every call is a 401
	keyFile := writeFile(t, filepath.Join(t.TempDir(), "key"), secret, 0o644)
	c := newCLI(t, apiSrv.URL, secret)
	c.secrets = []string{secret}
	writeFile(t, filepath.Join(c.configDir, "doclib", "config.json"), `{"apiKey": "`+secret+`"}`, 0o644)
	for _, args := range [][]string{
		{"libraries"}, {"-v", "libraries"}, {"-v", "library", "lib_it", "--json", "id"}, {"--api-key-file", keyFile, "-v", "search", "okta"},
		{"--help"}, {"libraries", "--help"}, {"mcp", "--help"}, {"libraries", "--bogus"}, {"document"},
		{"-v", "--url", "http://127.0.0.1:1", "--retries", "1", "libraries"}, {"--url", "nope", "libraries"},
		{"completion", "bash"}, {"__complete", "documents", ""},
	} {
		if r := c.run(args...); r.code == 0 && args[0] == "libraries" && len(args) == 1 {
			t.Errorf("an unknown key was accepted: %s", r)
		}
	}
	// The same from the config file and the key file alone.
	delete(c.env, "DOCLIB_API_KEY")
	c.run("-v", "tags", "lib_it")
	c.run("-v", "--api-key-file", keyFile, "tags", "lib_it")
}

func TestConfigFileWithAByteOrderMark(t *testing.T) {
	c := newCLI(t, "", "")
	writeFile(t, filepath.Join(c.configDir, "doclib", "config.json"),
		"\xef\xbb\xbf"+`{"url": "`+apiSrv.URL+`", "apiKey": "`+full+`"}`, 0o600)
	if out := c.ok("libraries"); !strings.Contains(out, "lib_it") {
		t.Errorf("%s", out)
	}
}
