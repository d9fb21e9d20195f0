package stack

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/settings"
)

// sizing is a function's memory and timeout. Lambda gives CPU in proportion
// to memory, so the functions that encode large answers or call Bedrock and
// OpenSearch get more. An API function's timeout here is its time to make an
// answer, within API Gateway's default integration timeout of 29 s, which a
// buffered integration keeps; sizeOf adds the time to stream the largest
// answer (apigw.StreamSeconds), which the invocation lasts too, and a
// streamed integration's timeout covers it all (integrationTimeout).
type sizing struct {
	memoryMB   int
	timeoutSec int
	about      string
}

// The API functions read and answer the spec's largest answers (docs/design.md,
// "Answers of any size"): a page of 100 documents at the content limit is
// 30 MB read from the table and 30 MB of JSON, a traversal that reaches 160
// such documents 48 MB and 53 MB. Each holds both at once, and Lambda's CPU
// grows with memory (1,024 MB is about 0.6 vCPU), so each gets 1,024 MB and
// 20 s to make an answer, under API Gateway's 29 s of a buffered integration.
var sizes = map[string]sizing{
	lambdaapp.FunctionLibraries: {1024, 20, "libraries routes (a page of 100 documents is up to 30 MB of JSON)"},
	lambdaapp.FunctionDocuments: {1024, 20, "documents routes (a traversal reaches every document within 3 hops)"},
	lambdaapp.FunctionSearch:    {1024, 20, "search route: Bedrock embedding and an OpenSearch query"},
	// The MCP endpoint's tools call every route in process, a search among
	// them, so it is sized as the largest of the functions it stands for.
	lambdaapp.FunctionMCP:        {1024, 20, "MCP endpoint (POST /mcp): tools calling the routes in process, search included"},
	lambdaapp.FunctionAuthorizer: {256, 5, "REQUEST authorizer: key, device and workspace lookups"},
	// A batch of 50 stream records may fan out to many documents, each
	// re-read and re-embedded one text per Bedrock call.
	lambdaapp.FunctionIndexer: {1024, 600, "DynamoDB stream to OpenSearch indexer and API Gateway usage keys"},
}

// embeddedIndexerMemoryMB is the indexer's memory in the embedded tier: it
// writes each batch as a small segment, and merges: the largest merge the
// default policy runs reads ten segments of up to 10,000 documents and writes
// one of 100,000, 1.8 GB alive at once at 1,024 dimensions and 1.5 GB
// allocated, in 5.2 s on 2 vCPUs (BenchmarkMerge, docs/performance.md). 3,008
// MB holds that with the collector's headroom; nothing goes to /tmp (large
// segments stream to S3), and the timeout stays at 600 s, since a batch may
// still fan out to many documents, each re-embedded.
const embeddedIndexerMemoryMB = 3008

// sizeOf is a function's sizing in cfg's search tier.
func sizeOf(cfg Config, name string) (sizing, bool) {
	size, ok := sizes[name]
	if cfg.ResponseStreaming && answersAPI(name) {
		size.timeoutSec += apigw.StreamSeconds
	}
	if cfg.Search != SearchEmbedded {
		return size, ok
	}
	switch name {
	case lambdaapp.FunctionSearch:
		size.memoryMB, size.about = cfg.SearchMemoryMB, "search route: Bedrock embedding and the embedded engine over the newest snapshot"
	case lambdaapp.FunctionMCP:
		// Its searches load the same index into the same engine as the
		// search function's, so it needs the same memory to hold it.
		size.memoryMB, size.about = cfg.SearchMemoryMB, "MCP endpoint (POST /mcp): tools calling the routes in process, the embedded engine included"
	case lambdaapp.FunctionIndexer:
		size.memoryMB, size.about = embeddedIndexerMemoryMB, "DynamoDB stream to the search snapshot in S3 and API Gateway usage keys"
	}
	return size, ok
}

// lambdaInitSeconds is the longest a function's init phase may take, before
// its invocation's own timeout starts: Lambda ends an init that runs longer
// (Lambda Developer Guide, "Understanding the Lambda execution environment
// lifecycle": the Init phase is limited to 10 seconds).
const lambdaInitSeconds = 10

// integrationTimeout is the timeout of the API integration that invokes the
// function name. API Gateway's integration timeout is the time the whole
// response may take, also when it is streamed ("Stream the integration
// response for your proxy integrations": streaming is what allows going
// past the default 29 s, up to 15 minutes, without a quota increase). So a
// streamed integration's timeout is the function's whole invocation, a cold
// start's init included: the function's timeout, which holds the time to
// make an answer and to stream it, plus lambdaInitSeconds. A buffered
// integration keeps API Gateway's default of 29 s (nil), the most it may have
// without a quota increase, which the function's 20 s fits.
func integrationTimeout(cfg Config, name string) awscdk.Duration {
	if !cfg.ResponseStreaming {
		return nil
	}
	size, ok := sizeOf(cfg, name)
	if !ok || !answersAPI(name) {
		panic("stack: no API integration invokes function " + name)
	}
	return awscdk.Duration_Seconds(jsii.Number(float64(size.timeoutSec + lambdaInitSeconds)))
}

// answersAPI reports whether a function serves the API's routes or /mcp (an
// integration of the REST API), as opposed to the authorizer and indexer.
func answersAPI(name string) bool {
	switch name {
	case lambdaapp.FunctionLibraries, lambdaapp.FunctionDocuments, lambdaapp.FunctionSearch, lambdaapp.FunctionMCP:
		return true
	}
	return false
}

// function is one Lambda function with its own role and log group.
type function struct {
	name string
	fn   awslambda.Function
	role awsiam.Role
	logs awslogs.LogGroup
}

// newRoles makes one role per function before anything else, because the
// OpenSearch access policy must name the search, MCP and indexer roles.
func newRoles(s awscdk.Stack, cfg Config) map[string]awsiam.Role {
	roles := map[string]awsiam.Role{}
	for _, name := range lambdaapp.Functions {
		roles[name] = awsiam.NewRole(s, jsii.String(fnID(name)+"Role"), &awsiam.RoleProps{
			AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
			Description: jsii.String(fmt.Sprintf("doclib %s: the %s function, least privilege", cfg.Customer, name)),
		})
	}
	return roles
}

// newFunction declares a function on provided.al2023/arm64 from its built
// bootstrap, with a log group of its own (JSON lines, the stack's retention)
// and active X-Ray tracing.
func newFunction(s awscdk.Stack, cfg Config, name, codeDir string, role awsiam.Role, env map[string]*string) *function {
	size, ok := sizeOf(cfg, name)
	if !ok {
		panic("stack: no sizing for function " + name)
	}
	logs := awslogs.NewLogGroup(s, jsii.String(fnID(name)+"Logs"), &awslogs.LogGroupProps{Retention: cfg.retention(), RemovalPolicy: cfg.removal()})
	// Only this log group: the role writes nowhere else (no AWS-managed
	// AWSLambdaBasicExecutionRole, which allows every log group).
	logs.GrantWrite(role)
	props := &awslambda.FunctionProps{
		FunctionName:  jsii.String(cfg.ResourcePrefix() + "-" + name),
		Description:   jsii.String("doclib " + size.about),
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  awslambda.Architecture_ARM_64(),
		Handler:       jsii.String("bootstrap"),
		Code:          awslambda.Code_FromAsset(jsii.String(codeDir), nil),
		Role:          role,
		MemorySize:    jsii.Number(float64(size.memoryMB)),
		Timeout:       awscdk.Duration_Seconds(jsii.Number(float64(size.timeoutSec))),
		Tracing:       awslambda.Tracing_ACTIVE,
		LoggingFormat: awslambda.LoggingFormat_JSON,
		LogGroup:      logs,
		Environment:   &env,
	}
	if n := reservedConcurrency(cfg, name); n > 0 {
		props.ReservedConcurrentExecutions = jsii.Number(float64(n))
	}
	fn := awslambda.NewFunction(s, jsii.String(fnID(name)), props)
	return &function{name: name, fn: fn, role: role, logs: logs}
}

// fnID is a function's construct ID: Libraries, Documents, ...
func fnID(name string) string {
	if name == "" {
		return name
	}
	return string(name[0]-'a'+'A') + name[1:]
}

// Partition-key prefixes that the functions write, for dynamodb:LeadingKeys
// conditions (docs/dynamodb.md). TestLeadingKeysMatchTheStore checks them
// against the keys shared/backend/dynamo really writes.
const (
	leadRateLimit = "RL#"  // a rate-limit window: RL#<bucket>#<window start>
	leadWorkspace = "WS#"  // a workspace, its devices, key listings and AI credit
	leadKey       = "KEY#" // a key's lookup item, by the hash of its secret
)

// Table access of the functions. Reads are the three calls the store makes
// (no Scan: only doclib-admin scans); writes are UpdateItem only (the
// limiter's and the ledger's conditional counters).
var (
	tableReadActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"}
	streamActions    = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}
)

// The attributes, besides the key, that the counters' UpdateItem calls name
// (shared/backend/dynamo/limits.go), for dynamodb:Attributes conditions.
// TestCountersMatchTheStore checks them against the requests the store makes.
var (
	attrsRateLimit = []string{"n", "exp"} // a window's count and its TTL
	attrsCredit    = []string{"credit"}   // a workspace's AI credit
)

// counterReturnValues are the ReturnValues a counter's UpdateItem may ask
// for: none or the updated attributes, never ALL_OLD or ALL_NEW, which would
// read the whole item.
var counterReturnValues = []string{"NONE", "UPDATED_OLD", "UPDATED_NEW"}

// tableReadResources are the table and the one index the store queries
// (byOrder); byWorkspace serves doclib-admin's import only.
func tableReadResources(t awsdynamodb.Table) *[]*string {
	return &[]*string{t.TableArn(), jsii.String(*t.TableArn() + "/index/" + dynamo.TableSchema().OrderIndex)}
}

// leadingKeys limits a DynamoDB statement to items whose partition key
// starts with one of prefixes.
func leadingKeys(prefixes ...string) *map[string]any {
	like := make([]string, len(prefixes))
	for i, p := range prefixes {
		like[i] = p + "*"
	}
	return &map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": like}}
}

// grantTableRead lets role read the table; with prefixes, only partitions
// that start with one of them.
func grantTableRead(role awsiam.Role, t awsdynamodb.Table, prefixes ...string) {
	st := &awsiam.PolicyStatementProps{
		Sid:       jsii.String("ReadTable"),
		Actions:   jsii.Strings(tableReadActions...),
		Resources: tableReadResources(t),
	}
	if len(prefixes) > 0 {
		st.Conditions = leadingKeys(prefixes...)
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(st))
}

// grantCounter lets role UpdateItem items whose partition key starts with
// prefix, naming no attribute but the key's and attrs, and getting back at
// most the attributes it updated. Nothing else is written.
//
// IAM has no condition on the sort key, so the statement cannot name the item
// (CREDIT of a WS# partition): the attribute list is what keeps the ledger's
// grant off the workspace's plan and subscription, its devices' status and
// its key listings, which hold none of these attributes but the key.
func grantCounter(role awsiam.Role, t awsdynamodb.Table, sid, prefix string, attrs ...string) {
	sc := dynamo.TableSchema()
	conds := *leadingKeys(prefix)
	conds["ForAllValues:StringEquals"] = map[string]any{"dynamodb:Attributes": append([]string{sc.PartitionKey, sc.SortKey}, attrs...)}
	conds["StringEqualsIfExists"] = map[string]any{"dynamodb:ReturnValues": counterReturnValues}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String(sid),
		Actions:    jsii.Strings("dynamodb:UpdateItem"),
		Resources:  &[]*string{t.TableArn()},
		Conditions: &conds,
	}))
}

// grantRateLimits lets role count its rate-limit windows.
func grantRateLimits(role awsiam.Role, t awsdynamodb.Table) {
	grantCounter(role, t, "UpdateRateLimits", leadRateLimit, attrsRateLimit...)
}

// grantCredit lets role spend and refund workspaces' AI credit.
func grantCredit(role awsiam.Role, t awsdynamodb.Table) {
	grantCounter(role, t, "SpendCredit", leadWorkspace, attrsCredit...)
}

// grantStream lets the indexer's event source mapping read the table's
// stream, and only it (CDK's own grant adds ListStreams on "*").
func grantStream(role awsiam.Role, t awsdynamodb.Table) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("ReadStream"),
		Actions:   jsii.Strings(streamActions...),
		Resources: &[]*string{t.TableStreamArn()},
	}))
}

// grantBedrock lets role embed with the configured foundation model only.
func grantBedrock(role awsiam.Role, model string) {
	arn := awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":bedrock:"), awscdk.Aws_REGION(),
		jsii.String("::foundation-model/" + model),
	})
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("Embed"),
		Actions:   jsii.Strings("bedrock:InvokeModel"),
		Resources: &[]*string{arn},
	}))
}

// apigwARN is the ARN of an API Gateway resource path in the stack's Region.
func apigwARN(path string) *string {
	return awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":apigateway:"), awscdk.Aws_REGION(), jsii.String("::" + path),
	})
}

// grantUsageKeys lets the indexer keep API Gateway's API keys in step with
// doclib's keys (shared/aws/usageplan), and no other API keys: API keys are
// account- and Region-wide, and every customer's stack shares the account.
// The Syncer tags each key it creates usageplan.TagCustomer=<customer>, and
// the policy holds it to that (API Gateway supports aws:RequestTag and
// aws:TagKeys on POST /apikeys and on PUT /tags, aws:ResourceTag on a key):
//
//   - GET /apikeys: list keys by name. A list has no tags to condition on, so
//     this lists the Region's keys; the Syncer never asks for their values.
//   - POST /apikeys, and PUT /tags/* (tag-on-create needs it, and so does
//     adopting the stack's keys from before they were tagged): only with the
//     tag TagCustomer=<customer> and no other tag key.
//   - PATCH, DELETE /apikeys/*: enable, rename or delete only keys tagged
//     TagCustomer=<customer>.
//   - POST /usageplans/<plan>/keys, GET and DELETE /usageplans/<plan>/keys/*:
//     add, read and remove keys in this stack's three plans only.
//
// What IAM cannot say: PUT /tags is TagResource too, so the role could put
// its own customer's tag on another resource of the Region, and then manage
// it if it is a key. The Syncer never does (it tags only keys already in this
// stack's plans); the policy alone does not prevent it.
func grantUsageKeys(role awsiam.Role, customer string, planIDs []*string) {
	onlyOurTag := map[string]any{
		"StringEquals":              map[string]any{"aws:RequestTag/" + usageplan.TagCustomer: customer},
		"ForAllValues:StringEquals": map[string]any{"aws:TagKeys": []string{usageplan.TagCustomer}},
	}
	var join, member []*string
	for _, id := range planIDs {
		join = append(join, apigwARN("/usageplans/"+*id+"/keys"))
		member = append(member, apigwARN("/usageplans/"+*id+"/keys/*"))
	}
	for _, st := range []*awsiam.PolicyStatementProps{
		{Sid: jsii.String("ListApiKeys"), Actions: jsii.Strings("apigateway:GET"), Resources: &[]*string{apigwARN("/apikeys")}},
		{Sid: jsii.String("CreateOwnApiKeys"), Actions: jsii.Strings("apigateway:POST"), Resources: &[]*string{apigwARN("/apikeys")},
			Conditions: &onlyOurTag},
		{Sid: jsii.String("TagOwnApiKeys"), Actions: jsii.Strings("apigateway:PUT"), Resources: &[]*string{apigwARN("/tags/*")},
			Conditions: &onlyOurTag},
		// PATCH enables a disabled key or renames an adopted one (UpdateApiKey).
		{Sid: jsii.String("ManageOwnApiKeys"), Actions: jsii.Strings("apigateway:PATCH", "apigateway:DELETE"),
			Resources:  &[]*string{apigwARN("/apikeys/*")},
			Conditions: &map[string]any{"StringEquals": map[string]any{"aws:ResourceTag/" + usageplan.TagCustomer: customer}}},
		{Sid: jsii.String("JoinUsagePlans"), Actions: jsii.Strings("apigateway:POST"), Resources: &join},
		{Sid: jsii.String("UsagePlanMembers"), Actions: jsii.Strings("apigateway:GET", "apigateway:DELETE"), Resources: &member},
	} {
		role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(st))
	}
}

// envLimits are the rate limits of the API functions' handler.
func envLimits(cfg Config) map[string]*string {
	return map[string]*string{
		settings.EnvKeyLimit: jsii.String(strconv.Itoa(cfg.KeyLimit)),
		settings.EnvIPLimit:  jsii.String(strconv.Itoa(cfg.IPLimit)),
	}
}

// reservedConcurrency is what a function reserves of the account's
// concurrency: nothing unless a context value asks.
//
//   - The authorizer: every request the authorizer cache misses needs it;
//     a reservation keeps it answering when other functions of the account
//     take the rest (and caps it there).
//   - The indexer: a stream mapping runs one batch per shard at once, so
//     with several shards several indexers may run. In the embedded tier
//     each commit reads the snapshot in service and publishes a whole new
//     one; two at once conflict on the pointer's conditional write, and the
//     loser redoes its batch over the winner's snapshot (shared/indexer,
//     Handle), so no reservation is needed for correctness. A reservation of
//     1 would make the writers take turns instead, on accounts that can
//     spare it: a throttled batch waits and is retried by Lambda until it
//     runs, without counting against MaximumRetryAttempts (Lambda Developer
//     Guide, "Error handling" for DynamoDB event sources).
func reservedConcurrency(cfg Config, name string) int {
	switch name {
	case lambdaapp.FunctionAuthorizer:
		return cfg.AuthorizerReservedConcurrency
	case lambdaapp.FunctionIndexer:
		return cfg.IndexerReservedConcurrency
	}
	return 0
}

// envSearch is what the search, MCP and indexer functions need to reach their
// search tier and Bedrock. For the domain the index alias is set
// explicitly, to the one the search role's OpenSearch grant names
// (searchAlias). The embedded tier gets the bucket and no OpenSearch
// variable; EnvSnapshotPoll is left to its default.
func envSearch(cfg Config, b *searchBackend) map[string]*string {
	env := map[string]*string{
		settings.EnvEmbedder:        jsii.String("bedrock"),
		settings.EnvEmbedModel:      jsii.String(cfg.BedrockModel),
		settings.EnvEmbedDimensions: jsii.String(strconv.Itoa(cfg.EmbedDimensions)),
	}
	if cfg.Search == SearchEmbedded {
		env[settings.EnvSearch] = jsii.String(SearchEmbedded)
		env[settings.EnvSnapshotBucket] = b.bucket.BucketName()
		return env
	}
	env[settings.EnvOpenSearchURL] = b.url
	env[settings.EnvOpenSearchService] = jsii.String(b.service)
	env[settings.EnvOpenSearchAlias] = jsii.String(searchAlias)
	return env
}

func merge(ms ...map[string]*string) map[string]*string {
	out := map[string]*string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// newOperatorRole is the role operators assume to run doclib-admin reindex
// (an AWS profile with role_arn = the OperatorRoleArn output). The domain's
// access policy names it, with the indexer's, as the only writers: the
// account's other identities get no access through the domain policy, so a
// customer's documents are readable only by this stack's roles. The trust
// policy names the account, which lets in only identities whose own policy
// grants sts:AssumeRole on this role.
func newOperatorRole(s awscdk.Stack, cfg Config) awsiam.Role {
	return awsiam.NewRole(s, jsii.String("OperatorRole"), &awsiam.RoleProps{
		AssumedBy:          awsiam.NewAccountRootPrincipal(),
		Description:        jsii.String(fmt.Sprintf("doclib %s: operators' doclib-admin reindex: read the table, embed, rebuild the search index, pause the indexer's trigger", cfg.Customer)),
		MaxSessionDuration: awscdk.Duration_Hours(jsii.Number(4)),
	})
}

// grantReindex gives the operators' role what doclib-admin reindex does: scan
// and read the table, embed with the stack's model, write the domain's index,
// and pause and resume the indexer's stream trigger around the rebuild
// (shared/aws/trigger) — that trigger only. doclib-admin reindex writes a
// domain, not snapshots: an embedded stack's bucket is written by its indexer
// alone, and the operators' role gets no S3 right.
func grantReindex(role awsiam.Role, t awsdynamodb.Table, search *searchBackend, model string, mapping awslambda.EventSourceMapping) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("ReadTable"),
		Actions:   jsii.Strings(append([]string{"dynamodb:Scan", "dynamodb:DescribeTable"}, tableReadActions...)...),
		Resources: tableReadResources(t),
	}))
	if search.operatorWrites {
		search.grant(role, true)
	}
	grantBedrock(role, model)
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("PauseIndexerTrigger"),
		Actions:   jsii.Strings("lambda:GetEventSourceMapping", "lambda:UpdateEventSourceMapping"),
		Resources: &[]*string{mapping.EventSourceMappingArn()},
	}))
	// ListEventSourceMappings has no resource-level permissions (Resource
	// "*"); it lists mappings, not data.
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("FindIndexerTrigger"),
		Actions:   jsii.Strings("lambda:ListEventSourceMappings"),
		Resources: jsii.Strings("*"),
	}))
}
