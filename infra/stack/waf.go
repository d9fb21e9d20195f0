package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/jsii-runtime-go"
)

// wafWindowSeconds is the rate rule's window: docs/api.md's per-IP limit is
// per minute. WAF checks rates about every 10 s, so it approximates; the
// handler's own per-IP window is exact.
const wafWindowSeconds = 60

// wafRetryAfter is the Retry-After of a WAF block (the WAF_FILTERED gateway
// response): WAF keeps blocking an IP until its rate over the window falls
// below the limit, up to a window.
const wafRetryAfter = 60

// newWAF is a regional web ACL on the stage with one blocking rule: at most
// ipLimit requests per client IP per minute. It comes first in the order of
// checks, so that key guessing is throttled too.
//
// The Block has no custom response: WAF's own would take precedence over API
// Gateway's gateway responses and could not carry the request's X-Request-Id
// (docs/api.md: every response has one). Without it API Gateway answers with
// the WAF_FILTERED gateway response, 429 rate_limited in the API's error
// shape with Retry-After and X-Request-Id (GatewayResponses).
//
// No sampled requests: a sample keeps each request's headers for three hours,
// and the Authorization header is a customer's bearer key. There is no WAF
// logging either; should it be added, its configuration must redact the
// authorization header (RedactedFields).
//
// No AWS managed rule group blocks: its blocks (WAF_FILTERED too) would be
// answered as rate_limited. The read API's routes take GET with validated
// parameters and no body, and the one body the API takes, POST /mcp's
// JSON-RPC message, carries what an agent asks for: a search for "drop
// table" or "<script>" is an ordinary question there, which a rule group's
// SQL injection or cross-site scripting rules would block. The rate rule
// counts requests by IP and inspects no part of them, so an MCP request
// passes it whatever its body holds (TestWAF).
func newWAF(s awscdk.Stack, cfg Config, a *api) awswafv2.CfnWebACL {
	visibility := func(metric string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{
			CloudWatchMetricsEnabled: jsii.Bool(true),
			MetricName:               jsii.String(metric),
			SampledRequestsEnabled:   jsii.Bool(false),
		}
	}
	acl := awswafv2.NewCfnWebACL(s, jsii.String("WebAcl"), &awswafv2.CfnWebACLProps{
		Name:             jsii.String(cfg.ResourcePrefix() + "-api"),
		Description:      jsii.String("doclib " + cfg.Customer + ": per-IP rate limit"),
		Scope:            jsii.String("REGIONAL"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: &awswafv2.CfnWebACL_AllowActionProperty{}},
		VisibilityConfig: visibility(cfg.ResourcePrefix() + "-api"),
		Rules: &[]*awswafv2.CfnWebACL_RuleProperty{{
			Name:     jsii.String("per-ip-rate"),
			Priority: jsii.Number(0),
			Statement: &awswafv2.CfnWebACL_StatementProperty{
				RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
					AggregateKeyType:    jsii.String("IP"),
					Limit:               jsii.Number(float64(cfg.IPLimit)),
					EvaluationWindowSec: jsii.Number(wafWindowSeconds),
				},
			},
			Action:           &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{}},
			VisibilityConfig: visibility(cfg.ResourcePrefix() + "-per-ip-rate"),
		}},
	})
	assoc := awswafv2.NewCfnWebACLAssociation(s, jsii.String("WebAclAssociation"), &awswafv2.CfnWebACLAssociationProps{
		ResourceArn: a.stage.StageArn(),
		WebAclArn:   acl.AttrArn(),
	})
	assoc.Node().AddDependency(a.stage)
	return acl
}
