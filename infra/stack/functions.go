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

	"github.com/doclib/doclib/shared/awsapp"
	"github.com/doclib/doclib/shared/dynamo"
)

// sizing is a function's memory and timeout. Lambda gives CPU in proportion
// to memory, so the functions that encode large answers or call Bedrock and
// OpenSearch get more; all API functions answer well within API Gateway's
// 29 s integration timeout.
type sizing struct {
	memoryMB   int
	timeoutSec int
	about      string
}

var sizes = map[string]sizing{
	awsapp.FunctionLibraries:  {1024, 15, "libraries routes (a library graph is up to 2.3 MB of JSON)"},
	awsapp.FunctionDocuments:  {512, 10, "documents routes"},
	awsapp.FunctionSearch:     {1024, 15, "search route: Bedrock embedding and an OpenSearch query"},
	awsapp.FunctionAuthorizer: {256, 5, "REQUEST authorizer: key, device and workspace lookups"},
	// A batch of 50 stream records may fan out to many documents, each
	// re-read and re-embedded one text per Bedrock call.
	awsapp.FunctionIndexer: {1024, 600, "DynamoDB stream to OpenSearch indexer and API Gateway usage keys"},
}

// function is one Lambda function with its own role and log group.
type function struct {
	name string
	fn   awslambda.Function
	role awsiam.Role
	logs awslogs.LogGroup
}

// newRoles makes one role per function before anything else, because the
// OpenSearch access policy must name the search and indexer roles.
func newRoles(s awscdk.Stack, cfg Config) map[string]awsiam.Role {
	roles := map[string]awsiam.Role{}
	for _, name := range awsapp.Functions {
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
	size, ok := sizes[name]
	if !ok {
		panic("stack: no sizing for function " + name)
	}
	logs := awslogs.NewLogGroup(s, jsii.String(fnID(name)+"Logs"), &awslogs.LogGroupProps{Retention: cfg.retention()})
	// Only this log group: the role writes nowhere else (no AWS-managed
	// AWSLambdaBasicExecutionRole, which allows every log group).
	logs.GrantWrite(role)
	fn := awslambda.NewFunction(s, jsii.String(fnID(name)), &awslambda.FunctionProps{
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
	})
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
// against the keys shared/dynamo really writes.
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

// grantCounters lets role update items under prefixes: the rate limiter's
// windows and, for search, the AI-credit ledger. Nothing else is written.
func grantCounters(role awsiam.Role, t awsdynamodb.Table, prefixes ...string) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("UpdateCounters"),
		Actions:    jsii.Strings("dynamodb:UpdateItem"),
		Resources:  &[]*string{t.TableArn()},
		Conditions: leadingKeys(prefixes...),
	}))
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

// grantUsageKeys lets the indexer keep API Gateway's API keys in step with
// doclib's keys (shared/usageplan): list, create, enable and delete API keys,
// and add, read and remove them in the given usage plans only.
func grantUsageKeys(role awsiam.Role, planIDs []*string) {
	apigw := func(path string) *string {
		return awscdk.Fn_Join(jsii.String(""), &[]*string{
			jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":apigateway:"), awscdk.Aws_REGION(), jsii.String("::" + path),
		})
	}
	resources := []*string{apigw("/apikeys"), apigw("/apikeys/*")}
	for _, id := range planIDs {
		resources = append(resources, apigw("/usageplans/"+*id+"/keys"), apigw("/usageplans/"+*id+"/keys/*"))
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("UsagePlanKeys"),
		// PATCH enables a disabled key (UpdateApiKey); GET lists keys by name
		// and reads a plan membership.
		Actions:   jsii.Strings("apigateway:GET", "apigateway:POST", "apigateway:PATCH", "apigateway:DELETE"),
		Resources: &resources,
	}))
}

// envLimits are the rate limits of the API functions' handler.
func envLimits(cfg Config) map[string]*string {
	return map[string]*string{
		awsapp.EnvKeyLimit: jsii.String(strconv.Itoa(cfg.KeyLimit)),
		awsapp.EnvIPLimit:  jsii.String(strconv.Itoa(cfg.IPLimit)),
	}
}

// envSearch is what the search and indexer functions need to reach
// OpenSearch and Bedrock. The index alias keeps its default
// (doclib-documents).
func envSearch(cfg Config, b *searchBackend) map[string]*string {
	return map[string]*string{
		awsapp.EnvOpenSearchURL:     b.url,
		awsapp.EnvOpenSearchService: jsii.String(b.service),
		awsapp.EnvEmbedder:          jsii.String("bedrock"),
		awsapp.EnvEmbedModel:        jsii.String(cfg.BedrockModel),
		awsapp.EnvEmbedDimensions:   jsii.String(strconv.Itoa(cfg.EmbedDimensions)),
	}
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
