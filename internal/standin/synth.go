package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/doclib/doclib/shared/settings"
)

// Synthesized is a cloud assembly written by `go run ./infra`.
type Synthesized struct {
	Dir      string // the output directory
	Stack    string // the stack's name, e.g. Doclib-demo
	Template string // path of <Stack>.template.json
	// Assets maps an asset's hash (a Lambda function's Code.S3Key without
	// ".zip") to its directory, which holds the function's bootstrap.
	Assets map[string]string
}

// Synth synthesizes the stack of the given CDK context into dir, as
// `cdk synth` would with `-c key=value` for each entry, from the module at
// root. The functions are built by the app itself, exactly as for deploy,
// but for the host's architecture so that they can run here
// (settings.EnvLambdaArch).
func Synth(root, dir string, context map[string]string) (*Synthesized, error) {
	ctxJSON, err := contextJSON(context)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "run", "./infra")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CDK_OUTDIR="+dir, "CDK_CONTEXT_JSON="+string(ctxJSON),
		settings.EnvLambdaArch+"="+runtime.GOARCH, settings.EnvLambdaDir+"=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("standin: go run ./infra: %v\n%s", err, tail(out.String(), 40))
	}
	return ReadAssembly(dir)
}

// contextJSON is the context as CDK_CONTEXT_JSON: strings, but a feature
// flag's "true" or "false" as a JSON boolean. The CDK reads a flag with
// JavaScript's truthiness, so the string "false" would turn it on.
func contextJSON(context map[string]string) ([]byte, error) {
	out := make(map[string]any, len(context))
	for k, v := range context {
		out[k] = v
		if strings.HasPrefix(k, "@aws-cdk") && (v == "true" || v == "false") {
			out[k] = v == "true"
		}
	}
	return json.Marshal(out)
}

// ReadAssembly reads a cloud assembly's one stack: its template and file
// assets.
func ReadAssembly(dir string) (*Synthesized, error) {
	var manifest struct {
		Artifacts map[string]struct {
			Type       string
			Properties struct{ TemplateFile string }
		}
	}
	if err := readJSON(filepath.Join(dir, "manifest.json"), &manifest); err != nil {
		return nil, err
	}
	s := &Synthesized{Dir: dir, Assets: map[string]string{}}
	for name, a := range manifest.Artifacts {
		if a.Type != "aws:cloudformation:stack" {
			continue
		}
		if s.Stack != "" {
			return nil, fmt.Errorf("standin: %s holds two stacks (%s, %s); the stand-in runs one", dir, s.Stack, name)
		}
		s.Stack = name
		s.Template = filepath.Join(dir, a.Properties.TemplateFile)
	}
	if s.Stack == "" {
		return nil, fmt.Errorf("standin: no stack in %s", dir)
	}
	var assets struct {
		Files map[string]struct {
			Source struct{ Path, Packaging string }
		}
	}
	if err := readJSON(filepath.Join(dir, s.Stack+".assets.json"), &assets); err != nil {
		return nil, err
	}
	for hash, f := range assets.Files {
		if f.Source.Packaging == "zip" {
			s.Assets[hash] = filepath.Join(dir, f.Source.Path)
		}
	}
	return s, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("standin: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("standin: %s: %w", path, err)
	}
	return nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
