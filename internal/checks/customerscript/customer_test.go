package customerscript

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs the test binary as the fake aws command when it is started
// under that name (fakeaws_test.go).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "aws" {
		os.Exit(fakeAWS(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// answers are the fake aws's fixtures: for each call, the JSON the service
// answers (see fakeaws_test.go).
type answers map[string]string

// with returns a copy of a with more answers.
func (a answers) with(more answers) answers {
	out := answers{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// write writes the answers where the fake aws reads them (FAKE_AWS_FIXTURES).
func (a answers) write(t *testing.T, path string) {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range a {
		raw[k] = json.RawMessage(v)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatalf("fixtures: %v", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// healthy answers every call the script makes about the stack Doclib-acme,
// deployed with the defaults (search=domain, usage plans), in an account
// with room to spare: 1,000 concurrent executions none of them reserved,
// 3 API keys, 4 usage plans (acme's 3) and 2 log resource policies (acme's 1).
func healthy() answers {
	return answers{
		"cloudformation describe-stacks": `{"Stacks": [{"StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/Doclib-acme/5f0c2a10-ea0e-11f0-9a4e-0affd1a2b3c4",
			"StackName": "Doclib-acme", "CreationTime": "2026-01-05T10:00:00.123000+00:00", "StackStatus": "UPDATE_COMPLETE",
			"DisableRollback": false, "NotificationARNs": [], "Capabilities": ["CAPABILITY_IAM"],
			"Outputs": [{"OutputKey": "TableName", "OutputValue": "Doclib-acme-TableABC"},
				{"OutputKey": "UsagePlans", "OutputValue": "customer=acme,individual=p1,team=p2,enterprise=p3", "Description": "Usage plan per tier, as DOCLIB_USAGE_PLANS takes them"}],
			"Tags": [], "EnableTerminationProtection": false, "DriftInformation": {"StackDriftStatus": "NOT_CHECKED"}}]}`,
		"dynamodb list-tables":         `{"TableNames": ["Doclib-acme-TableABC", "Doclib-acme-eu-TableXYZ", "other"]}`,
		"opensearch list-domain-names": `{"DomainNames": [{"DomainName": "doclib-acme", "EngineType": "OpenSearch"}, {"DomainName": "doclib-acme-eu", "EngineType": "OpenSearch"}]}`,
		"resourcegroupstaggingapi get-resources": `{"PaginationToken": "", "ResourceTagMappingList": [{"ResourceARN": "arn:aws:s3:::doclib-acme-snapshotsabc",
			"Tags": [{"Key": "aws:cloudformation:stack-name", "Value": "Doclib-acme"}]}]}`,
		"s3api list-object-versions": `{"IsTruncated": false, "KeyMarker": "", "VersionIdMarker": "", "Name": "doclib-acme-snapshotsabc", "Prefix": "", "MaxKeys": 1000,
			"Versions": [{"ETag": "\"6805f2cfc46c0f04559748bb039d69ae\"", "Size": 1024, "StorageClass": "STANDARD", "Key": "snapshots/1", "VersionId": "v1", "IsLatest": false, "LastModified": "2026-01-05T10:00:00+00:00"},
				{"ETag": "\"5d41402abc4b2a76b9719d911017c592\"", "Size": 2048, "StorageClass": "STANDARD", "Key": "snapshots/1", "VersionId": "v2", "IsLatest": true, "LastModified": "2026-01-06T10:00:00+00:00"}],
			"DeleteMarkers": [{"Key": "pointer", "VersionId": "v3", "IsLatest": true, "LastModified": "2026-01-07T10:00:00+00:00"}]}`,
		"logs describe-log-groups": `{"logGroups": [
			{"logGroupName": "Doclib-acme-SearchLogs1", "creationTime": 1767607200000, "retentionInDays": 90, "metricFilterCount": 0, "storedBytes": 0, "logGroupClass": "STANDARD",
				"arn": "arn:aws:logs:us-east-1:123456789012:log-group:Doclib-acme-SearchLogs1:*", "logGroupArn": "arn:aws:logs:us-east-1:123456789012:log-group:Doclib-acme-SearchLogs1"},
			{"logGroupName": "Doclib-acme-eu-SearchLogs2", "creationTime": 1767607200000, "retentionInDays": 90, "metricFilterCount": 0, "storedBytes": 0, "logGroupClass": "STANDARD",
				"arn": "arn:aws:logs:us-east-1:123456789012:log-group:Doclib-acme-eu-SearchLogs2:*", "logGroupArn": "arn:aws:logs:us-east-1:123456789012:log-group:Doclib-acme-eu-SearchLogs2"}]}`,
		"apigateway get-api-keys":    apiKeys(3, 2),
		"apigateway get-usage-plans": usagePlans(1, "acme"),
		"logs describe-resource-policies": `{"resourcePolicies": [
			{"policyName": "doclib-acme-opensearch-logs", "policyDocument": "{\"Version\":\"2012-10-17\",\"Statement\":[]}", "lastUpdatedTime": 1767607200000, "policyScope": "ACCOUNT", "revisionId": "1"},
			{"policyName": "AWSLogDeliveryWrite20150319", "policyDocument": "{\"Version\":\"2012-10-17\",\"Statement\":[]}", "lastUpdatedTime": 1767607200000, "policyScope": "ACCOUNT", "revisionId": "1"}]}`,
		"sts get-caller-identity": `{"UserId": "AIDAEXAMPLEOPS", "Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/ops"}`,
		"cloudformation describe-stacks --stack-name CDKToolkit": `{"Stacks": [{"StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/CDKToolkit/0a1b2c3d-ea0e-11f0-9a4e-0affd1a2b3c4",
			"StackName": "CDKToolkit", "CreationTime": "2026-01-01T10:00:00.123000+00:00", "StackStatus": "CREATE_COMPLETE",
			"DisableRollback": false, "NotificationARNs": [], "Capabilities": ["CAPABILITY_NAMED_IAM"],
			"Outputs": [{"OutputKey": "BootstrapVersion", "OutputValue": "30"}], "Tags": [], "EnableTerminationProtection": true}]}`,
		"lambda get-account-settings":     lambdaAccount(1000, 1000),
		"lambda get-function-concurrency": `{}`,
		"service-quotas get-service-quota": `{"Quota": {"ServiceCode": "apigateway", "ServiceName": "Amazon API Gateway",
			"QuotaArn": "arn:aws:servicequotas:us-east-1:123456789012:apigateway/L-E8693075", "QuotaCode": "L-E8693075",
			"QuotaName": "Usage plans per account per Region", "Value": 300.0, "Unit": "None", "Adjustable": true, "GlobalQuota": false, "QuotaAppliedAtLevel": "ACCOUNT"}}`,
		// What purge --yes runs.
		"dynamodb update-table":      `{"TableDescription": {"TableName": "Doclib-acme-TableABC", "TableStatus": "UPDATING", "DeletionProtectionEnabled": false}}`,
		"dynamodb wait table-exists": `{}`,
		"dynamodb delete-table":      `{"TableDescription": {"TableName": "Doclib-acme-TableABC", "TableStatus": "DELETING"}}`,
		"opensearch delete-domain":   `{"DomainStatus": {"DomainId": "123456789012/doclib-acme", "DomainName": "doclib-acme", "ARN": "arn:aws:es:us-east-1:123456789012:domain/doclib-acme", "Created": true, "Deleted": true}}`,
		"s3api delete-object":        `{"DeleteMarker": false, "VersionId": "v1"}`,
		"s3api delete-bucket":        `{}`,
		"logs delete-log-group":      `{}`,
		"apigateway delete-api-key":  `{}`,
	}
}

// gone is the account after the stack was destroyed.
func gone() answers {
	return healthy().with(answers{"cloudformation describe-stacks": refused("ValidationError", "Stack with id Doclib-acme does not exist")})
}

// refused is the answer of a call the service refuses.
func refused(code, message string) string {
	b, _ := json.Marshal(map[string]any{"$error": map[string]string{"Code": code, "Message": message}})
	return string(b)
}

func lambdaAccount(total, unreserved int) string {
	return fmt.Sprintf(`{"AccountLimit": {"TotalCodeSize": 80530636800, "CodeSizeUnzipped": 262144000, "CodeSizeZipped": 52428800,
		"ConcurrentExecutions": %d, "UnreservedConcurrentExecutions": %d}, "AccountUsage": {"TotalCodeSize": 18472930, "FunctionCount": 10}}`, total, unreserved)
}

// apiKeys is the account's API keys, mine of them acme's, in pages of 500
// (the most the CLI's --page-size asks for) as the API returns them.
func apiKeys(total, mine int) string {
	var pages []any
	var items []any
	for i := range total {
		customer := "other"
		if i < mine {
			customer = "acme"
		}
		items = append(items, map[string]any{"id": fmt.Sprintf("k%d", i+1), "name": fmt.Sprintf("doclib-%s-v2%06d", customer, i),
			"enabled": true, "createdDate": "2026-01-05T10:00:00+00:00", "lastUpdatedDate": "2026-01-05T10:00:00+00:00",
			"stageKeys": []any{}, "tags": map[string]string{"doclib:customer": customer}})
		if len(items) == 500 || i == total-1 {
			page := map[string]any{"items": items}
			if i < total-1 {
				page["position"] = fmt.Sprintf("pos%d", i)
			}
			pages = append(pages, page)
			items = nil
		}
	}
	if len(pages) == 0 {
		pages = append(pages, map[string]any{"items": []any{}})
	}
	b, _ := json.Marshal(map[string]any{"$pages": pages})
	return string(b)
}

// usagePlans is the account's usage plans: the three of each customer given,
// in one page.
func usagePlans(others int, customers ...string) string {
	var items []any
	plan := func(id, name string) {
		items = append(items, map[string]any{"id": id, "name": name, "description": "doclib keys",
			"apiStages": []any{map[string]any{"apiId": "a1b2c3d4e5", "stage": "api"}},
			"throttle":  map[string]any{"burstLimit": 200, "rateLimit": json.Number("3.3333333333333335")}, "tags": map[string]any{}})
	}
	for _, c := range customers {
		for _, tier := range []string{"individual", "team", "enterprise"} {
			plan(fmt.Sprintf("%s-%s", c, tier), "doclib-"+c+"-"+tier)
		}
	}
	for i := range others {
		plan(fmt.Sprintf("o%d", i), fmt.Sprintf("other-plan-%d", i))
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	return string(b)
}

const fakeTool = `#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$FAKE_LOG"
`

type result struct {
	out, log string
	err      error
}

// run runs scripts/customer against the healthy account.
func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runWith(t, healthy(), env, args...)
}

// account sets, for a fake aws run in the test's own process, what runWith
// gives the script: an account signed in with keys, in us-east-1, and no
// AWS files or variables of the machine's.
func account(t *testing.T, dir string) {
	t.Helper()
	for _, kv := range awsEnv(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// awsEnv is the AWS configuration of the scripts under test: keys in the
// variables, us-east-1, and no config or credentials file (HOME is dir).
// A test takes some away by setting them empty ("AWS_REGION=").
func awsEnv(dir string) []string {
	return []string{
		"HOME=" + dir,
		"AWS_CONFIG_FILE=" + filepath.Join(dir, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "aws-credentials"),
		"AWS_PROFILE=", "AWS_DEFAULT_REGION=",
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIAEXAMPLEOPS000000",
		"AWS_SECRET_ACCESS_KEY=example/secret/key/of/the/tests/000000000",
	}
}

// runWith runs scripts/customer with the fakes first on PATH, the fake aws
// answering from fx, and no terminal. go is a fake too, so that a test
// sees whether anything was compiled.
func runWith(t *testing.T, fx answers, env []string, args ...string) result {
	t.Helper()
	tools := map[string]string{"cdk": fakeTool, "doclib-admin": fakeTool, "go": fakeTool}
	return runFakes(t, "customer", fx, tools, func(dir string) []string {
		return append([]string{
			"DOCLIB_CDK=" + filepath.Join(dir, "cdk"),
			"DOCLIB_ADMIN=" + filepath.Join(dir, "doclib-admin"),
			"DOCLIB_CDK_JSON=" + filepath.Join(dir, "no-cdk.json"),
		}, env...)
	}, args...)
}

// runFakes runs scripts/<script> with no terminal, in an environment of
// fakes: tools (name to the script's body) and the fake aws, answering
// from fx, first on PATH; the test's AWS configuration (awsEnv), without
// the machine's AWS_ and DOCLIB_ variables; then what env returns for the
// fakes' folder.
func runFakes(t *testing.T, script string, fx answers, tools map[string]string, env func(dir string) []string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	for name, body := range tools {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(dir, "aws")); err != nil {
		t.Fatal(err)
	}
	fixtureFile := filepath.Join(dir, "fixtures.json")
	fx.write(t, fixtureFile)
	logFile := filepath.Join(dir, "calls.log")
	cmd := exec.Command(filepath.Join("..", "..", "..", "scripts", script), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "DOCLIB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env,
		"PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_LOG="+logFile,
		"FAKE_AWS_FIXTURES="+fixtureFile,
	)
	cmd.Env = append(cmd.Env, awsEnv(dir)...)
	cmd.Env = append(cmd.Env, env(dir)...)
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
		if l == "" || strings.Contains(l, " describe-") || strings.Contains(l, " list-") || strings.Contains(l, " get-") || strings.HasPrefix(l, "aws configure get ") {
			continue
		}
		m = append(m, l)
	}
	return m
}

// says checks that out has every string of want and none of not.
func says(t *testing.T, out string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, w := range not {
		if strings.Contains(out, w) {
			t.Errorf("output has %q:\n%s", w, out)
		}
	}
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
		{"keys sync", []string{"--dry-run", "keys", "acme", "sync"}, []string{"ADMIN keys sync --usage-plans customer=acme\\,individual=p1\\,team=p2\\,enterprise=p3 --table Doclib-acme-TableABC"}},
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
	r := runWith(t, gone(), nil, "--dry-run", "purge", "acme")
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
	r := runWith(t, gone(), nil, "purge", "acme")
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
	r = runWith(t, gone(), nil, "--yes", "purge", "acme")
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
	r := runWith(t, gone(), nil, "--dry-run", "load", "acme", "acme.json")
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
	cmd := exec.Command(bash, filepath.Join("..", "..", "..", "scripts", "customer"), "--dry-run", "destroy", "acme")
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

// TestSignInIsCheckedFirst: with no Region or no working credentials, every
// command stops in its first seconds, before a preflight, a build or a
// deploy, with the command that fixes each problem. Before, create with
// neither built six functions and synthesized the stack for half an hour
// until the CDK said "Unable to resolve AWS account to use", after a
// preflight that had passed "in the configured Region" with four warnings.
// The stop is counted in calls, not seconds: what a busy machine cannot
// change is that nothing but the two checks ran.
func TestSignInIsCheckedFirst(t *testing.T) {
	noAccount := []string{"AWS_REGION=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}
	expired := healthy().with(answers{"sts get-caller-identity": refused("ExpiredToken", "The security token included in the request is expired")})
	for _, c := range []struct {
		name string
		fx   answers
		env  []string
		args []string
		want []string // in the output
		not  []string
	}{
		{"create with neither", healthy(), noAccount, []string{"create", "acme", "-c", "search=embedded"},
			[]string{"no AWS Region is set: export AWS_REGION=", "no AWS credentials", "aws sso login", "aws configure", "stopped before anything was built or deployed"},
			[]string{"Preflight", "You must specify a region", "+ "}},
		{"upgrade without a Region", healthy(), []string{"AWS_REGION="}, []string{"upgrade", "acme"},
			[]string{"no AWS Region is set: export AWS_REGION="}, []string{"credentials", "Preflight"}},
		{"load without credentials", healthy(), []string{"AWS_ACCESS_KEY_ID=", "AWS_PROFILE=ops"}, []string{"--dry-run", "load", "acme", "acme.json"},
			[]string{"no AWS credentials for the profile ops: sign in with aws sso login --profile ops"}, []string{"Region"}},
		{"destroy with expired credentials", expired, nil, []string{"--yes", "destroy", "acme"},
			[]string{"the AWS credentials have expired", "aws sso login"}, nil},
		{"keys with expired credentials", expired, nil, []string{"keys", "acme", "list", "--workspace", "ws_acme"},
			[]string{"the AWS credentials have expired"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runWith(t, c.fx, c.env, c.args...)
			if r.err == nil {
				t.Fatalf("it went on:\n%s", r.out)
			}
			says(t, r.out, c.want, c.not)
			// Only the two checks ran: no preflight call, no go, no cdk.
			for _, l := range strings.Split(strings.TrimSpace(r.log), "\n") {
				if l != "" && l != "aws configure get region" && !strings.HasPrefix(l, "aws sts get-caller-identity ") {
					t.Errorf("ran %q before stopping", l)
				}
			}
		})
	}
}

// TestRegionAndProfileFromTheConfigFile: a Region set only in the profile's
// section of the config file is found, as the CLI and the CDK find it, and
// is the Region the preflight names.
func TestRegionAndProfileFromTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config")
	if err := os.WriteFile(config, []byte("[default]\nregion = us-west-2\n\n[profile ops]\nregion = eu-west-1\nsso_session = corp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runWith(t, healthy(), []string{"AWS_REGION=", "AWS_ACCESS_KEY_ID=", "AWS_PROFILE=ops", "AWS_CONFIG_FILE=" + config}, "--dry-run", "create", "acme", "-c", "search=embedded")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out)
	}
	if !strings.Contains(r.out, "AWS account 123456789012 in eu-west-1 (profile ops)") || !strings.Contains(r.out, "Preflight passed in eu-west-1") {
		t.Errorf("the profile's Region was not used:\n%s", r.out)
	}
}

// TestCreateNeedsTheCDKBootstrap: an account without the CDK's bootstrap
// stack in the Region stops create before anything is built, with the
// bootstrap command for that account and Region.
func TestCreateNeedsTheCDKBootstrap(t *testing.T) {
	fx := healthy().with(answers{"cloudformation describe-stacks --stack-name CDKToolkit": refused("ValidationError", "Stack with id CDKToolkit does not exist")})
	r := runWith(t, fx, nil, "create", "acme", "-c", "search=embedded")
	if r.err == nil || !strings.Contains(r.out, "./scripts/cdk bootstrap aws://123456789012/us-east-1") {
		t.Errorf("no bootstrap: err %v\n%s", r.err, r.out)
	}
	if strings.Contains(r.log, "cdk ") || strings.Contains(r.log, "go ") || strings.Contains(r.out, "Preflight") {
		t.Errorf("went on without a bootstrap:\n%s\n%s", r.log, r.out)
	}
}

// TestDeploySaysWhatTakesLong: create and upgrade say, as cdk deploy
// starts, what it does and how long it takes.
func TestDeploySaysWhatTakesLong(t *testing.T) {
	for _, args := range [][]string{{"--dry-run", "create", "acme", "-c", "search=embedded"}, {"--dry-run", "upgrade", "acme"}} {
		r := run(t, nil, args...)
		if r.err != nil {
			t.Fatalf("%v\n%s", r.err, r.out)
		}
		i := strings.Index(r.out, "1. build the CDK app and the six Lambda functions: minutes the first time")
		if i < 0 || i > strings.Index(r.out, "+ ") {
			t.Errorf("%v: no word of what cdk deploy does before it runs:\n%s", args, r.out)
		}
	}
}
