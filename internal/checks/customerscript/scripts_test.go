package customerscript

import (
	"path/filepath"
	"strings"
	"testing"
)

// runScript runs one of scripts/ with the fake aws (answering healthy()),
// and fakes of go and npm that log their command line (go then fails, npm
// installs nothing). No CDK CLI is where scripts/cdk looks, so that the
// real one never runs.
func runScript(t *testing.T, script string, env []string, args ...string) result {
	t.Helper()
	tools := map[string]string{"go": fakeTool + "exit 1\n", "npm": fakeTool}
	return runFakes(t, script, healthy(), tools, func(dir string) []string {
		return append([]string{"DOCLIB_CDK_CLI_DIR=" + filepath.Join(dir, "no-cdk")}, env...)
	}, args...)
}

// TestCDKChecksTheAccountBeforeItBuilds: scripts/cdk deploy with no
// credentials and no Region stops before it installs the CDK CLI or
// builds anything, with the commands that fix it; so does deploy in an
// account without the CDK bootstrap.
func TestCDKChecksTheAccountBeforeItBuilds(t *testing.T) {
	r := runScript(t, "cdk", []string{"AWS_REGION=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}, "deploy", "-c", "customer=acme")
	if r.err == nil || !strings.Contains(r.out, "cdk: no AWS Region is set: export AWS_REGION=") || !strings.Contains(r.out, "cdk: no AWS credentials") {
		t.Errorf("no account: err %v\n%s", r.err, r.out)
	}
	if strings.Contains(r.log, "go ") || strings.Contains(r.log, "npm ") {
		t.Errorf("built or installed before the account was checked:\n%s", r.log)
	}
	// bootstrap takes its Region from aws://ACCOUNT/REGION.
	r = runScript(t, "cdk", []string{"AWS_REGION="}, "bootstrap", "aws://123456789012/eu-west-1")
	if strings.Contains(r.out, "no AWS Region") || !strings.Contains(r.out, "AWS account 123456789012 in eu-west-1") {
		t.Errorf("bootstrap aws://…/eu-west-1:\n%s", r.out)
	}
	if !strings.Contains(r.log, "npm install") {
		t.Errorf("bootstrap did not go on to install the CLI after the checks:\n%s", r.log)
	}
}

// TestCDKAndStandinSayTheyBuild: scripts/cdk builds the app, and
// scripts/standin the stand-in, with a line that says so and how long it
// takes, before the build starts (go run would build them in silence).
// The fake go fails, so that the script stops there.
func TestCDKAndStandinSayTheyBuild(t *testing.T) {
	for _, c := range []struct {
		script string
		args   []string
		line   string
		build  string
	}{
		{"cdk", []string{"synth", "-q"}, "==> building the CDK app (go build ./infra: ", "go build -o .tools/cdk-app/infra ./infra"},
		{"standin", []string{"-c", "search=embedded"}, "==> building the stand-in (go build ./internal/standin/cmd/standin: ", "go build -o .tools/standin/standin ./internal/standin/cmd/standin"},
	} {
		r := runScript(t, c.script, nil, c.args...)
		if r.err == nil || !strings.Contains(r.out, c.line) || !strings.Contains(r.out, "the first time on 2 cores") {
			t.Errorf("scripts/%s does not say what it builds: err %v\n%s", c.script, r.err, r.out)
		}
		if !strings.Contains(r.log, c.build) {
			t.Errorf("scripts/%s did not build with %q:\n%s", c.script, c.build, r.log)
		}
	}
}
