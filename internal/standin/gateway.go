package standin

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/doclib/doclib/internal/standin/cfn"
	"github.com/doclib/doclib/internal/standin/restapi"
)

// functionOfURI takes the function name out of an integration or authorizer
// URI: arn:aws:apigateway:<region>:lambda:path/2015-03-31/functions/<function
// ARN>/invocations for Lambda's Invoke, or path/2021-11-15/functions/<function
// ARN>/response-streaming-invocations for InvokeWithResponseStream.
var functionOfURI = regexp.MustCompile(`lambda:path/(2015-03-31|2021-11-15)/functions/.*:function:([^/:]+)(?::[^/]+)?/(invocations|response-streaming-invocations)$`)

// invokeAPI is the Lambda API an integration URI names: Invoke or
// InvokeWithResponseStream, each at its own API version.
func invokeAPI(m []string) (mode string, ok bool) {
	switch {
	case m[1] == "2015-03-31" && m[3] == "invocations":
		return restapi.TransferBuffered, true
	case m[1] == "2021-11-15" && m[3] == "response-streaming-invocations":
		return restapi.TransferStream, true
	}
	return "", false
}

// restAPI reads the template's one REST API into the gateway's settings:
// its resources and methods, the authorizer, the gateway responses, the
// stage's throttling, the usage plans and the WAF rate rules. Everything the
// gateway does is taken from here; a property the stand-in does not
// understand is an error rather than ignored.
func restAPI(t *cfn.Template, r *cfn.Resolver) (restapi.API, error) {
	apis := t.OfType("AWS::ApiGateway::RestApi")
	if len(apis) != 1 {
		return restapi.API{}, fmt.Errorf("standin: %d REST APIs in the template, want 1", len(apis))
	}
	apiID := apis[0]
	rest := t.Resources[apiID]
	api := restapi.API{ID: r.V.Ref[apiID], Region: r.V.Region, Account: r.V.Account,
		Authorizers: map[string]restapi.Authorizer{}, GatewayResponses: map[string]restapi.GatewayResponse{},
		APIKeySource: "HEADER", MinimumCompressionSize: -1}
	if s, ok := rest.Properties["ApiKeySourceType"].(string); ok {
		api.APIKeySource = s
	}
	if n, ok := rest.Properties["MinimumCompressionSize"].(float64); ok {
		api.MinimumCompressionSize = int(n)
	}
	// Slashes are written ~1 there (AWS::ApiGateway::RestApi,
	// BinaryMediaTypes: image/png is image~1png).
	for _, t := range list(rest.Properties["BinaryMediaTypes"]) {
		s, ok := t.(string)
		if !ok {
			return api, fmt.Errorf("standin: REST API %s: binary media type %v is not a string", apiID, t)
		}
		api.BinaryMediaTypes = append(api.BinaryMediaTypes, strings.ReplaceAll(s, "~1", "/"))
	}

	// Stage: its name and its methods' throttles.
	stages := t.OfType("AWS::ApiGateway::Stage")
	if len(stages) != 1 {
		return api, fmt.Errorf("standin: %d stages, want 1", len(stages))
	}
	stage := t.Resources[stages[0]]
	api.Stage, _ = stage.Properties["StageName"].(string)
	for _, ms := range list(stage.Properties["MethodSettings"]) {
		m := mapOf(ms)
		path, _ := m["ResourcePath"].(string)
		method, _ := m["HttpMethod"].(string)
		api.MethodSettings = append(api.MethodSettings, restapi.MethodSetting{
			ResourcePath: methodSettingPath(path), HTTPMethod: method,
			Throttle: restapi.Throttle{Rate: num(m["ThrottlingRateLimit"]), Burst: int(num(m["ThrottlingBurstLimit"]))}})
	}

	// Resources: a tree of path parts under the API's root.
	paths := map[string]string{r.V.Attr[apiID+".RootResourceId"]: ""}
	resIDs := t.OfType("AWS::ApiGateway::Resource")
	for len(resIDs) > 0 {
		var left []string
		for _, id := range resIDs {
			res := t.Resources[id]
			parent, err := r.String(res.Properties["ParentId"])
			if err != nil {
				return api, fmt.Errorf("standin: resource %s: %w", id, err)
			}
			pp, ok := paths[parent]
			if !ok {
				left = append(left, id)
				continue
			}
			part, _ := res.Properties["PathPart"].(string)
			paths[r.V.Ref[id]] = pp + "/" + part
		}
		if len(left) == len(resIDs) {
			return api, fmt.Errorf("standin: resources %v have no known parent", left)
		}
		resIDs = left
	}
	byPath := map[string]*restapi.Resource{}
	for _, id := range t.OfType("AWS::ApiGateway::Method") {
		m := t.Resources[id].Properties
		resID, err := r.String(m["ResourceId"])
		if err != nil {
			return api, fmt.Errorf("standin: method %s: %w", id, err)
		}
		path, ok := paths[resID]
		if !ok {
			return api, fmt.Errorf("standin: method %s on an unknown resource", id)
		}
		if path == "" {
			path = "/"
		}
		meth := restapi.Method{}
		meth.AuthorizationType, _ = m["AuthorizationType"].(string)
		meth.APIKeyRequired, _ = m["ApiKeyRequired"].(bool)
		if a, ok := m["AuthorizerId"]; ok {
			if meth.AuthorizerID, err = r.String(a); err != nil {
				return api, err
			}
		}
		integ, _ := m["Integration"].(map[string]any)
		meth.Integration.Type, _ = integ["Type"].(string)
		if meth.Integration.Type != "AWS_PROXY" {
			return api, fmt.Errorf("standin: method %s: integration %q; the stand-in serves AWS_PROXY (Lambda proxy) only", id, meth.Integration.Type)
		}
		uri, err := r.String(integ["Uri"])
		if err != nil {
			return api, fmt.Errorf("standin: method %s: %w", id, err)
		}
		fn := functionOfURI.FindStringSubmatch(uri)
		if fn == nil {
			return api, fmt.Errorf("standin: method %s: no function in %s", id, uri)
		}
		meth.Integration.Function = fn[2]
		// The transfer mode and the Lambda API the URI names must agree: a
		// STREAM integration calls InvokeWithResponseStream (API Gateway
		// developer guide, "Set up a Lambda proxy integration with payload
		// response streaming").
		meth.Integration.TransferMode = restapi.TransferBuffered
		if m, ok := integ["ResponseTransferMode"].(string); ok {
			meth.Integration.TransferMode = m
		}
		// TimeoutInMillis: absent is API Gateway's default (29 s);
		// restapi.New refuses one API Gateway would refuse.
		if v, ok := integ["TimeoutInMillis"]; ok {
			ms := num(v)
			if ms <= 0 {
				return api, fmt.Errorf("standin: method %s: TimeoutInMillis %v", id, v)
			}
			meth.Integration.Timeout = time.Duration(ms) * time.Millisecond
		}
		if mode, ok := invokeAPI(fn); !ok || mode != meth.Integration.TransferMode {
			return api, fmt.Errorf("standin: method %s: response transfer mode %s with the integration URI %s: a STREAM integration calls path/2021-11-15/functions/<arn>/response-streaming-invocations, a BUFFERED one path/2015-03-31/functions/<arn>/invocations",
				id, meth.Integration.TransferMode, uri)
		}
		res := byPath[path]
		if res == nil {
			res = &restapi.Resource{Path: path, Methods: map[string]restapi.Method{}}
			byPath[path] = res
		}
		httpMethod, _ := m["HttpMethod"].(string)
		res.Methods[httpMethod] = meth
	}
	for _, p := range sortedKeys(byPath) {
		api.Resources = append(api.Resources, *byPath[p])
	}

	for _, id := range t.OfType("AWS::ApiGateway::Authorizer") {
		a := t.Resources[id].Properties
		uri, err := r.String(a["AuthorizerUri"])
		if err != nil {
			return api, fmt.Errorf("standin: authorizer %s: %w", id, err)
		}
		fn := functionOfURI.FindStringSubmatch(uri)
		if mode, ok := invokeAPI(fn); fn == nil || !ok || mode != restapi.TransferBuffered {
			return api, fmt.Errorf("standin: authorizer %s: no function in %s (an authorizer is invoked with Invoke, path/2015-03-31/.../invocations)", id, uri)
		}
		typ, _ := a["Type"].(string)
		src, _ := a["IdentitySource"].(string)
		ttl := 300.0 // API Gateway's default when unset
		if v, ok := a["AuthorizerResultTtlInSeconds"]; ok {
			ttl = num(v)
		}
		var sources []string
		for _, s := range strings.Split(src, ",") {
			if s = strings.TrimSpace(s); s != "" {
				sources = append(sources, s)
			}
		}
		api.Authorizers[r.V.Ref[id]] = restapi.Authorizer{Type: typ, Function: fn[2], IdentitySources: sources,
			TTL: time.Duration(ttl * float64(time.Second))}
	}

	for _, id := range t.OfType("AWS::ApiGateway::GatewayResponse") {
		g := t.Resources[id].Properties
		typ, _ := g["ResponseType"].(string)
		gr := restapi.GatewayResponse{Parameters: map[string]string{}, Templates: map[string]string{}}
		if s, ok := g["StatusCode"].(string); ok {
			n, err := strconv.Atoi(s)
			if err != nil {
				return api, fmt.Errorf("standin: gateway response %s: status %q", typ, s)
			}
			gr.Status = n
		}
		for k, v := range mapOf(g["ResponseParameters"]) {
			gr.Parameters[k], _ = v.(string)
		}
		for k, v := range mapOf(g["ResponseTemplates"]) {
			gr.Templates[k], _ = v.(string)
		}
		api.GatewayResponses[typ] = gr
	}

	for _, id := range t.OfType("AWS::ApiGateway::UsagePlan") {
		p := t.Resources[id].Properties
		up := restapi.UsagePlan{ID: r.V.Ref[id]}
		if th := mapOf(p["Throttle"]); th != nil {
			up.Throttle = restapi.Throttle{Rate: num(th["RateLimit"]), Burst: int(num(th["BurstLimit"]))}
		}
		if q := mapOf(p["Quota"]); q != nil {
			up.Quota = restapi.Quota{Limit: int(num(q["Limit"])), Period: fmt.Sprint(q["Period"])}
		}
		for _, s := range list(p["ApiStages"]) {
			st := mapOf(s)
			name, err := r.String(st["Stage"])
			if err != nil {
				return api, fmt.Errorf("standin: usage plan %s: %w", id, err)
			}
			up.Stages = append(up.Stages, name)
		}
		api.UsagePlans = append(api.UsagePlans, up)
	}

	for _, id := range t.OfType("AWS::WAFv2::WebACL") {
		for _, rule := range list(t.Resources[id].Properties["Rules"]) {
			rm := mapOf(rule)
			stmt := mapOf(mapOf(rm["Statement"])["RateBasedStatement"])
			if stmt == nil {
				return api, fmt.Errorf("standin: WAF rule %v: only rate-based rules are emulated", rm["Name"])
			}
			if _, block := mapOf(rm["Action"])["Block"]; !block {
				continue
			}
			window := num(stmt["EvaluationWindowSec"])
			if window == 0 {
				window = 300
			}
			api.WAF = append(api.WAF, restapi.RateRule{Name: fmt.Sprint(rm["Name"]), Limit: int(num(stmt["Limit"])),
				Window: time.Duration(window) * time.Second, AggregateKey: fmt.Sprint(stmt["AggregateKeyType"])})
		}
	}
	return api, nil
}

// methodSettingPath decodes a MethodSettings ResourcePath: "/*" for every
// resource, else the path with each "/" after the first written "~1"
// (AWS::ApiGateway::Stage MethodSetting: /~1items~1{id} is /items/{id}).
func methodSettingPath(p string) string {
	if p == "/*" || p == "/" {
		return p
	}
	return "/" + strings.ReplaceAll(strings.TrimPrefix(p, "/"), "~1", "/")
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
