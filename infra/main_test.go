package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goRun runs the app as cdk.json does (`go run ./infra`, here from infra/),
// without the CDK CLI, with context given the way the CLI gives it.
func goRun(t *testing.T, outdir string, context map[string]string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", "run", ".")
	cmd.Env = append(os.Environ(), "CDK_OUTDIR="+outdir)
	if context != nil {
		b, _ := json.Marshal(context)
		cmd.Env = append(cmd.Env, "CDK_CONTEXT_JSON="+string(b))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestSynthWithoutCLI synthesizes the default stack with `go run`, building
// the functions itself, and checks the template and that cdk-nag found
// nothing unsuppressed.
func TestSynthWithoutCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the app and the functions")
	}
	out := t.TempDir()
	log, err := goRun(t, out, nil)
	if err != nil {
		t.Fatalf("go run ./infra: %v\n%s", err, log)
	}
	raw, err := os.ReadFile(filepath.Join(out, "Doclib-demo.template.json"))
	if err != nil {
		t.Fatalf("no template: %v\n%s", err, log)
	}
	// The long steps say what they do as they start (the CDK CLI shows the
	// app's stderr as it comes).
	b, s := strings.Index(log, "infra: building the 6 Lambda functions"), strings.Index(log, "infra: synthesizing the stack")
	if b < 0 || s < b {
		t.Errorf("the app does not say what it builds, then what it synthesizes:\n%s", log)
	}
	var tmpl struct {
		Resources map[string]struct{ Type string }
	}
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, r := range tmpl.Resources {
		types[r.Type]++
	}
	for _, typ := range []string{"AWS::ApiGateway::RestApi", "AWS::DynamoDB::Table", "AWS::OpenSearchService::Domain", "AWS::WAFv2::WebACL"} {
		if types[typ] != 1 {
			t.Errorf("%d %s in the template", types[typ], typ)
		}
	}
	if types["AWS::Lambda::Function"] != 6 {
		t.Errorf("%d functions", types["AWS::Lambda::Function"])
	}
	for _, name := range []string{"libraries", "documents", "search", "mcp", "authorizer", "indexer"} {
		if _, err := os.Stat(filepath.Join(out, "doclib-functions", name, "bootstrap")); err != nil {
			t.Errorf("function %s was not built: %v", name, err)
		}
	}
	// cdk-nag's errors are annotations in the assembly: `cdk deploy` refuses
	// to deploy a stack that has one.
	meta, err := os.ReadFile(filepath.Join(out, "Doclib-demo.metadata.json"))
	if err != nil {
		meta, _ = os.ReadFile(filepath.Join(out, "manifest.json"))
	}
	if bytes.Contains(meta, []byte(`"aws:cdk:error"`)) {
		t.Errorf("the assembly has errors:\n%s", meta)
	}
}

// TestBadContextFails: a wrong context value stops synthesis with an error
// that names the key.
func TestBadContextFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the app")
	}
	log, err := goRun(t, t.TempDir(), map[string]string{"embedDimensions": "768"})
	if err == nil {
		t.Fatalf("embedDimensions=768 synthesized:\n%s", log)
	}
	if !strings.Contains(log, "context embedDimensions=768") || !strings.Contains(log, "256, 512 or 1024") {
		t.Errorf("the error does not name the key and the accepted values:\n%s", log)
	}
}
