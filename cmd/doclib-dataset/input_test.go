package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tree writes files (name -> text) below a new folder and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// refused runs the command with --out in a new folder and wants exit status 1,
// stderr with want, and no file written.
func refused(t *testing.T, want string, args ...string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append(args, "--out", out), &stdout, &stderr, fixed); code != 1 {
		t.Errorf("%v: exit %d, want 1; stderr: %s", args, code, stderr.String())
	}
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("%v: stderr:\n%s\nwant it to contain %q", args, stderr.String(), want)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("%v: %s was written", args, out)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) > 0 {
		t.Errorf("%v: %d files left beside --out", args, len(entries))
	}
}

func TestInvalidUTF8IsRefusedByFileAndLine(t *testing.T) {
	dir := tree(t, map[string]string{
		"md/lib/ok.md":        "# Fine\n\n1. a step\n",
		"md/lib/x.md":         "# Title\n\n1. one\n2. tw\xff\xfeo\n",
		"front/lib/x.md":      "---\ncategory: Acc\xe9s\n---\n# T\n1. s\n",
		"title/lib/x.md":      "# Caf\xc3\n\n1. s\n",
		"utf16/lib/x.md":      "\xff\xfe#\x00 \x00T\x00",
		"steps.csv":           "library,title,step\nL,T,one\nL,T,t\xffwo\n",
		"header.csv":          "library,title,st\x80ep\n",
		"utf16.csv":           "\xfe\xff\x00l\x00i",
		"folder/lib\xff/x.md": "# T\n\n1. s\n",
	})
	cases := []struct {
		name, want string
		args       []string
	}{
		{"markdown step", "lib/x.md:4: column 6: the byte 0xff is not UTF-8", []string{"from-markdown", filepath.Join(dir, "md")}},
		{"front matter", "lib/x.md:2: column 14: the byte 0xe9 is not UTF-8", []string{"from-markdown", filepath.Join(dir, "front")}},
		{"cut sequence", "lib/x.md:1: column 6: the byte 0xc3 is not UTF-8", []string{"from-markdown", filepath.Join(dir, "title")}},
		{"markdown UTF-16", "lib/x.md:1: the file is not UTF-8 (it looks like UTF-16)", []string{"from-markdown", filepath.Join(dir, "utf16")}},
		{"folder name", "x.md: the folder name is not UTF-8", []string{"from-markdown", filepath.Join(dir, "folder")}},
		{"csv row", "steps.csv:3: column 6: the byte 0xff is not UTF-8", []string{"from-csv", filepath.Join(dir, "steps.csv")}},
		{"csv header", "header.csv:1: column 17: the byte 0x80 is not UTF-8", []string{"from-csv", filepath.Join(dir, "header.csv")}},
		{"csv UTF-16", "utf16.csv:1: the file is not UTF-8 (it looks like UTF-16)", []string{"from-csv", filepath.Join(dir, "utf16.csv")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { refused(t, c.want, c.args...) })
	}
}

func TestDeepNestingIsRefusedByFileAndLine(t *testing.T) {
	head := "---\ncategory: A\n---\n# T\n\n1. s\n\n"
	deep := func(marker string, n int) string { return head + strings.Repeat(marker, n) + "x\n" }
	dir := tree(t, map[string]string{
		"quotes/lib/x.md":    deep(">", 200_000),
		"spaced/lib/x.md":    deep("> ", maxNesting+1),
		"lists/lib/x.md":     deep("- ", maxNesting+1),
		"mixed/lib/x.md":     deep("> 1. * ", maxNesting/3+1),
		"staircase/lib/x.md": head + ">\n>>\n>>>\n" + strings.Repeat(">", maxNesting+1) + "\n",
	})
	for _, name := range []string{"quotes", "spaced", "lists", "mixed"} {
		t.Run(name, func(t *testing.T) {
			refused(t, "lib/x.md:8: more than 32 quotes or lists are nested on this line", "from-markdown", filepath.Join(dir, name))
		})
	}
	refused(t, "lib/x.md:11: more than 32", "from-markdown", filepath.Join(dir, "staircase"))

	// As deep as is read, a console prompt, arrows and rules are documents.
	ok := tree(t, map[string]string{
		"lib/a.md": deep("> ", maxNesting) + "\n" + deep("- ", maxNesting) + "\n" + deep(">", maxNesting),
		"lib/b.md": head + "```\n>>> print(1)\n```\n\n" + strings.Repeat("-", 5000) + "\n\n" + strings.Repeat("*", 5000) + "\n\n=" + strings.Repeat(">", 5000) + "\n",
	})
	file, _ := convert(t, "from-markdown", ok)
	if b, err := os.ReadFile(file); err != nil || !bytes.Contains(b, []byte(`"title": "T"`)) {
		t.Errorf("%v: %s", err, b)
	}
}

// BenchmarkNestedQuotes reads a line of n nested quotes: the nesting check
// refuses it before goldmark, whose quote parsing is quadratic in the depth
// of one line, sees it, so the time grows with n, not n² (go test -bench
// NestedQuotes ./cmd/doclib-dataset; speed lives in benchmarks, not in timed
// tests). TestDeepNestingIsRefusedByFileAndLine holds the refusal itself.
func BenchmarkNestedQuotes(b *testing.B) {
	for _, n := range []int{25_000, 100_000, 200_000} {
		src := []byte("# T\n\n1. s\n\n" + strings.Repeat(">", n) + "x\n")
		b.Run(strconv.Itoa(n/1000)+"KB", func(b *testing.B) {
			for b.Loop() {
				_, _ = markdownDoc("x.md", src)
			}
		})
	}
}

func TestSymbolicLinksOutsideTheFolderAreRefused(t *testing.T) {
	outside := tree(t, map[string]string{"secret.md": "# Outside\n\n1. s\n", "notes/y.md": "# Y\n\n1. s\n"})
	doc := "# Inside\n\n1. s\n"
	link := func(t *testing.T, dir, target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("file", func(t *testing.T) {
		dir := tree(t, map[string]string{"lib/a.md": doc})
		link(t, dir, filepath.Join(outside, "secret.md"), "lib/b.md")
		refused(t, filepath.Join(dir, "lib/b.md")+" is a symbolic link to "+filepath.Join(outside, "secret.md")+", outside "+dir, "from-markdown", dir)
	})
	t.Run("relative", func(t *testing.T) {
		dir := tree(t, map[string]string{"lib/a.md": doc})
		rel, _ := filepath.Rel(filepath.Join(dir, "lib"), filepath.Join(outside, "secret.md"))
		link(t, dir, rel, "lib/b.md")
		refused(t, "lib/b.md is a symbolic link to", "from-markdown", dir)
	})
	t.Run("folder", func(t *testing.T) {
		dir := tree(t, map[string]string{"lib/a.md": doc})
		link(t, dir, filepath.Join(outside, "notes"), "notes")
		refused(t, "notes is a symbolic link to "+filepath.Join(outside, "notes"), "from-markdown", dir)
	})
	t.Run("dangling", func(t *testing.T) {
		dir := tree(t, map[string]string{"lib/a.md": doc})
		link(t, dir, filepath.Join(outside, "gone.md"), "lib/b.md")
		refused(t, "lib/b.md is a symbolic link that cannot be followed", "from-markdown", dir)
	})
	t.Run("inside", func(t *testing.T) {
		dir := tree(t, map[string]string{"lib/a.md": doc})
		link(t, dir, "a.md", "lib/b.md")
		link(t, dir, "lib", "again")
		link(t, filepath.Dir(dir), dir, "given")
		for _, arg := range []string{dir, filepath.Join(filepath.Dir(dir), "given")} {
			file, _ := convert(t, "from-markdown", arg)
			b, _ := os.ReadFile(file)
			if n := bytes.Count(b, []byte(`"title": "Inside"`)); n != 2 {
				t.Errorf("%s: %d documents, want a.md and the link b.md: %s", arg, n, b)
			}
		}
	})
}

func TestOutIsNotReplacedWithoutForce(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "my-data.json")
	if err := os.WriteFile(out, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"from-markdown", filepath.Join(examples, "markdown"), "--out", out}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr, fixed); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if want := out + " already exists; pass --force to replace it"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to contain %q", stderr.String(), want)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Errorf("the file was changed: %.40q", b)
	}

	// A link at --out is refused too, and its target left alone.
	target := filepath.Join(dir, "target.json")
	os.WriteFile(target, []byte("keep me"), 0o644)
	os.Symlink(target, filepath.Join(dir, "link.json"))
	stderr.Reset()
	if code := run(context.Background(), []string{"from-csv", filepath.Join(examples, "steps.csv"), "-o", filepath.Join(dir, "link.json")}, &stdout, &stderr, fixed); code != 1 {
		t.Errorf("link: exit %d, want 1: %s", code, stderr.String())
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the link's target was changed: %.40q", b)
	}

	stderr.Reset()
	if code := run(context.Background(), append(args, "--force"), &stdout, &stderr, fixed); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr.String())
	}
	secret(t, out)
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("--force: %v, mode %v, want 0600", err, st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d files in the folder, want my-data.json, target.json and link.json", len(entries))
	}
}

func TestHelpSaysTheFileHoldsALiveKey(t *testing.T) {
	for _, cmd := range []string{"from-markdown", "from-csv"} {
		var stdout, stderr bytes.Buffer
		run(context.Background(), []string{cmd, "--help"}, &stdout, &stderr, fixed)
		for _, want := range []string{"holds a live API key", "out of version control", "--force replaces it"} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, want, stdout.String())
			}
		}
	}
}
