package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchserverless"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsopensearchservice"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/shared/opensearch"
)

// engineVersion is the managed domain's engine: 2.19 is the first with faiss
// HNSW on cosine spaces and hybrid pagination (docs/search.md).
const engineVersion = "OpenSearch_2.19"

// searchAlias is the index alias the functions search and write, set in
// their environment (envSearch) and named in the search role's grant.
const searchAlias = opensearch.DefaultAlias

// OpenSearch access on a managed domain. The search function makes one kind
// of request, POST /<alias>/_search (shared/opensearch Backend.Match and
// MostActive; it never reads the mapping: the indexer checks it at cold
// start), so it may make that one and no other: a POST anywhere under the
// domain would also allow /_bulk, /_delete_by_query and /_aliases. The
// indexer creates the index and alias at cold start and writes documents
// (/_bulk, /_aliases, PUT and DELETE of indexes), so it keeps every verb on
// the domain's paths.
var (
	esSearchActions = []string{"es:ESHttpPost"}
	esWriteActions  = []string{"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"}
)

// esSearchPath is the one path the search role may use under a domain ARN.
const esSearchPath = "/" + searchAlias + "/_search"

// searchBackend is the OpenSearch the search and indexer functions use.
type searchBackend struct {
	url      *string // https://…, for awsapp.EnvOpenSearchURL
	service  string  // "es" or "aoss", for awsapp.EnvOpenSearchService
	endpoint *string // for the stack's output
	// grant gives a role its identity-based permissions; the resource side
	// (domain access policy, collection data access policy) names the roles
	// when the backend is built.
	grant func(role awsiam.IRole, write bool)
	// node is the construct cdk-nag suppressions attach to.
	node constructs.IConstruct
}

// newSearch builds the managed domain or the serverless collection the
// context chose. reader and writer are the search and indexer functions'
// roles: the only principals its policy admits.
func newSearch(s awscdk.Stack, cfg Config, reader, writer awsiam.IRole, retention awslogs.RetentionDays) *searchBackend {
	if cfg.Search == SearchServerless {
		return newCollection(s, cfg, reader, writer)
	}
	return newDomain(s, cfg, reader, writer, retention)
}

// newDomain is an Amazon OpenSearch Service domain reached over its public
// endpoint with IAM-signed requests only (see the OS1 suppression).
func newDomain(s awscdk.Stack, cfg Config, reader, writer awsiam.IRole, retention awslogs.RetentionDays) *searchBackend {
	name := cfg.ResourcePrefix()
	// The access policy must name the domain's ARN before the domain exists
	// (GetAtt on itself would be a cycle), hence the explicit domain name.
	arn := awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":es:"), awscdk.Aws_REGION(), jsii.String(":"),
		awscdk.Aws_ACCOUNT_ID(), jsii.String(":domain/" + name),
	})
	paths := jsii.String(*arn + "/*")
	searchPath := jsii.String(*arn + esSearchPath)

	// Slow logs and error logs go to CloudWatch. The service writes them under
	// a CloudWatch Logs resource policy (there may be 10 per account and
	// region: one per customer stack here). It is declared directly rather
	// than through the L2 Domain, whose custom resource would add a Lambda.
	logs := map[string]awslogs.LogGroup{}
	var logArns []*string
	for _, kind := range []string{"SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS"} {
		lg := awslogs.NewLogGroup(s, jsii.String("DomainLogs"+kind), &awslogs.LogGroupProps{Retention: retention})
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

	access := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("SearchQueries"),
			Principals: &[]awsiam.IPrincipal{awsiam.NewArnPrincipal(reader.RoleArn())},
			Actions:    jsii.Strings(esSearchActions...),
			Resources:  &[]*string{searchPath},
		}),
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("IndexerReadsAndWrites"),
			Principals: &[]awsiam.IPrincipal{awsiam.NewArnPrincipal(writer.RoleArn())},
			Actions:    jsii.Strings(esWriteActions...),
			Resources:  &[]*string{paths},
		}),
		// Operators run doclib-admin reindex from their own machines. The
		// account is trusted here and the decision is left to IAM: only an
		// identity of this account whose own policy grants these actions on
		// this domain gets in (no anonymous or cross-account access).
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("OperatorsThroughIAM"),
			Principals: &[]awsiam.IPrincipal{awsiam.NewAccountRootPrincipal()},
			Actions:    jsii.Strings(esWriteActions...),
			Resources:  &[]*string{paths},
		}),
	}})

	logOption := func(kind string) *awsopensearchservice.CfnDomain_LogPublishingOptionProperty {
		return &awsopensearchservice.CfnDomain_LogPublishingOptionProperty{
			CloudWatchLogsLogGroupArn: logs[kind].LogGroupArn(),
			Enabled:                   jsii.Bool(true),
		}
	}
	d := awsopensearchservice.NewCfnDomain(s, jsii.String("Domain"), &awsopensearchservice.CfnDomainProps{
		DomainName:    jsii.String(name),
		EngineVersion: jsii.String(engineVersion),
		ClusterConfig: &awsopensearchservice.CfnDomain_ClusterConfigProperty{
			InstanceType:         jsii.String(cfg.DomainInstanceType),
			InstanceCount:        jsii.Number(float64(cfg.DomainInstanceCount)),
			ZoneAwarenessEnabled: jsii.Bool(true),
			ZoneAwarenessConfig: &awsopensearchservice.CfnDomain_ZoneAwarenessConfigProperty{
				AvailabilityZoneCount: jsii.Number(2),
			},
		},
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
	// rebuild re-embeds every document: keep the domain if the stack goes.
	d.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN, nil)

	return &searchBackend{
		url:      jsii.String("https://" + *d.AttrDomainEndpoint()),
		service:  "es",
		endpoint: d.AttrDomainEndpoint(),
		grant: func(role awsiam.IRole, write bool) {
			actions := esSearchActions
			resources := []*string{jsii.String(*d.AttrArn() + esSearchPath)}
			if write {
				actions = esWriteActions
				resources = []*string{d.AttrArn(), jsii.String(*d.AttrArn() + "/*")}
			}
			role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("OpenSearch"),
				Actions:   jsii.Strings(actions...),
				Resources: &resources,
			}))
		},
		node: d,
	}
}

// newCollection is an OpenSearch Serverless vector search collection, public
// endpoint with IAM-signed requests (the same reasoning as the domain), keys
// owned by AWS, and a data access policy naming the two roles.
func newCollection(s awscdk.Stack, cfg Config, reader, writer awsiam.IRole) *searchBackend {
	name := cfg.ResourcePrefix()
	collection := "collection/" + name
	index := "index/" + name + "/*"
	enc := awsopensearchserverless.NewCfnSecurityPolicy(s, jsii.String("CollectionEncryption"), &awsopensearchserverless.CfnSecurityPolicyProps{
		Name: jsii.String(name + "-enc"),
		Type: jsii.String("encryption"),
		Policy: s.ToJsonString(map[string]any{
			"Rules":       []any{map[string]any{"ResourceType": "collection", "Resource": []string{collection}}},
			"AWSOwnedKey": true,
		}, nil),
	})
	network := awsopensearchserverless.NewCfnSecurityPolicy(s, jsii.String("CollectionNetwork"), &awsopensearchserverless.CfnSecurityPolicyProps{
		Name: jsii.String(name + "-net"),
		Type: jsii.String("network"),
		Policy: s.ToJsonString([]any{map[string]any{
			"Rules":           []any{map[string]any{"ResourceType": "collection", "Resource": []string{collection}}},
			"AllowFromPublic": true,
		}}, nil),
	})
	data := awsopensearchserverless.NewCfnAccessPolicy(s, jsii.String("CollectionAccess"), &awsopensearchserverless.CfnAccessPolicyProps{
		Name: jsii.String(name + "-acc"),
		Type: jsii.String("data"),
		Policy: s.ToJsonString([]any{
			map[string]any{
				"Description": "search: read the index",
				"Principal":   []*string{reader.RoleArn()},
				"Rules": []any{map[string]any{"ResourceType": "index", "Resource": []string{index},
					"Permission": []string{"aoss:ReadDocument", "aoss:DescribeIndex"}}},
			},
			map[string]any{
				"Description": "indexer: create the index and alias, write documents",
				"Principal":   []*string{writer.RoleArn()},
				"Rules": []any{
					map[string]any{"ResourceType": "index", "Resource": []string{index},
						"Permission": []string{"aoss:CreateIndex", "aoss:UpdateIndex", "aoss:DeleteIndex", "aoss:DescribeIndex", "aoss:ReadDocument", "aoss:WriteDocument"}},
					map[string]any{"ResourceType": "collection", "Resource": []string{collection},
						"Permission": []string{"aoss:DescribeCollectionItems"}},
				},
			},
		}, nil),
	})
	c := awsopensearchserverless.NewCfnCollection(s, jsii.String("Collection"), &awsopensearchserverless.CfnCollectionProps{
		Name:        jsii.String(name),
		Type:        jsii.String("VECTORSEARCH"),
		Description: jsii.String("doclib search index of " + cfg.Customer),
	})
	c.AddDependency(enc)
	c.AddDependency(network)
	c.AddDependency(data)
	c.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN, nil)

	return &searchBackend{
		url:      c.AttrCollectionEndpoint(),
		service:  "aoss",
		endpoint: c.AttrCollectionEndpoint(),
		grant: func(role awsiam.IRole, write bool) {
			// aoss:APIAccessAll lets the role reach the collection's data
			// plane at all; what it may do there is the data access policy.
			role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("OpenSearchServerless"),
				Actions:   jsii.Strings("aoss:APIAccessAll"),
				Resources: &[]*string{c.AttrArn()},
			}))
		},
		node: c,
	}
}
