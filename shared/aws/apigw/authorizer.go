// Package apigw puts the API behind Amazon API Gateway (REST API, Lambda proxy
// integration): the REQUEST authorizer, the principal the functions read from
// the authorizer's context instead of looking the key up again, and the Lambda
// handler that serves the shared http.Handler.
//
// The authorizer does step 2 of docs/api.md's order of checks
// (authentication). API Gateway caches its answer per Authorization header for
// the stage's authorizer TTL, so the answer must not depend on the route: an
// Allow lists every route of the API and the MCP endpoint, and the handler
// decides the rest (scope, 403 for recordings) as it does locally.
package apigw

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// Keys of the authorizer's context. API Gateway accepts only strings, numbers
// and booleans there, and hands them to the functions as strings.
const (
	CtxKeyID            = "keyId"
	CtxWorkspaceID      = "workspaceId"
	CtxPlan             = "plan"
	CtxLibraries        = "libraries" // "*" or IDs joined by commas
	CtxRecordingDetails = "recordingDetails"
	CtxSuspended        = "suspended"
	CtxOwnProviderKey   = "ownProviderKey"
	CtxExpiresAt        = "expiresAt" // Unix seconds; 0 for never
	// CtxCode and CtxMessage are the error of a Deny: the ACCESS_DENIED gateway
	// response writes them into the API's error shape with status 401.
	CtxCode    = "code"
	CtxMessage = "message"
)

// Authorizer is the REQUEST authorizer's handler.
type Authorizer struct {
	Service *service.Service
	Logger  *slog.Logger // nil: slog.Default()
	// Customer is the stack's customer, part of the usage identifier
	// (usageplan.Value) that ties a request to its key's usage plan.
	Customer string
}

// Handle checks the request's bearer key. A key that is missing, malformed,
// unknown, expired or from a removed device gets a Deny whose context carries
// the spec's code and message. Failures to check (the table unreachable) are
// returned as errors: API Gateway then answers 5xx (mapped to 503
// unavailable) and caches nothing.
func (a *Authorizer) Handle(ctx context.Context, ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	log := a.Logger
	if log == nil {
		log = slog.Default()
	}
	// API Gateway's request ID, on this handler's lines and the service's.
	log = doclib.Logger(log)
	ctx = doclib.WithRequestID(ctx, ev.RequestContext.RequestID)
	apiArn, err := apiArnOf(ev.MethodArn)
	if err != nil {
		return events.APIGatewayCustomAuthorizerResponse{}, err
	}
	values := headerValues(ev.MultiValueHeaders, ev.Headers, "Authorization")
	secret, err := httpapi.Bearer(values)
	var p *doclib.Principal
	if err == nil {
		p, err = a.Service.Authenticate(ctx, secret)
	}
	if err != nil {
		code := doclib.ErrorCode(err)
		switch code {
		case doclib.EUnauthorised, doclib.EKeyExpired, doclib.EKeyDeviceRemoved:
			log.InfoContext(ctx, "authorizer: denied", "code", code)
			return deny(apiArn, code, doclib.ErrorMessage(err)), nil
		}
		log.ErrorContext(ctx, "authorizer: could not check the key", "error", err)
		return events.APIGatewayCustomAuthorizerResponse{}, fmt.Errorf("apigw: authorizer: %w", err)
	}
	return allow(apiArn, p, usageplan.Value(a.Customer, doclib.HashKey(secret))), nil
}

// apiArnOf cuts a method ARN, arn:aws:execute-api:<region>:<account>:<api>/<stage>/<method>/<path>,
// to its API and stage.
func apiArnOf(methodArn string) (string, error) {
	parts := strings.SplitN(methodArn, "/", 3)
	if len(parts) < 3 || !strings.HasPrefix(parts[0], "arn:") || parts[1] == "" {
		return "", fmt.Errorf("apigw: authorizer: method ARN %q is not arn:…:<api>/<stage>/<method>/<path>", methodArn)
	}
	return parts[0] + "/" + parts[1], nil
}

// headerValues returns every value of a header, whatever the case of its name.
func headerValues(multi map[string][]string, single map[string]string, name string) []string {
	var out []string
	for k, vs := range multi {
		if strings.EqualFold(k, name) {
			out = append(out, vs...)
		}
	}
	if multi != nil {
		return out
	}
	for k, v := range single {
		if strings.EqualFold(k, name) {
			out = append(out, v)
		}
	}
	return out
}

// routeArns lists every route of the API under apiArn, and the MCP endpoint
// (httpapi.MCPPath), any method: an authorizer answer is cached per key, not
// per route, so the Allow of a key's first request must let in its next,
// whichever path it names. The handler answers a method a path does not
// take with 405, as it does locally.
func routeArns(apiArn string) []string {
	paths := make([]string, 0, len(httpapi.Routes)+1)
	for _, r := range httpapi.Routes {
		paths = append(paths, r.Path)
	}
	paths = append(paths, httpapi.MCPPath)
	out := make([]string, 0, len(paths))
	for _, path := range paths {
		for {
			i := strings.Index(path, "{")
			if i < 0 {
				break
			}
			j := strings.Index(path[i:], "}")
			path = path[:i] + "*" + path[i+j+1:]
		}
		out = append(out, apiArn+"/*"+path)
	}
	return out
}

func allow(apiArn string, p *doclib.Principal, usageKey string) events.APIGatewayCustomAuthorizerResponse {
	libraries := "*"
	if !p.AllLibraries {
		ids := make([]string, 0, len(p.Libraries))
		for id := range p.Libraries {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		libraries = strings.Join(ids, ",")
	}
	var expires int64
	if !p.ExpiresAt.IsZero() {
		expires = p.ExpiresAt.Unix()
	}
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: p.KeyID,
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{Version: "2012-10-17", Statement: []events.IAMPolicyStatement{
			{Action: []string{"execute-api:Invoke"}, Effect: "Allow", Resource: routeArns(apiArn)},
		}},
		Context: map[string]any{
			CtxKeyID: p.KeyID, CtxWorkspaceID: p.WorkspaceID, CtxPlan: string(p.Plan), CtxLibraries: libraries,
			CtxRecordingDetails: p.RecordingDetails, CtxSuspended: p.Suspended, CtxOwnProviderKey: p.OwnProviderKey,
			CtxExpiresAt: strconv.FormatInt(expires, 10),
		},
		UsageIdentifierKey: usageKey,
	}
}

func deny(apiArn, code, message string) events.APIGatewayCustomAuthorizerResponse {
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: "anonymous",
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{Version: "2012-10-17", Statement: []events.IAMPolicyStatement{
			{Action: []string{"execute-api:Invoke"}, Effect: "Deny", Resource: []string{apiArn + "/*"}},
		}},
		Context: map[string]any{CtxCode: code, CtxMessage: jsonText(message)},
	}
}

// jsonText escapes s for use between the quotes of a JSON string: gateway
// response templates substitute context values as they are.
func jsonText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}
