// Package stack is doclib's AWS CDK stack: one per customer, holding the
// table, the search cluster, the six Lambda functions, the REST API with its
// authorizer, usage plans and WAF, and the alarms. infra/README.md describes
// the context values, the resources and the accepted cdk-nag findings.
package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/settings"
)

// New declares the stack of cfg in scope. bins holds every function's built
// bootstrap (Build or Prebuilt).
func New(scope constructs.Construct, cfg Config, bins Binaries) (awscdk.Stack, error) {
	for _, name := range lambdaapp.Functions {
		if bins[name] == "" {
			return nil, fmt.Errorf("stack: no binary for function %s", name)
		}
	}
	s := awscdk.NewStack(scope, jsii.String(cfg.StackName()), &awscdk.StackProps{
		Description: jsii.String("doclib read API for " + cfg.Customer),
	})
	// The same tag as the indexer's API keys carry (and its IAM policy checks).
	awscdk.Tags_Of(s).Add(jsii.String(usageplan.TagCustomer), jsii.String(cfg.Customer), nil)

	table := newTable(s, cfg)
	roles := newRoles(s, cfg)
	operator := newOperatorRole(s, cfg)
	// The MCP function searches as the search function does (its tools call
	// GET /search/documents in process), so it reads the index alike.
	readers := []awsiam.IRole{roles[lambdaapp.FunctionSearch], roles[lambdaapp.FunctionMCP]}
	search := newSearch(s, cfg, readers, []awsiam.IRole{roles[lambdaapp.FunctionIndexer], operator}, cfg.retention())

	base := map[string]*string{settings.EnvTable: table.TableName()}
	// The functions that answer the API's requests answer in their
	// integration's transfer mode, and end 401, 402 and 403 with the
	// deployment's account help (unset: their default).
	answers := map[string]*string{}
	if cfg.AccountHelp != "" {
		answers[settings.EnvAccountHelp] = jsii.String(cfg.AccountHelp)
	}
	transfer := map[string]*string{settings.EnvResponseTransfer: jsii.String(cfg.transferMode())}
	envs := map[string]map[string]*string{
		lambdaapp.FunctionLibraries: merge(base, envLimits(cfg), answers, transfer),
		lambdaapp.FunctionDocuments: merge(base, envLimits(cfg), answers, transfer),
		lambdaapp.FunctionSearch:    merge(base, envLimits(cfg), envSearch(cfg, search), answers, transfer),
		// The MCP function is wired as the search function is
		// (wiring.SearchFunction): exactly its environment.
		lambdaapp.FunctionMCP: merge(base, envLimits(cfg), envSearch(cfg, search), answers, transfer),
		// The customer is part of every usage identifier the authorizer
		// returns, as in the indexer's EnvUsagePlans.
		lambdaapp.FunctionAuthorizer: merge(base, map[string]*string{settings.EnvCustomer: jsii.String(cfg.Customer)}, answers),
		// EnvUsagePlans is added once the API exists.
		lambdaapp.FunctionIndexer: merge(base, envSearch(cfg, search)),
	}
	fns := map[string]*function{}
	for _, name := range lambdaapp.Functions {
		fns[name] = newFunction(s, cfg, name, bins[name], roles[name], envs[name])
	}

	// Least privilege, function by function (TestLeadingKeysMatchTheStore
	// checks the prefixes against what shared/backend/dynamo writes and reads).
	for _, name := range []string{lambdaapp.FunctionLibraries, lambdaapp.FunctionDocuments, lambdaapp.FunctionSearch, lambdaapp.FunctionMCP} {
		grantTableRead(roles[name], table)
		grantRateLimits(roles[name], table)
	}
	// The MCP function's tools read what the routes read and search as the
	// search route does (credit, the index, Bedrock): the search function's
	// rights, and no more (TestMCPHasTheSearchFunctionsRights).
	for _, name := range []string{lambdaapp.FunctionSearch, lambdaapp.FunctionMCP} {
		grantCredit(roles[name], table)
		search.grant(roles[name], false)
		grantBedrock(roles[name], cfg.BedrockModel)
	}
	grantTableRead(roles[lambdaapp.FunctionAuthorizer], table, leadKey, leadWorkspace)
	grantTableRead(roles[lambdaapp.FunctionIndexer], table)
	search.grant(roles[lambdaapp.FunctionIndexer], true)
	grantBedrock(roles[lambdaapp.FunctionIndexer], cfg.BedrockModel)

	api := newAPI(s, cfg, fns)
	indexer := fns[lambdaapp.FunctionIndexer]
	if cfg.UsagePlans {
		indexer.fn.AddEnvironment(jsii.String(settings.EnvUsagePlans), api.usagePlansEnv(cfg.Customer), nil)
		grantUsageKeys(indexer.role, cfg.Customer, api.planIDs())
	}
	failed, mapping := connectStream(s, cfg, table, indexer)
	grantReindex(operator, table, search, cfg.BedrockModel, mapping)
	newWAF(s, cfg, api)
	newAlarms(s, cfg, api, fns, failed, search)

	output := func(id, value, about string) {
		awscdk.NewCfnOutput(s, jsii.String(id), &awscdk.CfnOutputProps{Value: jsii.String(value), Description: jsii.String(about)})
	}
	output("ApiUrl", *api.rest.Url(), "Base URL of the API: append a route, e.g. <ApiUrl>libraries")
	output("TableName", *table.TableName(), "DynamoDB table (doclib-admin --table)")
	if cfg.Search == SearchEmbedded {
		output("SnapshotBucket", *search.bucket.BucketName(), "S3 bucket of the embedded search tier's snapshots ("+settings.EnvSnapshotBucket+")")
	} else {
		output("OpenSearchEndpoint", *search.endpoint, "OpenSearch "+cfg.Search+" endpoint ("+search.service+")")
	}
	if cfg.UsagePlans {
		output("UsagePlans", *api.usagePlansEnv(cfg.Customer), "Usage plan per tier, as "+settings.EnvUsagePlans+" takes them")
		for _, tier := range Tiers {
			output("UsagePlan"+fnID(tier), *api.plans[tier].UsagePlanId(), "Usage plan of "+tier+" workspaces")
		}
	}
	output("Region", *awscdk.Aws_REGION(), "Region of the stack")
	if cfg.Search == SearchEmbedded {
		output("OperatorRoleArn", *operator.RoleArn(), "Role that doclib-admin assumes (a profile with role_arn) to read the table and pause the indexer's trigger")
	} else {
		output("OperatorRoleArn", *operator.RoleArn(), "Role that doclib-admin reindex assumes (a profile with role_arn): the only identity besides the functions that the domain admits")
	}

	suppressFindings(s, cfg, api, search, fns, operator, failed)
	return s, nil
}
