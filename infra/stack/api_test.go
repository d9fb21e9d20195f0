package stack

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/httpapi"
)

// TestAPIResourcesAreTheRoutes checks that API Gateway knows exactly the
// paths of httpapi.Routes and /mcp (and the parent segments holding them),
// and that each has one method, ANY, proxied to its group's function (/mcp:
// the mcp function) behind the REQUEST authorizer with a required API key.
//
// ANY, not GET (or POST on /mcp): docs/api.md wants a wrong method on a known
// path to answer 405 method_not_allowed after authentication, which only the
// handler can do; API Gateway would refuse a method it does not know before
// the authorizer.
func TestAPIResourcesAreTheRoutes(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		api := s.one(t, "AWS::ApiGateway::RestApi")
		authorizer := s.one(t, "AWS::ApiGateway::Authorizer")

		// Rebuild each resource's path from its parent chain.
		parent := map[string]string{}
		part := map[string]string{}
		for _, r := range s.resources("AWS::ApiGateway::Resource") {
			if ref(r.Props["RestApiId"]) != api.ID {
				t.Errorf("resource %s of another API", r.ID)
			}
			part[r.ID] = r.Props["PathPart"].(string)
			if id, attr := getAtt(r.Props["ParentId"]); id == api.ID && attr == "RootResourceId" {
				parent[r.ID] = ""
			} else {
				parent[r.ID] = ref(r.Props["ParentId"])
			}
		}
		var path func(id string) string
		path = func(id string) string {
			if id == "" {
				return ""
			}
			return path(parent[id]) + "/" + part[id]
		}
		byPath := map[string]string{}
		for id := range part {
			byPath[path(id)] = id
		}

		want := map[string]bool{}
		groupOf := map[string]string{}
		routes := append(slices.Clone(httpapi.Routes), httpapi.Route{Path: httpapi.MCPPath, Group: lambdaapp.FunctionMCP})
		for _, rt := range routes {
			groupOf[rt.Path] = rt.Group
			segs := strings.Split(strings.TrimPrefix(rt.Path, "/"), "/")
			for i := range segs {
				want["/"+strings.Join(segs[:i+1], "/")] = true
			}
		}
		var got, wanted []string
		for p := range byPath {
			got = append(got, p)
		}
		for p := range want {
			wanted = append(wanted, p)
		}
		sort.Strings(got)
		sort.Strings(wanted)
		if !reflect.DeepEqual(got, wanted) {
			t.Fatalf("API resources\n got %v\nwant %v (the routes and their parents)", got, wanted)
		}

		methods := map[string][]resource{} // by path
		for _, m := range s.resources("AWS::ApiGateway::Method") {
			id := ref(m.Props["ResourceId"])
			if id == "" {
				t.Errorf("method %s is on the root resource", m.ID)
				continue
			}
			methods[path(id)] = append(methods[path(id)], m)
		}
		for p := range byPath {
			group, isRoute := groupOf[p]
			ms := methods[p]
			if !isRoute {
				if len(ms) != 0 {
					t.Errorf("%s is only a parent segment but has %d methods", p, len(ms))
				}
				continue
			}
			if len(ms) != 1 {
				t.Errorf("route %s has %d methods, want exactly one (ANY)", p, len(ms))
				continue
			}
			m := ms[0].Props
			if m["HttpMethod"] != "ANY" {
				t.Errorf("route %s: method %v, want ANY", p, m["HttpMethod"])
			}
			if m["AuthorizationType"] != "CUSTOM" || ref(m["AuthorizerId"]) != authorizer.ID {
				t.Errorf("route %s: authorization %v %v, want the REQUEST authorizer", p, m["AuthorizationType"], m["AuthorizerId"])
			}
			if m["ApiKeyRequired"] != true {
				t.Errorf("route %s: ApiKeyRequired %v, want true (usage plans apply only then)", p, m["ApiKeyRequired"])
			}
			in := m["Integration"].(map[string]any)
			fn := s.functionID(t, group)
			// STREAM: InvokeWithResponseStream, its own API version and path
			// (docs/design.md, "Answers of any size").
			uri := "path/2021-11-15/functions/<" + fn + ".Arn>/response-streaming-invocations"
			if !s.cfg.ResponseStreaming {
				uri = "path/2015-03-31/functions/<" + fn + ".Arn>/invocations"
			}
			if in["Type"] != "AWS_PROXY" || in["IntegrationHttpMethod"] != "POST" || in["ResponseTransferMode"] != s.cfg.transferMode() ||
				!strings.HasSuffix(render(in["Uri"]), uri) {
				t.Errorf("route %s: integration %s %s %v, want AWS_PROXY to the %s function in %s mode", p, in["Type"], render(in["Uri"]),
					in["ResponseTransferMode"], group, s.cfg.transferMode())
			}
		}
		if n := len(s.resources("AWS::ApiGateway::Method")); n != len(routes) {
			t.Errorf("%d methods for %d routes and /mcp", n, len(routes))
		}
		if byPath[httpapi.MCPPath] == "" || len(methods[httpapi.MCPPath]) != 1 {
			t.Errorf("no resource %s with one method (resources %v)", httpapi.MCPPath, got)
		}
	}
}

func TestAuthorizerAndKeySource(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		a := s.one(t, "AWS::ApiGateway::Authorizer").Props
		if a["Type"] != "REQUEST" || a["IdentitySource"] != "method.request.header.Authorization" {
			t.Errorf("authorizer %v from %v, want REQUEST from the Authorization header", a["Type"], a["IdentitySource"])
		}
		if a["AuthorizerResultTtlInSeconds"] != float64(s.cfg.AuthorizerCacheSeconds) {
			t.Errorf("authorizer TTL %v, want %d", a["AuthorizerResultTtlInSeconds"], s.cfg.AuthorizerCacheSeconds)
		}
		if !strings.Contains(render(a["AuthorizerUri"]), "<"+s.functionID(t, "authorizer")+".Arn>") {
			t.Errorf("authorizer calls %s", render(a["AuthorizerUri"]))
		}
		if k := s.one(t, "AWS::ApiGateway::RestApi").Props["ApiKeySourceType"]; k != "AUTHORIZER" {
			t.Errorf("API key source %v, want AUTHORIZER", k)
		}
		stage := s.one(t, "AWS::ApiGateway::Stage").Props
		if stage["StageName"] != StageName || stage["TracingEnabled"] != true {
			t.Errorf("stage %v tracing %v", stage["StageName"], stage["TracingEnabled"])
		}
		settings := list(stage["MethodSettings"])
		if len(settings) != 1 {
			t.Fatalf("method settings %v", settings)
		}
		ms := settings[0].(map[string]any)
		if ms["LoggingLevel"] != "ERROR" || ms["DataTraceEnabled"] != false || ms["ResourcePath"] != "/*" || ms["HttpMethod"] != "*" {
			t.Errorf("method settings %v: want ERROR logging, no data trace, for every method", ms)
		}
		// The stage is throttled so that one customer's flood cannot take the
		// account's Region-wide quota from the other stacks. API Gateway gives
		// each method a bucket of its own: the methods' buckets together, at
		// most stageRateLimit and stageBurstLimit; and each a fair share.
		methods := len(s.resources("AWS::ApiGateway::Method"))
		rate, _ := ms["ThrottlingRateLimit"].(float64)
		burst, _ := ms["ThrottlingBurstLimit"].(float64)
		if sum := rate * float64(methods); sum > float64(s.cfg.StageRateLimit) || sum < 0.99*float64(s.cfg.StageRateLimit) {
			t.Errorf("%d methods at %v/s each admit %v/s; want at most, and about, stageRateLimit %d", methods, rate, sum, s.cfg.StageRateLimit)
		}
		if sum := burst * float64(methods); sum > float64(s.cfg.StageBurstLimit) || sum <= float64(s.cfg.StageBurstLimit-methods) || burst < 1 {
			t.Errorf("%d methods with a burst of %v each admit %v at once; want at most, and about, stageBurstLimit %d", methods, burst, sum, s.cfg.StageBurstLimit)
		}
		access := stage["AccessLogSetting"].(map[string]any)
		var line map[string]any
		sample := strings.NewReplacer("$context.status", "200", "$context.responseLatency", "12").Replace(access["Format"].(string))
		if err := json.Unmarshal([]byte(sample), &line); err != nil {
			t.Fatalf("access log format is not JSON: %v\n%s", err, access["Format"])
		}
		for _, k := range []string{"requestId", "ip", "method", "path", "status", "latencyMs", "authorizerError"} {
			if _, ok := line[k]; !ok {
				t.Errorf("access log has no %s", k)
			}
		}
	}
}

// TestUsagePlans checks one plan per tier, throttled per key as a backstop at
// twice the key limit (never below what docs/api.md lets a key send: the
// function's exact window answers first), on the stage, and that the
// indexer's DOCLIB_USAGE_PLANS parses into them and names the customer.
func TestUsagePlans(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		stage := s.one(t, "AWS::ApiGateway::Stage")
		must(t, "three usage plans", func() { s.template.ResourceCountIs(jsii.String("AWS::ApiGateway::UsagePlan"), jsii.Number(3)) })
		plans := s.resources("AWS::ApiGateway::UsagePlan")
		if len(plans) != 3 {
			t.Fatalf("%d usage plans, want 3", len(plans))
		}
		byTier := map[string]string{}
		for _, p := range plans {
			name := p.Props["UsagePlanName"].(string)
			tier := strings.TrimPrefix(name, s.cfg.ResourcePrefix()+"-")
			byTier[tier] = p.ID
			th := p.Props["Throttle"].(map[string]any)
			rate, _ := th["RateLimit"].(float64)
			burst, _ := th["BurstLimit"].(float64)
			if rate != s.cfg.PlanRateLimit() || burst != float64(s.cfg.PlanBurstLimit()) ||
				burst < 2*float64(s.cfg.KeyLimit) || rate < 2*float64(s.cfg.KeyLimit)/60 {
				t.Errorf("plan %s throttles at %v/s, burst %v; want at least twice the key limit: %v/s, burst %d", name, rate, burst,
					2*float64(s.cfg.KeyLimit)/60, 2*s.cfg.KeyLimit)
			}
			if p.Props["Quota"] != nil {
				t.Errorf("plan %s has a quota", name)
			}
			st := list(p.Props["ApiStages"])
			if len(st) != 1 || ref(st[0].(map[string]any)["Stage"]) != stage.ID {
				t.Errorf("plan %s is on stages %v", name, st)
			}
		}
		for _, tier := range []string{string(doclib.PlanIndividual), string(doclib.PlanTeam), string(doclib.PlanEnterprise)} {
			if byTier[tier] == "" {
				t.Errorf("no usage plan for tier %s (plans %v)", tier, byTier)
			}
		}
		// The indexer gets them as customer=<c>,individual=<id>,team=<id>,enterprise=<id>.
		env := s.env(t, "indexer")
		rendered := strings.NewReplacer("<", "", ">", "").Replace(render(env["DOCLIB_USAGE_PLANS"]))
		parsed, err := usageplan.ParsePlans(rendered)
		if err != nil {
			t.Fatalf("DOCLIB_USAGE_PLANS %s: %v", rendered, err)
		}
		if parsed.Customer != s.cfg.Customer {
			t.Errorf("DOCLIB_USAGE_PLANS names customer %q, want %q (the IAM policy's tag value)", parsed.Customer, s.cfg.Customer)
		}
		for tier, id := range byTier {
			if parsed.ByTier[tier] != id {
				t.Errorf("DOCLIB_USAGE_PLANS gives tier %s the plan %s, want %s", tier, parsed.ByTier[tier], id)
			}
		}
	}
}

func TestWAF(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		acl := s.one(t, "AWS::WAFv2::WebACL")
		if acl.Props["Scope"] != "REGIONAL" {
			t.Errorf("scope %v", acl.Props["Scope"])
		}
		if _, ok := acl.Props["DefaultAction"].(map[string]any)["Allow"]; !ok {
			t.Errorf("default action %v, want Allow", acl.Props["DefaultAction"])
		}
		rules := list(acl.Props["Rules"])
		if len(rules) != 1 {
			t.Fatalf("%d rules, want the one per-IP rate rule", len(rules))
		}
		rule := rules[0].(map[string]any)
		rate := rule["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
		if rate["Limit"] != float64(s.cfg.IPLimit) || rate["EvaluationWindowSec"] != float64(60) || rate["AggregateKeyType"] != "IP" {
			t.Errorf("rate rule %v, want %d per IP per 60 s", rate, s.cfg.IPLimit)
		}
		// The rule counts by IP and looks at nothing else: no scope-down
		// statement or custom key that could match a body, so a POST to /mcp
		// passes it whatever its JSON-RPC message holds.
		if len(rule["Statement"].(map[string]any)) != 1 || len(rate) != 3 {
			t.Errorf("rate rule %v: want a rate-based statement on the IP alone, which inspects no part of a request", rule["Statement"])
		}
		// A plain Block: a WAF custom response would take precedence over the
		// WAF_FILTERED gateway response (429 rate_limited, Retry-After, and the
		// X-Request-Id WAF cannot add; TestGatewayResponses checks it).
		block, ok := rule["Action"].(map[string]any)["Block"].(map[string]any)
		if !ok || len(block) != 0 {
			t.Errorf("rule action %v, want a Block without a custom response", rule["Action"])
		}
		if acl.Props["CustomResponseBodies"] != nil {
			t.Errorf("custom response bodies %v", acl.Props["CustomResponseBodies"])
		}
		// No sampled requests: a sample keeps requests' headers, bearer keys
		// included. No logging configuration either (it would need the
		// authorization header redacted).
		for what, vc := range map[string]any{"web ACL": acl.Props["VisibilityConfig"], "rule": rule["VisibilityConfig"]} {
			if v := vc.(map[string]any); v["SampledRequestsEnabled"] != false || v["CloudWatchMetricsEnabled"] != true {
				t.Errorf("%s visibility %v, want metrics without sampled requests", what, v)
			}
		}
		if n := len(s.resources("AWS::WAFv2::LoggingConfiguration")); n != 0 {
			t.Errorf("%d WAF logging configurations: make them redact the authorization header, and test it", n)
		}
		assoc := s.one(t, "AWS::WAFv2::WebACLAssociation").Props
		stage := s.one(t, "AWS::ApiGateway::Stage").ID
		if id, _ := getAtt(assoc["WebACLArn"]); id != acl.ID || !strings.HasSuffix(render(assoc["ResourceArn"]), "/stages/<"+stage+">") {
			t.Errorf("association %v -> %s, want the web ACL on the stage", assoc["WebACLArn"], render(assoc["ResourceArn"]))
		}
	}
}

// knownCodes are the error codes a body may carry: the spec's and the
// project's (shared/errors.go).
var knownCodes = []string{doclib.EBadRequest, doclib.EUnauthorised, doclib.EKeyExpired, doclib.EKeyDeviceRemoved,
	doclib.EInsufficientCredit, doclib.ESubscriptionSuspend, doclib.EForbidden, doclib.ENotFound, doclib.EMethodNotAllowed,
	doclib.ERateLimited, doclib.EInternal, doclib.EUnavailable}

// errorShape checks that body is exactly {"error":{"code":…,"message":…}}
// with a known code and a message, and returns the code.
func errorShape(t *testing.T, what, body string) string {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &top); err != nil {
		t.Errorf("%s: body is not JSON: %v\n%s", what, err, body)
		return ""
	}
	var e map[string]string
	if len(top) != 1 || json.Unmarshal(top["error"], &e) != nil || len(e) != 2 || e["message"] == "" {
		t.Errorf("%s: body %s is not {\"error\":{\"code\":…,\"message\":…}}", what, body)
		return ""
	}
	if !slices.Contains(knownCodes, e["code"]) {
		t.Errorf("%s: code %q is no known error code", what, e["code"])
	}
	for _, jargon := range []string{"Missing Authentication Token", "Forbidden", "Unauthorized", "Internal server error", "Endpoint request timed out", "User is not authorized"} {
		if strings.Contains(e["message"], jargon) {
			t.Errorf("%s: message %q has API Gateway's jargon %q", what, e["message"], jargon)
		}
	}
	return e["code"]
}

// TestGatewayResponses checks a response for every type API Gateway can
// produce, in the API's error shape, with the statuses docs/api.md wants.
func TestGatewayResponses(t *testing.T) {
	// Status and code per type; "" status keeps API Gateway's own.
	want := map[string][2]string{
		"ACCESS_DENIED":                  {"401", "<authorizer>"},
		"UNAUTHORIZED":                   {"401", doclib.EUnauthorised},
		"EXPIRED_TOKEN":                  {"401", doclib.EUnauthorised},
		"INVALID_SIGNATURE":              {"401", doclib.EUnauthorised},
		"INVALID_API_KEY":                {"401", doclib.EUnauthorised}, // a revoked key within the authorizer's cache TTL
		"AUTHORIZER_FAILURE":             {"503", doclib.EUnavailable},
		"AUTHORIZER_CONFIGURATION_ERROR": {"503", doclib.EUnavailable},
		"THROTTLED":                      {"429", doclib.ERateLimited},
		"QUOTA_EXCEEDED":                 {"429", doclib.ERateLimited},
		"WAF_FILTERED":                   {"429", doclib.ERateLimited},
		"MISSING_AUTHENTICATION_TOKEN":   {"404", doclib.ENotFound},
		"RESOURCE_NOT_FOUND":             {"404", doclib.ENotFound},
		"INTEGRATION_FAILURE":            {"503", doclib.EUnavailable},
		"INTEGRATION_TIMEOUT":            {"503", doclib.EUnavailable},
		"BAD_REQUEST_BODY":               {"400", doclib.EBadRequest},
		"BAD_REQUEST_PARAMETERS":         {"400", doclib.EBadRequest},
		"REQUEST_TOO_LARGE":              {"413", doclib.EBadRequest},
		"UNSUPPORTED_MEDIA_TYPE":         {"415", doclib.EBadRequest},
		"API_CONFIGURATION_ERROR":        {"500", doclib.EInternal},
		"DEFAULT_4XX":                    {"", doclib.EBadRequest},
		"DEFAULT_5XX":                    {"", doclib.EUnavailable},
	}
	retryAfter := map[string]bool{"THROTTLED": true, "QUOTA_EXCEEDED": true, "WAF_FILTERED": true}
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		seen := map[string]bool{}
		for _, r := range s.resources("AWS::ApiGateway::GatewayResponse") {
			typ := r.Props["ResponseType"].(string)
			seen[typ] = true
			w, ok := want[typ]
			if !ok {
				t.Errorf("unexpected gateway response %s", typ)
				continue
			}
			status, _ := r.Props["StatusCode"].(string)
			if status != w[0] {
				t.Errorf("%s: status %q, want %q", typ, status, w[0])
			}
			tmpl, _ := r.Props["ResponseTemplates"].(map[string]any)["application/json"].(string)
			// Templates substitute variables only: try the authorizer's
			// codes, as the Deny context carries them.
			codes := []string{doclib.EUnauthorised, doclib.EKeyExpired, doclib.EKeyDeviceRemoved}
			if w[1] != "<authorizer>" {
				codes = codes[:1]
				if strings.Contains(tmpl, "$context") {
					t.Errorf("%s: template %s uses a context variable", typ, tmpl)
				}
			} else if !strings.Contains(tmpl, `"$context.authorizer.code"`) || !strings.Contains(tmpl, `"$context.authorizer.message"`) {
				t.Errorf("%s: template %s does not pass the authorizer's code and message", typ, tmpl)
			}
			for _, c := range codes {
				body := strings.NewReplacer("$context.authorizer.code", c, "$context.authorizer.message", "The API key has expired.").Replace(tmpl)
				code := errorShape(t, typ, body)
				if w[1] != "<authorizer>" && code != w[1] {
					t.Errorf("%s: code %q, want %q", typ, code, w[1])
				}
				if w[1] == "<authorizer>" && code != c {
					t.Errorf("%s: code %q, want the authorizer's %q", typ, code, c)
				}
			}
			params, _ := r.Props["ResponseParameters"].(map[string]any)
			if params["gatewayresponse.header.X-Request-Id"] != "context.requestId" {
				t.Errorf("%s: X-Request-Id %v, want the request ID", typ, params["gatewayresponse.header.X-Request-Id"])
			}
			if params["gatewayresponse.header.Content-Type"] != "'application/json; charset=utf-8'" {
				t.Errorf("%s: Content-Type %v", typ, params["gatewayresponse.header.Content-Type"])
			}
			// Every 401 says how to authenticate (RFC 6750), as the local
			// server's do: a bearer key, and no OAuth.
			challenge, _ := params["gatewayresponse.header.WWW-Authenticate"].(string)
			wantChallenge := ""
			if w[0] == "401" {
				wantChallenge = "'" + doclib.Challenge(typ != "UNAUTHORIZED") + "'"
			}
			if challenge != wantChallenge {
				t.Errorf("%s: WWW-Authenticate %q, want %q", typ, challenge, wantChallenge)
			}
			ra, has := params["gatewayresponse.header.Retry-After"].(string)
			if has != retryAfter[typ] {
				t.Errorf("%s: Retry-After %q present=%v, want present=%v", typ, ra, has, retryAfter[typ])
			}
			if has && (len(ra) < 3 || ra[0] != '\'' || ra[len(ra)-1] != '\'' || ra == "'0'") {
				t.Errorf("%s: Retry-After %s is not a quoted positive number", typ, ra)
			}
			// docs/api.md: a 429 carries the X-RateLimit-* headers too.
			limit := "'" + strconv.Itoa(s.cfg.KeyLimit) + "'"
			if typ == "WAF_FILTERED" {
				limit = "'" + strconv.Itoa(s.cfg.IPLimit) + "'"
			}
			if has && (params["gatewayresponse.header.X-RateLimit-Limit"] != limit || params["gatewayresponse.header.X-RateLimit-Remaining"] != "'0'") {
				t.Errorf("%s: X-RateLimit-Limit %v, X-RateLimit-Remaining %v; want %s and '0'", typ,
					params["gatewayresponse.header.X-RateLimit-Limit"], params["gatewayresponse.header.X-RateLimit-Remaining"], limit)
			}
		}
		for typ := range want {
			if !seen[typ] {
				t.Errorf("no gateway response for %s", typ)
			}
		}
		thr := s.gatewayResponse(t, "THROTTLED")["gatewayresponse.header.Retry-After"]
		if thr != fmt.Sprintf("'%d'", s.cfg.ThrottleRetryAfter()) {
			t.Errorf("THROTTLED Retry-After %v", thr)
		}
	}
}

func (s *synthesized) gatewayResponse(t *testing.T, typ string) map[string]any {
	for _, r := range s.resources("AWS::ApiGateway::GatewayResponse") {
		if r.Props["ResponseType"] == typ {
			p, _ := r.Props["ResponseParameters"].(map[string]any)
			return p
		}
	}
	t.Fatalf("no gateway response %s", typ)
	return nil
}

// TestResponseTransfer: a streaming stack compresses nothing at the gateway
// (API Gateway cannot for a stream), gives each API function the time to
// stream its largest answer, and gives each integration the time of the
// function's whole invocation, since API Gateway's integration timeout is
// the time to complete the response; a buffered one (-c
// responseStreaming=false) lets the gateway compress and keeps the
// functions' timeouts and API Gateway's default 29 s.
func TestResponseTransfer(t *testing.T) {
	for _, variant := range []map[string]any{defaultContext, customContext} {
		s := synth(t, variant)
		rest := s.one(t, "AWS::ApiGateway::RestApi").Props
		if got, set := rest["MinimumCompressionSize"]; set == s.cfg.ResponseStreaming || (set && got != float64(httpapi.MinCompressBytes)) {
			t.Errorf("streaming %v: MinimumCompressionSize %v (set %v); want it only when buffered, at %d",
				s.cfg.ResponseStreaming, got, set, httpapi.MinCompressBytes)
		}
		for _, name := range []string{lambdaapp.FunctionLibraries, lambdaapp.FunctionDocuments, lambdaapp.FunctionSearch, lambdaapp.FunctionMCP, lambdaapp.FunctionAuthorizer} {
			var timeout float64
			for _, f := range s.resources("AWS::Lambda::Function") {
				if f.ID == s.functionID(t, name) {
					timeout, _ = f.Props["Timeout"].(float64)
				}
			}
			want := float64(sizes[name].timeoutSec)
			if s.cfg.ResponseStreaming && name != lambdaapp.FunctionAuthorizer {
				want += float64(apigw.StreamSeconds)
			}
			if timeout != want {
				t.Errorf("streaming %v: %s timeout %v s, want %v", s.cfg.ResponseStreaming, name, timeout, want)
			}
		}
		timeouts := map[string]float64{} // the functions' timeouts by logical ID
		for _, f := range s.resources("AWS::Lambda::Function") {
			timeouts[f.ID], _ = f.Props["Timeout"].(float64)
		}
		for _, m := range s.resources("AWS::ApiGateway::Method") {
			in := m.Props["Integration"].(map[string]any)
			fn := ""
			for id := range timeouts {
				if strings.Contains(render(in["Uri"]), "<"+id+".Arn>") {
					fn = id
				}
			}
			got, set := in["TimeoutInMillis"].(float64)
			switch {
			case fn == "":
				t.Errorf("method %s: no function in %s", m.ID, render(in["Uri"]))
			case !s.cfg.ResponseStreaming && set:
				t.Errorf("buffered: method %s has TimeoutInMillis %v; want API Gateway's default (29 s), the most without a quota increase", m.ID, got)
			case s.cfg.ResponseStreaming && got != (timeouts[fn]+lambdaInitSeconds)*1000:
				t.Errorf("streaming: method %s (function %s, timeout %v s) has TimeoutInMillis %v; want the whole invocation, %v ms",
					m.ID, fn, timeouts[fn], in["TimeoutInMillis"], (timeouts[fn]+lambdaInitSeconds)*1000)
			case s.cfg.ResponseStreaming && (got <= 29000 || got > 15*60*1000):
				t.Errorf("streaming: method %s has TimeoutInMillis %v; a stream may have up to 15 minutes, and the 29 s default cuts a large answer", m.ID, got)
			}
		}
	}
}
