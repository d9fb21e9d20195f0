package stack

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/settings"
)

// The embedded tier, as deployed (kept data, usage plans) and as a test
// stack of another customer (deleted data, no usage plans, its own search
// memory and an alarm e-mail).
var (
	embeddedContext     = map[string]any{KeySearch: SearchEmbedded}
	embeddedTestContext = map[string]any{
		KeySearch: SearchEmbedded, KeyCustomer: "acme", KeyRetain: "false", KeyUsagePlans: "false",
		KeySearchMemoryMB: "3008", KeyAlarmEmail: "ops@example.com",
	}
)

// roleOf returns the logical ID of the role of the function named name.
func (s *synthesized) roleOf(t *testing.T, name string) string {
	t.Helper()
	id := s.functionID(t, name)
	for _, f := range s.resources("AWS::Lambda::Function") {
		if f.ID == id {
			role, _ := getAtt(f.Props["Role"])
			return role
		}
	}
	return ""
}

// s3Grants lists each role's S3 permissions as "action resource".
func (s *synthesized) s3Grants() map[string][]string {
	out := map[string][]string{}
	for _, st := range s.identityStatements() {
		for _, a := range st.actions {
			if !strings.HasPrefix(a, "s3:") {
				continue
			}
			if st.effect != "Allow" || st.condition != nil {
				out[st.owner] = append(out[st.owner], fmt.Sprint(st.effect, " ", a, " if ", st.condition))
				continue
			}
			for _, r := range st.resources {
				out[st.owner] = append(out[st.owner], a+" "+r)
			}
		}
	}
	for _, g := range out {
		sort.Strings(g)
	}
	return out
}

// TestEmbeddedHasNoDomain: nothing of OpenSearch is left in an embedded
// stack: no domain, its log groups and their resource policy, its alarms,
// output, variables or grants.
func TestEmbeddedHasNoDomain(t *testing.T) {
	for _, variant := range []map[string]any{embeddedContext, embeddedTestContext} {
		s := synth(t, variant)
		for _, typ := range []string{"AWS::OpenSearchService::Domain", "AWS::Logs::ResourcePolicy", "AWS::OpenSearchServerless::Collection"} {
			if n := len(s.resources(typ)); n != 0 {
				t.Errorf("%v: %d %s", variant, n, typ)
			}
		}
		// One log group per function and the API's access log.
		if n := len(s.resources("AWS::Logs::LogGroup")); n != len(lambdaapp.Functions)+1 {
			t.Errorf("%v: %d log groups, want %d", variant, n, len(lambdaapp.Functions)+1)
		}
		for _, a := range s.resources("AWS::CloudWatch::Alarm") {
			if a.Props["Namespace"] == "AWS/ES" || strings.Contains(a.Props["AlarmName"].(string), "-Domain") {
				t.Errorf("%v: domain alarm %v", variant, a.Props["AlarmName"])
			}
		}
		if _, ok := s.json["Outputs"].(map[string]any)["OpenSearchEndpoint"]; ok {
			t.Errorf("%v: an OpenSearchEndpoint output", variant)
		}
		for _, fn := range s.resources("AWS::Lambda::Function") {
			env, _ := fn.Props["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			for k := range vars {
				if strings.HasPrefix(k, "DOCLIB_OPENSEARCH") {
					t.Errorf("%v: function %s is given %s", variant, fn.ID, k)
				}
			}
		}
		for _, st := range s.identityStatements() {
			for _, a := range st.actions {
				if strings.HasPrefix(a, "es:") || strings.HasPrefix(a, "aoss:") {
					t.Errorf("%v: %s may %s", variant, st.owner, a)
				}
			}
		}
	}
	// The domain tier has no bucket.
	if n := len(synth(t, defaultContext).resources("AWS::S3::Bucket")); n != 0 {
		t.Errorf("the default (domain) stack has %d buckets", n)
	}
}

// TestSnapshotBucket: private, encrypted, versioned, TLS-only, with the
// lifecycle that expires old manifests and retired segments; kept with the
// stack unless retain is false, when cdk destroy empties and deletes it.
func TestSnapshotBucket(t *testing.T) {
	for _, variant := range []map[string]any{embeddedContext, embeddedTestContext} {
		s := synth(t, variant)
		b := s.one(t, "AWS::S3::Bucket")
		p := b.Props
		if want := map[string]any{"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true}; !reflect.DeepEqual(p["PublicAccessBlockConfiguration"], want) {
			t.Errorf("%v: public access block %v", variant, p["PublicAccessBlockConfiguration"])
		}
		sse := p["BucketEncryption"].(map[string]any)["ServerSideEncryptionConfiguration"]
		if !reflect.DeepEqual(sse, []any{map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}}}) {
			t.Errorf("%v: encryption %v", variant, sse)
		}
		if v := p["VersioningConfiguration"]; !reflect.DeepEqual(v, map[string]any{"Status": "Enabled"}) {
			t.Errorf("%v: versioning %v", variant, v)
		}
		if o := p["OwnershipControls"]; !reflect.DeepEqual(o, map[string]any{"Rules": []any{map[string]any{"ObjectOwnership": "BucketOwnerEnforced"}}}) {
			t.Errorf("%v: ownership %v", variant, o)
		}
		rule := map[string]any{
			"Id": "ExpireOldSnapshots", "Status": "Enabled",
			"NoncurrentVersionExpiration":    map[string]any{"NewerNoncurrentVersions": float64(3), "NoncurrentDays": float64(7)},
			"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": float64(1)},
		}
		segments := map[string]any{
			"Id": "ExpireRetiredSegments", "Status": "Enabled", "Prefix": "snapshots/segments/",
			"NoncurrentVersionExpiration": map[string]any{"NoncurrentDays": float64(1)},
			"ExpiredObjectDeleteMarker":   true,
		}
		if lc := p["LifecycleConfiguration"]; !reflect.DeepEqual(lc, map[string]any{"Rules": []any{rule, segments}}) {
			t.Errorf("%v: lifecycle %v, want %v and %v", variant, lc, rule, segments)
		}
		if p["LoggingConfiguration"] != nil || p["BucketName"] != nil {
			t.Errorf("%v: access logging %v or a fixed name %v", variant, p["LoggingConfiguration"], p["BucketName"])
		}
		want := map[bool]string{true: "Retain", false: "Delete"}[s.cfg.Retain]
		if b.Deletion != want {
			t.Errorf("%v: DeletionPolicy %q, want %q", variant, b.Deletion, want)
		}
		if n := len(s.resources("Custom::S3AutoDeleteObjects")); (n == 1) == s.cfg.Retain {
			t.Errorf("%v: %d auto-delete resources with retain=%v", variant, n, s.cfg.Retain)
		}
		// Requests without TLS, or below TLS 1.2, are denied to everyone, on
		// the bucket and its objects.
		policy := s.one(t, "AWS::S3::BucketPolicy")
		if ref(policy.Props["Bucket"]) != b.ID {
			t.Errorf("%v: the bucket policy is on %v", variant, policy.Props["Bucket"])
		}
		denies := map[string]bool{}
		for _, st := range statementsOf(policy.ID, policy.Props["PolicyDocument"]) {
			if st.effect == "Deny" && slices.Equal(st.actions, []string{"s3:*"}) &&
				slices.Equal(st.resources, []string{"<" + b.ID + ".Arn>", "<" + b.ID + ".Arn>/*"}) {
				denies[fmt.Sprint(st.condition)] = true
			}
		}
		for _, cond := range []any{
			map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			map[string]any{"NumericLessThan": map[string]any{"s3:TlsVersion": float64(1.2)}},
		} {
			if !denies[fmt.Sprint(cond)] {
				t.Errorf("%v: the bucket policy does not deny every request if %v (denies %v)", variant, cond, denies)
			}
		}
		// The bucket policy allows no one but, in a test stack, the CDK's
		// auto-delete function: the roles' own policies do the granting.
		for _, st := range s.resourceStatements() {
			if st.owner != s.one(t, "AWS::S3::BucketPolicy").ID || st.effect != "Allow" {
				continue
			}
			if s.cfg.Retain || !slices.Contains(st.actions, "s3:DeleteObject*") {
				t.Errorf("%v: the bucket policy allows %v", variant, st.actions)
			}
		}
		out := s.json["Outputs"].(map[string]any)["SnapshotBucket"]
		if out == nil || render(out.(map[string]any)["Value"]) != "<"+b.ID+">" {
			t.Errorf("%v: SnapshotBucket output %v", variant, out)
		}
	}
}

// TestEmbeddedLeastPrivilege: the search and MCP roles read the snapshots,
// the indexer reads and writes them (and aborts the multipart upload of one
// that fails) and deletes retired segments only, the search and MCP roles
// delete nothing, and no other role has any S3 right.
func TestEmbeddedLeastPrivilege(t *testing.T) {
	for _, variant := range []map[string]any{embeddedContext, embeddedTestContext} {
		s := synth(t, variant)
		bucket := "<" + s.one(t, "AWS::S3::Bucket").ID + ".Arn>"
		objects, segments := bucket+"/snapshots/*", bucket+"/snapshots/segments/*"
		grants := s.s3Grants()
		search, mcp, indexer := s.roleOf(t, lambdaapp.FunctionSearch), s.roleOf(t, lambdaapp.FunctionMCP), s.roleOf(t, lambdaapp.FunctionIndexer)
		reads := []string{"s3:GetObject " + objects, "s3:GetObjectVersion " + objects, "s3:ListBucket " + bucket}
		want := map[string][]string{
			search:  reads,
			mcp:     reads, // its tools search the same index
			indexer: {"s3:AbortMultipartUpload " + objects, "s3:DeleteObject " + segments, "s3:GetObject " + objects, "s3:GetObjectVersion " + objects, "s3:ListBucket " + bucket, "s3:PutObject " + objects},
		}
		// Every other role: the other functions', the operators', API
		// Gateway's logging role and (retain=false) the auto-delete one.
		for _, r := range s.resources("AWS::IAM::Role") {
			if _, ok := want[r.ID]; !ok {
				want[r.ID] = nil
			}
		}
		for role, w := range want {
			if !slices.Equal(grants[role], w) {
				t.Errorf("%v: %s may\n  %v\nwant\n  %v", variant, role, grants[role], w)
			}
		}
		for role := range grants {
			if _, ok := want[role]; !ok {
				t.Errorf("%v: unknown owner %s has S3 grants %v", variant, role, grants[role])
			}
		}
		// Spelled out, for whoever reads a failure.
		has := func(role, grant string) bool { return slices.Contains(grants[role], grant) }
		if has(search, "s3:PutObject "+objects) || has(mcp, "s3:PutObject "+objects) {
			t.Errorf("%v: the search or MCP function may write snapshots", variant)
		}
		for _, g := range grants[indexer] {
			if strings.Contains(g, "Delete") && g != "s3:DeleteObject "+segments {
				t.Errorf("%v: the indexer may %s: it deletes retired segments only, and no version", variant, g)
			}
		}
		for _, name := range []string{lambdaapp.FunctionAuthorizer, lambdaapp.FunctionLibraries, lambdaapp.FunctionDocuments} {
			if g := grants[s.roleOf(t, name)]; len(g) > 0 {
				t.Errorf("%v: %s may %v", variant, name, g)
			}
		}
	}
}

// TestEmbeddedFunctions: the variables the Go side reads, the memory (the
// search and MCP functions: searchMemoryMb), the one snapshot writer and its
// stream batching.
func TestEmbeddedFunctions(t *testing.T) {
	for _, variant := range []map[string]any{embeddedContext, embeddedTestContext} {
		s := synth(t, variant)
		bucket := "<" + s.one(t, "AWS::S3::Bucket").ID + ">"
		tier := map[string]string{
			settings.EnvSearch: SearchEmbedded, settings.EnvSnapshotBucket: bucket, settings.EnvEmbedder: "bedrock",
			settings.EnvEmbedModel: s.cfg.BedrockModel, settings.EnvEmbedDimensions: itoa(s.cfg.EmbedDimensions),
		}
		limits := map[string]string{settings.EnvKeyLimit: itoa(s.cfg.KeyLimit), settings.EnvIPLimit: itoa(s.cfg.IPLimit),
			settings.EnvResponseTransfer: settings.TransferStream}
		table := map[string]string{settings.EnvTable: ""}
		indexer := mergeStr(table, tier)
		if s.cfg.UsagePlans {
			indexer[settings.EnvUsagePlans] = ""
		}
		wants := map[string]map[string]string{
			lambdaapp.FunctionLibraries:  mergeStr(table, limits),
			lambdaapp.FunctionDocuments:  mergeStr(table, limits),
			lambdaapp.FunctionSearch:     mergeStr(table, limits, tier),
			lambdaapp.FunctionMCP:        mergeStr(table, limits, tier),
			lambdaapp.FunctionAuthorizer: mergeStr(table, map[string]string{settings.EnvCustomer: s.cfg.Customer}),
			lambdaapp.FunctionIndexer:    indexer,
		}
		for name, want := range wants {
			env := s.env(t, name)
			got := map[string]string{}
			for k, v := range env {
				got[k] = render(v)
				if want[k] == "" {
					got[k] = ""
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%v: %s environment\n  %v\nwant\n  %v", variant, name, got, want)
			}
		}
		fn := func(name string) map[string]any {
			for _, f := range s.resources("AWS::Lambda::Function") {
				if f.ID == s.functionID(t, name) {
					return f.Props
				}
			}
			return nil
		}
		// The MCP function's searches load the same index into the same
		// engine: it needs the memory that holds it.
		for _, name := range []string{lambdaapp.FunctionSearch, lambdaapp.FunctionMCP} {
			if m := fn(name)["MemorySize"]; m != float64(s.cfg.SearchMemoryMB) {
				t.Errorf("%v: %s memory %v, want %d", variant, name, m, s.cfg.SearchMemoryMB)
			}
		}
		ix := fn(lambdaapp.FunctionIndexer)
		if ix["MemorySize"] != float64(embeddedIndexerMemoryMB) || ix["Timeout"] != float64(600) {
			t.Errorf("%v: indexer memory %v, timeout %v, want 3008 MB, 600 s", variant, ix["MemorySize"], ix["Timeout"])
		}
		esm := s.one(t, "AWS::Lambda::EventSourceMapping").Props
		if esm["BatchSize"] != float64(embeddedBatchSize) || esm["MaximumBatchingWindowInSeconds"] != float64(embeddedWindowSec) ||
			esm["MaximumRetryAttempts"] != float64(streamRetries) || esm["BisectBatchOnFunctionError"] != true ||
			!reflect.DeepEqual(esm["FunctionResponseTypes"], []any{"ReportBatchItemFailures"}) ||
			len(list(esm["FilterCriteria"].(map[string]any)["Filters"])) != len(streamFilters) {
			t.Errorf("%v: stream settings %v", variant, esm)
		}
		if embeddedBatchSize > 10000 {
			t.Errorf("batch size %d: a DynamoDB stream mapping takes at most 10000", embeddedBatchSize)
		}
		if dest := esm["DestinationConfig"].(map[string]any)["OnFailure"].(map[string]any)["Destination"]; fmt.Sprint(dest) == "" {
			t.Errorf("%v: no failure destination", variant)
		}
	}
}

// TestEmbeddedAlarms: the API's, the functions', the stream's and the
// failure queue's alarms stay; the indexer's throttles alarm only when they
// last (reserved concurrency 1 throttles in the ordinary course).
func TestEmbeddedAlarms(t *testing.T) {
	for _, variant := range []map[string]any{embeddedContext, embeddedTestContext, {KeySearch: SearchEmbedded, KeyIndexerConcurrency: "1"}} {
		s := synth(t, variant)
		names := map[string]map[string]any{}
		for _, a := range s.resources("AWS::CloudWatch::Alarm") {
			names[strings.TrimPrefix(a.Props["AlarmName"].(string), s.cfg.ResourcePrefix()+"-")] = a.Props
		}
		want := []string{"Api5xx", "ApiLatencyP99", "Api429", "IndexerIteratorAge", "IndexerFailures"}
		for _, name := range lambdaapp.Functions {
			want = append(want, fnID(name)+"Errors", fnID(name)+"Throttles")
		}
		if got := keys(names); !slices.Equal(got, sortedCopy(want)) {
			t.Errorf("%v: alarms %v, want %v", variant, got, sortedCopy(want))
		}
		for name, a := range names {
			periods := float64(1)
			switch name {
			case "IndexerThrottles":
				if s.cfg.IndexerReservedConcurrency > 0 {
					periods = reservedIndexerThrottlePeriods
				}
			case "ApiLatencyP99":
				periods = 3
			}
			if a["EvaluationPeriods"] != periods {
				t.Errorf("%v: %s over %v periods, want %v", variant, name, a["EvaluationPeriods"], periods)
			}
			if (a["AlarmActions"] != nil) != (s.cfg.AlarmEmail != "") {
				t.Errorf("%v: %s actions %v", variant, name, a["AlarmActions"])
			}
		}
	}
}

func sortedCopy(ss []string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return out
}
