package restapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// funcs are the test's Lambda functions, called with the gateway's events.
type funcs struct {
	mu      sync.Mutex
	calls   map[string]int
	events  map[string][]byte
	handler map[string]func(payload []byte) ([]byte, string, error)
	// streams answer STREAM integrations: they write the response and
	// close w, with an error for a failed invocation.
	streams map[string]func(payload []byte, w *io.PipeWriter)
}

func (f *funcs) Invoke(ctx context.Context, fn string, payload []byte) ([]byte, string, error) {
	f.mu.Lock()
	f.calls[fn]++
	f.events[fn] = payload
	h := f.handler[fn]
	f.mu.Unlock()
	return h(payload)
}

// InvokeStream streams what the function's stream handler writes.
func (f *funcs) InvokeStream(ctx context.Context, fn string, payload []byte) (io.ReadCloser, error) {
	f.mu.Lock()
	f.calls[fn]++
	f.events[fn] = payload
	h := f.streams[fn]
	f.mu.Unlock()
	r, w := io.Pipe()
	go h(payload, w)
	return r, nil
}

type keys map[string]Key

func (k keys) LookupKey(v string) (Key, bool) { key, ok := k[v]; return key, ok }

// authorizer allows "Bearer good" (usage key "uk-good") and denies the rest
// with a code in its context.
func authorizer(payload []byte) ([]byte, string, error) {
	var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
	_ = json.Unmarshal(payload, &ev)
	apiArn := ev.MethodArn[:strings.Index(ev.MethodArn, "/")]
	if ev.Headers["Authorization"] == "Bearer boom" {
		return []byte(`{"errorMessage":"table unreachable","errorType":"Error"}`), "Unhandled", nil
	}
	effect, ctx, usage := "Deny", map[string]any{"code": "unauthorised", "message": "bad key"}, ""
	if ev.Headers["Authorization"] == "Bearer good" {
		effect, ctx, usage = "Allow", map[string]any{"keyId": "key_1", "recordingDetails": true, "n": 3}, "uk-good"
	}
	out, _ := json.Marshal(events.APIGatewayCustomAuthorizerResponse{PrincipalID: "p",
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{Version: "2012-10-17", Statement: []events.IAMPolicyStatement{
			{Action: []string{"execute-api:Invoke"}, Effect: effect, Resource: []string{apiArn + "/*/GET/items/*", apiArn + "/*/GET/items", apiArn + "/*/POST/items"}}}},
		Context: ctx, UsageIdentifierKey: usage})
	return out, "", nil
}

func testAPI() API {
	integ := Integration{Type: "AWS_PROXY", Function: "items"}
	m := Method{AuthorizationType: "CUSTOM", AuthorizerID: "auth", APIKeyRequired: true, Integration: integ}
	return API{ID: "abc123", Stage: "api", Region: "us-east-1", Account: "123456789012", APIKeySource: "AUTHORIZER",
		Resources: []Resource{
			{Path: "/items", Methods: map[string]Method{"ANY": m}},
			{Path: "/items/{id}", Methods: map[string]Method{"ANY": m}},
			{Path: "/items/latest", Methods: map[string]Method{"GET": m}},
		},
		Authorizers: map[string]Authorizer{"auth": {Type: "REQUEST", Function: "authz",
			IdentitySources: []string{"method.request.header.Authorization"}, TTL: time.Minute}},
		GatewayResponses: map[string]GatewayResponse{
			"ACCESS_DENIED": {Status: 401, Parameters: map[string]string{"gatewayresponse.header.X-Request-Id": "context.requestId"},
				Templates: map[string]string{"application/json": `{"error":{"code":"$context.authorizer.code","message":"$context.authorizer.message"}}`}},
			"THROTTLED": {Parameters: map[string]string{"gatewayresponse.header.Retry-After": "'1'"},
				Templates: map[string]string{"application/json": `{"error":{"code":"rate_limited"}}`}},
			"DEFAULT_4XX": {Templates: map[string]string{"application/json": `{"error":{"code":"other","message":$context.error.messageString}}`}},
		},
		UsagePlans:             []UsagePlan{{ID: "plan1", Throttle: Throttle{Rate: 1, Burst: 3}, Stages: []string{"api"}}},
		WAF:                    []RateRule{{Name: "per-ip", Limit: 20, Window: time.Minute, AggregateKey: "IP"}},
		MinimumCompressionSize: 100,
	}
}

func newGateway(t *testing.T, api API, now *time.Time) (*httptest.Server, *funcs) {
	t.Helper()
	f := &funcs{calls: map[string]int{}, events: map[string][]byte{}, handler: map[string]func([]byte) ([]byte, string, error){
		"authz": authorizer,
		"items": func(payload []byte) ([]byte, string, error) {
			var ev events.APIGatewayProxyRequest
			_ = json.Unmarshal(payload, &ev)
			if ev.PathParameters["id"] == "crash" {
				return []byte(`{"errorMessage":"boom"}`), "Unhandled", nil
			}
			body := `{"id":"` + ev.PathParameters["id"] + `","pad":"` + strings.Repeat("x", 200) + `"}`
			out, _ := json.Marshal(events.APIGatewayProxyResponse{StatusCode: 200, Body: body,
				MultiValueHeaders: map[string][]string{"Content-Type": {"application/json"}}})
			return out, "", nil
		},
	}}
	opts := Options{}
	if now != nil {
		opts.Now = func() time.Time { return *now }
	}
	g, err := New(api, f, keys{"uk-good": {ID: "k1", Enabled: true, UsagePlans: []string{"plan1"}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv, f
}

func do(t *testing.T, url, auth string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req) // no transparent gunzip
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, _ := io.ReadAll(r)
	return resp, string(b)
}

func TestProxyEventCarriesRouteAuthorizerContextAndKey(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	srv, f := newGateway(t, testAPI(), &now)
	resp, body := do(t, srv.URL+"/items/it_1?tag=a&tag=b", "Bearer good")
	if resp.StatusCode != 200 || !strings.Contains(body, `"id":"it_1"`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(f.events["items"], &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Resource != "/items/{id}" || ev.Path != "/items/it_1" || ev.PathParameters["id"] != "it_1" ||
		strings.Join(ev.MultiValueQueryStringParameters["tag"], ",") != "a,b" || ev.QueryStringParameters["tag"] != "b" {
		t.Errorf("route of the event: %+v", ev)
	}
	rc := ev.RequestContext
	if rc.Stage != "api" || rc.Path != "/api/items/it_1" || rc.Identity.APIKeyID != "k1" || rc.Identity.SourceIP != "127.0.0.1" {
		t.Errorf("request context: %+v", rc)
	}
	if rc.Authorizer["keyId"] != "key_1" || rc.Authorizer["recordingDetails"] != "true" || rc.Authorizer["n"] != "3" || rc.Authorizer["principalId"] != "p" {
		t.Errorf("authorizer context (every value a string): %v", rc.Authorizer)
	}
	// A literal resource wins over {id}; GET only there.
	do(t, srv.URL+"/items/latest", "Bearer good")
	if err := json.Unmarshal(f.events["items"], &ev); err != nil || ev.Resource != "/items/latest" {
		t.Errorf("/items/latest matched %q", ev.Resource)
	}
	// The authorizer ran once: its answer is cached for the TTL, per header.
	if f.calls["authz"] != 1 {
		t.Errorf("authorizer called %d times, want 1 (cached)", f.calls["authz"])
	}
	now = now.Add(2 * time.Minute)
	do(t, srv.URL+"/items", "Bearer good")
	if f.calls["authz"] != 2 {
		t.Errorf("authorizer called %d times after the TTL, want 2", f.calls["authz"])
	}
}

func TestGatewayResponses(t *testing.T) {
	srv, f := newGateway(t, testAPI(), nil)
	cases := []struct {
		name, path, auth string
		status           int
		body             string
		header           string
	}{
		{"no resource", "/nope", "Bearer good", 403, `{"error":{"code":"other","message":"Missing Authentication Token"}}`, "X-Amzn-Errortype"},
		{"no identity source", "/items", "", 401, `{"error":{"code":"other","message":"Unauthorized"}}`, ""},
		{"deny with context", "/items", "Bearer bad", 401, `{"error":{"code":"unauthorised","message":"bad key"}}`, "X-Request-Id"},
		{"authorizer failure", "/items", "Bearer boom", 500, `{"message":null}`, ""},
		{"function failure", "/items/crash", "Bearer good", 502, `{"message":"Internal server error"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := do(t, srv.URL+c.path, c.auth)
			if resp.StatusCode != c.status || body != c.body {
				t.Errorf("%d %s, want %d %s", resp.StatusCode, body, c.status, c.body)
			}
			if c.header != "" && resp.Header.Get(c.header) == "" {
				t.Errorf("no %s header: %v", c.header, resp.Header)
			}
		})
	}
	if f.calls["authz"] != 3 { // bad, boom and good; none for the missing header or the unknown path
		t.Errorf("authorizer called %d times, want 3", f.calls["authz"])
	}
}

func TestUsagePlanThrottleWAFAndCompression(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	srv, _ := newGateway(t, testAPI(), &now)
	for i := 0; i < 3; i++ {
		if resp, body := do(t, srv.URL+"/items/a", "Bearer good"); resp.StatusCode != 200 {
			t.Fatalf("request %d within the burst: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := do(t, srv.URL+"/items/a", "Bearer good")
	if resp.StatusCode != 429 || body != `{"error":{"code":"rate_limited"}}` || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("past the burst: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	now = now.Add(time.Second) // one token back
	resp, body = do(t, srv.URL+"/items/a", "Bearer good", "Accept-Encoding", "gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(body, `"id":"a"`) {
		t.Fatalf("a second later, gzip accepted: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	// 5 requests so far from this IP; the rule blocks past 20 a minute.
	for i := 5; i < 20; i++ {
		do(t, srv.URL+"/items", "")
	}
	if resp, _ := do(t, srv.URL+"/items", ""); resp.StatusCode != 403 || resp.Header.Get("X-Amzn-Errortype") != "ForbiddenException" {
		t.Fatalf("request 21 from one IP: %d %v", resp.StatusCode, resp.Header)
	}
	now = now.Add(time.Minute)
	if resp, _ := do(t, srv.URL+"/items", ""); resp.StatusCode != 401 {
		t.Fatalf("a minute later: %d", resp.StatusCode)
	}
}

// Each method of the stage has a bucket of its own, as API Gateway throttles
// a stage's methods one by one: a method that used its burst is throttled,
// the others are not, and a setting for one method overrides the stage's
// setting for all of them.
func TestEachMethodHasItsOwnBucket(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	api := testAPI()
	api.UsagePlans[0].Throttle = Throttle{Rate: 1000, Burst: 1000}
	api.MethodSettings = []MethodSetting{
		{ResourcePath: "/*", HTTPMethod: "*", Throttle: Throttle{Rate: 1, Burst: 2}},
		{ResourcePath: "/items/{id}", HTTPMethod: "ANY", Throttle: Throttle{Rate: 1, Burst: 4}},
	}
	srv, _ := newGateway(t, api, &now)
	burst := func(path string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if resp, body := do(t, srv.URL+path, "Bearer good"); resp.StatusCode != 200 {
				t.Fatalf("%s request %d of a burst of %d: %d %s", path, i+1, n, resp.StatusCode, body)
			}
		}
		if resp, body := do(t, srv.URL+path, "Bearer good"); resp.StatusCode != 429 || body != `{"error":{"code":"rate_limited"}}` {
			t.Fatalf("%s past its burst of %d: %d %s", path, n, resp.StatusCode, body)
		}
	}
	burst("/items", 2)
	burst("/items/latest", 2) // GET /items/latest: another method, another bucket
	burst("/items/a", 4)      // its own setting
	if resp, _ := do(t, srv.URL+"/items/b", "Bearer good"); resp.StatusCode != 429 {
		t.Fatalf("/items/b shares /items/{id}'s bucket: %d", resp.StatusCode)
	}
	now = now.Add(time.Second)
	if resp, _ := do(t, srv.URL+"/items", "Bearer good"); resp.StatusCode != 200 {
		t.Fatalf("a second later, a token back: %d", resp.StatusCode)
	}
}

// A function's error, and an invocation Lambda refused, are both the
// INTEGRATION_FAILURE gateway response (not DEFAULT_5XX): 502 and 500 unless
// the response sets a status, which then applies to both.
func TestFunctionErrorsAreIntegrationFailures(t *testing.T) {
	for _, status := range []int{0, 503} {
		api := testAPI()
		api.Resources = append(api.Resources, Resource{Path: "/items/gone", Methods: map[string]Method{"ANY": {
			AuthorizationType: "CUSTOM", AuthorizerID: "auth", APIKeyRequired: true, Integration: Integration{Type: "AWS_PROXY", Function: "gone"}}}})
		api.GatewayResponses["INTEGRATION_FAILURE"] = GatewayResponse{Status: status,
			Templates: map[string]string{"application/json": `{"type":"$context.error.responseType","message":$context.error.messageString}`}}
		api.GatewayResponses["DEFAULT_5XX"] = GatewayResponse{Templates: map[string]string{"application/json": `{"type":"default"}`}}
		srv, f := newGateway(t, api, nil)
		f.handler["gone"] = func([]byte) ([]byte, string, error) {
			return nil, "", errors.New("ResourceNotFoundException: Function not found")
		}
		want := `{"type":"INTEGRATION_FAILURE","message":"Internal server error"}`
		for path, def := range map[string]int{"/items/crash": 502, "/items/gone": 500} {
			wantStatus := def
			if status != 0 {
				wantStatus = status
			}
			resp, body := do(t, srv.URL+path, "Bearer good")
			if resp.StatusCode != wantStatus || body != want || resp.Header.Get("X-Amzn-ErrorType") != "InternalServerErrorException" {
				t.Errorf("status %d set: %s: %d %s %v; want %d %s", status, path, resp.StatusCode, body, resp.Header.Get("X-Amzn-ErrorType"), wantStatus, want)
			}
		}
	}
}

func TestAPIKeyMustBeInAPlanOfTheStage(t *testing.T) {
	api := testAPI()
	api.UsagePlans[0].Stages = []string{"other"}
	srv, _ := newGateway(t, api, nil)
	if resp, body := do(t, srv.URL+"/items", "Bearer good"); resp.StatusCode != 403 || !strings.Contains(body, "Forbidden") {
		t.Fatalf("key in no plan of the stage: %d %s", resp.StatusCode, body)
	}
}

func TestNewRefusesWhatItDoesNotEmulate(t *testing.T) {
	for name, change := range map[string]func(*API){
		"TOKEN authorizer": func(a *API) { a.Authorizers["auth"] = Authorizer{Type: "TOKEN"} },
		"HTTP integration": func(a *API) { a.Resources[0].Methods["ANY"] = Method{Integration: Integration{Type: "HTTP_PROXY"}} },
		"VTL directive": func(a *API) {
			a.GatewayResponses["THROTTLED"] = GatewayResponse{Templates: map[string]string{"application/json": "#if($x)a#end"}}
		},
		"WAF key": func(a *API) { a.WAF[0].AggregateKey = "FORWARDED_IP" },
	} {
		api := testAPI()
		change(&api)
		if _, err := New(api, nil, nil, Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// streamAPI is testAPI with its integration in STREAM mode.
func streamAPI() API {
	api := testAPI()
	api.UsagePlans[0].Throttle = Throttle{Rate: 1000, Burst: 1000}
	for i := range api.Resources {
		for m, meth := range api.Resources[i].Methods {
			meth.Integration.TransferMode = TransferStream
			api.Resources[i].Methods[m] = meth
		}
	}
	return api
}

// streamer is a function that answers in API Gateway's streaming format by
// its path's id: "big" (12 MB), "cut" (fails after its prelude and 1 MB),
// "early" (fails before its prelude), "plain" (no prelude at all), "slow"
// (no prelude for 2 s).
func streamer(payload []byte, w *io.PipeWriter) {
	var ev events.APIGatewayProxyRequest
	_ = json.Unmarshal(payload, &ev)
	write := func(b []byte) { _, _ = w.Write(b) }
	prelude := func() {
		write([]byte(`{"statusCode":201,"headers":{"Content-Type":"text/plain","Content-Length":"99"},"multiValueHeaders":{"X-Two":["a","b"]}}`))
		write(make([]byte, 8))
	}
	switch ev.PathParameters["id"] {
	case "big":
		prelude()
		for range 12 {
			write(bytes.Repeat([]byte("x"), 1<<20))
		}
		w.Close()
	case "cut":
		prelude()
		write(bytes.Repeat([]byte("x"), 1<<20))
		w.CloseWithError(errors.New("Function.ResponseSizeTooLarge"))
	case "early":
		w.CloseWithError(errors.New("Unhandled: boom"))
	case "plain":
		write([]byte(`{"statusCode":200,"body":"buffered, not streamed"}`))
		w.Close()
	case "slow":
		time.Sleep(2 * time.Second)
		prelude()
		w.Close()
	case "stall":
		prelude()
		write(bytes.Repeat([]byte("x"), 1<<20))
		time.Sleep(3 * time.Second)
		write(bytes.Repeat([]byte("x"), 1<<20))
		w.Close()
	}
}

// TestStreamTimeoutCoversTheWholeResponse: a STREAM integration's timeout
// bounds the whole response, not only its prelude, as API Gateway documents
// it (the time to complete the response). A 12 MiB answer that the
// gateway's bandwidth cap spreads over 40 s of the gateway's clock arrives
// whole when the integration's timeout is 61 s, and is cut after its status
// with API Gateway's default of 29 s. The clock runs ahead as the gateway
// paces, so neither case waits 40 s.
func TestStreamTimeoutCoversTheWholeResponse(t *testing.T) {
	const size = 12 << 20
	get := func(t *testing.T, timeout time.Duration, id string, opts Options) (*http.Response, []byte, error) {
		t.Helper()
		api := streamAPI()
		for i := range api.Resources {
			for m, meth := range api.Resources[i].Methods {
				meth.Integration.Timeout = timeout
				api.Resources[i].Methods[m] = meth
			}
		}
		f := &funcs{calls: map[string]int{}, events: map[string][]byte{},
			handler: map[string]func([]byte) ([]byte, string, error){"authz": authorizer},
			streams: map[string]func([]byte, *io.PipeWriter){"items": streamer}}
		g, err := New(api, f, keys{"uk-good": {ID: "k1", Enabled: true, UsagePlans: []string{"plan1"}}}, opts)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(g)
		t.Cleanup(srv.Close)
		return getAll(t, srv.URL+"/items/"+id)
	}
	paced := func(clock *AheadClock) Options {
		// Past its first MiB, the answer leaves at 11 MiB in 40 s.
		return Options{Now: clock.Now, Sleep: clock.Sleep, StreamBurst: 1 << 20, StreamRate: float64(size-1<<20) / 40}
	}
	t.Run("61 s: whole", func(t *testing.T) {
		clock := &AheadClock{}
		start := clock.Now()
		resp, body, err := get(t, 61*time.Second, "big", paced(clock))
		if resp.StatusCode != 201 || err != nil || len(body) != size {
			t.Errorf("%d, %d bytes, read error %v; want 201 and all %d bytes", resp.StatusCode, len(body), err, size)
		}
		// The gateway's time: what it slept pacing, and the real time the
		// rest took; the pacing alone makes it all but 40 s.
		if took := clock.Now().Sub(start); took < 39*time.Second {
			t.Errorf("the stream took %s of the gateway's time; the test means one longer than 29 s", took)
		}
	})
	t.Run("29 s: cut", func(t *testing.T) {
		clock := &AheadClock{}
		resp, body, err := get(t, 0, "big", paced(clock))
		if resp.StatusCode != 201 || err == nil || len(body) >= size || len(body) < 1<<20 {
			t.Errorf("%d, %d bytes, read error %v; want 201 and a body cut after its first MiB, with an error", resp.StatusCode, len(body), err)
		}
	})
	t.Run("a stall past the timeout", func(t *testing.T) {
		// Real time: the function stops for 3 s after 1 MiB; a 1 s timeout
		// ends the stream there instead of at the 5-minute idle timeout.
		resp, body, err := get(t, time.Second, "stall", Options{})
		if resp.StatusCode != 201 || err == nil || len(body) != 1<<20 {
			t.Errorf("%d, %d bytes, read error %v; want 201, the first MiB and an error", resp.StatusCode, len(body), err)
		}
	})
}

// TestIntegrationTimeoutsAPIGatewayRefuses: a timeout under 50 ms, over 29 s
// for a buffered integration, or over 15 minutes for a streamed one, is
// refused as API Gateway refuses it; 15 minutes streamed is taken.
func TestIntegrationTimeoutsAPIGatewayRefuses(t *testing.T) {
	for _, c := range []struct {
		mode    string
		timeout time.Duration
		ok      bool
	}{
		{TransferBuffered, 29 * time.Second, true},
		{TransferBuffered, 30 * time.Second, false},
		{TransferStream, 61 * time.Second, true},
		{TransferStream, 15 * time.Minute, true},
		{TransferStream, 15*time.Minute + time.Millisecond, false},
		{TransferStream, 10 * time.Millisecond, false},
	} {
		api := testAPI()
		api.Resources[0].Methods["ANY"] = Method{Integration: Integration{Type: "AWS_PROXY", Function: "items", TransferMode: c.mode, Timeout: c.timeout}}
		if _, err := New(api, nil, nil, Options{}); (err == nil) != c.ok {
			t.Errorf("%s integration, timeout %s: error %v, want accepted %v", c.mode, c.timeout, err, c.ok)
		}
	}
}

func TestStreamIntegration(t *testing.T) {
	api := streamAPI()
	f := &funcs{calls: map[string]int{}, events: map[string][]byte{},
		handler: map[string]func([]byte) ([]byte, string, error){"authz": authorizer},
		streams: map[string]func([]byte, *io.PipeWriter){"items": streamer}}
	g, err := New(api, f, keys{"uk-good": {ID: "k1", Enabled: true, UsagePlans: []string{"plan1"}}},
		Options{IntegrationTimeout: time.Second, StreamRate: 1e12})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	get := func(id string, hdr ...string) (*http.Response, []byte, error) {
		return getAll(t, srv.URL+"/items/"+id, hdr...)
	}

	// Past the buffered 10 MB, whole, with the prelude's status and headers;
	// not compressed by the gateway (content encoding is not offered for a
	// stream), and without a length: the gateway frames it.
	resp, body, err := get("big", "Accept-Encoding", "gzip")
	if err != nil || resp.StatusCode != 201 || len(body) != 12<<20 {
		t.Fatalf("big: %v, %d, %d bytes", err, resp.StatusCode, len(body))
	}
	if resp.Header.Get("Content-Encoding") != "" || resp.ContentLength != -1 || resp.Header.Get("Content-Type") != "text/plain" ||
		strings.Join(resp.Header.Values("X-Two"), ",") != "a,b" {
		t.Errorf("big: headers %v, length %d", resp.Header, resp.ContentLength)
	}
	// A stream that fails after its status: the body ends early, as an error.
	resp, body, err = get("cut")
	if resp.StatusCode != 201 || err == nil || len(body) >= 2<<20 {
		t.Errorf("cut: %d, %d bytes, read error %v; want 201 and a body cut short with an error", resp.StatusCode, len(body), err)
	}
	// Failures before the status are the buffered integration's.
	for _, c := range []struct {
		id     string
		status int
		body   string
	}{
		{"early", 502, `{"message":"Internal server error"}`},
		{"plain", 502, `{"message":"Internal server error"}`},
		{"slow", 504, `{"message":"Endpoint request timed out"}`},
	} {
		resp, body, err := get(c.id)
		if err != nil || resp.StatusCode != c.status || string(body) != c.body {
			t.Errorf("%s: %d %s (%v), want %d %s", c.id, resp.StatusCode, body, err, c.status, c.body)
		}
	}
}

// getAll GETs url with a good key and the headers given (name, value, ...)
// and reads the whole body, as sent: the read's error is the body's.
func getAll(t *testing.T, url string, hdr ...string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer good")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestStreamBandwidth(t *testing.T) {
	// 12 MB at a cap of 4 MB/s past the gateway's 10 MB: at least half a
	// second.
	api := streamAPI()
	f := &funcs{calls: map[string]int{}, events: map[string][]byte{},
		handler: map[string]func([]byte) ([]byte, string, error){"authz": authorizer},
		streams: map[string]func([]byte, *io.PipeWriter){"items": streamer}}
	g, err := New(api, f, keys{"uk-good": {ID: "k1", Enabled: true, UsagePlans: []string{"plan1"}}}, Options{StreamRate: 4_000_000})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	start := time.Now()
	resp, body := do(t, srv.URL+"/items/big", "Bearer good")
	if resp.StatusCode != 201 || len(body) != 12<<20 {
		t.Fatalf("%d, %d bytes", resp.StatusCode, len(body))
	}
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Errorf("12 MiB in %s: past 10 MiB the gateway sends at most 4 MB/s here", took)
	}
}

func TestRequestQuotas(t *testing.T) {
	srv, f := newGateway(t, testAPI(), nil)
	// A method ARN over 1,600 bytes: 414 before the authorizer runs.
	resp, body := do(t, srv.URL+"/items/"+strings.Repeat("a", 1600), "Bearer good")
	if resp.StatusCode != http.StatusRequestURITooLong || body != `{"message":"Request-URI Too Long"}` || f.calls["authz"] != 0 {
		t.Errorf("long method ARN: %d %s (authorizer called %d times)", resp.StatusCode, body, f.calls["authz"])
	}
	// A URL over 10,240 characters.
	resp, _ = do(t, srv.URL+"/items?q="+strings.Repeat("a", MaxURLLength), "Bearer good")
	if resp.StatusCode != http.StatusRequestURITooLong {
		t.Errorf("long URL: %d", resp.StatusCode)
	}
	// A body over 10 MB: REQUEST_TOO_LARGE (413 unless the API sets another).
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/items", bytes.NewReader(make([]byte, MaxPayload+1)))
	req.Header.Set("Authorization", "Bearer good")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("11 MB body: %d, want 413", r.StatusCode)
	}
	// At the limits, the request goes through.
	if resp, body := do(t, srv.URL+"/items/"+strings.Repeat("a", 1000), "Bearer good"); resp.StatusCode != 200 {
		t.Errorf("a long but allowed path: %d %s", resp.StatusCode, body)
	}
}

// TestRequestBodies: a proxy integration gets the request's body as API
// Gateway passes it on: as text unless its type is one of the API's binary
// media types, then base64 with isBase64Encoded; a body of 10 MB passes
// whole, one byte more is REQUEST_TOO_LARGE (TestRequestQuotas).
func TestRequestBodies(t *testing.T) {
	post := func(t *testing.T, binary []string, ctype string, body []byte) events.APIGatewayProxyRequest {
		t.Helper()
		api := testAPI()
		api.BinaryMediaTypes = binary
		srv, f := newGateway(t, api, nil)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/items", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer good")
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST /items (%s, %d bytes): %d", ctype, len(body), resp.StatusCode)
		}
		var ev events.APIGatewayProxyRequest
		if err := json.Unmarshal(f.events["items"], &ev); err != nil {
			t.Fatal(err)
		}
		if ev.HTTPMethod != http.MethodPost || ev.RequestContext.HTTPMethod != http.MethodPost {
			t.Errorf("method %s (context %s), want POST", ev.HTTPMethod, ev.RequestContext.HTTPMethod)
		}
		return ev
	}
	const message = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"<script> drop table"}}}`
	for _, c := range []struct {
		name   string
		binary []string
		ctype  string
		body   string
		base64 bool
	}{
		// No binary media types, as the stack declares none: every body is
		// text, whatever its type says.
		{"JSON", nil, "application/json", message, false},
		{"JSON with a charset", nil, "application/json; charset=utf-8", message, false},
		{"octet-stream, no binary types", nil, "application/octet-stream", "plain bytes", false},
		{"no type", nil, "", message, false},
		{"a binary type", []string{"application/octet-stream"}, "application/octet-stream", "plain bytes", true},
		{"a wildcard subtype", []string{"image/*"}, "image/png", "png bytes", true},
		{"every type binary", []string{"*/*"}, "application/json", message, true},
		{"JSON beside a binary type", []string{"image/png"}, "application/json", message, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := post(t, c.binary, c.ctype, []byte(c.body))
			want := c.body
			if c.base64 {
				want = base64.StdEncoding.EncodeToString([]byte(c.body))
			}
			if ev.IsBase64Encoded != c.base64 || ev.Body != want {
				t.Errorf("body %q (isBase64Encoded %v), want %q (%v)", ev.Body, ev.IsBase64Encoded, want, c.base64)
			}
		})
	}
	t.Run("10 MB", func(t *testing.T) {
		body := bytes.Repeat([]byte("a"), MaxPayload)
		if ev := post(t, nil, "text/plain", body); len(ev.Body) != MaxPayload || ev.IsBase64Encoded {
			t.Errorf("a body of exactly 10 MB arrived as %d bytes (base64 %v)", len(ev.Body), ev.IsBase64Encoded)
		}
	})
}

// TestIntegrationTimeout: a buffered function slower than the integration
// timeout (29 s on AWS; 1 s here) gets API Gateway's 504, whatever the
// function answers later.
func TestIntegrationTimeout(t *testing.T) {
	api := testAPI()
	f := &funcs{calls: map[string]int{}, events: map[string][]byte{}, handler: map[string]func([]byte) ([]byte, string, error){
		"authz": authorizer,
		"items": func([]byte) ([]byte, string, error) {
			time.Sleep(1500 * time.Millisecond)
			out, _ := json.Marshal(events.APIGatewayProxyResponse{StatusCode: 200, Body: "late"})
			return out, "", nil
		},
	}}
	g, err := New(api, f, keys{"uk-good": {ID: "k1", Enabled: true, UsagePlans: []string{"plan1"}}}, Options{IntegrationTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	resp, body := do(t, srv.URL+"/items/a", "Bearer good")
	if resp.StatusCode != 504 || body != `{"message":"Endpoint request timed out"}` || resp.Header.Get("X-Amzn-Errortype") != "IntegrationTimeoutException" {
		t.Errorf("%d %s %v, want 504 Endpoint request timed out", resp.StatusCode, body, resp.Header)
	}
}

// TestGatewayCompressesByAWSRule: API Gateway compresses only for an
// Accept-Encoding that names a coding it supports, and only when the
// highest-priority coding is one it supports; a tie with a coding it does
// not support gets none (see gatewayCoding). The first cases are the
// headers AWS's guide lists as supported.
func TestGatewayCompressesByAWSRule(t *testing.T) {
	for _, c := range []struct{ accept, want string }{
		{"deflate,gzip", "deflate"},
		{"", ""},
		{"*", ""},
		{"deflate;q=0.5,gzip;q=1.0", "gzip"},
		{"gzip;q=1.0,identity;q=0.5,*;q=0", "gzip"},
		{"gzip", "gzip"},
		{"GZip", "gzip"},
		{"zstd, gzip", ""}, // zstd may be the highest priority
		{"gzip, zstd", ""},
		{"gzip, zstd;q=0.9", "gzip"},
		{"br;q=1.0, gzip;q=0.8", ""},
		{"gzip, identity", ""},
		{"identity", ""},
		{"x-gzip", ""},
		{"gzip;q=0", ""},
		{"gzip;q=2", ""},
		{"gzip;q=1.5", ""},
		{"gzip;q=0.5, zstd;q=Inf", ""},
	} {
		if got := gatewayCoding([]string{c.accept}); got != c.want {
			t.Errorf("Accept-Encoding %q: %q, want %q", c.accept, got, c.want)
		}
	}
	if got := gatewayCoding([]string{"zstd;q=0.5", "gzip"}); got != "gzip" {
		t.Errorf("two header lines, gzip first by q-value: %q", got)
	}

	// Through the gateway: the body in the coding, its ETag as the
	// integration sent it (API Gateway documents nothing else).
	api := testAPI()
	f := &funcs{calls: map[string]int{}, events: map[string][]byte{}, handler: map[string]func([]byte) ([]byte, string, error){
		"authz": authorizer,
		"items": func([]byte) ([]byte, string, error) {
			out, _ := json.Marshal(events.APIGatewayProxyResponse{StatusCode: 200, Body: strings.Repeat("doclib ", 100),
				Headers: map[string]string{"ETag": `W/"abc"`}})
			return out, "", nil
		},
	}}
	g, err := New(api, f, keys{"uk-good": {ID: "k1", Enabled: true, UsagePlans: []string{"plan1"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	for _, c := range []struct {
		accept, coding string
		decode         func(io.Reader) (io.Reader, error)
	}{
		{"gzip, zstd;q=0.5", "gzip", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
		{"deflate", "deflate", func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }},
		{"zstd, gzip", "", func(r io.Reader) (io.Reader, error) { return r, nil }},
	} {
		resp, body, err := getAll(t, srv.URL+"/items/a", "Accept-Encoding", c.accept)
		var plain []byte
		if err == nil {
			var r io.Reader
			if r, err = c.decode(bytes.NewReader(body)); err == nil {
				plain, err = io.ReadAll(r)
			}
		}
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != c.coding || err != nil ||
			string(plain) != strings.Repeat("doclib ", 100) || resp.Header.Get("ETag") != `W/"abc"` {
			t.Errorf("Accept-Encoding %q: %d, Content-Encoding %q, ETag %q, %v; want %q and the body", c.accept, resp.StatusCode,
				resp.Header.Get("Content-Encoding"), resp.Header.Get("ETag"), err, c.coding)
		}
	}
}
