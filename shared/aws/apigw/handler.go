package apigw

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	doclib "github.com/doclib/doclib/shared"
)

// DeadlineReserve is the time Handler keeps between a request's deadline and
// the function's, to answer and to give back a search's credit (the refund
// has RefundTimeout of it, in shared/service).
const DeadlineReserve = 2 * time.Second

// ProxyHandler is the Lambda handler of a REST API proxy integration.
type ProxyHandler func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// Handler serves h for API Gateway's proxy events, as aws-lambda-go-api-proxy
// does. A HEAD answer loses its body, as net/http would drop it.
//
// Every event is answered by h, never with a Lambda error for what a client
// sent: API Gateway would turn that error into its bare 502 {"message":
// "Internal server error"}, without the API's error shape or X-Request-Id,
// and count a failed invocation. See request for the events that the proxy
// library alone cannot turn into an http.Request.
//
// The request's context ends DeadlineReserve before the function's deadline:
// a dependency that outlasts the budget (Bedrock's throttling backoff, the
// SDK's retries) fails the request with 503 while the function can still
// answer and undo what the request spent (a search's credit), instead of
// Lambda killing it at its timeout, which API Gateway turns into a bare 502
// with the credit gone.
func Handler(h http.Handler) ProxyHandler {
	var accessor core.RequestAccessor
	return func(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-DeadlineReserve))
			defer cancel()
		}
		r, err := request(ctx, &accessor, ev)
		if err != nil {
			return events.APIGatewayProxyResponse{}, fmt.Errorf("apigw: could not convert the proxy event to a request: %w", err)
		}
		w := core.NewProxyResponseWriter()
		h.ServeHTTP(w, r)
		resp, err := w.GetProxyResponse()
		if err != nil {
			return resp, fmt.Errorf("apigw: proxy response: %w", err)
		}
		if strings.EqualFold(ev.HTTPMethod, http.MethodHead) {
			resp.Body, resp.IsBase64Encoded = "", false
		}
		return resp, nil
	}
}

// request turns an event into the handler's request. Two things a client
// sends would make the proxy library fail:
//   - A path that is no valid URL path, such as /documents/%zz: the REST API
//     passes paths on still percent-encoded. The path is kept as it came, not
//     unescaped, and the handler answers it as a path that names nothing (404
//     not_found), after the rate limits and with the headers and log line of
//     every request.
//   - A body that is not the base64 it claims to be. It is dropped: the read
//     API's routes read no body (they serve GET and answer any other method
//     405), and POST /mcp answers a request without its message as the
//     client's error, as it answers an empty body.
//
// The error is non-nil only when the event does not convert even so, which no
// API Gateway event does (its domain name is a host name).
func request(ctx context.Context, accessor *core.RequestAccessor, ev events.APIGatewayProxyRequest) (*http.Request, error) {
	path := ev.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	_, err := url.ParseRequestURI(path)
	badPath := err != nil
	if badPath {
		ev.Path = "/"
	}
	if ev.IsBase64Encoded {
		if _, err := base64.StdEncoding.DecodeString(ev.Body); err != nil {
			ev.Body, ev.IsBase64Encoded = "", false
		}
	}
	r, err := accessor.EventToRequestWithContext(ctx, ev)
	if err != nil {
		return nil, err
	}
	if badPath {
		r.URL.Path, r.URL.RawPath = path, ""
		r.RequestURI = r.URL.RequestURI()
	}
	return r, nil
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
func Principal(now func() time.Time, help doclib.AccountHelp) func(*http.Request) (*doclib.Principal, error) {
	return func(r *http.Request) (*doclib.Principal, error) {
		rc, ok := core.GetAPIGatewayContextFromContext(r.Context())
		keyID := contextString(rc.Authorizer, CtxKeyID)
		if !ok || keyID == "" {
			return nil, doclib.MissingKeyError()
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
			if err := doclib.CheckKeyExpiry(p.ExpiresAt, now(), help); err != nil {
				return nil, err
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
