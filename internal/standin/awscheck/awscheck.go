// Package awscheck is the one AWS endpoint of the local stand-in: every call a
// function makes to DynamoDB, OpenSearch, Bedrock, S3 or API Gateway's
// control plane arrives here over HTTPS, is authenticated by its SigV4
// signature as the function's own role, and is evaluated against that role's
// IAM policies (and, for OpenSearch and S3, the domain's access policy or the
// bucket's policy) before it reaches the local engine behind it. A call AWS
// would refuse is refused here with the status and body AWS sends, and
// recorded, so that a test fails on a right the template forgot to grant.
//
// Out of scope, and refused rather than guessed at: presigned (query-string)
// and SigV4a signatures, PartiQL, S3's virtual-hosted addressing and signed
// streaming uploads, services other than those five.
package awscheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// Config says what the checker serves and how it decides.
type Config struct {
	// Account and Region are the stack's, 123456789012 and us-east-1: every
	// ARN the checker builds uses them, and a signature scoped to another
	// region is refused.
	Account, Region string
	// DynamoDB is the base URL of dynalite (http://127.0.0.1:port); allowed
	// DynamoDB calls are forwarded there unchanged.
	DynamoDB string
	// OpenSearch is the cluster, reached as service "es"; nil refuses es.
	OpenSearch http.Handler
	// DomainARN is arn:aws:es:<region>:<account>:domain/<name>; a request
	// path maps to the resource DomainARN+path.
	DomainARN string
	// DomainPolicy is the domain's access policy (resource-based); nil when
	// the domain has none.
	DomainPolicy *iampolicy.Policy
	// Bedrock serves bedrock-runtime (signing name "bedrock"); nil refuses it.
	Bedrock http.Handler
	// APIGateway serves API Gateway's control plane; nil refuses it.
	APIGateway http.Handler
	// ResourceTags returns the tags of an API Gateway resource, by ARN, for
	// aws:ResourceTag; nil means no resource has tags.
	ResourceTags func(arn string) map[string]string
	// S3 serves S3's REST API, path-style (/bucket/key); nil refuses s3.
	S3 http.Handler
	// BucketPolicies are the buckets' policies (resource-based), by bucket
	// name; a bucket without one is absent.
	BucketPolicies map[string]*iampolicy.Policy
	// Logf, when set, receives one line per denial and per server error.
	Logf func(format string, args ...any)
}

// Role is the identity a function runs as.
type Role struct {
	// ARN is the role's, arn:aws:iam::<account>:role/<name>.
	ARN string
	// Session is the role session name, the function's name in Lambda.
	Session string
	// Policies are the role's identity-based policies.
	Policies []*iampolicy.Policy
}

// Credentials are temporary credentials bound to one Role, as STS issues
// them to a Lambda function.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// Denial is one refused call.
type Denial struct {
	// Principal is the caller as AWS names it in its message: the session
	// ARN arn:aws:sts::<account>:assumed-role/<role>/<session>, "anonymous"
	// for an unsigned call, or empty when the credentials were unknown.
	Principal string
	// Action and Resource are what was evaluated ("dynamodb:Scan" and the
	// table's ARN); Resource is empty when the call never got that far.
	Action, Resource string
	// Reason is AWS's wording: "because no identity-based policy allows the
	// dynamodb:Scan action", or the authentication error's message.
	Reason string
	At     time.Time
}

// Checker is a running endpoint. Its methods are safe for concurrent use.
type Checker struct {
	cfg    Config
	srv    *http.Server
	ln     net.Listener
	dir    string // holds the CA's PEM file
	caFile string
	host   string
	done   chan struct{}

	dynamo   *dynamo
	services map[string]service // by SigV4 signing name

	mu       sync.Mutex
	sessions map[string]*session // by access key ID
	denials  []Denial

	now func() time.Time // the clock signatures are checked against
}

// session is what one set of minted credentials stands for.
type session struct {
	role   Role
	secret string
	token  string
	arn    string // arn:aws:sts::<account>:assumed-role/<name>/<session>
}

// maxBody bounds what the checker buffers: it must read a body to check its
// hash, and 100 MB is OpenSearch's default http.max_content_length.
const maxBody = 100 << 20

// Start listens on 127.0.0.1:0 with a certificate from a CA it generates, and
// serves until Close.
func Start(cfg Config) (*Checker, error) {
	if cfg.Account == "" || cfg.Region == "" {
		return nil, errors.New("awscheck: Config needs Account and Region")
	}
	c := &Checker{cfg: cfg, sessions: map[string]*session{}, now: time.Now, done: make(chan struct{})}
	if cfg.DynamoDB != "" {
		u, err := url.Parse(cfg.DynamoDB)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("awscheck: DynamoDB URL %q: want http://host:port", cfg.DynamoDB)
		}
		c.dynamo = newDynamo(c, u)
	}
	// A service without an engine behind it is not served: its calls are
	// refused like any other unknown service's.
	c.services = map[string]service{}
	if c.dynamo != nil {
		c.services["dynamodb"] = c.dynamo
	}
	if cfg.OpenSearch != nil && cfg.DomainARN != "" {
		c.services["es"] = &openSearch{c}
	}
	if cfg.Bedrock != nil {
		c.services["bedrock"] = &bedrock{c}
	}
	if cfg.APIGateway != nil {
		c.services["apigateway"] = &apiGateway{c}
	}
	if cfg.S3 != nil {
		c.services["s3"] = &s3Service{c}
	}

	dir, err := os.MkdirTemp("", "awscheck-")
	if err != nil {
		return nil, fmt.Errorf("awscheck: %w", err)
	}
	tlsCfg, caFile, err := newTLS(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("awscheck: listen: %w", err)
	}
	c.dir, c.caFile, c.ln, c.host = dir, caFile, ln, ln.Addr().String()
	c.srv = &http.Server{
		Handler:           c,
		ReadHeaderTimeout: 10 * time.Second,
		// TLS handshake failures land here: a function that does not trust
		// the CA (SSL_CERT_FILE unset) shows up in the logs, not as silence.
		ErrorLog: log.New(logWriter{c}, "awscheck: ", 0),
	}
	go func() {
		defer close(c.done)
		// The listener is plain TCP wrapped here, without "h2" in NextProtos:
		// HTTP/1.1 keeps Content-Length in the headers the signature covers.
		if err := c.srv.Serve(tlsListener(ln, tlsCfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.logf("awscheck: serve: %v", err)
		}
	}()
	return c, nil
}

// URL is the endpoint, https://127.0.0.1:port: the functions' AWS_ENDPOINT_URL
// and the OpenSearch URL.
func (c *Checker) URL() string { return "https://" + c.host }

// Host is 127.0.0.1:port, the domain endpoint as the template's
// DomainEndpoint attribute gives it.
func (c *Checker) Host() string { return c.host }

// CAFile is the path of the CA certificate (PEM) the endpoint's certificate
// chains to, for the functions' SSL_CERT_FILE.
func (c *Checker) CAFile() string { return c.caFile }

// Credentials mints temporary credentials bound to r: an ASIA access key, a
// secret and a session token. Each call mints a new set.
func (c *Checker) Credentials(r Role) Credentials {
	name := r.ARN[strings.LastIndex(r.ARN, "/")+1:]
	s := &session{role: r, secret: randomString(30), token: "FwoGZXIvYXdzE" + randomString(120),
		arn: "arn:aws:sts::" + c.cfg.Account + ":assumed-role/" + name + "/" + r.Session}
	var id [10]byte
	rand.Read(id[:])
	key := "ASIA" + base32.StdEncoding.EncodeToString(id[:])[:16]
	c.mu.Lock()
	c.sessions[key] = s
	c.mu.Unlock()
	return Credentials{AccessKeyID: key, SecretAccessKey: s.secret, SessionToken: s.token}
}

// Denials returns every call refused so far, oldest first.
func (c *Checker) Denials() []Denial {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Denial(nil), c.denials...)
}

// Close stops serving and removes the CA file.
func (c *Checker) Close() error {
	err := c.srv.Close()
	<-c.done
	if rerr := os.RemoveAll(c.dir); err == nil {
		err = rerr
	}
	return err
}

// service is one AWS service behind the endpoint.
type service interface {
	// refuse answers a call that failed authentication, in the service's
	// wire format.
	refuse(w http.ResponseWriter, e *authError)
	// checks derives the IAM evaluations a call needs: one for most calls,
	// one per table or item for batches and transactions. A *apiError is
	// answered as is, without evaluation: the service would refuse the
	// request before authorizing it.
	checks(ctx context.Context, r *http.Request, body []byte) ([]check, error)
	// deny answers a call IAM refused.
	deny(w http.ResponseWriter, c check, principal string, d iampolicy.Decision)
	// forward sends an allowed call to the engine behind.
	forward(w http.ResponseWriter, r *http.Request, body []byte)
	// fail answers a request the service could not parse or serve.
	fail(w http.ResponseWriter, e *apiError)
}

// check is one evaluation.
type check struct {
	action, resource string
	context          map[string][]string // service keys; the global ones are added
	resourcePolicy   *iampolicy.Policy
	// noSecureTransport leaves aws:SecureTransport out of the context, for
	// OpenSearch, which documents that it does not support the key.
	noSecureTransport bool
}

// apiError is an answer the service gives before authorization (a malformed
// request) or when the engine behind is unreachable.
type apiError struct {
	status int
	code   string // e.g. "ValidationException"
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

// ServeHTTP authenticates, authorizes and forwards one call.
func (c *Checker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "awscheck: reading the body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}

	auth, signed := r.Header["Authorization"]
	var ah authHeader
	var aerr *authError
	name := guessService(r)
	if _, ok := c.services["s3"]; ok && c.isBucketPath(r) {
		name = "s3"
	}
	if signed {
		ah, aerr = parseAuthorization(strings.Join(auth, ","))
		if aerr == nil {
			name = ah.service
		}
	}
	svc, known := c.services[name]
	if !known {
		svc = unknownService{c, name}
	}
	if !signed {
		if o, ok := svc.(*openSearch); ok {
			// An OpenSearch domain admits unsigned calls its access policy
			// allows to anyone ("Principal": "*"): evaluate them as such.
			o.anonymous(w, r, body)
			return
		}
		aerr = &authError{code: "MissingAuthenticationToken", msg: missingTokenMessage(name)}
	}
	var sess *session
	if aerr == nil {
		sess, aerr = c.verify(r, body, ah)
	}
	if aerr != nil {
		principal := ""
		if !signed {
			principal = "anonymous"
		} else if sess != nil {
			principal = sess.arn
		}
		c.record(Denial{Principal: principal, Action: actionOf(svc, r, body), Reason: aerr.code + "Exception: " + aerr.msg})
		svc.refuse(w, aerr)
		return
	}

	checks, err := svc.checks(r.Context(), r, body)
	if u, ok := svc.(unknownService); ok {
		ck := checks[0]
		c.record(Denial{Principal: sess.arn, Action: ck.action, Resource: ck.resource,
			Reason: "because the local stand-in does not serve the " + u.name + " service"})
		u.deny(w, ck, sess.arn, iampolicy.Decision{})
		return
	}
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = &apiError{status: http.StatusInternalServerError, code: "InternalFailure", msg: err.Error()}
			c.logf("awscheck: %s %s: %v", r.Method, r.URL.Path, err)
		}
		if ae.code == "AccessDeniedException" {
			// A call the checker cannot evaluate is refused, and counts.
			c.record(Denial{Principal: sess.arn, Action: actionOf(svc, r, body), Reason: ae.msg})
		}
		svc.fail(w, ae)
		return
	}
	evaluate := func(ck check) iampolicy.Decision {
		req := iampolicy.Request{Principal: sess.role.ARN, Action: ck.action, Resource: ck.resource,
			Context: c.globals(r, sess, ah.region, ck)}
		return iampolicy.Evaluate(req, sess.role.Policies, ck.resourcePolicy)
	}
	for _, ck := range checks {
		if d := evaluate(ck); !d.Allowed {
			c.record(Denial{Principal: sess.arn, Action: ck.action, Resource: ck.resource, Reason: d.Reason})
			svc.deny(w, ck, sess.arn, d)
			return
		}
	}
	if s, ok := svc.(*s3Service); ok {
		// S3's answer may depend on a further right (s3:ListBucket for a
		// missing key).
		s.forwardAs(w, r, body, checks[0], sess.arn, evaluate)
		return
	}
	svc.forward(w, r, body)
}

// actionOf names a call's action for a denial recorded before evaluation.
func actionOf(svc service, r *http.Request, body []byte) string {
	if d, ok := svc.(*dynamo); ok {
		// From the header alone: a call that was not evaluated must not make
		// the checker ask dynalite about the table it names.
		return d.action(r)
	}
	if ck, err := svc.checks(r.Context(), r, body); err == nil && len(ck) > 0 {
		return ck[0].action
	}
	return ""
}

// globals are the keys IAM puts in every request's context, merged with the
// check's own.
func (c *Checker) globals(r *http.Request, s *session, region string, ck check) map[string][]string {
	now := c.now().UTC()
	ctx := map[string][]string{
		"aws:PrincipalArn":     {s.role.ARN},
		"aws:PrincipalAccount": {c.cfg.Account},
		"aws:PrincipalType":    {"AssumedRole"},
		"aws:CurrentTime":      {now.Format(time.RFC3339)},
		"aws:EpochTime":        {strconv.FormatInt(now.Unix(), 10)},
		"aws:RequestedRegion":  {region},
	}
	if !ck.noSecureTransport {
		ctx["aws:SecureTransport"] = []string{"true"}
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		ctx["aws:SourceIp"] = []string{host}
	}
	for k, v := range ck.context {
		ctx[k] = v
	}
	return ctx
}

// record keeps a denial and logs it.
func (c *Checker) record(d Denial) {
	d.At = c.now()
	c.mu.Lock()
	c.denials = append(c.denials, d)
	c.mu.Unlock()
	who := d.Principal
	if who == "" {
		who = "(unknown credentials)"
	}
	c.logf("awscheck: denied %s %s on %s: %s", who, d.Action, d.Resource, d.Reason)
}

func (c *Checker) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}

// logWriter sends the HTTP server's own log lines to Logf.
type logWriter struct{ c *Checker }

func (l logWriter) Write(p []byte) (int, error) {
	l.c.logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// guessService names the service an unsigned call was meant for, so that it
// is refused in that service's format: nothing in it says so for certain.
func guessService(r *http.Request) string {
	t := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(t, "DynamoDB_"), strings.HasPrefix(t, "DynamoDBStreams_"):
		return "dynamodb"
	case strings.HasPrefix(r.URL.Path, "/model/"):
		return "bedrock"
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch first {
	case "apikeys", "usageplans", "tags", "restapis", "domainnames", "vpclinks", "account", "clientcertificates":
		return "apigateway"
	}
	return "es"
}

func missingTokenMessage(service string) string {
	if service == "dynamodb" {
		return "Request is missing Authentication Token"
	}
	return "Missing Authentication Token"
}

// forwardTo serves an allowed call with an in-process engine, body restored.
func forwardTo(h http.Handler, w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	h.ServeHTTP(w, r2)
}

// proxyTo forwards an allowed call to an engine over HTTP, unchanged.
func proxyTo(target *url.URL, logf func(string, ...any), fail func(http.ResponseWriter, *apiError)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			logf("awscheck: forwarding to %s: %v", target, err)
			fail(w, &apiError{status: http.StatusInternalServerError, code: "InternalServerError", msg: "the engine behind the checker is unreachable"})
		},
	}
}

// unknownService answers calls for services the stand-in does not serve.
// They are authenticated, then refused as AccessDenied, so that a function
// reaching for a service the stack does not wire in fails its test.
type unknownService struct {
	c    *Checker
	name string
}

func (u unknownService) refuse(w http.ResponseWriter, e *authError) {
	writeRESTError(w, http.StatusForbidden, e.code+"Exception", "message", e.msg)
}

func (u unknownService) checks(_ context.Context, r *http.Request, _ []byte) ([]check, error) {
	op := r.Method + " " + r.URL.Path
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		op = t[strings.LastIndex(t, ".")+1:]
	}
	return []check{{action: u.name + ":" + op, resource: "*"}}, nil
}

func (u unknownService) deny(w http.ResponseWriter, c check, principal string, _ iampolicy.Decision) {
	writeRESTError(w, http.StatusForbidden, "AccessDeniedException", "Message",
		fmt.Sprintf("User: %s is not authorized to perform: %s because the local stand-in does not serve the %q service", principal, c.action, u.name))
}

// forward is never reached: ServeHTTP refuses every authenticated call to an
// unknown service without evaluating it, since even a role allowed "*"
// cannot reach a service nothing stands in for.
func (u unknownService) forward(w http.ResponseWriter, _ *http.Request, _ []byte) {
	u.fail(w, &apiError{status: http.StatusForbidden, code: "AccessDeniedException", msg: "the local stand-in does not serve the " + u.name + " service"})
}

func (u unknownService) fail(w http.ResponseWriter, e *apiError) {
	writeRESTError(w, e.status, e.code, "message", e.msg)
}

func requestID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawStdEncoding.EncodeToString(b)
}
