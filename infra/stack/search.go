package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchservice"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/shared/settings"
)

// engineVersion is the managed domain's engine: 2.19 is the first with faiss
// HNSW on cosine spaces and hybrid pagination (docs/search.md).
const engineVersion = "OpenSearch_2.19"

// searchAlias is the index alias the functions search and write, set in
// their environment (envSearch) and named in the search role's grant.
const searchAlias = settings.DefaultOpenSearchAlias

// OpenSearch access on a managed domain, path by path: OpenSearch Service
// authorizes es:ESHttp<Method> on <domain-arn>/<path>.
//
// The search function, and the MCP function whose tools search the same way,
// make two kinds of request (shared/backend/opensearch): POST
// /<alias>/_search for every search, and GET /<alias>/_mapping to check,
// before its first search and then now and again, that the index holds
// vectors of its embedder. It may make those and no other: a POST anywhere
// under the domain would also allow /_bulk, /_delete_by_query and
// /_aliases, and a POST on _mapping would change the mapping. The indexer
// creates the index and alias and writes documents (/_bulk, /_aliases, PUT
// and DELETE of indexes), so it keeps every verb on the domain's paths, and
// so does the operators' role (doclib-admin reindex).
type esGrant struct{ action, path string }

var (
	esSearchGrants = []esGrant{{"es:ESHttpPost", "/" + searchAlias + "/_search"}, {"es:ESHttpGet", "/" + searchAlias + "/_mapping"}}
	esWriteActions = []string{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"}
)

// searchBackend is what the search, MCP and indexer functions search and write:
// the OpenSearch domain (SearchDomain) or the snapshots' bucket
// (SearchEmbedded).
type searchBackend struct {
	url      *string // domain: https://…, for settings.EnvOpenSearchURL
	service  string  // domain: "es", for settings.EnvOpenSearchService
	endpoint *string // domain: for the stack's output
	// bucket holds the embedded tier's snapshots (snapshots.go).
	bucket awss3.Bucket
	// grant gives a role its identity-based permissions; the resource side
	// (the domain access policy) names the roles when the backend is built.
	grant func(role awsiam.IRole, write bool)
	// operatorWrites: the operators' role writes the index (doclib-admin
	// reindex), as on the domain; not the embedded tier's snapshots.
	operatorWrites bool
	// node is the construct cdk-nag suppressions attach to.
	node constructs.IConstruct
	// domainName names the domain in its CloudWatch metrics (AWS/ES).
	domainName string
}

// newSearch builds the search tier of cfg. For the managed domain, readers
// are the search and MCP functions' roles and writers are the indexer's and
// the operators' roles: the only principals its policy admits. The embedded
// tier's bucket has no resource policy but TLS-only; the roles' own policies
// say who may do what (newSnapshots).
func newSearch(s awscdk.Stack, cfg Config, readers, writers []awsiam.IRole, retention awslogs.RetentionDays) *searchBackend {
	if cfg.Search == SearchEmbedded {
		return newSnapshots(s, cfg)
	}
	return newDomain(s, cfg, readers, writers, retention)
}

// newDomain is an Amazon OpenSearch Service domain reached over its public
// endpoint with IAM-signed requests only (see the OS1 suppression).
func newDomain(s awscdk.Stack, cfg Config, readers, writers []awsiam.IRole, retention awslogs.RetentionDays) *searchBackend {
	name := cfg.ResourcePrefix()
	// The access policy must name the domain's ARN before the domain exists
	// (GetAtt on itself would be a cycle), hence the explicit domain name.
	arn := awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":es:"), awscdk.Aws_REGION(), jsii.String(":"),
		awscdk.Aws_ACCOUNT_ID(), jsii.String(":domain/" + name),
	})
	paths := jsii.String(*arn + "/*")

	// Slow logs and error logs go to CloudWatch. The service writes them under
	// a CloudWatch Logs resource policy (there may be 10 per account and
	// region: one per customer stack here). It is declared directly rather
	// than through the L2 Domain, whose custom resource would add a Lambda.
	logs := map[string]awslogs.LogGroup{}
	var logArns []*string
	for _, kind := range []string{"SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS"} {
		lg := awslogs.NewLogGroup(s, jsii.String("DomainLogs"+kind), &awslogs.LogGroupProps{Retention: retention, RemovalPolicy: cfg.removal()})
		logs[kind] = lg
		logArns = append(logArns, lg.LogGroupArn())
	}
	logPolicy := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("es.amazonaws.com"), nil)},
			Actions:    jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
			Resources:  &logArns,
			Conditions: &map[string]any{
				"StringEquals": map[string]any{"aws:SourceAccount": awscdk.Aws_ACCOUNT_ID()},
				"ArnLike":      map[string]any{"aws:SourceArn": arn},
			},
		}),
	}})
	resourcePolicy := awslogs.NewCfnResourcePolicy(s, jsii.String("DomainLogsPolicy"), &awslogs.CfnResourcePolicyProps{
		PolicyName:     jsii.String(name + "-opensearch-logs"),
		PolicyDocument: s.ToJsonString(logPolicy, nil),
	})

	// Only the stack's own roles, by name: a statement naming the account
	// root would hand the decision to IAM, and any identity of the account
	// with es:ESHttp* on "*" could read every customer's documents.
	var statements []awsiam.PolicyStatement
	var readerArns []awsiam.IPrincipal
	for _, r := range readers {
		readerArns = append(readerArns, awsiam.NewArnPrincipal(r.RoleArn()))
	}
	for _, g := range esSearchGrants {
		statements = append(statements, awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("Search" + g.action[len("es:ESHttp"):]),
			Principals: &readerArns,
			Actions:    jsii.Strings(g.action),
			Resources:  &[]*string{jsii.String(*arn + g.path)},
		}))
	}
	var writerArns []awsiam.IPrincipal
	for _, w := range writers {
		writerArns = append(writerArns, awsiam.NewArnPrincipal(w.RoleArn()))
	}
	statements = append(statements, awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("IndexWriters"),
		Principals: &writerArns,
		Actions:    jsii.Strings(esWriteActions...),
		Resources:  &[]*string{paths},
	}))
	access := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &statements})

	logOption := func(kind string) *awsopensearchservice.CfnDomain_LogPublishingOptionProperty {
		return &awsopensearchservice.CfnDomain_LogPublishingOptionProperty{
			CloudWatchLogsLogGroupArn: logs[kind].LogGroupArn(),
			Enabled:                   jsii.Bool(true),
		}
	}
	d := awsopensearchservice.NewCfnDomain(s, jsii.String("Domain"), &awsopensearchservice.CfnDomainProps{
		DomainName:    jsii.String(name),
		EngineVersion: jsii.String(engineVersion),
		ClusterConfig: clusterConfig(cfg),
		EbsOptions: &awsopensearchservice.CfnDomain_EBSOptionsProperty{
			EbsEnabled: jsii.Bool(true),
			VolumeType: jsii.String("gp3"),
			VolumeSize: jsii.Number(float64(cfg.DomainVolumeGB)),
		},
		NodeToNodeEncryptionOptions: &awsopensearchservice.CfnDomain_NodeToNodeEncryptionOptionsProperty{Enabled: jsii.Bool(true)},
		// The AWS-managed key (aws/es), as for the table.
		EncryptionAtRestOptions: &awsopensearchservice.CfnDomain_EncryptionAtRestOptionsProperty{Enabled: jsii.Bool(true)},
		DomainEndpointOptions: &awsopensearchservice.CfnDomain_DomainEndpointOptionsProperty{
			EnforceHttps:      jsii.Bool(true),
			TlsSecurityPolicy: jsii.String("Policy-Min-TLS-1-2-PFS-2023-10"),
		},
		AccessPolicies: access,
		LogPublishingOptions: &map[string]any{
			"SEARCH_SLOW_LOGS":    logOption("SEARCH_SLOW_LOGS"),
			"INDEX_SLOW_LOGS":     logOption("INDEX_SLOW_LOGS"),
			"ES_APPLICATION_LOGS": logOption("ES_APPLICATION_LOGS"),
		},
		SoftwareUpdateOptions: &awsopensearchservice.CfnDomain_SoftwareUpdateOptionsProperty{AutoSoftwareUpdateEnabled: jsii.Bool(true)},
	})
	d.AddDependency(resourcePolicy)
	// The index can be rebuilt from the table (doclib-admin reindex), but a
	// rebuild re-embeds every document: keep the domain if the stack goes
	// (unless retain=false).
	d.ApplyRemovalPolicy(cfg.removal(), nil)

	return &searchBackend{
		url:      jsii.String("https://" + *d.AttrDomainEndpoint()),
		service:  "es",
		endpoint: d.AttrDomainEndpoint(),
		grant: func(role awsiam.IRole, write bool) {
			if write {
				role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Sid:       jsii.String("OpenSearch"),
					Actions:   jsii.Strings(esWriteActions...),
					Resources: &[]*string{d.AttrArn(), jsii.String(*d.AttrArn() + "/*")},
				}))
				return
			}
			for _, g := range esSearchGrants {
				role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Sid:       jsii.String("OpenSearch" + g.action[len("es:ESHttp"):]),
					Actions:   jsii.Strings(g.action),
					Resources: &[]*string{jsii.String(*d.AttrArn() + g.path)},
				}))
			}
		},
		operatorWrites: true,
		node:           d,
		domainName:     name,
	}
}

// clusterConfig places the domain's nodes as its size says (infra/domainsizes).
func clusterConfig(cfg Config) *awsopensearchservice.CfnDomain_ClusterConfigProperty {
	c := &awsopensearchservice.CfnDomain_ClusterConfigProperty{
		InstanceType:         jsii.String(cfg.DomainInstanceType),
		InstanceCount:        jsii.Number(float64(cfg.DomainInstanceCount)),
		ZoneAwarenessEnabled: jsii.Bool(cfg.DomainZones > 1),
	}
	if cfg.DomainZones > 1 {
		c.ZoneAwarenessConfig = &awsopensearchservice.CfnDomain_ZoneAwarenessConfigProperty{
			AvailabilityZoneCount: jsii.Number(float64(cfg.DomainZones)),
		}
	}
	if cfg.DomainMasterCount > 0 {
		c.DedicatedMasterEnabled = jsii.Bool(true)
		c.DedicatedMasterType = jsii.String(cfg.DomainMasterType)
		c.DedicatedMasterCount = jsii.Number(float64(cfg.DomainMasterCount))
	}
	return c
}
