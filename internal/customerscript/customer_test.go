package customerscript

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeAWS answers the look-ups scripts/customer makes, as the AWS CLI's text
// output would, and logs every call. FAKE_STACK=gone makes describe-stacks
// fail as it does for a stack that does not exist.
const fakeAWS = `#!/usr/bin/env bash
echo "aws $*" >> "$FAKE_LOG"
case "$1 $2" in
  "cloudformation describe-stacks")
    [ "${FAKE_STACK:-}" = gone ] && { echo "An error occurred (ValidationError): Stack with id $4 does not exist" >&2; exit 254; }
    case "$*" in
      *"OutputKey=='TableName'"*) echo "Doclib-acme-TableABC" ;;
      *"OutputKey=='UsagePlans'"*) echo "free=p1,pro=p2" ;;
      *StackStatus*) echo "CREATE_COMPLETE" ;;
    esac ;;
  "dynamodb list-tables") printf 'Doclib-acme-TableABC\tDoclib-acme-eu-TableXYZ\tother\n' ;;
  "opensearch list-domain-names") echo "doclib-acme" ;;
  "resourcegroupstaggingapi get-resources") echo "arn:aws:s3:::doclib-acme-snapshotsabc" ;;
  "s3api list-object-versions") printf 'snapshots/1\tv1\nsnapshots/1\tv2\npointer\tv3\n' ;;
  "logs describe-log-groups") printf 'Doclib-acme-SearchLogs1\tDoclib-acme-eu-SearchLogs2\n' ;;
  "apigateway get-api-keys") printf 'k1\tk2\n' ;;
esac
exit 0
`

const fakeTool = `#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$FAKE_LOG"
`

type result struct {
	out, log string
	err      error
}

// run runs scripts/customer with the fakes first on PATH, and no terminal.
func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"aws": fakeAWS, "cdk": fakeTool, "doclib-admin": fakeTool} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logFile := filepath.Join(dir, "calls.log")
	cmd := exec.Command(filepath.Join("..", "..", "scripts", "customer"), args...)
	cmd.Env = append(os.Environ(),
		"PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_LOG="+logFile,
		"DOCLIB_CDK="+filepath.Join(dir, "cdk"),
		"DOCLIB_ADMIN="+filepath.Join(dir, "doclib-admin"),
		"AWS_REGION=us-east-1",
	)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	logged, _ := os.ReadFile(logFile)
	return result{string(out), string(logged), err}
}

// commands are the lines of out that the script prints for what it runs.
func commands(out string) []string {
	var c []string
	for _, l := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(l, "+ "); ok {
			c = append(c, s)
		}
	}
	return c
}

// mutating are the logged calls of the fakes that change something.
func mutating(log string) []string {
	var m []string
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if l == "" || strings.Contains(l, " describe-") || strings.Contains(l, " list-") || strings.Contains(l, " get-") {
			continue
		}
		m = append(m, l)
	}
	return m
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestDryRunPrintsAndRunsNothing(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"create", []string{"--dry-run", "create", "acme", "-c", "search=embedded"}, []string{"CDK deploy -c customer=acme -c search=embedded"}},
		{"load", []string{"load", "acme", "acme.json", "--dry-run"}, []string{"ADMIN import --data acme.json --table Doclib-acme-TableABC"}},
		{"keys", []string{"--dry-run", "keys", "acme", "list", "--workspace", "ws_acme"}, []string{"ADMIN keys list --workspace ws_acme --table Doclib-acme-TableABC"}},
		{"keys sync", []string{"--dry-run", "keys", "acme", "sync"}, []string{"ADMIN keys sync --usage-plans free=p1\\,pro=p2 --table Doclib-acme-TableABC"}},
		{"upgrade", []string{"--dry-run", "upgrade", "acme", "-c", "search=embedded"}, []string{"CDK diff -c customer=acme -c search=embedded", "CDK deploy -c customer=acme -c search=embedded"}},
		{"destroy", []string{"--dry-run", "destroy", "acme"}, []string{"CDK destroy -c customer=acme"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, nil, c.args...)
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.out)
			}
			got := commands(r.out)
			for i, g := range got {
				f := strings.Fields(g)
				switch filepath.Base(f[0]) {
				case "cdk":
					f[0] = "CDK"
				case "doclib-admin":
					f[0] = "ADMIN"
				}
				got[i] = strings.Join(f, " ")
			}
			equal(t, "printed commands", got, c.want)
			if m := mutating(r.log); len(m) > 0 {
				t.Errorf("--dry-run ran %q", m)
			}
		})
	}
}

func TestUpgradeSaysHowToRollBack(t *testing.T) {
	r := run(t, nil, "--dry-run", "upgrade", "acme", "-c", "search=embedded")
	if !strings.Contains(r.out, "To roll back") || !strings.Contains(r.out, "scripts/customer upgrade acme -c search=embedded") {
		t.Errorf("upgrade does not say how to roll back:\n%s", r.out)
	}
}

func TestPurgeOrder(t *testing.T) {
	r := run(t, []string{"FAKE_STACK=gone"}, "--dry-run", "purge", "acme")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out)
	}
	equal(t, "purge", commands(r.out), []string{
		"aws dynamodb update-table --table-name Doclib-acme-TableABC --no-deletion-protection-enabled",
		"aws dynamodb wait table-exists --table-name Doclib-acme-TableABC",
		"aws dynamodb delete-table --table-name Doclib-acme-TableABC",
		"aws opensearch delete-domain --domain-name doclib-acme",
		"aws s3api delete-object --bucket doclib-acme-snapshotsabc --key snapshots/1 --version-id v1",
		"aws s3api delete-object --bucket doclib-acme-snapshotsabc --key snapshots/1 --version-id v2",
		"aws s3api delete-object --bucket doclib-acme-snapshotsabc --key pointer --version-id v3",
		"aws s3api delete-bucket --bucket doclib-acme-snapshotsabc",
		"aws logs delete-log-group --log-group-name Doclib-acme-SearchLogs1",
		"aws apigateway delete-api-key --api-key k1",
		"aws apigateway delete-api-key --api-key k2",
	})
	if m := mutating(r.log); len(m) > 0 {
		t.Errorf("--dry-run ran %q", m)
	}
}

func TestPurgeRefusesWithoutTerminalOrYes(t *testing.T) {
	r := run(t, []string{"FAKE_STACK=gone"}, "purge", "acme")
	if r.err == nil {
		t.Fatalf("purge without --yes and without a terminal succeeded:\n%s", r.out)
	}
	if !strings.Contains(r.out, "--yes") {
		t.Errorf("the refusal does not say what to do:\n%s", r.out)
	}
	if m := mutating(r.log); len(m) > 0 {
		t.Errorf("a refused purge ran %q", m)
	}
	// With --yes it deletes, in the printed order.
	r = run(t, []string{"FAKE_STACK=gone"}, "--yes", "purge", "acme")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out)
	}
	m := mutating(r.log)
	if len(m) != 11 || !strings.Contains(m[0], "--no-deletion-protection-enabled") || !strings.HasPrefix(m[7], "aws s3api delete-bucket") {
		t.Errorf("purge --yes ran:\n  %s", strings.Join(m, "\n  "))
	}
}

func TestPurgeRefusesWhileTheStackExists(t *testing.T) {
	r := run(t, nil, "--dry-run", "purge", "acme")
	if r.err == nil || !strings.Contains(r.out, "scripts/customer destroy acme first") {
		t.Errorf("purge of a live stack: err %v\n%s", r.err, r.out)
	}
}

func TestMissingStackSaysWhatToDo(t *testing.T) {
	r := run(t, []string{"FAKE_STACK=gone"}, "--dry-run", "load", "acme", "acme.json")
	if r.err == nil || !strings.Contains(r.out, "does not exist") || !strings.Contains(r.out, "scripts/customer create acme") {
		t.Errorf("load on a missing stack: err %v\n%s", r.err, r.out)
	}
}

func TestMissingAWSCLISaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	// A PATH with the tools the script needs but no aws.
	for _, tool := range []string{"bash", "dirname", "tr", "sed", "grep", "git"} {
		if p, err := exec.LookPath(tool); err == nil {
			_ = os.Symlink(p, filepath.Join(dir, tool))
		}
	}
	cmd := exec.Command(bash, filepath.Join("..", "..", "scripts", "customer"), "--dry-run", "destroy", "acme")
	cmd.Env = []string{"PATH=" + dir}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "AWS CLI") || !strings.Contains(string(out), "install") {
		t.Errorf("no aws: err %v\n%s", err, out)
	}
}

func TestUnknownCommandFailsWithUsage(t *testing.T) {
	r := run(t, nil, "rename", "acme")
	if r.err == nil || !strings.Contains(r.out, "unknown command") || !strings.Contains(r.out, "Usage: scripts/customer") {
		t.Errorf("unknown command: err %v\n%s", r.err, r.out)
	}
	r = run(t, nil, "--help")
	if r.err != nil || !strings.Contains(r.out, "scripts/customer purge acme") {
		t.Errorf("--help: err %v\n%s", r.err, r.out)
	}
	r = run(t, nil, "create", "Acme")
	if r.err == nil || !strings.Contains(r.out, "not a customer name") {
		t.Errorf("bad name: err %v\n%s", r.err, r.out)
	}
}
