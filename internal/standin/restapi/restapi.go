// Package restapi serves an Amazon API Gateway REST API stage as API Gateway
// does, from its settings as a CloudFormation template declares them: the
// resources and methods, a REQUEST Lambda authorizer with its identity
// sources and result cache, API keys taken from the authorizer
// (ApiKeySourceType AUTHORIZER) and checked against usage plans, usage-plan
// and stage throttling and quotas, WAF rate-based rules, Lambda proxy
// integrations, gateway responses and response compression.
//
// It is the gateway half of the stand-in (internal/standin); the Lambda half
// is behind Invoker. What it follows, and what it leaves out, is written in
// docs/standin.md. The order of the checks is API Gateway's: WAF, the
// resource and method, the authorizer, the API key, the usage plan's quota
// and throttle, the method's throttle, then the integration.
package restapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// API is one deployed stage of a REST API.
type API struct {
	ID, Stage, Region, Account string
	Resources                  []Resource
	// Authorizers by ID (the value a method's AuthorizerId resolves to).
	Authorizers map[string]Authorizer
	// GatewayResponses by response type (UNAUTHORIZED, THROTTLED, ...,
	// DEFAULT_4XX, DEFAULT_5XX).
	GatewayResponses map[string]GatewayResponse
	// APIKeySource is HEADER (x-api-key) or AUTHORIZER (the authorizer's
	// usageIdentifierKey).
	APIKeySource string
	// MethodSettings are the stage's method throttles, as the stage's
	// MethodSettings declare them: each applies to every method it names
	// (ResourcePath "/*" and HttpMethod "*" name them all), and each method
	// has a bucket of its own. A stage has no bucket for all its methods
	// together ("Throttle requests to your REST APIs for better throughput
	// in API Gateway": per-API, per-stage limits "are applied at the API
	// method level").
	MethodSettings []MethodSetting
	UsagePlans     []UsagePlan
	// WAF are the rate-based rules of the web ACL associated with the stage.
	WAF []RateRule
	// MinimumCompressionSize is the smallest body, in bytes, that is
	// gzipped for a client accepting gzip; -1 turns compression off.
	MinimumCompressionSize int
	// BinaryMediaTypes are the content types whose request bodies a proxy
	// integration gets base64-encoded (isBase64Encoded true): "image/png",
	// "image/*", "*/*". Every other body, whatever its type, is passed as
	// text ("Binary media types for REST APIs in API Gateway").
	BinaryMediaTypes []string
}

// Resource is a path of the API (with {param} and {param+} parts) and its
// methods by HTTP method; "ANY" matches every method.
type Resource struct {
	Path    string
	Methods map[string]Method
}

// Method is one method of a resource.
type Method struct {
	AuthorizationType string // NONE or CUSTOM
	AuthorizerID      string
	APIKeyRequired    bool
	Integration       Integration
}

// Integration is a Lambda proxy integration (AWS_PROXY).
type Integration struct {
	Type     string
	Function string // the function's name
	// TransferMode is the integration's ResponseTransferMode: BUFFERED (the
	// default; Lambda's Invoke) or STREAM (InvokeWithResponseStream, whose
	// URI is .../2021-11-15/functions/<arn>/response-streaming-invocations).
	TransferMode string
	// Timeout is the integration's TimeoutInMillis; 0 is API Gateway's
	// default (Options.IntegrationTimeout). It is the time the whole
	// response may take, a streamed one's last byte included: API Gateway
	// documents it as the time to complete the response, and streaming is
	// what lets it pass 29 s, up to StreamMaxDuration ("Stream the
	// integration response for your proxy integrations in API Gateway").
	Timeout time.Duration
}

// Transfer modes of an integration's response.
const (
	TransferBuffered = "BUFFERED"
	TransferStream   = "STREAM"
)

// Authorizer is a Lambda authorizer.
type Authorizer struct {
	Type     string // REQUEST (TOKEN is not emulated)
	Function string
	// IdentitySources are method.request.header.X or
	// method.request.querystring.X; when TTL > 0 a request missing one is
	// refused (401) without calling the authorizer.
	IdentitySources []string
	TTL             time.Duration
}

// GatewayResponse is a customised gateway response. Status 0 keeps the
// response type's own status.
type GatewayResponse struct {
	Status     int
	Parameters map[string]string // gatewayresponse.header.<Name> -> 'literal' or context.<var>, method.request.header.<Name>, ...
	Templates  map[string]string // content type -> mapping template
}

// Throttle is a token bucket: Rate requests per second, Burst at most.
type Throttle struct {
	Rate  float64
	Burst int
}

// MethodSetting is one of a stage's MethodSettings: the methods it names
// and their throttle. ResourcePath is the resource's path as API Gateway
// writes it (/items/{id}), or "/*"; HTTPMethod a method as declared (GET,
// ANY), or "*".
type MethodSetting struct {
	ResourcePath string
	HTTPMethod   string
	Throttle     Throttle
}

// Quota is a number of requests per DAY, WEEK or MONTH.
type Quota struct {
	Limit  int
	Period string
}

// UsagePlan is a usage plan and the stages it applies to.
type UsagePlan struct {
	ID       string
	Throttle Throttle
	Quota    Quota
	Stages   []string
}

// RateRule is a WAF rate-based rule with a Block action.
type RateRule struct {
	Name         string
	Limit        int
	Window       time.Duration
	AggregateKey string // IP
}

// Invoker invokes a Lambda function as API Gateway does (Invoke,
// RequestResponse). err is an invocation that did not run the function
// (Lambda refused it: no permission, no such function); functionError is
// the function's own failure (X-Amz-Function-Error), with payload its error
// document.
//
// InvokeStream invokes as API Gateway does for a STREAM integration
// (InvokeWithResponseStream): the reader yields the function's response as
// it comes, and a read error other than io.EOF is the invocation failing
// (its error, a timeout, a response over Lambda's size) after whatever came
// before it.
type Invoker interface {
	Invoke(ctx context.Context, function string, payload []byte) (payload_ []byte, functionError string, err error)
	InvokeStream(ctx context.Context, function string, payload []byte) (io.ReadCloser, error)
}

// APIKeys looks API keys up by value, as API Gateway's key store does.
type APIKeys interface {
	LookupKey(value string) (Key, bool)
}

// Key is an API key: its ID, whether it is enabled, and the usage plans
// it is in.
type Key struct {
	ID         string
	Enabled    bool
	UsagePlans []string
}

// Options are the gateway's surroundings.
type Options struct {
	Now func() time.Time // nil: time.Now
	// ClientIP is the caller's address as API Gateway sees it (the source
	// of the TCP connection); nil takes the host of Request.RemoteAddr.
	ClientIP func(*http.Request) string
	// Sleep waits d on the gateway's clock: the pacing of a streamed
	// response past its burst (nil: time.Sleep). With Now, a test can run
	// the gateway's clock ahead of the wall clock, so that a stream paced
	// over minutes of the gateway's time passes in a moment.
	Sleep func(d time.Duration)
	// IntegrationTimeout is the timeout of an integration that sets none
	// (Integration.Timeout); 0 is API Gateway's default, 29 s. It bounds the
	// whole response, a streamed one too.
	IntegrationTimeout time.Duration
	// StreamRate is the bandwidth of a streamed response past its first
	// StreamBurst bytes, in bytes a second; 0 is API Gateway's, StreamRate.
	StreamRate float64
	// StreamBurst is what a streamed response carries before StreamRate
	// applies; 0 is API Gateway's, StreamBurst. Tests lower it with the rate
	// to pace a small answer as AWS paces a large one.
	StreamBurst int
	Logf        func(format string, args ...any)
}

// Gateway is the API's stage as an http.Handler: a request path is the
// path after the stage (/libraries, not /api/libraries).
type Gateway struct {
	api    API
	inv    Invoker
	keys   APIKeys
	opts   Options
	routes []route

	st *state
}

// state is what a stage counts and caches, which an update of it keeps
// (Update): its throttles' buckets, its keys' quotas, the WAF's counts and
// the authorizer's cache.
type state struct {
	mu      sync.Mutex
	cache   map[string]cached      // authorizer results by authorizer ID + identity
	buckets map[string]*bucket     // throttles by method or plan/key
	quotas  map[string]*quota      // by plan/key
	waf     map[string][]time.Time // request times by rule/IP
}

// New returns the gateway of api. It refuses settings it does not emulate
// rather than ignoring them.
func New(api API, inv Invoker, keys APIKeys, opts Options) (*Gateway, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ClientIP == nil {
		opts.ClientIP = func(r *http.Request) string {
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				return r.RemoteAddr
			}
			return host
		}
	}
	if opts.Sleep == nil {
		opts.Sleep = time.Sleep
	}
	if opts.IntegrationTimeout == 0 {
		opts.IntegrationTimeout = DefaultIntegrationTimeout
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	st := &state{cache: map[string]cached{}, buckets: map[string]*bucket{}, quotas: map[string]*quota{}, waf: map[string][]time.Time{}}
	return deploy(api, inv, keys, opts, st)
}

// Update returns the gateway of the stage serving api from now on, as after
// a change to the stage (its settings, usage plans, WAF rules) or a new
// deployment of the API (its resources, methods, authorizers and gateway
// responses): the caller decides what api holds (internal/standin: a
// deployment is new only when its logical ID changed). The buckets, quotas,
// WAF counts and authorizer cache go on from g's; FlushAuthorizerCache
// empties the cache. g serves the requests it has already taken.
func (g *Gateway) Update(api API) (*Gateway, error) {
	return deploy(api, g.inv, g.keys, g.opts, g.st)
}

// FlushAuthorizerCache forgets every cached authorizer result.
func (g *Gateway) FlushAuthorizerCache() {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	g.st.cache = map[string]cached{}
}

// API is the API the gateway serves.
func (g *Gateway) API() API { return g.api }

func deploy(api API, inv Invoker, keys APIKeys, opts Options, st *state) (*Gateway, error) {
	g := &Gateway{api: api, inv: inv, keys: keys, opts: opts, st: st}
	if err := g.check(); err != nil {
		return nil, err
	}
	for _, res := range api.Resources {
		g.routes = append(g.routes, newRoute(res))
	}
	return g, nil
}

func (g *Gateway) check() error {
	switch g.api.APIKeySource {
	case "HEADER", "AUTHORIZER":
	default:
		return fmt.Errorf("restapi: API key source %q", g.api.APIKeySource)
	}
	for id, a := range g.api.Authorizers {
		if a.Type != "REQUEST" {
			return fmt.Errorf("restapi: authorizer %s: type %q; only REQUEST authorizers are emulated", id, a.Type)
		}
		for _, s := range a.IdentitySources {
			if !strings.HasPrefix(s, "method.request.header.") && !strings.HasPrefix(s, "method.request.querystring.") {
				return fmt.Errorf("restapi: authorizer %s: identity source %q is not emulated", id, s)
			}
		}
	}
	for _, res := range g.api.Resources {
		for m, meth := range res.Methods {
			if meth.Integration.Type != "AWS_PROXY" {
				return fmt.Errorf("restapi: %s %s: integration %q; only AWS_PROXY is emulated", m, res.Path, meth.Integration.Type)
			}
			switch meth.Integration.TransferMode {
			case "", TransferBuffered, TransferStream:
			default:
				return fmt.Errorf("restapi: %s %s: response transfer mode %q", m, res.Path, meth.Integration.TransferMode)
			}
			if err := checkTimeout(meth.Integration); err != nil {
				return fmt.Errorf("restapi: %s %s: %w", m, res.Path, err)
			}
			switch meth.AuthorizationType {
			case "NONE", "":
			case "CUSTOM":
				if _, ok := g.api.Authorizers[meth.AuthorizerID]; !ok {
					return fmt.Errorf("restapi: %s %s: no authorizer %q", m, res.Path, meth.AuthorizerID)
				}
			default:
				return fmt.Errorf("restapi: %s %s: authorization %q is not emulated", m, res.Path, meth.AuthorizationType)
			}
		}
	}
	for typ, gr := range g.api.GatewayResponses {
		for _, t := range gr.Templates {
			if err := checkTemplate(t); err != nil {
				return fmt.Errorf("restapi: gateway response %s: %w", typ, err)
			}
		}
		for k, v := range gr.Parameters {
			if !strings.HasPrefix(k, "gatewayresponse.header.") {
				return fmt.Errorf("restapi: gateway response %s: parameter %q", typ, k)
			}
			if _, err := parameterSource(v); err != nil {
				return fmt.Errorf("restapi: gateway response %s: %s: %w", typ, k, err)
			}
		}
	}
	for _, r := range g.api.WAF {
		if r.AggregateKey != "IP" {
			return fmt.Errorf("restapi: WAF rule %s: aggregate key %q; only IP is emulated", r.Name, r.AggregateKey)
		}
	}
	return nil
}

// call is one request on its way through the gateway.
type call struct {
	r          *http.Request
	requestID  string
	sourceIP   string
	start      time.Time
	resource   *route
	params     map[string]string
	authorizer map[string]any // the authorizer's context, as the integration gets it
	apiKeyID   string
	errMessage string
	body       []byte // the request's body, read within MaxPayload
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{r: r, requestID: newRequestID(), sourceIP: g.opts.ClientIP(r), start: g.opts.Now()}
	w.Header().Set("X-Amzn-RequestId", c.requestID)
	w.Header().Set("X-Amz-Apigw-Id", c.requestID[:8]+"=")
	if rule, blocked := g.wafBlocks(c); blocked {
		c.errMessage = "Forbidden"
		g.opts.Logf("restapi: %s %s from %s: WAF rule %s blocks", r.Method, r.URL.Path, c.sourceIP, rule)
		g.gatewayResponse(w, c, "WAF_FILTERED")
		return
	}
	if !g.withinRequestLimits(w, c) {
		return
	}
	route, params, meth, declared, ok := g.match(r.Method, r.URL.Path)
	if !ok {
		c.errMessage = "Missing Authentication Token"
		g.gatewayResponse(w, c, "MISSING_AUTHENTICATION_TOKEN")
		return
	}
	c.resource, c.params = route, params
	if meth.AuthorizationType == "CUSTOM" && !g.methodARNFits(w, c) {
		return
	}
	var usageKey string
	if meth.AuthorizationType == "CUSTOM" {
		typ, key, ok := g.authorize(c, meth.AuthorizerID)
		if !ok {
			g.gatewayResponse(w, c, typ)
			return
		}
		usageKey = key
	}
	if meth.APIKeyRequired {
		if g.api.APIKeySource == "HEADER" {
			usageKey = r.Header.Get("X-Api-Key")
		}
		if typ, ok := g.meter(c, usageKey); !ok {
			g.gatewayResponse(w, c, typ)
			return
		}
	}
	if !g.take("method "+declared+" "+route.res.Path, g.methodThrottle(route.res.Path, declared)) {
		c.errMessage = "Too Many Requests"
		g.gatewayResponse(w, c, "THROTTLED")
		return
	}
	g.integrate(w, c, meth.Integration)
}
