package standin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// DefaultCacheKeep is how many cloud assemblies SynthCached keeps: the
// newest (most recently used) ones. An entry of this stack is about 80 MB,
// the six function binaries.
const DefaultCacheKeep = 4

// functionsBuildDir is where the CDK app builds the functions inside its
// output directory (infra/main.go) before copying each into its asset
// folder. The assembly does not name it, so a cache entry leaves it out.
const functionsBuildDir = "doclib-functions"

// staleTemp is how old a synthesis folder left in the cache by a process
// that was killed must be before SynthCached deletes it: older than any
// synthesis still running.
const staleTemp = 24 * time.Hour

// SynthCached returns the cloud assembly of context, as Synth writes it, from
// cacheDir when an entry of the same CacheKey is there (hit true), or else
// synthesizes it into a temporary folder of cacheDir and renames that into
// place once the synthesis succeeded, so that a failed or interrupted
// synthesis never leaves an entry. It keeps the DefaultCacheKeep most
// recently used entries and deletes the rest. logf, when not nil, is told
// which of the two it does before it does it.
func SynthCached(root, cacheDir string, context map[string]string, logf func(format string, args ...any)) (a *Synthesized, hit bool, err error) {
	return synthCached(root, cacheDir, context, DefaultCacheKeep, Synth, logf)
}

func synthCached(root, cacheDir string, context map[string]string, keep int,
	synth func(root, dir string, context map[string]string) (*Synthesized, error),
	logf func(format string, args ...any)) (*Synthesized, bool, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	key, err := CacheKey(root, context)
	if err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, false, fmt.Errorf("standin: cache: %w", err)
	}
	entry := filepath.Join(cacheDir, key)
	if a, err := ReadAssembly(entry); err == nil {
		logf("reusing the cached synthesis %s (--no-cache synthesizes anew)", entry)
		use(cacheDir, entry, keep)
		return a, true, nil
	} else if _, statErr := os.Stat(entry); statErr == nil {
		// Not an assembly (say, a file of it deleted by hand): made anew.
		if err := os.RemoveAll(entry); err != nil {
			return nil, false, fmt.Errorf("standin: cache: %w", err)
		}
	}
	logf("synthesizing (go run ./infra, which builds the functions; minutes the first time) into %s", entry)
	tmp, err := os.MkdirTemp(cacheDir, ".synth-"+key[:12]+"-")
	if err != nil {
		return nil, false, fmt.Errorf("standin: cache: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	if _, err := synth(root, tmp, context); err != nil {
		return nil, false, err
	}
	if err := os.RemoveAll(filepath.Join(tmp, functionsBuildDir)); err != nil {
		return nil, false, fmt.Errorf("standin: cache: %w", err)
	}
	if _, err := ReadAssembly(tmp); err != nil {
		return nil, false, err
	}
	if err := os.Rename(tmp, entry); err != nil {
		// Another stand-in may have put the same entry in place meanwhile.
		if _, statErr := os.Stat(entry); statErr != nil {
			return nil, false, fmt.Errorf("standin: cache: %w", err)
		}
	}
	a, err := ReadAssembly(entry)
	if err != nil {
		return nil, false, err
	}
	use(cacheDir, entry, keep)
	return a, false, nil
}

// use marks entry as the most recently used, the last to be pruned, and
// prunes cacheDir: it deletes the entries beyond the keep most recently
// used, and synthesis folders that a killed process left behind.
func use(cacheDir, entry string, keep int) {
	now := time.Now()
	_ = os.Chtimes(entry, now, now)
	ents, err := os.ReadDir(cacheDir)
	if err != nil {
		return
	}
	type kept struct {
		path string
		mod  time.Time
	}
	var entries []kept
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !e.IsDir() {
			continue
		}
		path := filepath.Join(cacheDir, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			if strings.HasPrefix(e.Name(), ".synth-") && time.Since(info.ModTime()) > staleTemp {
				_ = os.RemoveAll(path)
			}
			continue
		}
		entries = append(entries, kept{path, info.ModTime()})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].mod.After(entries[j].mod) })
	for i := keep; i < len(entries); i++ {
		_ = os.RemoveAll(entries[i].path)
	}
}

// CacheKey hashes everything that determines the cloud assembly Synth
// writes for context from the module at root:
//
//   - the context values;
//   - the toolchain and its settings (go env: GOVERSION, GOFLAGS,
//     GOEXPERIMENT, GOAMD64, GOARM64, GOWORK, ...), and the architecture the
//     functions are built for (this program's GOARCH);
//   - go.mod and go.sum, which fix every module outside the repository (and
//     go.work with go.work.sum when a workspace is in use), and cdk.json,
//     whose context (the CDK's feature flags) the app reads beneath the
//     context given (stack.ProjectContext);
//   - the source files of every package of the module that the CDK app
//     (./infra, built for this machine) and the functions (./functions/...,
//     built as stack.Build builds them: linux, CGO_ENABLED=0, tag
//     lambda.norpc) are built from, as `go list -deps` names them: Go,
//     assembly and C files, and embedded files. Tests are not among them,
//     nor is any other package (cmd/, internal/, a package no function
//     imports), so changing those keeps the cache.
//
// Node.js, which runs the CDK's JavaScript for the app, is not in the key:
// the CDK's own code comes from the Go modules that go.sum fixes.
func CacheKey(root string, context map[string]string) (string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	line := func(format string, args ...any) { fmt.Fprintf(h, format+"\n", args...) }
	line("doclib stand-in cloud assembly, key format 1")
	for _, k := range slices.Sorted(maps.Keys(context)) {
		line("context %q=%q", k, context[k])
	}
	line("functions GOARCH %s", runtime.GOARCH)
	out, err := goCmd(root, nil, "env", "-json", "GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "GOEXPERIMENT",
		"GOAMD64", "GOARM64", "CGO_ENABLED", "GOWORK")
	if err != nil {
		return "", err
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		return "", fmt.Errorf("standin: cache key: go env: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		line("go env %s=%q", k, env[k])
	}
	files := map[string]bool{}
	for _, name := range []string{"go.mod", "go.sum", "cdk.json"} {
		files[filepath.Join(root, name)] = true
	}
	if work := env["GOWORK"]; work != "" && work != "off" {
		files[work], files[work+".sum"] = true, true
	}
	type listing struct {
		env  []string
		args []string
	}
	listings := []listing{
		{nil, []string{"./infra"}},
		{[]string{"GOOS=linux", "GOARCH=" + runtime.GOARCH, "CGO_ENABLED=0"}, []string{"-tags", "lambda.norpc", "./functions/..."}},
	}
	errs := make([]error, len(listings))
	found := make([][]string, len(listings))
	done := make(chan int)
	for i, l := range listings {
		go func() {
			found[i], errs[i] = sourceFiles(root, l.env, l.args)
			done <- i
		}()
	}
	for range listings {
		<-done
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	for _, list := range found {
		for _, f := range list {
			files[f] = true
		}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			rel = f
		}
		sum, err := fileSum(f)
		if errors.Is(err, fs.ErrNotExist) {
			line("file %s absent", filepath.ToSlash(rel))
			continue
		}
		if err != nil {
			return "", fmt.Errorf("standin: cache key: %w", err)
		}
		line("file %s %s", filepath.ToSlash(rel), sum)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// sourceFiles lists the source files of the packages args name and of
// their dependencies that are built from this module's folders (the main
// module, or a module replaced by a local folder), with env added to the
// go command's.
func sourceFiles(root string, env, args []string) ([]string, error) {
	out, err := goCmd(root, env, append([]string{"list", "-deps",
		"-json=Dir,Standard,Module,GoFiles,CgoFiles,SFiles,CFiles,CXXFiles,HFiles,SysoFiles,EmbedFiles"}, args...)...)
	if err != nil {
		return nil, err
	}
	var files []string
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var p struct {
			Dir      string
			Standard bool
			Module   *struct {
				Main    bool
				Replace *struct{ Version string }
			}
			GoFiles, CgoFiles, SFiles, CFiles, CXXFiles, HFiles, SysoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("standin: cache key: go list: %w", err)
		}
		local := p.Module == nil || p.Module.Main || (p.Module.Replace != nil && p.Module.Replace.Version == "")
		if p.Standard || !local {
			continue // fixed by the toolchain's version, or by go.mod and go.sum
		}
		for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.SFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range list {
				files = append(files, filepath.Join(p.Dir, f))
			}
		}
	}
	return files, nil
}

// goCmd runs the go command in root and returns its standard output.
func goCmd(root string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("standin: cache key: go %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String(), 20))
	}
	return string(out), nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
