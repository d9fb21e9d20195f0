package restapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// cached is an authorizer's answer kept for its TTL.
type cached struct {
	until      time.Time
	policy     *iampolicy.Policy
	principal  string
	context    map[string]any
	usageKey   string
	authorizer string
}

// identity returns the values of the authorizer's identity sources, and
// false when one is missing or empty.
func (g *Gateway) identity(c *call, a Authorizer) ([]string, bool) {
	var values []string
	for _, s := range a.IdentitySources {
		var v string
		switch {
		case strings.HasPrefix(s, "method.request.header."):
			v = strings.Join(c.r.Header.Values(strings.TrimPrefix(s, "method.request.header.")), ",")
		case strings.HasPrefix(s, "method.request.querystring."):
			v = c.r.URL.Query().Get(strings.TrimPrefix(s, "method.request.querystring."))
		}
		if v == "" {
			return nil, false
		}
		values = append(values, v)
	}
	return values, true
}

// authorize runs the method's authorizer, or takes its cached answer, and
// evaluates the policy it returned against the request's method ARN. On
// refusal it returns the gateway response type.
func (g *Gateway) authorize(c *call, id string) (responseType, usageKey string, ok bool) {
	a := g.api.Authorizers[id]
	values, present := g.identity(c, a)
	if !present && a.TTL > 0 {
		// With caching on, API Gateway refuses a request missing an
		// identity source without calling the authorizer.
		c.errMessage = "Unauthorized"
		return "UNAUTHORIZED", "", false
	}
	cacheKey := id + "\x00" + strings.Join(values, "\x00")
	now := g.opts.Now()
	g.st.mu.Lock()
	res, hit := g.st.cache[cacheKey]
	if hit && !now.Before(res.until) {
		delete(g.st.cache, cacheKey)
		hit = false
	}
	g.st.mu.Unlock()
	if !hit {
		var typ string
		res, typ, ok = g.callAuthorizer(c, a)
		if !ok {
			return typ, "", false
		}
		if a.TTL > 0 {
			res.until = now.Add(a.TTL)
			g.st.mu.Lock()
			g.st.cache[cacheKey] = res
			g.st.mu.Unlock()
		}
	}
	c.authorizer = map[string]any{"principalId": res.principal}
	for k, v := range res.context {
		c.authorizer[k] = v
	}
	d := iampolicy.Evaluate(iampolicy.Request{Principal: "arn:aws:iam::" + g.api.Account + ":root",
		Action: "execute-api:Invoke", Resource: g.methodARN(c)}, []*iampolicy.Policy{res.policy}, nil)
	if !d.Allowed {
		c.errMessage = "User is not authorized to access this resource with an explicit deny"
		if !strings.Contains(d.Reason, "explicit deny") {
			c.errMessage = "User is not authorized to access this resource"
		}
		return "ACCESS_DENIED", "", false
	}
	return "", res.usageKey, true
}

// methodARN is arn:aws:execute-api:<region>:<account>:<api>/<stage>/<METHOD>/<path>.
func (g *Gateway) methodARN(c *call) string {
	return fmt.Sprintf("arn:aws:execute-api:%s:%s:%s/%s/%s/%s", g.api.Region, g.api.Account, g.api.ID,
		g.api.Stage, c.r.Method, strings.TrimPrefix(c.r.URL.Path, "/"))
}

// callAuthorizer invokes the authorizer function with the REQUEST event and
// reads its answer as API Gateway does.
func (g *Gateway) callAuthorizer(c *call, a Authorizer) (cached, string, bool) {
	ev := events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type:                            "REQUEST",
		MethodArn:                       g.methodARN(c),
		Resource:                        c.resource.res.Path,
		Path:                            c.r.URL.Path,
		HTTPMethod:                      c.r.Method,
		Headers:                         singleValues(g.headers(c)),
		MultiValueHeaders:               g.headers(c),
		QueryStringParameters:           singleValues(c.r.URL.Query()),
		MultiValueQueryStringParameters: nilIfEmpty(c.r.URL.Query()),
		PathParameters:                  nilIfEmptyMap(c.params),
		RequestContext: events.APIGatewayCustomAuthorizerRequestTypeRequestContext{
			Path: "/" + g.api.Stage + c.r.URL.Path, AccountID: g.api.Account, ResourceID: resourceID(c.resource.res.Path),
			Stage: g.api.Stage, RequestID: c.requestID, ResourcePath: c.resource.res.Path, HTTPMethod: c.r.Method,
			APIID:    g.api.ID,
			Identity: events.APIGatewayCustomAuthorizerRequestTypeRequestIdentity{SourceIP: c.sourceIP},
		},
	}
	payload, _ := json.Marshal(ev)
	ctx, cancel := context.WithTimeout(c.r.Context(), g.opts.IntegrationTimeout)
	defer cancel()
	out, fnErr, err := g.inv.Invoke(ctx, a.Function, payload)
	if err != nil {
		g.opts.Logf("restapi: authorizer %s: %v", a.Function, err)
		c.errMessage = "null"
		return cached{}, "AUTHORIZER_CONFIGURATION_ERROR", false
	}
	if fnErr != "" {
		var e struct{ ErrorMessage string }
		_ = json.Unmarshal(out, &e)
		if e.ErrorMessage == "Unauthorized" {
			// The documented way for an authorizer to answer 401.
			c.errMessage = "Unauthorized"
			return cached{}, "UNAUTHORIZED", false
		}
		g.opts.Logf("restapi: authorizer %s failed: %s", a.Function, out)
		c.errMessage = "null"
		return cached{}, "AUTHORIZER_FAILURE", false
	}
	var resp struct {
		events.APIGatewayCustomAuthorizerResponse
		PolicyDocument json.RawMessage `json:"policyDocument"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.PrincipalID == "" || len(resp.PolicyDocument) == 0 {
		g.opts.Logf("restapi: authorizer %s: answer is not an authorizer response: %s", a.Function, out)
		c.errMessage = "null"
		return cached{}, "AUTHORIZER_CONFIGURATION_ERROR", false
	}
	policy, err := iampolicy.Parse(resp.PolicyDocument)
	if err != nil {
		g.opts.Logf("restapi: authorizer %s: policy: %v", a.Function, err)
		c.errMessage = "null"
		return cached{}, "AUTHORIZER_CONFIGURATION_ERROR", false
	}
	ctxValues := map[string]any{}
	for k, v := range resp.Context {
		switch v := v.(type) {
		case string:
			ctxValues[k] = v
		case bool:
			ctxValues[k] = fmt.Sprint(v)
		case float64:
			ctxValues[k] = jsonNumber(v)
		default:
			// API Gateway accepts only strings, numbers and booleans.
			g.opts.Logf("restapi: authorizer %s: context %q is a %T", a.Function, k, v)
			c.errMessage = "null"
			return cached{}, "AUTHORIZER_CONFIGURATION_ERROR", false
		}
	}
	return cached{policy: policy, principal: resp.PrincipalID, context: ctxValues, usageKey: resp.UsageIdentifierKey,
		authorizer: a.Function}, "", true
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// resourceID is a stable stand-in for a resource's ID.
func resourceID(path string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(path); i++ {
		h = (h ^ uint32(path[i])) * 16777619
	}
	return fmt.Sprintf("%06x", h&0xffffff)
}
