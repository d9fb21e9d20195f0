package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
)

// Reasons of the cdk-nag AwsSolutions findings the stack accepts. Each is
// attached to the resource it is about (never to the whole stack), and an
// IAM5 one only to the wildcard it names. infra/README.md lists them.
const (
	reasonRequestValidation = "The read API's routes take GET without a body: the handler validates every path and query parameter " +
		"and answers 400 bad_request in the API's error shape (docs/api.md), which a request validator cannot produce. " +
		"POST /mcp takes one JSON-RPC message, which the MCP handler validates and answers with JSON-RPC errors and tool errors, " +
		"which a request validator's JSON schema model cannot produce either."
	reasonLambdaAuthorizer = "Requests are authorized by the Lambda REQUEST authorizer, which checks doclib's own bearer API keys " +
		"against the table (keys, devices, workspaces); there are no Cognito users."
	reasonNoVPC = "No VPC: the domain is reached over its HTTPS endpoint with IAM-signed (SigV4) requests only, and its access policy " +
		"admits the search, MCP, indexer and operators' roles only. A VPC would need NAT or VPC endpoints for DynamoDB, Bedrock and API Gateway " +
		"and would lengthen the functions' cold starts."
	reasonNoIPAllowList = "Access is granted to IAM principals (the search, MCP, indexer and operators' roles), not IP addresses: Lambda functions have " +
		"no fixed addresses, and every request must be SigV4-signed by one of the four roles."
	reasonNoDedicatedMasters = "The small and standard sizes have one or two data nodes holding one index that the indexer rebuilds from the table (doclib-admin reindex); " +
		"three dedicated master nodes would more than double their cost. The large size has them."
	reasonOneZone = "The small size is one node in one zone on purpose: the cheapest domain, for trials and small customers. " +
		"Losing the zone stops search until it returns, and the index can be rebuilt from the table (doclib-admin reindex). The standard and large sizes spread over two and three zones."
	reasonXRay = "X-Ray's PutTraceSegments and PutTelemetryRecords do not support resource-level permissions: " +
		"active tracing needs Resource *. The statement has no other action."
	reasonDomainPaths = "OpenSearch Service authorizes HTTP paths under the domain ARN: <domain-arn>/* names this domain's " +
		"indexes and APIs only. Only the indexer has it: it creates the index and alias and writes documents (/_bulk, /_aliases). " +
		"The search and MCP roles may only POST <domain-arn>/<alias>/_search and GET <domain-arn>/<alias>/_mapping."
	reasonListMappings = "lambda:ListEventSourceMappings has no resource-level permissions; doclib-admin reindex lists the table stream's " +
		"mappings to pause the indexer's, and may get or update that one mapping only."
	reasonAPIKeys = "The indexer creates one API Gateway API key per doclib key at run time, so key IDs are unknown here. " +
		"/apikeys/*: PATCH and DELETE only, and only on keys tagged doclib:customer=<this customer> (aws:ResourceTag). " +
		"/tags/*: PUT only, and only the tag doclib:customer=<this customer> (aws:RequestTag, aws:TagKeys), which tag-on-create " +
		"of POST /apikeys needs; IAM cannot tell it from TagResource, so the role could also give another resource this tag. " +
		"/usageplans/<plan>/keys/*: GET and DELETE of memberships in this stack's three usage plans only. " +
		"Besides these, GET /apikeys lists the Region's API keys (a list has no tags to condition on; values are never asked for)."
	reasonFailureQueue = "This queue is itself the on-failure destination of the indexer's stream; a dead-letter queue of it " +
		"would only move the records again. Messages are kept 14 days and alarm when present."
	reasonSnapshotAccessLogs = "The snapshots' bucket is written only by this stack's indexer role and read only by its search and MCP roles " +
		"(their identity policies; public access is blocked, ACLs are off and requests without TLS are denied). Its objects are derived " +
		"from the table and rebuilt from it. CloudTrail S3 data events are the audit path where one is wanted; server access logs would " +
		"need a second bucket per customer stack and log every poll of the snapshot pointer."
	reasonSnapshotPrefix = "The embedded tier's objects are its manifest, snapshots/manifest.json, and segments under snapshots/segments/, " +
		"each under a key chosen at write time (shared/backend/snapshot): <bucket>/snapshots/* names them and nothing else in this " +
		"stack's own bucket. The search and MCP roles may only GetObject and GetObjectVersion there; the indexer may also PutObject."
	reasonRetiredSegments = "The indexer deletes the segments no manifest has named for 15 minutes (merged, or replaced by a reindex); " +
		"their keys are chosen at write time. <bucket>/snapshots/segments/* holds segments only, and s3:DeleteObject leaves a delete " +
		"marker (no version is deleted; the lifecycle expires them a day later). The manifest and anything else are out of its reach."
	reasonAccountLoggingRole = "API Gateway's CloudWatch role is one per account and Region, shared by every REST API there " +
		"(one per customer stack); it writes API-Gateway-Execution-Logs_<api-id>/<stage> and each API's access log group, " +
		"whose names this stack cannot know."
)

// suppress records one accepted cdk-nag finding on c and its children; with
// appliesTo, only those findings (IAM5 wildcards) are accepted.
func suppress(c any, rule, reason string, appliesTo ...string) {
	sup := &cdknag.NagPackSuppression{Id: jsii.String(rule), Reason: jsii.String(reason)}
	if len(appliesTo) > 0 {
		list := make([]any, len(appliesTo))
		for i, a := range appliesTo {
			list[i] = a
		}
		sup.AppliesTo = &list
	}
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{sup}, jsii.Bool(true))
}

// suppressFindings attaches each accepted finding to its resource.
func suppressFindings(s awscdk.Stack, cfg Config, a *api, search *searchBackend, fns map[string]*function, operator awsiam.Role, failed awssqs.Queue) {
	suppress(a.rest, "AwsSolutions-APIG2", reasonRequestValidation)
	suppress(a.rest, "AwsSolutions-COG4", reasonLambdaAuthorizer)
	// cdk-nag names a resource of the template <LogicalId> or <LogicalId.Attribute>.
	ref := func(c constructs.IConstruct) string { return *s.GetLogicalId(c.(awscdk.CfnElement)) }
	if cfg.Search == SearchDomain {
		suppress(search.node, "AwsSolutions-OS1", reasonNoVPC)
		suppress(search.node, "AwsSolutions-OS3", reasonNoIPAllowList)
		if cfg.DomainMasterCount == 0 {
			suppress(search.node, "AwsSolutions-OS4", reasonNoDedicatedMasters)
		}
		if cfg.DomainZones == 1 {
			suppress(search.node, "AwsSolutions-OS7", reasonOneZone)
		}
		paths := "Resource::<" + ref(search.node) + ".Arn>/*"
		suppress(fns[lambdaapp.FunctionIndexer].role, "AwsSolutions-IAM5", reasonDomainPaths, paths)
		suppress(operator, "AwsSolutions-IAM5", reasonDomainPaths, paths)
	}
	if cfg.Search == SearchEmbedded {
		suppress(search.node, "AwsSolutions-S1", reasonSnapshotAccessLogs)
		objects := "Resource::<" + ref(search.node) + ".Arn>/" + snapshotPrefix + "*"
		for _, name := range []string{lambdaapp.FunctionSearch, lambdaapp.FunctionMCP, lambdaapp.FunctionIndexer} {
			suppress(fns[name].role, "AwsSolutions-IAM5", reasonSnapshotPrefix, objects)
		}
		segments := "Resource::<" + ref(search.node) + ".Arn>/" + segmentPrefix + "*"
		suppress(fns[lambdaapp.FunctionIndexer].role, "AwsSolutions-IAM5", reasonRetiredSegments, segments)
	}
	suppress(operator, "AwsSolutions-IAM5", reasonListMappings, "Resource::*")
	if cfg.UsagePlans {
		apigw := "Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::"
		keys := []string{apigw + "/apikeys/*", apigw + "/tags/*"}
		for _, tier := range Tiers {
			keys = append(keys, apigw+"/usageplans/<"+ref(a.plans[tier].Node().DefaultChild())+">/keys/*")
		}
		suppress(fns[lambdaapp.FunctionIndexer].role, "AwsSolutions-IAM5", reasonAPIKeys, keys...)
	}
	for _, f := range fns {
		suppress(f.role, "AwsSolutions-IAM5", reasonXRay, "Resource::*")
	}
	suppress(failed, "AwsSolutions-SQS3", reasonFailureQueue)
}
