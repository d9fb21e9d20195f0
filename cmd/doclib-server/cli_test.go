package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

// Every flag takes two dashes and sets what it names; the environment gives
// defaults that flags override.
func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--addr", "127.0.0.1:0", "--data=my.json", "--key-limit", "7", "--ip-limit", "9",
		"--rate-window", "2m", "--no-rate-limits", "--answer-cache", "0", "--log-format", "json", "--search-poll", "5s",
		"--embedder", "hash", "--search-weights", "lexical=0.5"}, noEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:0" || c.data != "my.json" || c.keyLimit != 7 || c.ipLimit != 9 || c.window != 2*time.Minute ||
		!c.noLimits || c.memoMB != 0 || c.logFormat != "json" || c.poll != 5*time.Second || c.store != "memory" || c.search != "embedded" {
		t.Errorf("parsed %+v", c)
	}
	env := map[string]string{"DOCLIB_ADDR": "127.0.0.1:9999", "DOCLIB_DATA": "env.json"}
	c, err = parseFlags([]string{"--addr", "127.0.0.1:1"}, func(k string) string { return env[k] }, nil)
	if err != nil || c.addr != "127.0.0.1:1" || c.data != "env.json" {
		t.Errorf("with the environment: %+v, %v", c, err)
	}
}

// A typo gets one line saying what to type instead, and a pointer to --help,
// on stderr, once, with exit 2; not the whole help.
func TestFlagTyposGetOneShortMessage(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--adr", "127.0.0.1:0"}, "unknown flag: --adr; did you mean --addr?"},
		{[]string{"-addr", "127.0.0.1:0"}, "flags take two dashes: --addr, not -addr"},
		{[]string{"-data=x.json"}, "flags take two dashes: --data, not -data"},
		{[]string{"--key-limit", "many"}, `--key-limit takes a whole number such as 2, not "many"`},
		{[]string{"--rate-window", "5"}, `--rate-window takes a duration such as 30s or 2m, not "5"`},
		{[]string{"--no-rate-limits=maybe"}, `--no-rate-limits is true or false (or given alone), not "maybe"`},
		{[]string{"--zzzzzz"}, "unknown flag: --zzzzzz\n"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--log-format", "xml"}, `--log-format must be text or json, not "xml"`},
	} {
		var out, errs bytes.Buffer
		code := exitCode(run(t.Context(), c.args, noEnv, &out, &errs), &errs)
		msg := errs.String()
		if code != exitUsage || !strings.Contains(msg, "doclib-server: "+c.says) || out.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", c.args, code, out.String(), msg)
		}
		if strings.Count(msg, "doclib-server: ") != 1 || strings.Count(msg, "\n") != 2 ||
			!strings.HasSuffix(msg, "Run 'doclib-server --help' for usage.\n") {
			t.Errorf("%q: want the error once and a pointer to --help, got:\n%s", c.args, msg)
		}
	}
}

// The README shows the real --help.
func TestREADMEShowsTheHelp(t *testing.T) {
	var help bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, noEnv, &help, &help); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "```text\n$ go run ./cmd/doclib-server --help\n"
	_, block, ok := strings.Cut(string(readme), start)
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatalf("README has no block starting %q", start)
	}
	if block != help.String() {
		t.Errorf("README's doclib-server --help differs from the real one; put this in it:\n%s", help.String())
	}
}
