//lint:file-ignore SA1019 the CDK's Go API still returns a stack's synthesis messages as these cxapi types

package stack

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/infra/domainsizes"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/settings"
)

// env returns the environment of the function named name.
func (s *synthesized) env(t *testing.T, name string) map[string]any {
	t.Helper()
	id := s.functionID(t, name)
	for _, f := range s.resources("AWS::Lambda::Function") {
		if f.ID == id {
			return f.Props["Environment"].(map[string]any)["Variables"].(map[string]any)
		}
	}
	return nil
}

func TestFunctions(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		fns := s.resources("AWS::Lambda::Function")
		if len(fns) != len(lambdaapp.Functions) {
			t.Fatalf("%d functions, want %d", len(fns), len(lambdaapp.Functions))
		}
		roles := map[string]string{}
		for _, f := range fns {
			p := f.Props
			if p["Runtime"] != "provided.al2023" || !reflect.DeepEqual(p["Architectures"], []any{"arm64"}) || p["Handler"] != "bootstrap" {
				t.Errorf("%s: %v %v %v, want provided.al2023 arm64 bootstrap", f.ID, p["Runtime"], p["Architectures"], p["Handler"])
			}
			if p["TracingConfig"].(map[string]any)["Mode"] != "Active" {
				t.Errorf("%s: tracing %v", f.ID, p["TracingConfig"])
			}
			lc := p["LoggingConfig"].(map[string]any)
			if lc["LogFormat"] != "JSON" || ref(lc["LogGroup"]) == "" {
				t.Errorf("%s: logging %v, want JSON to a log group of its own", f.ID, lc)
			}
			role, _ := getAtt(p["Role"])
			if other, dup := roles[role]; dup {
				t.Errorf("%s and %s share role %s", f.ID, other, role)
			}
			roles[role] = f.ID
		}
		if len(s.resources("AWS::IAM::Role")) != len(lambdaapp.Functions)+2 {
			t.Errorf("%d roles: want one per function, the operators' and API Gateway's logging role", len(s.resources("AWS::IAM::Role")))
		}
		// Each function gets the variables it reads, and no other.
		search := map[string]string{
			settings.EnvOpenSearchURL: "", settings.EnvOpenSearchService: "es", settings.EnvOpenSearchAlias: searchAlias, settings.EnvEmbedder: "bedrock",
			settings.EnvEmbedModel: s.cfg.BedrockModel, settings.EnvEmbedDimensions: itoa(s.cfg.EmbedDimensions),
		}
		limits := map[string]string{settings.EnvKeyLimit: itoa(s.cfg.KeyLimit), settings.EnvIPLimit: itoa(s.cfg.IPLimit),
			settings.EnvResponseTransfer: s.cfg.transferMode()}
		table := map[string]string{settings.EnvTable: ""}
		wants := map[string]map[string]string{
			lambdaapp.FunctionLibraries:  mergeStr(table, limits),
			lambdaapp.FunctionDocuments:  mergeStr(table, limits),
			lambdaapp.FunctionSearch:     mergeStr(table, limits, search),
			lambdaapp.FunctionMCP:        mergeStr(table, limits, search),
			lambdaapp.FunctionAuthorizer: mergeStr(table, map[string]string{settings.EnvCustomer: s.cfg.Customer}),
			lambdaapp.FunctionIndexer:    mergeStr(table, search, map[string]string{settings.EnvUsagePlans: ""}),
		}
		for name, want := range wants {
			env := s.env(t, name)
			var got, keys []string
			for k := range env {
				got = append(got, k)
			}
			for k, v := range want {
				keys = append(keys, k)
				if v != "" && env[k] != v {
					t.Errorf("%s: %s=%v, want %s", name, k, env[k], v)
				}
			}
			sort.Strings(got)
			sort.Strings(keys)
			if !reflect.DeepEqual(got, keys) {
				t.Errorf("%s: environment %v, want %v", name, got, keys)
			}
			if !strings.HasPrefix(render(env[settings.EnvTable]), "<Table") {
				t.Errorf("%s: table %v", name, env[settings.EnvTable])
			}
			if u, ok := env[settings.EnvOpenSearchURL]; ok && !strings.HasPrefix(render(u), "https://") && !strings.HasSuffix(render(u), "CollectionEndpoint>") {
				t.Errorf("%s: OpenSearch URL %s is not https://…", name, render(u))
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func mergeStr(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// statement is one IAM statement with its owner.
type statement struct {
	owner     string // policy or role logical ID
	effect    string
	actions   []string
	resources []string
	condition any
}

func statementsOf(owner string, doc any) []statement {
	var out []statement
	for _, st := range list(doc.(map[string]any)["Statement"]) {
		m := st.(map[string]any)
		s := statement{owner: owner, condition: m["Condition"]}
		s.effect, _ = m["Effect"].(string)
		for _, a := range list(m["Action"]) {
			s.actions = append(s.actions, a.(string))
		}
		for _, r := range list(m["Resource"]) {
			s.resources = append(s.resources, render(r))
		}
		out = append(out, s)
	}
	return out
}

// identityStatements are the statements of every identity policy.
func (s *synthesized) identityStatements() []statement {
	var out []statement
	for _, p := range s.resources("AWS::IAM::Policy") {
		for _, r := range list(p.Props["Roles"]) {
			out = append(out, statementsOf(ref(r), p.Props["PolicyDocument"])...)
		}
	}
	for _, r := range s.resources("AWS::IAM::Role") {
		for _, pol := range list(r.Props["Policies"]) {
			out = append(out, statementsOf(r.ID, pol.(map[string]any)["PolicyDocument"])...)
		}
	}
	return out
}

// resourceStatements are the statements of the resource policies: the
// domain's access policy, the queue's, the topic's and the bucket's.
func (s *synthesized) resourceStatements() []statement {
	var out []statement
	for _, r := range s.resources("AWS::OpenSearchService::Domain") {
		out = append(out, statementsOf(r.ID, r.Props["AccessPolicies"])...)
	}
	for _, typ := range []string{"AWS::SQS::QueuePolicy", "AWS::SNS::TopicPolicy", "AWS::S3::BucketPolicy"} {
		for _, r := range s.resources(typ) {
			out = append(out, statementsOf(r.ID, r.Props["PolicyDocument"])...)
		}
	}
	return out
}

// TestNoWildcardPermissions: no "*" action allowed anywhere, no "*" resource
// with a data action, no AWS-managed policy.
func TestNoWildcardPermissions(t *testing.T) {
	data := []string{"dynamodb:", "es:", "aoss:", "bedrock:", "apigateway:", "sqs:", "sns:", "logs:", "s3:"}
	// Not embeddedTestContext: with retain=false the CDK's auto-delete
	// function, which empties the bucket on cdk destroy, has its own role with
	// AWSLambdaBasicExecutionRole (TestEmbeddedLeastPrivilege: no S3 right in
	// its identity policy).
	for _, variant := range []map[string]any{defaultContext, customContext, embeddedContext} {
		s := synth(t, variant)
		sts := s.identityStatements()
		if len(sts) == 0 {
			t.Fatal("no IAM statements found")
		}
		for _, st := range append(sts, s.resourceStatements()...) {
			if st.effect != "Allow" {
				continue // the queue's, topic's and bucket's Deny of requests without TLS
			}
			for _, a := range st.actions {
				if a == "*" || strings.HasSuffix(a, ":*") {
					t.Errorf("%s grants action %s", st.owner, a)
				}
				for _, r := range st.resources {
					if r == "*" && slices.ContainsFunc(data, func(p string) bool { return strings.HasPrefix(a, p) }) {
						t.Errorf("%s grants %s on every resource", st.owner, a)
					}
				}
			}
		}
		for _, r := range s.resources("AWS::IAM::Role") {
			if r.Props["ManagedPolicyArns"] != nil {
				t.Errorf("role %s uses managed policies %v", r.ID, r.Props["ManagedPolicyArns"])
			}
		}
	}
}

// TestLeastPrivilege checks who may write the table, search, embed and
// manage API keys.
func TestLeastPrivilege(t *testing.T) {
	s := synth(t, defaultContext)
	roleOf := map[string]string{}
	for _, name := range lambdaapp.Functions {
		for _, f := range s.resources("AWS::Lambda::Function") {
			if f.ID == s.functionID(t, name) {
				roleOf[name], _ = getAtt(f.Props["Role"])
			}
		}
	}
	actions := map[string]map[string][]statement{} // function -> action -> statements
	for _, st := range s.identityStatements() {
		for name, role := range roleOf {
			if st.owner != role {
				continue
			}
			if actions[name] == nil {
				actions[name] = map[string][]statement{}
			}
			for _, a := range st.actions {
				actions[name][a] = append(actions[name][a], st)
			}
		}
	}
	has := func(name, action string) bool { return len(actions[name][action]) > 0 }
	for _, name := range lambdaapp.Functions {
		for a := range actions[name] {
			if strings.HasPrefix(a, "dynamodb:") && !slices.Contains(append(append([]string{"dynamodb:UpdateItem"}, tableReadActions...), streamActions...), a) {
				t.Errorf("%s may %s", name, a)
			}
		}
	}
	leading := func(st statement) []any {
		c, _ := st.condition.(map[string]any)["ForAllValues:StringLike"].(map[string]any)
		return list(c["dynamodb:LeadingKeys"])
	}
	// Every UpdateItem is held to one partition prefix, the attributes of its
	// counter (and the key), and ReturnValues that give back no other
	// attribute: IAM cannot name the sort key, so the attributes are what
	// keep the credit grant off a WS# partition's other items (plan,
	// subscription, devices, key listings).
	sc := dynamo.TableSchema()
	counter := func(prefix string, attrs ...string) string {
		all := append([]any{sc.PartitionKey, sc.SortKey}, toAny(attrs)...)
		return fmt.Sprint(prefix, all)
	}
	rateLimits := counter("RL#*", attrsRateLimit...)
	credit := counter("WS#*", attrsCredit...)
	for name, want := range map[string][]string{
		lambdaapp.FunctionLibraries: {rateLimits}, lambdaapp.FunctionDocuments: {rateLimits}, lambdaapp.FunctionSearch: {rateLimits, credit},
		lambdaapp.FunctionMCP: {rateLimits, credit},
	} {
		var got []string
		for _, up := range actions[name]["dynamodb:UpdateItem"] {
			c := up.condition.(map[string]any)
			attrs, _ := c["ForAllValues:StringEquals"].(map[string]any)
			rv, _ := c["StringEqualsIfExists"].(map[string]any)
			if len(c) != 3 || !reflect.DeepEqual(list(rv["dynamodb:ReturnValues"]), []any{"NONE", "UPDATED_OLD", "UPDATED_NEW"}) {
				t.Errorf("%s: UpdateItem conditions %v, want LeadingKeys, Attributes and ReturnValues only", name, c)
			}
			lk := leading(up)
			if len(lk) != 1 {
				t.Errorf("%s: UpdateItem on partitions %v, want one prefix per statement", name, lk)
				continue
			}
			got = append(got, fmt.Sprint(lk[0], list(attrs["dynamodb:Attributes"])))
		}
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: UpdateItem %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{lambdaapp.FunctionAuthorizer, lambdaapp.FunctionIndexer} {
		if has(name, "dynamodb:UpdateItem") {
			t.Errorf("%s may write the table", name)
		}
	}
	if reads := actions[lambdaapp.FunctionAuthorizer]["dynamodb:GetItem"]; len(reads) != 1 || !reflect.DeepEqual(leading(reads[0]), []any{"KEY#*", "WS#*"}) {
		t.Errorf("authorizer reads %v, want only key and workspace partitions", reads)
	}
	for _, name := range lambdaapp.Functions {
		search := name == lambdaapp.FunctionSearch || name == lambdaapp.FunctionMCP || name == lambdaapp.FunctionIndexer
		if has(name, "bedrock:InvokeModel") != search || has(name, "es:ESHttpPost") != search {
			t.Errorf("%s: Bedrock %v, OpenSearch %v", name, has(name, "bedrock:InvokeModel"), has(name, "es:ESHttpPost"))
		}
		writes := name == lambdaapp.FunctionIndexer
		if has(name, "es:ESHttpPut") != writes || has(name, "es:ESHttpGet") != search || has(name, "apigateway:POST") != writes ||
			has(name, "dynamodb:GetRecords") != writes {
			t.Errorf("%s: OpenSearch reads of mappings or writes, API key management or stream reads where only the indexer should have them", name)
		}
	}
	// The search and MCP functions may POST their alias's _search and GET
	// its mapping, and nothing else: a POST anywhere on the domain would
	// allow /_bulk, /_delete_by_query and /_aliases too, a POST on _mapping
	// changes it.
	domain := s.one(t, "AWS::OpenSearchService::Domain").ID
	for _, name := range []string{lambdaapp.FunctionSearch, lambdaapp.FunctionMCP} {
		var esSearch []string
		for a, sts := range actions[name] {
			if !strings.HasPrefix(a, "es:") {
				continue
			}
			for _, st := range sts {
				esSearch = append(esSearch, fmt.Sprint(st.actions, st.resources))
			}
		}
		slices.Sort(esSearch)
		want := []string{
			fmt.Sprint([]string{"es:ESHttpGet"}, []string{"<" + domain + ".Arn>/doclib-documents/_mapping"}),
			fmt.Sprint([]string{"es:ESHttpPost"}, []string{"<" + domain + ".Arn>/doclib-documents/_search"}),
		}
		if !slices.Equal(esSearch, want) {
			t.Errorf("%s role's OpenSearch grants %v, want only %v", name, esSearch, want)
		}
		for _, st := range actions[name]["bedrock:InvokeModel"] {
			if !reflect.DeepEqual(st.resources, []string{"arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/" + s.cfg.BedrockModel}) {
				t.Errorf("%s: Bedrock on %v", name, st.resources)
			}
		}
	}
}

// TestIndexerManagesOnlyItsOwnApiKeys: API keys are account- and Region-wide
// and every customer stack shares the account, so the indexer may create
// keys only tagged with its customer (and no other tag), change or delete
// only keys carrying that tag, and touch memberships of its own stack's
// usage plans only. Listing keys is the one unconditioned grant: a list has
// no tags to test.
func TestIndexerManagesOnlyItsOwnApiKeys(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		role, _ := getAtt(func() any {
			for _, f := range s.resources("AWS::Lambda::Function") {
				if f.ID == s.functionID(t, lambdaapp.FunctionIndexer) {
					return f.Props["Role"]
				}
			}
			return nil
		}())
		plans := map[string]bool{}
		for _, p := range s.resources("AWS::ApiGateway::UsagePlan") {
			plans[p.ID] = true
		}
		apigw := "arn:<AWS::Partition>:apigateway:<AWS::Region>::"
		tag := usageplan.TagCustomer
		onlyOurTag := map[string]any{
			"StringEquals":              map[string]any{"aws:RequestTag/" + tag: s.cfg.Customer},
			"ForAllValues:StringEquals": map[string]any{"aws:TagKeys": []any{tag}},
		}
		ourKeys := map[string]any{"StringEquals": map[string]any{"aws:ResourceTag/" + tag: s.cfg.Customer}}
		want := map[string]struct { // by action and resource: the condition
			cond any
		}{
			"apigateway:GET " + apigw + "/apikeys":      {nil},
			"apigateway:POST " + apigw + "/apikeys":     {onlyOurTag},
			"apigateway:PUT " + apigw + "/tags/*":       {onlyOurTag},
			"apigateway:PATCH " + apigw + "/apikeys/*":  {ourKeys},
			"apigateway:DELETE " + apigw + "/apikeys/*": {ourKeys},
		}
		for id := range plans {
			want["apigateway:POST "+apigw+"/usageplans/<"+id+">/keys"] = struct{ cond any }{nil}
			want["apigateway:GET "+apigw+"/usageplans/<"+id+">/keys/*"] = struct{ cond any }{nil}
			want["apigateway:DELETE "+apigw+"/usageplans/<"+id+">/keys/*"] = struct{ cond any }{nil}
		}
		got := map[string]bool{}
		for _, st := range s.identityStatements() {
			for _, a := range st.actions {
				if !strings.HasPrefix(a, "apigateway:") {
					continue
				}
				if st.owner != role {
					t.Errorf("%s may %s", st.owner, a)
					continue
				}
				for _, r := range st.resources {
					k := a + " " + r
					w, ok := want[k]
					if !ok {
						t.Errorf("indexer may %s", k)
						continue
					}
					got[k] = true
					if !reflect.DeepEqual(st.condition, w.cond) {
						t.Errorf("indexer may %s on condition %v, want %v", k, st.condition, w.cond)
					}
				}
			}
		}
		for k := range want {
			if !got[k] {
				t.Errorf("indexer may not %s", k)
			}
		}
		// The stack's other resources carry the same tag, and the Syncer's
		// keys get the same value (DOCLIB_USAGE_PLANS, TestUsagePlans).
		if tags := s.one(t, "AWS::DynamoDB::Table").Props["Tags"]; !strings.Contains(fmt.Sprint(tags), tag+" Value:"+s.cfg.Customer) {
			t.Errorf("table tags %v, want %s=%s", tags, tag, s.cfg.Customer)
		}
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func TestTable(t *testing.T) {
	s := synth(t, defaultContext)
	sc := dynamo.TableSchema()
	r := s.one(t, "AWS::DynamoDB::Table")
	p := r.Props
	key := func(name, typ string) map[string]any { return map[string]any{"AttributeName": name, "KeyType": typ} }
	if !reflect.DeepEqual(p["KeySchema"], []any{key(sc.PartitionKey, "HASH"), key(sc.SortKey, "RANGE")}) {
		t.Errorf("key schema %v", p["KeySchema"])
	}
	var attrs []string
	for _, a := range list(p["AttributeDefinitions"]) {
		m := a.(map[string]any)
		if m["AttributeType"] != "S" {
			t.Errorf("attribute %v is not a string", m)
		}
		attrs = append(attrs, m["AttributeName"].(string))
	}
	sort.Strings(attrs)
	wantAttrs := []string{sc.PartitionKey, sc.SortKey, sc.OrderKey, sc.WorkspaceKey}
	sort.Strings(wantAttrs)
	if !reflect.DeepEqual(attrs, wantAttrs) {
		t.Errorf("attributes %v, want %v", attrs, wantAttrs)
	}
	lsi := []any{map[string]any{"IndexName": sc.OrderIndex, "KeySchema": []any{key(sc.PartitionKey, "HASH"), key(sc.OrderKey, "RANGE")},
		"Projection": map[string]any{"ProjectionType": "ALL"}}}
	if !reflect.DeepEqual(p["LocalSecondaryIndexes"], lsi) {
		t.Errorf("local indexes %v, want %v", p["LocalSecondaryIndexes"], lsi)
	}
	nonKey := make([]any, len(sc.WorkspaceIndexAttributes))
	for i, a := range sc.WorkspaceIndexAttributes {
		nonKey[i] = a
	}
	gsi := []any{map[string]any{"IndexName": sc.WorkspaceIndex, "KeySchema": []any{key(sc.WorkspaceKey, "HASH")},
		"Projection": map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": nonKey}}}
	if !reflect.DeepEqual(p["GlobalSecondaryIndexes"], gsi) {
		t.Errorf("global indexes %v, want %v", p["GlobalSecondaryIndexes"], gsi)
	}
	if !reflect.DeepEqual(p["TimeToLiveSpecification"], map[string]any{"AttributeName": sc.TTLAttribute, "Enabled": true}) {
		t.Errorf("TTL %v", p["TimeToLiveSpecification"])
	}
	if p["BillingMode"] != "PAY_PER_REQUEST" {
		t.Errorf("billing %v", p["BillingMode"])
	}
	if p["PointInTimeRecoverySpecification"].(map[string]any)["PointInTimeRecoveryEnabled"] != true {
		t.Errorf("PITR %v", p["PointInTimeRecoverySpecification"])
	}
	if p["StreamSpecification"].(map[string]any)["StreamViewType"] != "NEW_AND_OLD_IMAGES" {
		t.Errorf("stream %v", p["StreamSpecification"])
	}
	if p["SSESpecification"].(map[string]any)["SSEEnabled"] != true {
		t.Errorf("SSE %v", p["SSESpecification"])
	}
	if r.Deletion != "Retain" {
		t.Errorf("deletion policy %q, want Retain", r.Deletion)
	}
}

func TestIndexerStream(t *testing.T) {
	s := synth(t, defaultContext)
	esm := s.one(t, "AWS::Lambda::EventSourceMapping").Props
	table := s.one(t, "AWS::DynamoDB::Table").ID
	queue := s.one(t, "AWS::SQS::Queue")
	if id, attr := getAtt(esm["EventSourceArn"]); id != table || attr != "StreamArn" {
		t.Errorf("event source %v", esm["EventSourceArn"])
	}
	if ref(esm["FunctionName"]) != s.functionID(t, "indexer") {
		t.Errorf("stream goes to %v", esm["FunctionName"])
	}
	if !reflect.DeepEqual(esm["FunctionResponseTypes"], []any{"ReportBatchItemFailures"}) || esm["BisectBatchOnFunctionError"] != true ||
		esm["MaximumRetryAttempts"] != float64(streamRetries) || esm["BatchSize"] != float64(streamBatchSize) ||
		esm["MaximumBatchingWindowInSeconds"] != float64(streamWindowSec) {
		t.Errorf("stream settings %v", esm)
	}
	var patterns []string
	for _, f := range list(esm["FilterCriteria"].(map[string]any)["Filters"]) {
		patterns = append(patterns, f.(map[string]any)["Pattern"].(string))
	}
	if len(patterns) != len(streamFilters) || len(patterns) > 5 {
		t.Errorf("stream filters %v, want the %d of streamFilters (Lambda takes 5)", patterns, len(streamFilters))
	}
	dest := esm["DestinationConfig"].(map[string]any)["OnFailure"].(map[string]any)["Destination"]
	if id, _ := getAtt(dest); id != queue.ID {
		t.Errorf("on-failure destination %v, want the queue", dest)
	}
	if queue.Props["SqsManagedSseEnabled"] != true {
		t.Errorf("queue encryption %v", queue.Props)
	}
	must(t, "the queue refuses requests without TLS", func() {
		s.template.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), map[string]any{
			"PolicyDocument": map[string]any{"Statement": []any{map[string]any{
				"Effect": "Deny", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			}}},
		})
	})
}

func TestOpenSearchDomain(t *testing.T) {
	s := synth(t, defaultContext)
	d := s.one(t, "AWS::OpenSearchService::Domain")
	p := d.Props
	if v := p["EngineVersion"].(string); v != "OpenSearch_2.19" {
		t.Errorf("engine %s", v)
	}
	cc := p["ClusterConfig"].(map[string]any)
	if cc["ZoneAwarenessEnabled"] != true || cc["ZoneAwarenessConfig"].(map[string]any)["AvailabilityZoneCount"] != float64(2) ||
		cc["InstanceCount"] != float64(2) || cc["InstanceType"] != "r7g.large.search" {
		t.Errorf("cluster %v", cc)
	}
	if p["NodeToNodeEncryptionOptions"].(map[string]any)["Enabled"] != true || p["EncryptionAtRestOptions"].(map[string]any)["Enabled"] != true {
		t.Error("encryption in transit or at rest is off")
	}
	ep := p["DomainEndpointOptions"].(map[string]any)
	if ep["EnforceHTTPS"] != true || !strings.HasPrefix(ep["TLSSecurityPolicy"].(string), "Policy-Min-TLS-1-2") {
		t.Errorf("endpoint %v", ep)
	}
	logs := p["LogPublishingOptions"].(map[string]any)
	for _, kind := range []string{"SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS"} {
		if o, _ := logs[kind].(map[string]any); o == nil || o["Enabled"] != true {
			t.Errorf("%s not published", kind)
		}
	}
	if p["VPCOptions"] != nil {
		t.Error("the domain is in a VPC")
	}
	// Only the stack's own roles, by ARN: the search and MCP roles for their
	// two requests, the indexer and the operators' roles for the domain's paths.
	// No account root (which would admit any identity of the account with
	// es:ESHttp* in its own policy), no anonymous, IP or other-account access.
	roleOf := func(fn string) string {
		for _, f := range s.resources("AWS::Lambda::Function") {
			if f.ID == s.functionID(t, fn) {
				id, _ := getAtt(f.Props["Role"])
				return id
			}
		}
		return ""
	}
	operator := ""
	for _, r := range s.resources("AWS::IAM::Role") {
		if strings.HasPrefix(r.ID, "OperatorRole") {
			operator = r.ID
		}
	}
	var got []string
	for _, st := range list(p["AccessPolicies"].(map[string]any)["Statement"]) {
		m := st.(map[string]any)
		if m["Effect"] != "Allow" || m["Condition"] != nil {
			t.Errorf("access statement %v", m)
		}
		var principals []string
		for _, pr := range list(m["Principal"].(map[string]any)["AWS"]) {
			id, attr := getAtt(pr)
			if attr != "Arn" {
				t.Errorf("access policy admits %s", render(pr))
			}
			principals = append(principals, id)
		}
		slices.Sort(principals)
		var res []string
		for _, r := range list(m["Resource"]) {
			res = append(res, strings.TrimPrefix(render(r), "arn:<AWS::Partition>:es:<AWS::Region>:<AWS::AccountId>:domain/"+s.cfg.ResourcePrefix()))
		}
		var actions []string // in any order: the CDK sorts them (@aws-cdk/aws-iam:minimizePolicies)
		for _, a := range list(m["Action"]) {
			actions = append(actions, a.(string))
		}
		slices.Sort(actions)
		got = append(got, fmt.Sprint(principals, actions, res))
	}
	slices.Sort(got)
	writers := []string{roleOf("indexer"), operator}
	readers := []string{roleOf("search"), roleOf("mcp")} // the MCP function's tools search too
	slices.Sort(writers)
	slices.Sort(readers)
	want := []string{
		fmt.Sprint(writers, []string{"es:ESHttpDelete", "es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"}, []string{"/*"}),
		fmt.Sprint(readers, []string{"es:ESHttpGet"}, []string{"/doclib-documents/_mapping"}),
		fmt.Sprint(readers, []string{"es:ESHttpPost"}, []string{"/doclib-documents/_search"}),
	}
	slices.Sort(want)
	if operator == "" || !slices.Equal(got, want) {
		t.Errorf("access policy\n got %v\nwant %v", got, want)
	}
}

// TestCdkNagAwsSolutions fails on every unsuppressed AwsSolutions finding and
// checks that each suppression is on a resource and says why.
func TestCdkNagAwsSolutions(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext,
		{KeyOpenSearchSize: domainsizes.Small}, {KeyOpenSearchSize: domainsizes.Large}, {KeyRetain: "false"}, {KeyUsagePlans: "false"},
		embeddedContext, embeddedTestContext,
		{KeySearch: SearchEmbedded, KeyRetain: "false"}, {KeySearch: SearchEmbedded, KeyUsagePlans: "false"}} {
		s := synth(t, variant)
		for _, m := range s.messages {
			data := ""
			if m.Entry != nil && m.Entry.Data != nil {
				data, _ = m.Entry.Data.(string)
			}
			if strings.Contains(data, "AwsSolutions-") && (m.Level == cxapi.SynthesisMessageLevel_ERROR || m.Level == cxapi.SynthesisMessageLevel_WARNING) {
				t.Errorf("%s %s: %s", m.Level, *m.Id, firstLine(data))
			}
		}
		if md, ok := s.json["Metadata"].(map[string]any); ok && md["cdk_nag"] != nil {
			t.Errorf("stack-wide cdk-nag suppressions: %v", md["cdk_nag"])
		}
		n := 0
		for _, r := range s.allResources() {
			nag, _ := r.Metadata["cdk_nag"].(map[string]any)
			for _, sup := range list(nag["rules_to_suppress"]) {
				m := sup.(map[string]any)
				n++
				if reason, _ := m["reason"].(string); len(reason) < 60 {
					t.Errorf("%s: suppression of %v has no real reason: %q", r.ID, m["id"], reason)
				}
				if m["id"] == "AwsSolutions-IAM5" && m["applies_to"] == nil {
					t.Errorf("%s: IAM5 suppressed for every wildcard", r.ID)
				}
			}
		}
		if n == 0 {
			t.Error("no suppressions found: cdk-nag metadata moved?")
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	return line
}

func TestAlarms(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		names := map[string]map[string]any{}
		for _, a := range s.resources("AWS::CloudWatch::Alarm") {
			names[strings.TrimPrefix(a.Props["AlarmName"].(string), s.cfg.ResourcePrefix()+"-")] = a.Props
		}
		want := []string{"Api5xx", "ApiLatencyP99", "Api429", "IndexerIteratorAge", "IndexerFailures",
			"DomainRed", "DomainYellow", "DomainFreeStorage", "DomainWritesBlocked", "DomainJVMPressure", "DomainCPU", "DomainSearchLatency"}
		for _, name := range lambdaapp.Functions {
			want = append(want, fnID(name)+"Errors", fnID(name)+"Throttles")
		}
		for _, w := range want {
			if names[w] == nil {
				t.Errorf("no alarm %s (have %v)", w, keys(names))
			}
		}
		email := s.cfg.AlarmEmail != ""
		subs := s.resources("AWS::SNS::Subscription")
		if email != (len(subs) == 1) {
			t.Errorf("alarm e-mail %q but %d subscriptions", s.cfg.AlarmEmail, len(subs))
		}
		for name, a := range names {
			if (a["AlarmActions"] != nil) != email {
				t.Errorf("alarm %s actions %v with e-mail %q", name, a["AlarmActions"], s.cfg.AlarmEmail)
			}
		}
		if email {
			topic := s.one(t, "AWS::SNS::Topic")
			if subs[0].Props["Endpoint"] != s.cfg.AlarmEmail || ref(subs[0].Props["TopicArn"]) != topic.ID {
				t.Errorf("subscription %v", subs[0].Props)
			}
		}
		filter := s.one(t, "AWS::Logs::MetricFilter").Props
		if filter["FilterPattern"] != "{ $.status = 429 }" {
			t.Errorf("429 filter %v", filter["FilterPattern"])
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestOutputs(t *testing.T) {
	s := synth(t, defaultContext)
	outs := s.json["Outputs"].(map[string]any)
	for _, k := range []string{"ApiUrl", "TableName", "OpenSearchEndpoint", "UsagePlans", "UsagePlanIndividual", "UsagePlanTeam", "UsagePlanEnterprise", "Region"} {
		if outs[k] == nil {
			t.Errorf("no output %s (have %v)", k, keys(outs))
		}
	}
	url := render(outs["ApiUrl"].(map[string]any)["Value"])
	stage := s.one(t, "AWS::ApiGateway::Stage")
	if !strings.HasPrefix(url, "https://") || !strings.HasSuffix(url, "/<"+stage.ID+">/") || stage.Props["StageName"] != StageName {
		t.Errorf("API URL %s", url)
	}
}

func TestBuildNamesTheFunction(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(root, t.TempDir(), []string{"no-such-function"})
	if err == nil || !strings.Contains(err.Error(), "build function no-such-function") {
		t.Fatalf("error %v should name the function", err)
	}
	if _, err := Prebuilt(t.TempDir(), []string{"search"}); err == nil || !strings.Contains(err.Error(), "function search") {
		t.Fatalf("Prebuilt of an empty directory: %v", err)
	}
}

// TestOpenSearchSizesSynthesize: each size places the domain's nodes as
// infra/domainsizes says, and the free-storage alarm follows the volume.
func TestOpenSearchSizesSynthesize(t *testing.T) {
	for _, size := range domainsizes.Profiles {
		s := synth(t, map[string]any{KeyOpenSearchSize: size.Name})
		cc := s.one(t, "AWS::OpenSearchService::Domain").Props["ClusterConfig"].(map[string]any)
		if cc["InstanceType"] != size.InstanceType || cc["InstanceCount"] != float64(size.InstanceCount) ||
			cc["ZoneAwarenessEnabled"] != (size.Zones > 1) {
			t.Errorf("%s: cluster %v", size.Name, cc)
		}
		if size.Zones > 1 && cc["ZoneAwarenessConfig"].(map[string]any)["AvailabilityZoneCount"] != float64(size.Zones) {
			t.Errorf("%s: zones %v", size.Name, cc["ZoneAwarenessConfig"])
		}
		if size.Zones == 1 && cc["ZoneAwarenessConfig"] != nil {
			t.Errorf("%s: zone awareness config %v on one zone", size.Name, cc["ZoneAwarenessConfig"])
		}
		masters := size.MasterCount > 0
		if (cc["DedicatedMasterEnabled"] == true) != masters ||
			(masters && (cc["DedicatedMasterType"] != size.MasterType || cc["DedicatedMasterCount"] != float64(size.MasterCount))) {
			t.Errorf("%s: dedicated masters %v", size.Name, cc)
		}
		for _, a := range s.resources("AWS::CloudWatch::Alarm") {
			if a.Props["MetricName"] == "FreeStorageSpace" {
				if want := float64(size.VolumeGB) * 1024 / 4; a.Props["Threshold"] != want || a.Props["Namespace"] != "AWS/ES" {
					t.Errorf("%s: free storage alarm %v, want a threshold of %v MiB", size.Name, a.Props, want)
				}
			}
		}
	}
}

// TestRetain: by default deleting the stack keeps what holds data (the table,
// with deletion protection, the domain and the log groups); retain=false, for
// test stacks, deletes them. API Gateway's account logging role is
// account-wide and always kept.
func TestRetain(t *testing.T) {
	for _, retain := range []bool{true, false} {
		s := synth(t, map[string]any{KeyRetain: strconv.FormatBool(retain)})
		want := map[bool]string{true: "Retain", false: "Delete"}[retain]
		for _, typ := range []string{"AWS::DynamoDB::Table", "AWS::OpenSearchService::Domain", "AWS::Logs::LogGroup"} {
			rs := s.resources(typ)
			if len(rs) == 0 {
				t.Fatalf("no %s", typ)
			}
			for _, r := range rs {
				if r.Deletion != want {
					t.Errorf("retain=%v: %s %s has DeletionPolicy %q, want %q", retain, typ, r.ID, r.Deletion, want)
				}
			}
		}
		if p := s.one(t, "AWS::DynamoDB::Table").Props["DeletionProtectionEnabled"]; p != retain {
			t.Errorf("retain=%v: the table's deletion protection is %v", retain, p)
		}
		if d := s.one(t, "AWS::ApiGateway::Account").Deletion; d != "Retain" {
			t.Errorf("retain=%v: API Gateway's account settings have DeletionPolicy %q; other stacks' APIs log through them", retain, d)
		}
	}
}

// TestWithoutUsagePlans: usagePlans=false leaves the per-key limit to the
// function: no usage plan, no method requiring an API key, no key source,
// and the indexer neither told of plans nor allowed to touch API keys.
func TestWithoutUsagePlans(t *testing.T) {
	s := synth(t, map[string]any{KeyUsagePlans: "false"})
	if n := len(s.resources("AWS::ApiGateway::UsagePlan")); n != 0 {
		t.Errorf("%d usage plans", n)
	}
	if src := s.one(t, "AWS::ApiGateway::RestApi").Props["ApiKeySourceType"]; src != nil {
		t.Errorf("API key source %v", src)
	}
	for _, m := range s.resources("AWS::ApiGateway::Method") {
		if m.Props["ApiKeyRequired"] == true {
			t.Errorf("method %s requires an API key", m.ID)
		}
	}
	for _, fn := range s.resources("AWS::Lambda::Function") {
		env, _ := fn.Props["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		if _, ok := vars[settings.EnvUsagePlans]; ok {
			t.Errorf("function %s is given %s", fn.ID, settings.EnvUsagePlans)
		}
	}
	for _, st := range s.identityStatements() {
		for _, a := range st.actions {
			if strings.HasPrefix(a, "apigateway:") {
				t.Errorf("a role may still %s on %v", a, st.resources)
			}
		}
	}
	if _, ok := s.json["Outputs"].(map[string]any)["UsagePlans"]; ok {
		t.Error("a UsagePlans output without plans")
	}
}

// TestAccountHelp: accountHelp reaches the functions that answer the API's
// requests, and only them; without it no function is given the variable, so
// that each keeps its default sentence.
func TestAccountHelp(t *testing.T) {
	const help = "In the Acme app, {action}."
	s := synth(t, map[string]any{KeyAccountHelp: help, KeySearch: SearchEmbedded})
	for _, name := range lambdaapp.Functions {
		got, ok := s.env(t, name)[settings.EnvAccountHelp]
		if want := name != lambdaapp.FunctionIndexer; ok != want || (ok && got != help) {
			t.Errorf("%s: %s=%v (set: %v), want set: %v", name, settings.EnvAccountHelp, got, ok, want)
		}
	}
	for _, fn := range synth(t, map[string]any{KeySearch: SearchEmbedded}).resources("AWS::Lambda::Function") {
		env, _ := fn.Props["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		if v, ok := vars[settings.EnvAccountHelp]; ok {
			t.Errorf("function %s is given %s=%v by default", fn.ID, settings.EnvAccountHelp, v)
		}
	}
}
