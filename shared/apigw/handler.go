package apigw

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	doclib "github.com/doclib/doclib/shared"
)

// ProxyHandler is the Lambda handler of a REST API proxy integration.
type ProxyHandler func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// Handler serves h for API Gateway's proxy events, through
// aws-lambda-go-api-proxy. A HEAD answer loses its body, as net/http would
// drop it.
func Handler(h http.Handler) ProxyHandler {
	adapter := httpadapter.New(h)
	return func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		resp, err := adapter.ProxyWithContext(ctx, ev)
		if err == nil && strings.EqualFold(ev.HTTPMethod, http.MethodHead) {
			resp.Body, resp.IsBase64Encoded = "", false
		}
		return resp, err
	}
}

// RequestID returns API Gateway's ID of the request, so that the X-Request-Id
// header, the function's log line and API Gateway's access log agree.
func RequestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayContextFromContext(r.Context()); ok && rc.RequestID != "" {
		return rc.RequestID
	}
	return ""
}

// Principal returns an httpapi.Config.Authenticate that trusts the context the
// authorizer gave API Gateway: the functions never look the key up again. The
// key's expiry is checked here against now, so that a key expiring while its
// authorizer answer is cached stops at once. A request without that context
// (which API Gateway never sends to a function behind the authorizer) is
// refused.
func Principal(now func() time.Time) func(*http.Request) (*doclib.Principal, error) {
	return func(r *http.Request) (*doclib.Principal, error) {
		rc, ok := core.GetAPIGatewayContextFromContext(r.Context())
		keyID := contextString(rc.Authorizer, CtxKeyID)
		if !ok || keyID == "" {
			return nil, doclib.Errorf(doclib.EUnauthorised, "Missing API key. Send it in the Authorization header as \"Bearer <API_KEY>\".")
		}
		a := rc.Authorizer
		p := &doclib.Principal{
			KeyID:            keyID,
			WorkspaceID:      contextString(a, CtxWorkspaceID),
			Plan:             doclib.Plan(contextString(a, CtxPlan)),
			RecordingDetails: contextBool(a, CtxRecordingDetails),
			Suspended:        contextBool(a, CtxSuspended),
			OwnProviderKey:   contextBool(a, CtxOwnProviderKey),
		}
		if p.WorkspaceID == "" {
			return nil, doclib.Errorf(doclib.EUnauthorised, "The API key could not be checked. Retry; if it persists, create a new key.")
		}
		if libs := contextString(a, CtxLibraries); libs == "*" {
			p.AllLibraries = true
		} else {
			p.Libraries = map[string]bool{}
			for _, id := range strings.Split(libs, ",") {
				if id != "" {
					p.Libraries[id] = true
				}
			}
		}
		if secs, err := strconv.ParseInt(contextString(a, CtxExpiresAt), 10, 64); err == nil && secs > 0 {
			p.ExpiresAt = time.Unix(secs, 0).UTC()
			if !now().Before(p.ExpiresAt) {
				return nil, doclib.Errorf(doclib.EKeyExpired, "The API key expired at %s. Create a new key in the desktop app.", p.ExpiresAt.Format(time.RFC3339))
			}
		}
		return p, nil
	}
}

// contextString reads a context value; API Gateway passes the authorizer's
// values to the integration as strings, tests may pass them typed.
func contextString(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	}
	return ""
}

func contextBool(m map[string]any, key string) bool {
	b, _ := strconv.ParseBool(contextString(m, key))
	return b
}
