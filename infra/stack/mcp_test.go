package stack

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/httpapi"
)

// mcpVariants are the stacks the MCP endpoint is checked in: each search
// tier, with and without usage plans, streamed and buffered.
var mcpVariants = []map[string]any{defaultContext, customContext, embeddedContext, embeddedTestContext, {KeyUsagePlans: "false"}}

// TestMCPEndpoint: /mcp is a resource of its own at the API's root with one
// method, ANY, behind the same REQUEST authorizer and the same API key
// requirement as every route (so the usage plans, the stage's throttle and
// WAF apply to it as to them), proxied to the mcp function in the stack's
// transfer mode; and API Gateway may invoke the mcp function for /mcp alone,
// and no other function for /mcp.
func TestMCPEndpoint(t *testing.T) {
	for _, variant := range mcpVariants {
		s := synth(t, variant)
		api := s.one(t, "AWS::ApiGateway::RestApi")
		authorizer := s.one(t, "AWS::ApiGateway::Authorizer")
		mcpFn := s.functionID(t, lambdaapp.FunctionMCP)

		var resID string
		for _, r := range s.resources("AWS::ApiGateway::Resource") {
			if id, attr := getAtt(r.Props["ParentId"]); id == api.ID && attr == "RootResourceId" && r.Props["PathPart"] == strings.TrimPrefix(httpapi.MCPPath, "/") {
				resID = r.ID
			}
		}
		if resID == "" {
			t.Fatalf("%v: no resource %s at the API's root", variant, httpapi.MCPPath)
		}
		var mcp []resource
		keyRequired := map[any]int{}
		modes := map[any]int{}
		for _, m := range s.resources("AWS::ApiGateway::Method") {
			keyRequired[m.Props["ApiKeyRequired"]]++
			modes[m.Props["Integration"].(map[string]any)["ResponseTransferMode"]]++
			if ref(m.Props["ResourceId"]) == resID {
				mcp = append(mcp, m)
			}
		}
		if len(mcp) != 1 {
			t.Fatalf("%v: %s has %d methods, want exactly one (ANY)", variant, httpapi.MCPPath, len(mcp))
		}
		m := mcp[0].Props
		// ANY, not POST: any other method reaches the handler, which answers
		// 405 with Allow: POST after the authorizer and the limits; with POST
		// alone API Gateway would answer it 404 before them.
		if m["HttpMethod"] != "ANY" {
			t.Errorf("%v: %s method %v, want ANY", variant, httpapi.MCPPath, m["HttpMethod"])
		}
		if m["AuthorizationType"] != "CUSTOM" || ref(m["AuthorizerId"]) != authorizer.ID {
			t.Errorf("%v: %s authorization %v %v, want the REQUEST authorizer of the routes", variant, httpapi.MCPPath, m["AuthorizationType"], m["AuthorizerId"])
		}
		if m["ApiKeyRequired"] != s.cfg.UsagePlans || len(keyRequired) != 1 {
			t.Errorf("%v: %s ApiKeyRequired %v; the methods' values %v; want %v on every method (usage plans apply only then)",
				variant, httpapi.MCPPath, m["ApiKeyRequired"], keyRequired, s.cfg.UsagePlans)
		}
		in := m["Integration"].(map[string]any)
		uri := "path/2021-11-15/functions/<" + mcpFn + ".Arn>/response-streaming-invocations"
		if !s.cfg.ResponseStreaming {
			uri = "path/2015-03-31/functions/<" + mcpFn + ".Arn>/invocations"
		}
		if in["Type"] != "AWS_PROXY" || in["IntegrationHttpMethod"] != "POST" || !strings.HasSuffix(render(in["Uri"]), uri) ||
			in["ResponseTransferMode"] != s.cfg.transferMode() || len(modes) != 1 {
			t.Errorf("%v: %s integration %s %s %v (the methods' modes %v), want AWS_PROXY to the mcp function in %s mode like every route",
				variant, httpapi.MCPPath, in["Type"], render(in["Uri"]), in["ResponseTransferMode"], modes, s.cfg.transferMode())
		}

		// API Gateway's permissions to invoke: the mcp function for any
		// method of /mcp only, and no other function for /mcp.
		var mcpArns []string
		for _, p := range s.resources("AWS::Lambda::Permission") {
			if p.Props["Principal"] != "apigateway.amazonaws.com" {
				continue
			}
			fn, _ := getAtt(p.Props["FunctionName"])
			arn := render(p.Props["SourceArn"])
			isMCP := strings.HasSuffix(arn, "/*"+httpapi.MCPPath)
			switch {
			case fn == mcpFn:
				mcpArns = append(mcpArns, arn)
				if !isMCP {
					t.Errorf("%v: API Gateway may invoke the mcp function for %s", variant, arn)
				}
			case isMCP:
				t.Errorf("%v: API Gateway may invoke %s for %s", variant, fn, arn)
			}
		}
		if len(mcpArns) != 1 || !strings.Contains(mcpArns[0], "<"+api.ID+">/") {
			t.Errorf("%v: API Gateway may invoke the mcp function for %v, want once, for any method of %s on this API", variant, mcpArns, httpapi.MCPPath)
		}
	}
}

// TestMCPHasTheSearchFunctionsRights: the mcp function is wired as the
// search function is (functions/mcp, wiring.SearchFunction), so it gets
// exactly the search function's environment, memory and timeout, and its
// role exactly the search role's rights: the table's reads, the rate-limit
// counters, the credit ledger, Bedrock's model, and the index (the domain's
// two search requests, in the domain's access policy too, or the snapshots'
// reads). Its own log group aside, not one statement more or less.
func TestMCPHasTheSearchFunctionsRights(t *testing.T) {
	for _, variant := range mcpVariants {
		s := synth(t, variant)
		fns := map[string]resource{}
		for _, f := range s.resources("AWS::Lambda::Function") {
			fns[f.ID] = f
		}
		search, mcp := fns[s.functionID(t, lambdaapp.FunctionSearch)], fns[s.functionID(t, lambdaapp.FunctionMCP)]
		for _, prop := range []string{"Environment", "MemorySize", "Timeout", "Runtime", "Architectures", "TracingConfig", "ReservedConcurrentExecutions"} {
			if !reflect.DeepEqual(search.Props[prop], mcp.Props[prop]) {
				t.Errorf("%v: %s of the mcp function %v, the search function's %v", variant, prop, mcp.Props[prop], search.Props[prop])
			}
		}

		// Each role's statements, its own log group written as one name.
		grants := func(f resource) []string {
			role, _ := getAtt(f.Props["Role"])
			logs := ref(f.Props["LoggingConfig"].(map[string]any)["LogGroup"])
			var out []string
			for _, st := range s.identityStatements() {
				if st.owner != role {
					continue
				}
				actions := slices.Sorted(slices.Values(st.actions))
				var res []string
				for _, r := range st.resources {
					res = append(res, strings.ReplaceAll(r, "<"+logs+".", "<own log group."))
				}
				out = append(out, fmt.Sprint(st.effect, " ", actions, " on ", res, " if ", st.condition))
			}
			slices.Sort(out)
			return out
		}
		want, got := grants(search), grants(mcp)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%v: the mcp role may\n  %s\nthe search role\n  %s", variant, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		// What each may do, spelled out, for whoever reads a failure.
		joined := strings.Join(got, "\n")
		for _, need := range []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem", "RL#*", "WS#*", "bedrock:InvokeModel"} {
			if !strings.Contains(joined, need) {
				t.Errorf("%v: the mcp role lacks %s", variant, need)
			}
		}
		tier := "es:ESHttpPost"
		if s.cfg.Search == SearchEmbedded {
			tier = "s3:GetObject"
		}
		if !strings.Contains(joined, tier) || strings.Contains(joined, "s3:PutObject") || strings.Contains(joined, "es:ESHttpPut") {
			t.Errorf("%v: the mcp role reads the index with %s and writes none: it may\n  %s", variant, tier, strings.Join(got, "\n  "))
		}

		// The domain's access policy, a resource policy, admits the mcp
		// role exactly where it admits the search role.
		searchRole, _ := getAtt(search.Props["Role"])
		mcpRole, _ := getAtt(mcp.Props["Role"])
		for _, d := range s.resources("AWS::OpenSearchService::Domain") {
			for _, st := range list(d.Props["AccessPolicies"].(map[string]any)["Statement"]) {
				m := st.(map[string]any)
				var principals []string
				for _, pr := range list(m["Principal"].(map[string]any)["AWS"]) {
					id, _ := getAtt(pr)
					principals = append(principals, id)
				}
				if slices.Contains(principals, searchRole) != slices.Contains(principals, mcpRole) {
					t.Errorf("%v: the domain's statement %v admits %v: the search and mcp roles are not admitted alike", variant, m["Sid"], principals)
				}
			}
		}
	}
}
