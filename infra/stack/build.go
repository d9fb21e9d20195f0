package stack

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/doclib/doclib/shared/aws/lambdabuild"
	"github.com/doclib/doclib/shared/settings"
)

// Binaries maps each function name (lambdaapp.Functions) to a directory that
// holds its Lambda executable, named bootstrap.
type Binaries map[string]string

// ModuleRoot returns the directory of the go.mod that encloses the working
// directory: `go run ./infra` runs from the repository root, `go test` from
// infra/stack, and both must find ./functions.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module root (go env GOMOD): %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("find the module root: the working directory is not inside the doclib module; run the app from the repository")
	}
	return filepath.Dir(gomod), nil
}

// Build compiles each function's main, ./functions/<name> under root, into
// outDir/<name>/bootstrap for Lambda's provided.al2023 runtime on arm64. The
// builds run in parallel; Go's build cache makes a rebuild of unchanged code
// a link step. The error names every function that failed, with the
// compiler's output.
func Build(root, outDir string, names []string) (Binaries, error) {
	bins := Binaries{}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		dir := filepath.Join(outDir, name)
		bins[name] = dir
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = buildOne(root, dir, name)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return bins, nil
}

func buildOne(root, dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("build function %s: %w", name, err)
	}
	arch := "arm64" // Lambda's; the stand-in (internal/standin) builds for the host to run them here
	if a := os.Getenv(settings.EnvLambdaArch); a != "" {
		arch = a
	}
	cmd := lambdabuild.Command("./functions/"+name, filepath.Join(dir, "bootstrap"), arch)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build function %s (./functions/%s for linux/%s): %v\n%s", name, name, arch, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// Prebuilt returns the binaries under dir, <dir>/<name>/bootstrap, and
// reports a function whose bootstrap is missing.
func Prebuilt(dir string, names []string) (Binaries, error) {
	bins := Binaries{}
	for _, name := range names {
		d := filepath.Join(dir, name)
		if _, err := os.Stat(filepath.Join(d, "bootstrap")); err != nil {
			return nil, fmt.Errorf("function %s: no prebuilt bootstrap in %s (%s): %w", name, d, settings.EnvLambdaDir, err)
		}
		bins[name] = d
	}
	return bins, nil
}
