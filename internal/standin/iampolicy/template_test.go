package iampolicy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The files in testdata are the role policies and the OpenSearch domain's
// access policy of the synthesized Doclib-demo stack, with every
// CloudFormation intrinsic resolved to the ARN it would have in account
// 123456789012, us-east-1. They are a snapshot taken when the search role
// could still only POST _search, kept to pin down how the evaluator reads
// the policies CDK writes, not to track the stack.
const (
	table     = "arn:aws:dynamodb:us-east-1:123456789012:table/Doclib-demo-Table"
	domainARN = "arn:aws:es:us-east-1:123456789012:domain/doclib-demo"
	searchArn = "arn:aws:iam::123456789012:role/Doclib-demo-SearchRole"
	indexArn  = "arn:aws:iam::123456789012:role/Doclib-demo-IndexerRole"
	libsArn   = "arn:aws:iam::123456789012:role/Doclib-demo-LibrariesRole"
	authArn   = "arn:aws:iam::123456789012:role/Doclib-demo-AuthorizerRole"
)

func loadTestdata(t *testing.T) map[string]*Policy {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no policies in testdata: %v", err)
	}
	out := map[string]*Policy{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = p
	}
	return out
}

func TestTemplatePolicies(t *testing.T) {
	ps := loadTestdata(t)
	for _, name := range []string{"libraries-role", "documents-role", "search-role", "authorizer-role", "indexer-role", "domain-access"} {
		if ps[name] == nil {
			t.Fatalf("testdata/%s.json missing", name)
		}
	}
	update := func(keys, attrs []string, returnValues ...string) map[string][]string {
		ctx := map[string][]string{"dynamodb:LeadingKeys": keys, "dynamodb:Attributes": attrs}
		if returnValues != nil {
			ctx["dynamodb:ReturnValues"] = returnValues
		}
		return ctx
	}
	tag := func(customer string, keys ...string) map[string][]string {
		return map[string][]string{"aws:RequestTag/doclib:customer": {customer}, "aws:TagKeys": keys}
	}
	apikeys := "arn:aws:apigateway:us-east-1::/apikeys"
	tests := []struct {
		name      string
		role      string // testdata file of the caller's identity policy; "" for none
		principal string
		action    string
		resource  string
		ctx       map[string][]string
		allowed   bool
		sid       string
	}{
		{"search updates its rate-limit row", "search-role", searchArn, "dynamodb:UpdateItem", table,
			update([]string{"RL#lib-1"}, []string{"pk", "sk", "n", "exp"}, "UPDATED_NEW"), true, "UpdateRateLimits"},
		{"search may not write the plan attribute", "search-role", searchArn, "dynamodb:UpdateItem", table,
			update([]string{"RL#lib-1"}, []string{"pk", "sk", "n", "exp", "plan"}), false, ""},
		{"search may not update a key row", "search-role", searchArn, "dynamodb:UpdateItem", table,
			update([]string{"KEY#abc"}, []string{"pk", "sk", "n"}), false, ""},
		{"search spends credit", "search-role", searchArn, "dynamodb:UpdateItem", table,
			update([]string{"WS#acme"}, []string{"pk", "sk", "credit"}, "UPDATED_OLD"), true, "SpendCredit"},
		{"search may not ask for ALL_NEW", "search-role", searchArn, "dynamodb:UpdateItem", table,
			update([]string{"WS#acme"}, []string{"pk", "sk", "credit"}, "ALL_NEW"), false, ""},
		// ForAllValues holds on absent keys, so this grant admits an update
		// whose context lacks LeadingKeys and Attributes: the checker must
		// always fill them in.
		{"update without DynamoDB's keys passes the ForAllValues grant", "search-role", searchArn, "dynamodb:UpdateItem", table,
			nil, true, "UpdateRateLimits"},
		{"search reads the table", "search-role", searchArn, "dynamodb:GetItem", table, nil, true, "ReadTable"},
		{"search queries the index in any case", "search-role", searchArn, "DynamoDB:query", table + "/index/byOrder", nil, true, "ReadTable"},
		{"search may not put items", "search-role", searchArn, "dynamodb:PutItem", table, nil, false, ""},
		{"search may not read another table", "search-role", searchArn, "dynamodb:GetItem", table + "2", nil, false, ""},
		{"search posts _search", "search-role", searchArn, "es:ESHttpPost", domainARN + "/doclib-documents/_search", nil, true, "OpenSearch"},
		{"search may not read the mapping", "search-role", searchArn, "es:ESHttpGet", domainARN + "/doclib-documents/_mapping", nil, false, ""},
		{"search embeds", "search-role", searchArn, "bedrock:InvokeModel",
			"arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0", nil, true, "Embed"},
		{"search may not use another model", "search-role", searchArn, "bedrock:InvokeModel",
			"arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v1", nil, false, ""},
		{"domain policy alone lets search post _search", "", searchArn, "es:ESHttpPost", domainARN + "/doclib-documents/_search", nil, true, "SearchQueries"},
		{"domain policy alone does not let search read the mapping", "", searchArn, "es:ESHttpGet", domainARN + "/doclib-documents/_mapping", nil, false, ""},
		{"domain root statement grants no role by itself", "libraries-role", libsArn, "es:ESHttpPost", domainARN + "/doclib-documents/_search", nil, false, ""},
		{"indexer reads the mapping", "indexer-role", indexArn, "es:ESHttpGet", domainARN + "/doclib-documents/_mapping", nil, true, "OpenSearch"},
		{"indexer swaps aliases", "indexer-role", indexArn, "es:ESHttpPost", domainARN + "/_aliases", nil, true, "OpenSearch"},
		{"indexer reads the stream", "indexer-role", indexArn, "dynamodb:GetRecords",
			table + "/stream/2025-01-01T00:00:00.000", nil, true, "ReadStream"},
		{"indexer may not read another stream", "indexer-role", indexArn, "dynamodb:GetRecords",
			table + "/stream/2026-01-01T00:00:00.000", nil, false, ""},
		{"indexer creates a tagged key", "indexer-role", indexArn, "apigateway:POST", apikeys, tag("demo", "doclib:customer"), true, "CreateOwnApiKeys"},
		{"indexer may not tag a key for another customer", "indexer-role", indexArn, "apigateway:POST", apikeys, tag("acme", "doclib:customer"), false, ""},
		{"indexer may not add other tags", "indexer-role", indexArn, "apigateway:POST", apikeys, tag("demo", "doclib:customer", "owner"), false, ""},
		{"indexer may not create an untagged key", "indexer-role", indexArn, "apigateway:POST", apikeys, nil, false, ""},
		{"indexer updates its customer's key", "indexer-role", indexArn, "apigateway:PATCH", apikeys + "/k1",
			map[string][]string{"aws:ResourceTag/doclib:customer": {"demo"}}, true, "ManageOwnApiKeys"},
		{"indexer may not update an untagged key", "indexer-role", indexArn, "apigateway:DELETE", apikeys + "/k1", nil, false, ""},
		{"indexer adds a key to a usage plan", "indexer-role", indexArn, "apigateway:POST",
			"arn:aws:apigateway:us-east-1::/usageplans/p9q4team/keys", nil, true, "JoinUsagePlans"},
		{"authorizer reads key rows", "authorizer-role", authArn, "dynamodb:GetItem", table,
			map[string][]string{"dynamodb:LeadingKeys": {"KEY#h"}}, true, "ReadTable"},
		{"authorizer may not read rate-limit rows", "authorizer-role", authArn, "dynamodb:Query", table + "/index/byOrder",
			map[string][]string{"dynamodb:LeadingKeys": {"RL#lib-1"}}, false, ""},
		{"libraries may not spend credit", "libraries-role", libsArn, "dynamodb:UpdateItem", table,
			update([]string{"WS#acme"}, []string{"pk", "sk", "credit"}), false, ""},
		{"documents role writes logs", "documents-role", "arn:aws:iam::123456789012:role/Doclib-demo-DocumentsRole", "logs:PutLogEvents",
			"arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/doclib-demo-documents:log-stream:2025/01/01/x", nil, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var identity []*Policy
			if tt.role != "" {
				identity = []*Policy{ps[tt.role]}
			}
			var resource *Policy
			if strings.HasPrefix(tt.action, "es:") {
				resource = ps["domain-access"]
			}
			req := Request{Principal: tt.principal, Action: tt.action, Resource: tt.resource, Context: tt.ctx}
			d := Evaluate(req, identity, resource)
			if d.Allowed != tt.allowed || d.Sid != tt.sid {
				t.Fatalf("got %+v, want allowed %v by %q", d, tt.allowed, tt.sid)
			}
			if want := "because no identity-based policy allows the " + tt.action + " action"; !d.Allowed && d.Reason != want {
				t.Errorf("Reason %q, want %q", d.Reason, want)
			}
		})
	}
}
