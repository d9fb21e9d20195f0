package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/httpapi"
)

// StageName is the API's only stage. The spec has no version prefix, so the
// base URL is https://<api-id>.execute-api.<region>.amazonaws.com/api and a
// route follows it as written: …/api/libraries.
const StageName = "api"

// Tiers are the workspace plans, each with a usage plan of its own (the
// indexer puts every key's usage identifier in its tier's plan).
var Tiers = []string{string(doclib.PlanIndividual), string(doclib.PlanTeam), string(doclib.PlanEnterprise)}

// accessLogFormat is one JSON line per request. status and latency are
// numbers (the 429 metric filter compares status); the rest are strings,
// since API Gateway writes "-" for a value it does not have.
const accessLogFormat = `{"requestId":"$context.requestId","extendedRequestId":"$context.extendedRequestId",` +
	`"ip":"$context.identity.sourceIp","userAgent":"$context.identity.userAgent",` +
	`"method":"$context.httpMethod","path":"$context.path","resourcePath":"$context.resourcePath",` +
	`"status":$context.status,"latencyMs":$context.responseLatency,"integrationLatencyMs":"$context.integrationLatency",` +
	`"responseLength":"$context.responseLength","errorType":"$context.error.responseType",` +
	`"authorizerStatus":"$context.authorizer.status","authorizerError":"$context.authorizer.error",` +
	`"authorizerCode":"$context.authorizer.code","authorizerLatencyMs":"$context.authorizer.latency",` +
	`"apiKeyId":"$context.identity.apiKeyId","wafStatus":"$context.waf.status","xrayTraceId":"$context.xrayTraceId",` +
	`"requestTime":"$context.requestTime"}`

// api is the REST API and what hangs off it.
type api struct {
	transfer   string // the integrations' ResponseTransferMode
	rest       awsapigateway.RestApi
	stage      awsapigateway.Stage
	plans      map[string]awsapigateway.UsagePlan // by tier
	accessLogs awslogs.LogGroup
}

// mcpRoute is the MCP endpoint, POST /mcp (httpapi.MCPPath), served by the
// mcp function: the one path of the API that takes a request body. It is
// not in httpapi.Routes, whose routes are the read API's GET routes.
var mcpRoute = httpapi.Route{Path: httpapi.MCPPath, Group: lambdaapp.FunctionMCP}

// apiRoutes are the paths the REST API has a method on: every route of
// httpapi.Routes, then /mcp. Each route's group names the function that
// serves it.
func apiRoutes() []httpapi.Route {
	return append(slices.Clone(httpapi.Routes), mcpRoute)
}

// newAPI builds the REST API: one resource per path of apiRoutes, each with
// a single ANY method (see addRoutes), the REQUEST authorizer, the gateway
// responses in the API's error shape and a usage plan per tier.
func newAPI(s awscdk.Stack, cfg Config, fns map[string]*function) *api {
	methodRate, methodBurst := cfg.MethodThrottle()
	accessLogs := awslogs.NewLogGroup(s, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{Retention: cfg.retention(), RemovalPolicy: cfg.removal()})
	rest := awsapigateway.NewRestApi(s, jsii.String("Api"), &awsapigateway.RestApiProps{
		RestApiName:   jsii.String(cfg.ResourcePrefix()),
		Description:   jsii.String("doclib read API of " + cfg.Customer),
		EndpointTypes: &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		// The account's logging role is declared below, without the
		// AWS-managed policy CDK's own role would use.
		CloudWatchRole: jsii.Bool(false),
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(StageName),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(accessLogs),
			AccessLogFormat:      awsapigateway.AccessLogFormat_Custom(jsii.String(accessLogFormat)),
			// Errors only and never bodies: execution logs would otherwise
			// hold keys' answers and documents.
			LoggingLevel:     awsapigateway.MethodLoggingLevel_ERROR,
			DataTraceEnabled: jsii.Bool(false),
			MetricsEnabled:   jsii.Bool(true),
			TracingEnabled:   jsii.Bool(true),
			// Every customer stack shares the account's Region-wide quota and
			// Lambda concurrency, so one customer's flood must not take them
			// all. API Gateway throttles a stage per method, each method with
			// a bucket of its own (Developer Guide, "Throttle requests to your
			// REST APIs for better throughput in API Gateway": per-stage limits
			// "are applied at the API method level"); there is no bucket for a
			// whole stage. Each method gets an equal share of the stage's
			// limits, so that all of them together stay within them
			// (Config.MethodThrottle). Per key and per IP the handler counts
			// exact windows, with the usage plans and WAF behind it.
			ThrottlingRateLimit:  jsii.Number(methodRate),
			ThrottlingBurstLimit: jsii.Number(float64(methodBurst)),
		},
	})
	if !cfg.ResponseStreaming {
		// A buffered answer is compressed by the gateway for a client that
		// accepts gzip (the functions then leave it alone); a streamed one
		// cannot be (API Gateway: "Stream the integration response"), so
		// the functions compress it themselves.
		rest.Node().DefaultChild().(awsapigateway.CfnRestApi).SetMinimumCompressionSize(jsii.Number(httpapi.MinCompressBytes))
	}
	if cfg.UsagePlans {
		// Clients send only their doclib key; the authorizer returns the
		// usage identifier that selects the key's usage plan.
		rest.Node().DefaultChild().(awsapigateway.CfnRestApi).SetApiKeySourceType(jsii.String("AUTHORIZER"))
	}
	a := &api{transfer: cfg.transferMode(), rest: rest, stage: rest.DeploymentStage(), plans: map[string]awsapigateway.UsagePlan{}, accessLogs: accessLogs}
	a.stage.Node().AddDependency(cloudWatchAccount(s))

	authorizer := awsapigateway.NewRequestAuthorizer(s, jsii.String("KeyAuthorizer"), &awsapigateway.RequestAuthorizerProps{
		AuthorizerName:  jsii.String(cfg.ResourcePrefix() + "-keys"),
		Handler:         fns["authorizer"].fn,
		IdentitySources: &[]*string{awsapigateway.IdentitySource_Header(jsii.String("Authorization"))},
		// See Defaults.AuthorizerCacheSeconds: shorter than API Gateway's 300
		// s so that revocation and suspension take effect within a minute.
		ResultsCacheTtl: awscdk.Duration_Seconds(jsii.Number(float64(cfg.AuthorizerCacheSeconds))),
	})
	a.addRoutes(cfg, fns, authorizer)
	for _, gr := range GatewayResponses(cfg) {
		a.addGatewayResponse(gr)
	}
	for _, tier := range Tiers {
		if !cfg.UsagePlans {
			break
		}
		a.plans[tier] = rest.AddUsagePlan(jsii.String("UsagePlan"+fnID(tier)), &awsapigateway.UsagePlanProps{
			Name: jsii.String(cfg.ResourcePrefix() + "-" + tier),
			Description: jsii.String(fmt.Sprintf("doclib %s keys of %s workspaces: backstop at twice the %d requests per minute the function counts exactly",
				cfg.Customer, tier, cfg.KeyLimit)),
			// Per key: a token bucket of twice the per-minute limit, refilled at
			// twice the limit a minute (Config.PlanRateLimit says why). The
			// function's fixed windows are the limit, and answer with the spec's
			// headers; this only stops a client the function never sees refuse.
			Throttle: &awsapigateway.ThrottleSettings{
				RateLimit:  jsii.Number(cfg.PlanRateLimit()),
				BurstLimit: jsii.Number(float64(cfg.PlanBurstLimit())),
			},
			ApiStages: &[]*awsapigateway.UsagePlanPerApiStage{{Api: rest, Stage: a.stage}},
		})
	}
	return a
}

// addRoutes declares exactly the resources of apiRoutes (and the parent
// segments API Gateway needs to hold them, which get no method).
//
// Each route has one method, ANY, not GET and HEAD: docs/api.md wants any
// other method on a known path to answer 405 method_not_allowed after
// authentication, with Allow: GET, and only the handler can do that. With
// GET alone, API Gateway would refuse a POST itself, before the authorizer
// runs, as MISSING_AUTHENTICATION_TOKEN. The handler serves GET and HEAD.
// /mcp is the same the other way round: its function serves POST and
// answers any other method 405 with Allow: POST, after the authorizer, the
// usage plans and the key's limit, as the routes do. So POST reaches a
// function on every path, and only the mcp function's handler serves it.
func (a *api) addRoutes(cfg Config, fns map[string]*function, authorizer awsapigateway.IAuthorizer) {
	integrations := map[string]awsapigateway.LambdaIntegration{}
	for _, rt := range apiRoutes() {
		f, ok := fns[rt.Group]
		if !ok {
			panic("stack: route " + rt.Path + " is served by group " + rt.Group + ", which has no function")
		}
		in, ok := integrations[rt.Group]
		if !ok {
			in = awsapigateway.NewLambdaIntegration(f.fn, &awsapigateway.LambdaIntegrationOptions{
				Proxy: jsii.Bool(true),
				// No console test invocations: they would bypass the authorizer
				// and double the function's resource policy.
				AllowTestInvoke: jsii.Bool(false),
				// STREAM: API Gateway invokes the function with
				// InvokeWithResponseStream and passes its answer on as it
				// comes, so no answer is bound by Lambda's 6 MB or the
				// gateway's 10 MB (docs/design.md, "Answers of any size").
				ResponseTransferMode: awsapigateway.ResponseTransferMode(a.transfer),
				// A streamed answer must be complete within the integration
				// timeout, which therefore covers the function's whole
				// invocation (integrationTimeout); a buffered one keeps API
				// Gateway's default, 29 s.
				Timeout: integrationTimeout(cfg, rt.Group),
			})
			integrations[rt.Group] = in
		}
		a.rest.Root().ResourceForPath(jsii.String(rt.Path)).AddMethod(jsii.String("ANY"), in, &awsapigateway.MethodOptions{
			AuthorizationType: awsapigateway.AuthorizationType_CUSTOM,
			Authorizer:        authorizer,
			// Usage plans apply only to methods that require an API key; the
			// key comes from the authorizer, not from the client.
			ApiKeyRequired: jsii.Bool(cfg.UsagePlans),
		})
	}
}

// cloudWatchAccount sets the account's (per Region) role that API Gateway
// uses to write execution and access logs. It is an account-wide setting, so
// every customer stack sets the same kind of role; both are retained when a
// stack is deleted so that the other stacks' APIs keep logging.
func cloudWatchAccount(s awscdk.Stack) awsapigateway.CfnAccount {
	logGroups := awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("arn:"), awscdk.Aws_PARTITION(), jsii.String(":logs:"), awscdk.Aws_REGION(), jsii.String(":"),
		awscdk.Aws_ACCOUNT_ID(), jsii.String(":log-group:*"),
	})
	role := awsiam.NewRole(s, jsii.String("ApiGatewayLoggingRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("apigateway.amazonaws.com"), nil),
		Description: jsii.String("API Gateway's account-wide role for execution and access logs"),
		InlinePolicies: &map[string]awsiam.PolicyDocument{
			"logs": awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
				awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Actions: jsii.Strings("logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogGroups",
						"logs:DescribeLogStreams", "logs:PutLogEvents", "logs:GetLogEvents", "logs:FilterLogEvents"),
					Resources: &[]*string{logGroups},
				}),
			}}),
		},
	})
	role.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN)
	suppress(role, "AwsSolutions-IAM5", reasonAccountLoggingRole, "Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:*")
	account := awsapigateway.NewCfnAccount(s, jsii.String("ApiGatewayAccount"), &awsapigateway.CfnAccountProps{
		CloudWatchRoleArn: role.RoleArn(),
	})
	account.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN, nil)
	return account
}

// GatewayResponse is API Gateway's own answer to a request it refuses or
// cannot serve, written in the API's error shape.
type GatewayResponse struct {
	Type string // API Gateway's response type
	// Status overrides API Gateway's status; empty keeps it (DEFAULT_4XX/5XX).
	Status  string
	Code    string // a spec error code, or a $context.authorizer reference
	Message string // a sentence saying what to do next
	// RetryAfter, in seconds, is sent as Retry-After when not 0, with
	// X-RateLimit-Limit: Limit and X-RateLimit-Remaining: 0, as docs/api.md
	// wants on every 429. X-RateLimit-Reset cannot be sent: the gateway's
	// buckets are not the API's minute windows, and a gateway response has
	// only static values and the request's context to say it with.
	RetryAfter int
	Limit      int
	// Challenge, when not empty, is sent as WWW-Authenticate: every 401
	// carries doclib.Challenge's value, as the local server's do.
	Challenge string
}

// GatewayResponses lists a response for every type API Gateway produces.
func GatewayResponses(cfg Config) []GatewayResponse {
	const (
		useKey  = "Send your API key in the Authorization header: Authorization: Bearer <API_KEY>."
		retry   = "The service is unavailable just now. Retry in a few seconds."
		getOnly = "This API serves GET requests without a body, and POST /mcp with one JSON-RPC message."
		checkIt = "Check the request against the API reference."
	)
	return []GatewayResponse{
		// The authorizer's Deny carries the spec's code and message
		// (unauthorised, api_key_expired, api_key_device_removed).
		{Type: "ACCESS_DENIED", Status: "401", Code: "$context.authorizer." + apigw.CtxCode, Message: "$context.authorizer." + apigw.CtxMessage,
			Challenge: doclib.Challenge(true)},
		// No Authorization header: API Gateway answers without calling the authorizer.
		{Type: "UNAUTHORIZED", Status: "401", Code: doclib.EUnauthorised, Message: "The API key is missing. " + useKey,
			Challenge: doclib.Challenge(false)},
		{Type: "EXPIRED_TOKEN", Status: "401", Code: doclib.EUnauthorised, Message: "The credentials have expired. " + useKey,
			Challenge: doclib.Challenge(true)},
		{Type: "INVALID_SIGNATURE", Status: "401", Code: doclib.EUnauthorised, Message: "The request signature is not valid. " + useKey,
			Challenge: doclib.Challenge(true)},
		// The authorizer allowed the key (or its cached Allow did) but its usage
		// identifier is in no usage plan: the key was revoked within the
		// authorizer's cache TTL (the indexer has deleted its API key), or it
		// was created seconds ago and the indexer has not registered it yet.
		// The first is a wrong key to the spec: 401 unauthorised.
		{Type: "INVALID_API_KEY", Status: "401", Code: doclib.EUnauthorised,
			Message:   "The API key is not valid. If it was created in the last minute, retry shortly; otherwise send a valid key: Authorization: Bearer <API_KEY>.",
			Challenge: doclib.Challenge(true)},
		{Type: "AUTHORIZER_FAILURE", Status: "503", Code: doclib.EUnavailable, Message: "The API key could not be checked just now. Retry in a few seconds."},
		{Type: "AUTHORIZER_CONFIGURATION_ERROR", Status: "503", Code: doclib.EUnavailable, Message: "The API key could not be checked just now. Retry in a few seconds."},
		// A usage plan's token bucket (per key) or the stage's (everyone): one
		// request's worth refills in ThrottleRetryAfter seconds.
		{Type: "THROTTLED", Status: "429", Code: doclib.ERateLimited, RetryAfter: cfg.ThrottleRetryAfter(), Limit: cfg.KeyLimit,
			Message: "Too many requests. Wait the number of seconds in the Retry-After header, then retry."},
		// The plans set no quota, so this should not happen; should an
		// operator add one, a minute keeps clients from hammering the gateway
		// without promising a reset time the gateway does not tell us.
		{Type: "QUOTA_EXCEEDED", Status: "429", Code: doclib.ERateLimited, RetryAfter: 60, Limit: cfg.KeyLimit,
			Message: "This API key has used its request quota. Wait the number of seconds in the Retry-After header, then retry."},
		// The only blocking WAF rule is the per-IP rate rule (one-minute
		// window). Its Block has no custom response, which would take
		// precedence over this one and could not carry X-Request-Id.
		{Type: "WAF_FILTERED", Status: "429", Code: doclib.ERateLimited, RetryAfter: wafRetryAfter, Limit: cfg.IPLimit,
			Message: "Too many requests from your IP address. Wait the number of seconds in the Retry-After header, then retry."},
		// An unknown path (or a parent segment without a method, /documents).
		{Type: "MISSING_AUTHENTICATION_TOKEN", Status: "404", Code: doclib.ENotFound, Message: "There is no such path. " + checkIt},
		{Type: "RESOURCE_NOT_FOUND", Status: "404", Code: doclib.ENotFound, Message: "There is no such path. " + checkIt},
		{Type: "INTEGRATION_FAILURE", Status: "503", Code: doclib.EUnavailable, Message: retry},
		{Type: "INTEGRATION_TIMEOUT", Status: "503", Code: doclib.EUnavailable, Message: "The request took too long to answer. Retry in a few seconds; if it persists, narrow the request."},
		{Type: "BAD_REQUEST_BODY", Status: "400", Code: doclib.EBadRequest, Message: "The request body is not valid. " + getOnly},
		{Type: "BAD_REQUEST_PARAMETERS", Status: "400", Code: doclib.EBadRequest, Message: "A request parameter is missing or not valid. " + checkIt},
		{Type: "REQUEST_TOO_LARGE", Status: "413", Code: doclib.EBadRequest, Message: "The request is too large. " + getOnly},
		{Type: "UNSUPPORTED_MEDIA_TYPE", Status: "415", Code: doclib.EBadRequest, Message: "The request's content type is not supported. " + getOnly},
		{Type: "API_CONFIGURATION_ERROR", Status: "500", Code: doclib.EInternal, Message: "Something went wrong on our side. Retry later; if it persists, contact support with the X-Request-Id header."},
		// Every type above is set; these catch any type API Gateway adds later.
		{Type: "DEFAULT_4XX", Code: doclib.EBadRequest, Message: "The request could not be served. " + checkIt},
		{Type: "DEFAULT_5XX", Code: doclib.EUnavailable, Message: retry},
	}
}

// Body is the response's JSON template, {"error":{"code":…,"message":…}}.
func (g GatewayResponse) Body() string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep <API_KEY> readable
	type e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := enc.Encode(map[string]e{"error": {g.Code, g.Message}}); err != nil {
		panic(err)
	}
	return strings.TrimSpace(b.String())
}

// Headers are the response's headers, as API Gateway mapping expressions.
// X-Request-Id comes from the request's context (docs/api.md: every
// response carries it); static values are quoted.
func (g GatewayResponse) Headers() map[string]string {
	h := map[string]string{
		"X-Request-Id": "context.requestId",
		"Content-Type": "'application/json; charset=utf-8'",
	}
	if g.RetryAfter > 0 {
		h["Retry-After"] = "'" + strconv.Itoa(g.RetryAfter) + "'"
		h["X-RateLimit-Limit"] = "'" + strconv.Itoa(g.Limit) + "'"
		h["X-RateLimit-Remaining"] = "'0'"
	}
	if g.Challenge != "" {
		// A static value: it holds no single quote (doclib.Challenge).
		h["WWW-Authenticate"] = "'" + g.Challenge + "'"
	}
	return h
}

func (a *api) addGatewayResponse(g GatewayResponse) {
	headers := map[string]*string{}
	for k, v := range g.Headers() {
		headers[k] = jsii.String(v)
	}
	opts := &awsapigateway.GatewayResponseOptions{
		Type:            awsapigateway.ResponseType_Of(jsii.String(g.Type)),
		ResponseHeaders: &headers,
		Templates:       &map[string]*string{"application/json": jsii.String(g.Body())},
	}
	if g.Status != "" {
		opts.StatusCode = jsii.String(g.Status)
	}
	a.rest.AddGatewayResponse(jsii.String("Response"+strings.ReplaceAll(g.Type, "_", "")), opts)
}

// usagePlansEnv is settings.EnvUsagePlans, as usageplan.ParsePlans reads it:
// customer=<customer>,individual=<id>,team=<id>,enterprise=<id>. The customer
// names and tags the stack's API keys, as the indexer's IAM policy requires.
func (a *api) usagePlansEnv(customer string) *string {
	parts := []string{"customer=" + customer}
	for _, tier := range Tiers {
		parts = append(parts, tier+"="+*a.plans[tier].UsagePlanId())
	}
	return jsii.String(strings.Join(parts, ","))
}

// planIDs lists the usage plans' IDs in Tiers' order.
func (a *api) planIDs() []*string {
	ids := make([]*string, len(Tiers))
	for i, tier := range Tiers {
		ids[i] = a.plans[tier].UsagePlanId()
	}
	return ids
}
