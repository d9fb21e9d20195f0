package customerscript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fresh is the account before the stack of customer name exists.
func fresh(name string) answers {
	return answers{"cloudformation describe-stacks --stack-name Doclib-" + name: refused("ValidationError", "Stack with id Doclib-"+name+" does not exist")}
}

// reserved answers get-function-concurrency for a function with n reserved.
func reserved(function string, n int) answers {
	b, _ := json.Marshal(map[string]int{"ReservedConcurrentExecutions": n})
	return answers{"lambda get-function-concurrency --function-name " + function: string(b)}
}

// logPolicies is the account's CloudWatch Logs resource policies: n others
// and acme's when acme is true.
func logPolicies(n int, acme bool) string {
	var l []any
	add := func(name string) {
		l = append(l, map[string]any{"policyName": name, "policyDocument": `{"Version":"2012-10-17","Statement":[]}`,
			"lastUpdatedTime": 1767607200000, "policyScope": "ACCOUNT", "revisionId": "1"})
	}
	if acme {
		add("doclib-acme-opensearch-logs")
	}
	for i := range n {
		add("AWSLogDeliveryWrite" + string(rune('a'+i)))
	}
	b, _ := json.Marshal(map[string]any{"resourcePolicies": l})
	return string(b)
}

func quota(value string) string {
	return `{"Quota": {"ServiceCode": "apigateway", "ServiceName": "Amazon API Gateway", "QuotaCode": "L-E8693075",
		"QuotaName": "Usage plans per account per Region", "Value": ` + value + `, "Unit": "None", "Adjustable": true, "GlobalQuota": false}}`
}

// dataSet writes a data set with n keys and returns its path.
func dataSet(t *testing.T, n int) string {
	t.Helper()
	keys := make([]any, n)
	for i := range keys {
		keys[i] = map[string]any{"id": "key_" + string(rune('a'+i)), "workspaceId": "ws_acme", "deviceId": "dev_1",
			"secret": "dlk_secret_" + strings.Repeat(string(rune('a'+i)), 16), "libraries": []string{"*"}}
	}
	b, _ := json.Marshal(map[string]any{"workspaces": []any{map[string]any{"id": "ws_acme", "name": "Acme", "plan": "team"}},
		"devices": []any{map[string]any{"id": "dev_1", "workspaceId": "ws_acme", "status": "active"}}, "apiKeys": keys})
	p := filepath.Join(t.TempDir(), "acme.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cdkJSON writes a cdk.json with a context and returns the variable that
// points the script at it.
func cdkJSON(t *testing.T, context map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"app": "go run ./infra", "context": context})
	p := filepath.Join(t.TempDir(), "cdk.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return "DOCLIB_CDK_JSON=" + p
}

type preflightCase struct {
	name string
	fx   answers
	env  []string
	args []string
	// stop: the command fails and runs neither cdk deploy nor the import.
	stop bool
	want []string // phrases of the output
	not  []string // phrases the output must not have
}

func (c preflightCase) check(t *testing.T) {
	t.Helper()
	r := runWith(t, healthy().with(c.fx), c.env, c.args...)
	ran := strings.Contains(r.log, "cdk deploy") || strings.Contains(r.log, "doclib-admin import")
	switch {
	case c.stop && r.err == nil:
		t.Errorf("did not stop:\n%s", r.out)
	case c.stop && ran:
		t.Errorf("stopped, but ran:\n%s", r.log)
	case !c.stop && (r.err != nil || !ran):
		t.Errorf("did not deploy or import (err %v):\n%s\ncalls:\n%s", r.err, r.out, r.log)
	}
	says(t, r.out, c.want, c.not)
}

func TestPreflightLambdaConcurrency(t *testing.T) {
	for _, c := range []preflightCase{
		{name: "passes", args: []string{"create", "acme"},
			want: []string{"Preflight passed in us-east-1: Lambda concurrency 1000, unreserved 1000, 1000 after this stack's reservations; Lambda memory 1024 MB, within the 3008 MB every account allows; Lambda response streaming not checked (no API says which Regions offer it; in one that does not, deploy with -c responseStreaming=false); API keys 3 of 10000; usage plans 4+0 of 300; CloudWatch Logs resource policies 2+0 of 10."}},
		{name: "a quota of 10 cannot reserve 1 for the authorizer", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(10, 10)}),
			args: []string{"create", "newco", "-c", "authorizerReservedConcurrency=1"}, stop: true,
			want: []string{"Lambda concurrency: this stack would reserve 1 concurrent executions", "leave 9 of the account's 10 unreserved in us-east-1",
				"91 short of the 100 that Lambda keeps unreserved", "an account with 10 in all cannot reserve any",
				`Request an increase of the Lambda quota "Concurrent executions" (L-B99A9384) to at least 101 in Service Quotas`,
				"or deploy with -c authorizerReservedConcurrency=0", "stopped before cdk deploy: nothing was deployed", "--skip-preflight"}},
		// No function reserves concurrency unless asked: the embedded tier
		// creates on an account of 10 (issue 25).
		{name: "the embedded tier reserves nothing", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(10, 10)}),
			args: []string{"create", "newco", "-c", "search=embedded"},
			want: []string{"Lambda concurrency 10, unreserved 10, 10 after this stack's reservations"}},
		{name: "an indexer reservation on a small account stops", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(50, 50)}),
			args: []string{"create", "newco", "-c", "search=embedded", "-c", "indexerReservedConcurrency=1"}, stop: true,
			want: []string{"would reserve 1 concurrent executions (authorizer 0, indexer 1; 0 held now)", "51 short", "-c indexerReservedConcurrency=0"}},
		{name: "a reservation that leaves 100 passes", fx: answers{"lambda get-account-settings": lambdaAccount(1000, 150)},
			args: []string{"create", "acme", "-c", "authorizerReservedConcurrency=50"},
			want: []string{"Lambda concurrency 1000, unreserved 150, 100 after"}},
		{name: "one that leaves 99 stops", fx: answers{"lambda get-account-settings": lambdaAccount(1000, 150)},
			args: []string{"create", "acme", "-c", "authorizerReservedConcurrency=51"}, stop: true,
			want: []string{"leave 99 of the account's 1000 unreserved", "1 short", "to at least 1001"}, not: []string{"cannot reserve any"}},
		// The stack holds 50 for its authorizer already: asking for 100
		// takes 50 more, not 100.
		{name: "an upgrade counts what the stack holds", fx: answers{"lambda get-account-settings": lambdaAccount(1000, 150)}.with(reserved("doclib-acme-authorizer", 50)),
			args: []string{"upgrade", "acme", "--context", "authorizerReservedConcurrency=100"},
			want: []string{"unreserved 150, 100 after"}},
		{name: "and stops past it", fx: answers{"lambda get-account-settings": lambdaAccount(1000, 150)}.with(reserved("doclib-acme-authorizer", 50)),
			args: []string{"upgrade", "acme", "-cauthorizerReservedConcurrency=101"}, stop: true,
			want: []string{"would reserve 101 concurrent executions (authorizer 101, indexer 0; 50 held now)", "leave 99 "}},
		{name: "indexerReservedConcurrency from cdk.json", fx: answers{"lambda get-account-settings": lambdaAccount(1000, 104)},
			env: []string{cdkJSON(t, map[string]any{"indexerReservedConcurrency": 5})}, args: []string{"create", "acme"}, stop: true,
			want: []string{"(authorizer 0, indexer 5; 0 held now)", "1 short", "-c indexerReservedConcurrency=0"}},
		{name: "-c wins over cdk.json", fx: answers{"lambda get-account-settings": lambdaAccount(1000, 104)},
			env:  []string{cdkJSON(t, map[string]any{"indexerReservedConcurrency": 5})},
			args: []string{"create", "acme", "-c", "indexerReservedConcurrency=4"}, want: []string{"unreserved 104, 100 after"}},
		{name: "a small account warns but deploys", fx: answers{"lambda get-account-settings": lambdaAccount(50, 50)},
			args: []string{"create", "acme"},
			want: []string{"warning: Lambda concurrency: the account can run only 50", "the API will throttle under load", "L-B99A9384", "Preflight passed"}},
	} {
		t.Run(c.name, c.check)
	}
}

// functions is the Region's Lambda functions with these memory sizes, in
// pages of 50 as ListFunctions returns them.
func functions(memory ...int) string {
	var pages, page []any
	for i, mb := range memory {
		page = append(page, map[string]any{"FunctionName": fmt.Sprintf("other-%d", i),
			"FunctionArn": fmt.Sprintf("arn:aws:lambda:us-east-1:123456789012:function:other-%d", i), "Runtime": "provided.al2023",
			"Role": "arn:aws:iam::123456789012:role/other", "Handler": "bootstrap", "CodeSize": 1024, "Timeout": 3, "MemorySize": mb,
			"LastModified": "2026-01-05T10:00:00.000+0000", "Version": "$LATEST", "PackageType": "Zip", "Architectures": []string{"arm64"}})
		if len(page) == 50 || i == len(memory)-1 {
			p := map[string]any{"Functions": page}
			if i < len(memory)-1 {
				p["NextMarker"] = fmt.Sprintf("marker-%d", i)
			}
			pages, page = append(pages, p), nil
		}
	}
	if len(pages) == 0 {
		return `{"Functions": []}`
	}
	b, _ := json.Marshal(map[string]any{"$pages": pages})
	return string(b)
}

// TestPreflightLambdaMemory: a function over 3,008 MB is refused on an
// account with a new account's reduced quotas, which no API reads; the
// preflight stops when the account's concurrency is reduced too and no
// function of the Region has that much, passes when one has, and otherwise
// warns.
func TestPreflightLambdaMemory(t *testing.T) {
	big := make([]int, 60) // two pages; the largest on the second
	for i := range big {
		big[i] = 128
	}
	big[55] = 10240
	for _, c := range []preflightCase{
		{name: "the domain tier's 1024 MB fit every account", args: []string{"create", "acme"},
			want: []string{"Lambda memory 1024 MB, within the 3008 MB every account allows"}},
		{name: "the embedded tier's 3008 MB indexer too", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(10, 10)}),
			args: []string{"create", "newco", "-c", "search=embedded"}, want: []string{"Lambda memory 3008 MB, within the 3008 MB every account allows"}},
		{name: "4096 MB on a new account stops", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(10, 10),
			"lambda list-functions": functions(128, 3008)}),
			args: []string{"create", "newco", "-c", "search=embedded", "-c", "searchMemoryMb=4096"}, stop: true,
			want: []string{"Lambda memory: this stack gives the search and MCP functions' (searchMemoryMb) 4096 MB",
				"a concurrency quota of 10 where the default is 1000", "at most 3008 MB", "Deploy with -c searchMemoryMb=3008 or less",
				"ask AWS Support to raise the account's Lambda memory quota", "stopped before cdk deploy"}},
		{name: "from cdk.json too", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(10, 10),
			"lambda list-functions": functions()}),
			env:  []string{cdkJSON(t, map[string]any{"search": "embedded", "searchMemoryMb": 10240})},
			args: []string{"create", "newco"}, stop: true, want: []string{"(searchMemoryMb) 10240 MB"}},
		{name: "a function that has more already passes", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(10, 10),
			"lambda list-functions": functions(big...)}),
			args: []string{"create", "newco", "-c", "search=embedded", "-c", "searchMemoryMb=10240"},
			want: []string{"Lambda memory 10240 MB, as a function in us-east-1 has already"}},
		{name: "an account with the default concurrency warns", fx: fresh("newco").with(answers{"lambda list-functions": functions(128)}),
			args: []string{"create", "newco", "-c", "search=embedded", "-c", "searchMemoryMb=4096"},
			want: []string{"warning: Lambda memory: this stack gives the search and MCP functions' (searchMemoryMb) 4096 MB", "it was not checked",
				"deploy with -c searchMemoryMb=3008", "Lambda memory 4096 MB not confirmed"}},
		{name: "a failed read warns", fx: fresh("newco").with(answers{"lambda get-account-settings": lambdaAccount(10, 10),
			"lambda list-functions": refused("AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/ops/me is not authorized to perform: lambda:ListFunctions")}),
			args: []string{"create", "newco", "-c", "search=embedded", "-c", "searchMemoryMb=4096"},
			want: []string{"aws lambda list-functions failed (", "the Lambda memory check was not made", "Lambda memory not checked"}},
	} {
		t.Run(c.name, c.check)
	}
}

// TestPreflightResponseStreaming: no API tells which Regions offer Lambda
// response streaming, so the summary says it was not checked, with what to
// do; a buffered stack needs none.
func TestPreflightResponseStreaming(t *testing.T) {
	for _, c := range []preflightCase{
		{name: "streaming", args: []string{"create", "acme"},
			want: []string{"Lambda response streaming not checked (no API says which Regions offer it; in one that does not, deploy with -c responseStreaming=false)"}},
		{name: "buffered", args: []string{"create", "acme", "-c", "responseStreaming=false"},
			want: []string{"buffered answers (responseStreaming=false)"}, not: []string{"response streaming not checked"}},
	} {
		t.Run(c.name, c.check)
	}
}

func TestPreflightUsagePlans(t *testing.T) {
	for _, c := range []preflightCase{
		{name: "a new stack's 3 fit", fx: fresh("newco").with(answers{"apigateway get-usage-plans": usagePlans(297)}),
			args: []string{"create", "newco"}, want: []string{"usage plans 297+3 of 300"}},
		{name: "and stop past the quota", fx: fresh("newco").with(answers{"apigateway get-usage-plans": usagePlans(298)}),
			args: []string{"create", "newco"}, stop: true,
			want: []string{"API Gateway usage plans: this stack adds 3 to the account's 298 in us-east-1: 1 over the quota of 300",
				`"Usage plans per account per Region" (L-E8693075)`, "delete-usage-plan", "-c usagePlans=false"}},
		{name: "an upgrade counts the stack's own once", fx: answers{"apigateway get-usage-plans": usagePlans(297, "acme")},
			args: []string{"upgrade", "acme"}, want: []string{"usage plans 300+0 of 300"}},
		{name: "a raised quota is read", fx: fresh("newco").with(answers{"apigateway get-usage-plans": usagePlans(298), "service-quotas get-service-quota": quota("400.0")}),
			args: []string{"create", "newco"}, want: []string{"usage plans 298+3 of 400"}},
		{name: "usagePlans=false needs none", fx: fresh("newco").with(answers{"apigateway get-usage-plans": usagePlans(300)}),
			args: []string{"create", "newco", "-c", "usagePlans=false"}, want: []string{"no API keys or usage plans (usagePlans=false)"}},
	} {
		t.Run(c.name, c.check)
	}
}

func TestPreflightLogResourcePolicies(t *testing.T) {
	for _, c := range []preflightCase{
		{name: "a domain stack takes one", fx: fresh("newco").with(answers{"logs describe-resource-policies": logPolicies(9, false)}),
			args: []string{"create", "newco"}, want: []string{"CloudWatch Logs resource policies 9+1 of 10"}},
		{name: "the eleventh stops", fx: fresh("newco").with(answers{"logs describe-resource-policies": logPolicies(10, false)}),
			args: []string{"create", "newco"}, stop: true,
			want: []string{"CloudWatch Logs resource policies: the OpenSearch domain's logs need one more, and the account already has 10 of the 10",
				"cannot be raised", "delete-resource-policy", "-c search=embedded"}},
		{name: "an upgrade keeps its own", fx: answers{"logs describe-resource-policies": logPolicies(9, true)},
			args: []string{"upgrade", "acme"}, want: []string{"CloudWatch Logs resource policies 10+0 of 10"}},
		{name: "an embedded stack takes none", fx: fresh("newco").with(answers{"logs describe-resource-policies": logPolicies(10, false)}),
			args: []string{"create", "newco", "-c", "search=embedded"}, want: []string{"no CloudWatch Logs resource policy (search=embedded)"}},
	} {
		t.Run(c.name, c.check)
	}
}

// The API keys: the account's are counted over every page; a load adds the
// keys of its file that the stack does not have yet.
func TestPreflightAPIKeys(t *testing.T) {
	five := dataSet(t, 5)
	for _, c := range []preflightCase{
		{name: "counted over pages", fx: answers{"apigateway get-api-keys": apiKeys(1234, 2)},
			args: []string{"create", "acme"}, want: []string{"API keys 1234 of 10000"}},
		{name: "a load that fits", fx: answers{"apigateway get-api-keys": apiKeys(9995, 3)},
			args: []string{"load", "acme", five}, want: []string{"API keys 9995+2 of 10000", "Preflight passed"}, not: []string{"warning"}},
		{name: "a load that may not fit warns", fx: answers{"apigateway get-api-keys": apiKeys(9997, 3)},
			args: []string{"load", "acme", five}, want: []string{"warning: API Gateway API keys: if all 5 keys", "API keys 9997+2 of 10000"}},
		{name: "a load that cannot fit stops", fx: answers{"apigateway get-api-keys": apiKeys(9998, 1)},
			args: []string{"load", "acme", five}, stop: true,
			want: []string{"has 5 keys, at least 4 of them new to this stack (which has 1)", "already has 9998 of the 10000 API keys",
				"2 over, and the quota cannot be raised", "-c usagePlans=false", "stopped before the import: nothing was written"}},
		{name: "a stack without usage plans needs none", fx: answers{
			"apigateway get-api-keys": apiKeys(10000, 0),
			"cloudformation describe-stacks": `{"Stacks": [{"StackName": "Doclib-acme", "StackStatus": "UPDATE_COMPLETE", "CreationTime": "2026-01-05T10:00:00+00:00",
				"Outputs": [{"OutputKey": "TableName", "OutputValue": "Doclib-acme-TableABC"}]}]}`},
			args: []string{"load", "acme", five}, want: []string{"no API keys (the stack has no usage plans)"}},
	} {
		t.Run(c.name, c.check)
	}
}

// A call the operator may not make is said, and the checks go on: a gap in
// read permissions does not block a deploy.
func TestPreflightFailedReadWarns(t *testing.T) {
	denied := func(action string) string {
		return refused("AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/ops/me is not authorized to perform: "+action)
	}
	for _, c := range []preflightCase{
		{name: "lambda", fx: answers{"lambda get-account-settings": denied("lambda:GetAccountSettings")},
			args: []string{"create", "acme", "-c", "authorizerReservedConcurrency=1"},
			want: []string{"warning: aws lambda get-account-settings failed (An error occurred (AccessDeniedException) when calling the GetAccountSettings operation: User: arn:aws:sts::123456789012:assumed-role/ops/me is not authorized to perform: lambda:GetAccountSettings): the Lambda concurrency check was not made",
				"Preflight passed in us-east-1: Lambda concurrency not checked; Lambda memory", "API keys 3 of 10000"}},
		{name: "a function's reservation", fx: answers{"lambda get-function-concurrency": denied("lambda:GetFunctionConcurrency")},
			args: []string{"upgrade", "acme"},
			want: []string{"aws lambda get-function-concurrency failed (An error occurred (AccessDeniedException)", "Lambda concurrency not checked"}},
		{name: "a function not there yet holds none", fx: answers{"lambda get-function-concurrency": refused("ResourceNotFoundException", "Function not found: arn:aws:lambda:us-east-1:123456789012:function:doclib-acme-indexer")},
			args: []string{"upgrade", "acme"}, want: []string{"1000 after this stack's reservations"}, not: []string{"warning"}},
		{name: "the usage plan quota falls back to its default", fx: answers{"service-quotas get-service-quota": denied("servicequotas:GetServiceQuota")},
			args: []string{"create", "acme"},
			want: []string{"aws service-quotas get-service-quota failed (", "checking against AWS's default quota of 300 usage plans", "usage plans 4+0 of 300"}},
		{name: "api keys", fx: answers{"apigateway get-api-keys": denied("apigateway:GET")},
			args: []string{"create", "acme"}, want: []string{"aws apigateway get-api-keys failed (", "the API key check was not made", "API keys not checked; usage plans 4+0"}},
		{name: "log policies", fx: answers{"logs describe-resource-policies": denied("logs:DescribeResourcePolicies")},
			args: []string{"create", "acme"}, want: []string{"the CloudWatch Logs resource policy check was not made", "CloudWatch Logs resource policies not checked"}},
	} {
		t.Run(c.name, c.check)
	}
}

func TestSkipPreflight(t *testing.T) {
	fx := healthy().with(fresh("newco")).with(answers{"lambda get-account-settings": lambdaAccount(10, 10)})
	for _, args := range [][]string{
		{"--skip-preflight", "create", "newco", "-c", "authorizerReservedConcurrency=1"},
		{"upgrade", "acme", "-c", "authorizerReservedConcurrency=1", "--skip-preflight"},
		{"--skip-preflight", "load", "acme", dataSet(t, 1)},
	} {
		r := runWith(t, fx, nil, args...)
		if r.err != nil || !strings.Contains(r.out, "Preflight skipped (--skip-preflight): the account's quotas were not checked.") {
			t.Errorf("%q: err %v\n%s", args, r.err, r.out)
		}
		for _, call := range []string{"get-account-settings", "get-api-keys", "get-usage-plans", "describe-resource-policies"} {
			if strings.Contains(r.log, call) {
				t.Errorf("%q: --skip-preflight still called %s:\n%s", args, call, r.log)
			}
		}
	}
}
