package standin

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// cacheModule writes a small module shaped like doclib's: an app at
// ./infra and a function at ./functions/a that share a package with an
// embedded file, a command and a package nobody builds, and a test file.
func cacheModule(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                 "module example.com/m\n\ngo 1.26\n",
		"go.sum":                 "",
		"cdk.json":               `{"app": "go run ./infra"}`,
		"infra/main.go":          "package main\n\nimport _ \"example.com/m/shared\"\n\nfunc main() {}\n",
		"functions/a/main.go":    "package main\n\nimport _ \"example.com/m/shared\"\n\nfunc main() {}\n",
		"shared/shared.go":       "package shared\n\nimport _ \"embed\"\n\n//go:embed data.txt\nvar Data string\n",
		"shared/data.txt":        "one\n",
		"shared/shared_test.go":  "package shared\n",
		"shared/notes.md":        "not a source file\n",
		"cmd/other/main.go":      "package main\n\nfunc main() {}\n",
		"extra/extra.go":         "package extra\n",
		"functions/a/lambda.go":  "//go:build lambda.norpc\n\npackage main\n",
		"functions/a/windows.go": "//go:build windows\n\npackage main\n",
	}
	for name, text := range files {
		write(t, filepath.Join(root, name), text)
	}
	return root
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeSynth writes a cloud assembly of one stack with one function asset,
// and the functions' build folder the real app leaves beside the assets;
// it counts its calls.
type fakeSynth struct {
	t     *testing.T
	calls int
}

func (f *fakeSynth) synth(root, dir string, context map[string]string) (*Synthesized, error) {
	f.calls++
	write(f.t, filepath.Join(dir, "manifest.json"),
		`{"artifacts": {"Doclib-`+context["customer"]+`": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "stack.template.json"}}}}`)
	write(f.t, filepath.Join(dir, "stack.template.json"), `{"Resources": {}}`)
	write(f.t, filepath.Join(dir, "Doclib-"+context["customer"]+".assets.json"),
		`{"files": {"abc": {"source": {"path": "asset.abc", "packaging": "zip"}}}}`)
	write(f.t, filepath.Join(dir, "asset.abc", "bootstrap"), "binary")
	write(f.t, filepath.Join(dir, functionsBuildDir, "a", "bootstrap"), "binary")
	return ReadAssembly(dir)
}

// entries lists the folders in the cache, those of synthesis in progress
// (.synth-*) included.
func entries(t *testing.T, cacheDir string) []string {
	t.Helper()
	ents, err := os.ReadDir(cacheDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestSynthCachedHitsOnSameInputs(t *testing.T) {
	root, cache, f := cacheModule(t), t.TempDir(), &fakeSynth{t: t}
	ctx := map[string]string{"customer": "acme", "search": "embedded"}
	a, hit, err := synthCached(root, cache, ctx, 4, f.synth, nil)
	if err != nil || hit || f.calls != 1 {
		t.Fatalf("first: hit %v, %d syntheses, %v; want a miss that synthesizes", hit, f.calls, err)
	}
	if a.Stack != "Doclib-acme" || filepath.Dir(a.Dir) != cache || a.Assets["abc"] != filepath.Join(a.Dir, "asset.abc") {
		t.Fatalf("first: %+v, want Doclib-acme read from an entry of %s", a, cache)
	}
	if _, err := os.Stat(filepath.Join(a.Dir, functionsBuildDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the entry keeps the functions' build folder (%v): it doubles its size for nothing", err)
	}
	// The same context in another map, a test file, a file of a package
	// neither the app nor a function imports, and a file of no package
	// change nothing the assembly is built from.
	write(t, filepath.Join(root, "shared/shared_test.go"), "package shared\n\n// changed\n")
	write(t, filepath.Join(root, "cmd/other/main.go"), "package main\n\nfunc main() { println() }\n")
	write(t, filepath.Join(root, "extra/extra.go"), "package extra\n\n// changed\n")
	write(t, filepath.Join(root, "shared/notes.md"), "changed\n")
	write(t, filepath.Join(root, "functions/a/windows.go"), "//go:build windows\n\npackage main\n\n// changed\n")
	b, hit, err := synthCached(root, cache, map[string]string{"search": "embedded", "customer": "acme"}, 4, f.synth, nil)
	if err != nil || !hit || f.calls != 1 {
		t.Fatalf("second: hit %v, %d syntheses, %v; want a hit", hit, f.calls, err)
	}
	if b.Dir != a.Dir || b.Stack != a.Stack || b.Template != a.Template {
		t.Errorf("second: %+v, want the first's %+v", b, a)
	}
	// An entry that is no longer an assembly is made anew.
	if err := os.Remove(filepath.Join(a.Dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if _, hit, err := synthCached(root, cache, ctx, 4, f.synth, nil); err != nil || hit || f.calls != 2 {
		t.Fatalf("broken entry: hit %v, %d syntheses, %v; want a new synthesis", hit, f.calls, err)
	}
	if got := entries(t, cache); len(got) != 1 {
		t.Errorf("cache holds %v, want the one entry", got)
	}
}

func TestSynthCachedMissesOnChangedContext(t *testing.T) {
	root, cache, f := cacheModule(t), t.TempDir(), &fakeSynth{t: t}
	for i, ctx := range []map[string]string{
		{"customer": "acme"},
		{"customer": "acme", "search": "embedded"},
		{"customer": "acme", "search": "embedded", "usagePlans": "false"},
		{"customer": "acme", "search": "embedded", "usagePlans": "true"},
		{"customer": "beta", "search": "embedded", "usagePlans": "true"},
	} {
		if _, hit, err := synthCached(root, cache, ctx, 10, f.synth, nil); err != nil || hit || f.calls != i+1 {
			t.Fatalf("context %v: hit %v, %d syntheses, %v; want a miss", ctx, hit, f.calls, err)
		}
	}
}

func TestSynthCachedMissesOnChangedSource(t *testing.T) {
	root, cache, f := cacheModule(t), t.TempDir(), &fakeSynth{t: t}
	ctx := map[string]string{"customer": "acme"}
	if _, _, err := synthCached(root, cache, ctx, 10, f.synth, nil); err != nil {
		t.Fatal(err)
	}
	for _, change := range []struct{ what, file, text string }{
		{"the app's package shared by both", "shared/shared.go", "package shared\n\nimport _ \"embed\"\n\n//go:embed data.txt\nvar Data string\n\nvar X int\n"},
		{"a file shared embeds", "shared/data.txt", "two\n"},
		{"a file added to shared", "shared/more.go", "package shared\n"},
		{"the function", "functions/a/main.go", "package main\n\nimport _ \"example.com/m/shared\"\n\nfunc main() { println() }\n"},
		{"a file only the function build's tag takes", "functions/a/lambda.go", "//go:build lambda.norpc\n\npackage main\n\nvar Y int\n"},
		{"the app", "infra/main.go", "package main\n\nimport _ \"example.com/m/shared\"\n\nfunc main() { println() }\n"},
		{"a new package the app imports", "infra/main.go", "package main\n\nimport _ \"example.com/m/shared\"\nimport _ \"example.com/m/extra\"\n\nfunc main() {}\n"},
		{"that package", "extra/extra.go", "package extra\n\nvar Z int\n"},
		{"go.sum", "go.sum", "example.org/x v1.0.0 h1:AAAA\n"},
		{"cdk.json", "cdk.json", `{"app": "go run ./infra", "context": {"search": "embedded"}}`},
	} {
		before := f.calls
		write(t, filepath.Join(root, change.file), change.text)
		if _, hit, err := synthCached(root, cache, ctx, 10, f.synth, nil); err != nil || hit || f.calls != before+1 {
			t.Errorf("after a change to %s (%s): hit %v, %v; want a miss", change.what, change.file, hit, err)
		}
	}
}

func TestSynthCachedFailedSynthLeavesNoEntry(t *testing.T) {
	root, cache, f := cacheModule(t), t.TempDir(), &fakeSynth{t: t}
	ctx := map[string]string{"customer": "acme"}
	// A synthesis that dies half way: it has written part of an assembly,
	// a manifest that names a stack, and no more.
	failing := func(root, dir string, context map[string]string) (*Synthesized, error) {
		write(t, filepath.Join(dir, "manifest.json"),
			`{"artifacts": {"Doclib-acme": {"type": "aws:cloudformation:stack", "properties": {"templateFile": "stack.template.json"}}}}`)
		write(t, filepath.Join(dir, "asset.abc", "bootstrap"), "half a binary")
		return nil, errors.New("go run ./infra: signal: interrupt")
	}
	if _, _, err := synthCached(root, cache, ctx, 4, failing, nil); err == nil || err.Error() != "go run ./infra: signal: interrupt" {
		t.Fatalf("failing synthesis: %v, want its error", err)
	}
	if got := entries(t, cache); len(got) != 0 {
		t.Fatalf("after a failed synthesis the cache holds %v, want nothing", got)
	}
	// A synthesis that succeeds but writes no assembly the stand-in can
	// read is not kept either.
	empty := func(root, dir string, context map[string]string) (*Synthesized, error) {
		return &Synthesized{Dir: dir}, nil
	}
	if _, _, err := synthCached(root, cache, ctx, 4, empty, nil); err == nil {
		t.Fatal("a synthesis without an assembly was accepted")
	}
	if got := entries(t, cache); len(got) != 0 {
		t.Fatalf("after a synthesis without an assembly the cache holds %v, want nothing", got)
	}
	if _, hit, err := synthCached(root, cache, ctx, 4, f.synth, nil); err != nil || hit || f.calls != 1 {
		t.Fatalf("after the failures: hit %v, %d syntheses, %v; want a miss that synthesizes", hit, f.calls, err)
	}
}

func TestSynthCachedKeepsTheNewest(t *testing.T) {
	root, cache, f := cacheModule(t), t.TempDir(), &fakeSynth{t: t}
	ctx := func(c string) map[string]string { return map[string]string{"customer": c} }
	dirs := map[string]string{}
	for _, c := range []string{"a", "b", "c"} {
		s, _, err := synthCached(root, cache, ctx(c), 3, f.synth, nil)
		if err != nil {
			t.Fatal(err)
		}
		dirs[c] = s.Dir
	}
	// A synthesis folder a killed process left a day ago goes; one that
	// may still be running stays.
	stale, running := filepath.Join(cache, ".synth-stale"), filepath.Join(cache, ".synth-running")
	for _, d := range []string{stale, running} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-staleTemp - time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	// Using a makes it the newest; d then leaves room for three: b goes.
	if _, hit, err := synthCached(root, cache, ctx("a"), 3, f.synth, nil); err != nil || !hit {
		t.Fatalf("a: hit %v, %v; want a hit", hit, err)
	}
	if _, _, err := synthCached(root, cache, ctx("d"), 3, f.synth, nil); err != nil {
		t.Fatal(err)
	}
	got := entries(t, cache)
	want := []string{".synth-running", filepath.Base(dirs["a"]), filepath.Base(dirs["c"])}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("cache holds %v, want %s among them", got, w)
		}
	}
	for _, gone := range []string{".synth-stale", filepath.Base(dirs["b"])} {
		if slices.Contains(got, gone) {
			t.Errorf("cache holds %v, want %s gone", got, gone)
		}
	}
	if len(got) != 4 {
		t.Errorf("cache holds %v, want 3 entries and the running synthesis", got)
	}
}

func TestSynthCachedKeepsFour(t *testing.T) {
	if DefaultCacheKeep != 4 {
		t.Errorf("DefaultCacheKeep is %d; issue 25 asks for the 4 most recent (an entry is about 60 MB)", DefaultCacheKeep)
	}
	root, cache, f := cacheModule(t), t.TempDir(), &fakeSynth{t: t}
	for _, c := range []string{"a", "b", "c", "d", "e", "f"} {
		if _, _, err := synthCached(root, cache, map[string]string{"customer": c}, DefaultCacheKeep, f.synth, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := entries(t, cache); len(got) != DefaultCacheKeep {
		t.Errorf("after six contexts the cache holds %d entries %v, want %d", len(got), got, DefaultCacheKeep)
	}
}
