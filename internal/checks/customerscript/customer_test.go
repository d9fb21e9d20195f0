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

// runWith runs scripts/customer with the fakes first on PATH, the fake aws
// answering from fx, and no terminal.
func runWith(t *testing.T, fx answers, env []string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"cdk": fakeTool, "doclib-admin": fakeTool} {
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
	cmd := exec.Command(filepath.Join("..", "..", "..", "scripts", "customer"), args...)
	cmd.Env = append(os.Environ(),
		"PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_LOG="+logFile,
		"FAKE_AWS_FIXTURES="+fixtureFile,
		"DOCLIB_CDK="+filepath.Join(dir, "cdk"),
		"DOCLIB_ADMIN="+filepath.Join(dir, "doclib-admin"),
		"DOCLIB_CDK_JSON="+filepath.Join(dir, "no-cdk.json"),
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
