package apigw_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/apigw"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

func TestAllowListsEveryRouteAndTheUsageKey(t *testing.T) {
	w := newWorld(t)
	s := samples(w.data)[1] // GET /libraries/it-operations
	resp, err := w.authorizer.Handle(context.Background(), authorizerEvent(s, headersOf("dlk_demo_one_library")))
	if err != nil {
		t.Fatal(err)
	}
	st := resp.PolicyDocument.Statement
	if len(st) != 1 || st[0].Effect != "Allow" || !slices.Equal(st[0].Action, []string{"execute-api:Invoke"}) {
		t.Fatalf("policy %+v", resp.PolicyDocument)
	}
	prefix := "arn:aws:execute-api:" + region + ":" + account + ":" + apiID + "/" + stage + "/*/"
	// Every route and /mcp: the answer is cached per key, and the key's next
	// request may be to any of them.
	if len(st[0].Resource) != len(httpapi.Routes)+1 {
		t.Errorf("%d resources for %d routes and /mcp: %v", len(st[0].Resource), len(httpapi.Routes), st[0].Resource)
	}
	if !slices.Contains(st[0].Resource, prefix+strings.TrimPrefix(httpapi.MCPPath, "/")) {
		t.Errorf("no resource for %s: a cached Allow would refuse the key's MCP requests", httpapi.MCPPath)
	}
	for _, r := range st[0].Resource {
		if !strings.HasPrefix(r, prefix) || strings.ContainsAny(r, "{}") {
			t.Errorf("resource %s: want %s<path with * for each parameter>", r, prefix)
		}
	}
	if !slices.Contains(st[0].Resource, prefix+"documents/*/source-recordings") {
		t.Errorf("no resource for the source recordings route: the handler, not the gateway, answers its 403")
	}
	if resp.UsageIdentifierKey != usageplan.Value("acme", doclib.HashKey("dlk_demo_one_library")) {
		t.Errorf("usage identifier %q is not the key's usage plan value in acme's stack", resp.UsageIdentifierKey)
	}
	// The same key in another customer's stack stands for another API key:
	// API key values are unique in the account, which every stack shares.
	if usageplan.Value("globex", doclib.HashKey("dlk_demo_one_library")) == resp.UsageIdentifierKey {
		t.Error("two customers' stacks give a key the same usage identifier")
	}
	if resp.PrincipalID != "key_one_library" || resp.Context[apigw.CtxLibraries] != "lib_finance" ||
		resp.Context[apigw.CtxWorkspaceID] != "ws_acme" || resp.Context[apigw.CtxRecordingDetails] != true {
		t.Errorf("principal %s, context %v", resp.PrincipalID, resp.Context)
	}
	for k, v := range resp.Context {
		switch v.(type) {
		case string, bool:
		default:
			t.Errorf("context %s is a %T: API Gateway takes strings, numbers and booleans", k, v)
		}
	}
}

// failingStore is a store whose key lookups fail, as when DynamoDB is down.
type failingStore struct{ doclib.Store }

func (failingStore) APIKey(context.Context, doclib.KeyHash) (*doclib.APIKey, error) {
	return nil, doclib.Unavailable(errors.New("dynamo: connection refused"))
}

func TestAuthorizerFailuresAreErrorsNotDenials(t *testing.T) {
	w := newWorld(t)
	a := &apigw.Authorizer{Service: service.New(failingStore{memory.New(w.data)}, nil), Logger: w.authorizer.Logger}
	s := samples(w.data)[0]
	resp, err := a.Handle(context.Background(), authorizerEvent(s, headersOf("dlk_demo_full_scope")))
	if err == nil {
		t.Fatalf("a failed lookup was answered %+v; it must be an error, so that API Gateway caches nothing", resp)
	}
	ev := authorizerEvent(s, headersOf("dlk_demo_full_scope"))
	ev.MethodArn = "not-an-arn"
	if _, err := w.authorizer.Handle(context.Background(), ev); err == nil {
		t.Error("a malformed method ARN was accepted")
	}
}

func TestPrincipalFromTheAuthorizerContext(t *testing.T) {
	auth := apigw.Principal(func() time.Time { return now }, "")
	request := func(authz map[string]any) (*doclib.Principal, error) {
		r := httptest.NewRequest("GET", "/libraries", nil)
		if authz != nil {
			adapterReq, err := (&core.RequestAccessor{}).EventToRequestWithContext(context.Background(),
				events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/libraries",
					RequestContext: events.APIGatewayProxyRequestContext{Authorizer: authz}})
			if err != nil {
				t.Fatal(err)
			}
			r = adapterReq
		}
		return auth(r)
	}
	base := map[string]any{apigw.CtxKeyID: "key_1", apigw.CtxWorkspaceID: "ws_a", apigw.CtxPlan: "team",
		apigw.CtxLibraries: "lib_a,lib_b", apigw.CtxRecordingDetails: "true", apigw.CtxSuspended: "false",
		apigw.CtxOwnProviderKey: "true", apigw.CtxExpiresAt: "0"}
	p, err := request(base)
	if err != nil || p.KeyID != "key_1" || p.AllLibraries || !p.Libraries["lib_a"] || !p.Libraries["lib_b"] || len(p.Libraries) != 2 ||
		!p.RecordingDetails || p.Suspended || !p.OwnProviderKey || p.Plan != doclib.Plan("team") || !p.ExpiresAt.IsZero() {
		t.Fatalf("principal %+v, %v", p, err)
	}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	if p, _ := request(with(apigw.CtxLibraries, "*")); p == nil || !p.AllLibraries {
		t.Errorf("* is every library: %+v", p)
	}
	if p, _ := request(with(apigw.CtxLibraries, "")); p == nil || p.AllLibraries || len(p.Libraries) != 0 {
		t.Errorf("an empty scope sees nothing: %+v", p)
	}
	future := now.Add(time.Hour).Unix()
	if p, err := request(with(apigw.CtxExpiresAt, float64(future))); err != nil || p.ExpiresAt.Unix() != future {
		t.Errorf("a key valid for an hour: %+v %v", p, err)
	}
	// The authorizer's answer is cached: a key that expired since is refused here.
	if _, err := request(with(apigw.CtxExpiresAt, "1767225600")); doclib.ErrorCode(err) != doclib.EKeyExpired {
		t.Errorf("a key past its expiry: %v", err)
	}
	for name, authz := range map[string]map[string]any{"no context": nil, "no key": with(apigw.CtxKeyID, ""), "no workspace": with(apigw.CtxWorkspaceID, "")} {
		if _, err := request(authz); doclib.ErrorCode(err) != doclib.EUnauthorised {
			t.Errorf("%s: %v, want 401 unauthorised", name, err)
		}
	}
}

// goneWorkspaceStore is the demo data after a key's workspace was deleted.
type goneWorkspaceStore struct{ doclib.Store }

func (goneWorkspaceStore) Workspace(context.Context, string) (*doclib.Workspace, error) {
	return nil, doclib.ErrNotFound
}

// TestAuthorizerDeniesAKeyOfAMissingWorkspace: such a key can never work. It
// gets a Deny (401 unauthorised, cached by API Gateway), not an error
// (AUTHORIZER_FAILURE, a 503 retried and alarmed on at every request), and the
// cause is logged.
func TestAuthorizerDeniesAKeyOfAMissingWorkspace(t *testing.T) {
	w := newWorld(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	a := &apigw.Authorizer{Service: service.New(goneWorkspaceStore{memory.New(w.data)}, func() time.Time { return now }, service.WithLogger(log)), Logger: log}
	ev := authorizerEvent(samples(w.data)[0], headersOf("dlk_demo_full_scope"))
	resp, err := a.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("an error, which API Gateway answers with AUTHORIZER_FAILURE and never caches: %v", err)
	}
	st := resp.PolicyDocument.Statement
	if len(st) != 1 || st[0].Effect != "Deny" || resp.Context[apigw.CtxCode] != doclib.EUnauthorised || resp.Context[apigw.CtxMessage] == "" || resp.UsageIdentifierKey != "" {
		t.Fatalf("answer %+v, want a Deny with code unauthorised", resp)
	}
	if !strings.Contains(logs.String(), `"workspace_id":"ws_acme"`) || !strings.Contains(logs.String(), `"key_id":"key_full"`) {
		t.Errorf("the cause is not logged:\n%s", logs.String())
	}
	// The service's line and the authorizer's both carry API Gateway's request ID.
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	want := `"request_id":"` + ev.RequestContext.RequestID + `"`
	for _, l := range lines {
		if strings.Count(l, want) != 1 {
			t.Errorf("log line without %s once: %s", want, l)
		}
	}
	if len(lines) != 2 {
		t.Errorf("%d log lines, want the service's and the authorizer's:\n%s", len(lines), logs.String())
	}
}

// TestHandlerKeepsAReserveBeforeTheDeadline: the request's context ends
// DeadlineReserve before the function's, so a slow dependency fails the
// request while the function can still answer (503) and refund a search.
func TestHandlerKeepsAReserveBeforeTheDeadline(t *testing.T) {
	fnDeadline := time.Now().Add(10 * time.Second)
	var got time.Time
	h := apigw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = r.Context().Deadline()
		<-r.Context().Done()
		err := r.Context().Err()
		w.WriteHeader(map[bool]int{true: http.StatusServiceUnavailable, false: http.StatusOK}[doclib.ErrorCode(err) == doclib.EUnavailable])
	}))
	ctx, cancel := context.WithDeadline(context.Background(), fnDeadline)
	defer cancel()
	// A deadline already inside the reserve ends the request at once.
	ctx2, cancel2 := context.WithDeadline(ctx, time.Now().Add(apigw.DeadlineReserve/2))
	defer cancel2()
	resp, err := h(ctx2, events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/libraries"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503 for a request out of time", resp.StatusCode)
	}
	if want := time.Now().Add(-apigw.DeadlineReserve / 2); got.After(want.Add(time.Second)) {
		t.Errorf("request deadline %v, want before the function's by %v", got, apigw.DeadlineReserve)
	}
}
