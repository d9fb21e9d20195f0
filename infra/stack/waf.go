package stack

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/jsii-runtime-go"

	doclib "github.com/doclib/doclib/shared"
)

// wafWindowSeconds is the rate rule's window: decisions.md's per-IP limit is
// per minute. WAF checks rates about every 10 s, so it approximates; the
// handler's own per-IP window is exact.
const wafWindowSeconds = 60

// wafRetryAfter is the Retry-After of a WAF block: WAF keeps blocking an IP
// until its rate over the window falls below the limit, up to a window.
const wafRetryAfter = 60

// newWAF is a regional web ACL on the stage with one blocking rule: at most
// ipLimit requests per client IP per minute, answered like the handler's
// per-IP limit (429 rate_limited, Retry-After). It comes first in the order
// of checks, so that key guessing is throttled too.
//
// No AWS managed rule group blocks: its blocks (403 by default, WAF_FILTERED)
// would be answered as rate_limited, and this GET-only API with validated
// parameters has no bodies or forms for them to inspect.
func newWAF(s awscdk.Stack, cfg Config, a *api) awswafv2.CfnWebACL {
	body := GatewayResponse{Code: doclib.ERateLimited,
		Message: "Too many requests from your IP address. Wait the number of seconds in the Retry-After header, then retry."}.Body()
	visibility := func(metric string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{
			CloudWatchMetricsEnabled: jsii.Bool(true),
			MetricName:               jsii.String(metric),
			SampledRequestsEnabled:   jsii.Bool(true),
		}
	}
	acl := awswafv2.NewCfnWebACL(s, jsii.String("WebAcl"), &awswafv2.CfnWebACLProps{
		Name:             jsii.String(cfg.ResourcePrefix() + "-api"),
		Description:      jsii.String("doclib " + cfg.Customer + ": per-IP rate limit"),
		Scope:            jsii.String("REGIONAL"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: &awswafv2.CfnWebACL_AllowActionProperty{}},
		VisibilityConfig: visibility(cfg.ResourcePrefix() + "-api"),
		CustomResponseBodies: &map[string]*awswafv2.CfnWebACL_CustomResponseBodyProperty{
			doclib.ERateLimited: {ContentType: jsii.String("APPLICATION_JSON"), Content: jsii.String(body)},
		},
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
			Action: &awswafv2.CfnWebACL_RuleActionProperty{
				Block: &awswafv2.CfnWebACL_BlockActionProperty{
					CustomResponse: &awswafv2.CfnWebACL_CustomResponseProperty{
						ResponseCode:          jsii.Number(429),
						CustomResponseBodyKey: jsii.String(doclib.ERateLimited),
						ResponseHeaders: &[]*awswafv2.CfnWebACL_CustomHTTPHeaderProperty{
							{Name: jsii.String("Retry-After"), Value: jsii.String(strconv.Itoa(wafRetryAfter))},
						},
					},
				},
			},
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
