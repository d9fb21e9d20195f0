package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	doclib "github.com/doclib/doclib/shared"
)

// recorder remembers the status for the access log and whether a response began.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// withRequest gives every response an X-Request-Id and writes one log line. The
// ID goes into the request's context, where the logger's doclib.LogHandler finds
// it for every line logged with that context, this handler's and the service's.
func (s *server) withRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.Now()
		id := s.RequestID(r)
		w.Header().Set("X-Request-Id", id)
		// authenticate puts the principal into a context derived from this
		// one, which this handler never sees: it leaves it in who as well.
		who := &accessEntry{}
		ctx := context.WithValue(doclib.WithRequestID(r.Context(), id), accessKey, who)
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(ctx))
		attrs := []any{"method", r.Method, "path", logPath(r.URL.Path), "status", rec.status,
			"duration_ms", float64(s.Now().Sub(start).Microseconds()) / 1000}
		if p := who.principal; p != nil {
			// The key's ID, never its secret; the query string is not logged
			// either, since a client may put a key there.
			attrs = append(attrs, "key_id", p.KeyID, "workspace_id", p.WorkspaceID)
		}
		s.Logger.Log(ctx, logLevel(rec.status), "request", attrs...)
	})
}

// recoverPanics turns a panic into a 500 in the error shape; the stack goes to the
// log only.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.Logger.ErrorContext(r.Context(), "panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rec, ok := w.(*recorder); ok && rec.status != 0 {
				return // the response has begun; nothing more can be said
			}
			s.writeError(w, r, fmt.Errorf("httpapi: panic: %v", v))
		}()
		next.ServeHTTP(w, r)
	})
}

// limitIP applies the per-IP limit first, so that guessing keys is throttled too.
func (s *server) limitIP(next http.Handler) http.Handler {
	if s.Limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		take := &ipTake{bucket: "ip:" + s.ClientIP(r), at: s.Now()}
		q, err := s.Limiter.Take(r.Context(), take.bucket, s.IPLimit, s.Window, take.at)
		if err != nil {
			s.writeError(w, r, limiterUnavailable(err))
			return
		}
		if !q.Allowed {
			setQuotaHeaders(w.Header(), q)
			s.rateLimited(w, r, q, "this IP address", s.IPLimit)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ipTakeKey, take)))
	})
}

// limitKey applies the per-key limit once the key is known. Every response past
// this point carries the key's X-RateLimit-* headers.
func (s *server) limitKey(next http.Handler) http.Handler {
	if s.Limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := PrincipalFrom(r.Context())
		// The workspace is in the bucket: key IDs are not checked across
		// workspaces, and one workspace must never spend another's quota.
		take := &keyTake{bucket: "key:" + p.WorkspaceID + "/" + p.KeyID, at: s.Now()}
		q, err := s.Limiter.Take(r.Context(), take.bucket, s.KeyLimit, s.Window, take.at)
		if err != nil {
			s.writeError(w, r, limiterUnavailable(err))
			return
		}
		setQuotaHeaders(w.Header(), q)
		if !q.Allowed {
			// A refused request consumes no quota: give back what the IP limit took.
			if take, ok := r.Context().Value(ipTakeKey).(*ipTake); ok {
				if err := s.Limiter.Release(r.Context(), take.bucket, s.Window, take.at); err != nil {
					s.Logger.WarnContext(r.Context(), "rate limiter: release of IP quota failed", "error", err)
				}
			}
			// On /mcp too: the refusal comes before the body is read,
			// as an HTTP 429 in the API's shape (docs/mcp.md).
			s.rateLimited(w, r, q, "this API key", s.KeyLimit)
			return
		}
		take.quota = q
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyTakeKey, take)))
	})
}

func limiterUnavailable(err error) error {
	return doclib.Unavailable(fmt.Errorf("httpapi: rate limiter: %w", err))
}

func setQuotaHeaders(h http.Header, q doclib.Quota) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(q.Remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(q.Reset.Unix(), 10))
}

func (s *server) rateLimited(w http.ResponseWriter, r *http.Request, q doclib.Quota, who string, limit int) {
	wait, err := s.limitError(q, who, limit)
	w.Header().Set("Retry-After", strconv.Itoa(wait))
	s.writeError(w, r, err)
}

// limitError is the 429 of a refused quota and the seconds to wait.
func (s *server) limitError(q doclib.Quota, who string, limit int) (int, error) {
	wait := int(math.Ceil(q.Reset.Sub(s.Now()).Seconds()))
	wait = max(wait, 1)
	return wait, doclib.Errorf(doclib.ERateLimited,
		"Too many requests from %s: the limit is %d per %s. Wait %d %s (see Retry-After) and retry.",
		who, limit, windowWords(s.Window), wait, doclib.Plural(wait, "second", "seconds"))
}

func windowWords(d time.Duration) string {
	if d == time.Minute {
		return "minute"
	}
	return d.String()
}

// authenticate finds who the request acts for and puts the principal in the
// context.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Authenticate(r)
		if err != nil {
			if len(r.Header.Values("Authorization")) == 0 {
				err = keylessError(r.URL.Path, err)
			}
			s.writeError(w, r, err)
			return
		}
		if who, ok := r.Context().Value(accessKey).(*accessEntry); ok {
			who.principal = p
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	})
}

// oauthPath tells the paths where an OAuth client (an MCP client whose
// request to /mcp was refused, say) looks for an authorization server's
// metadata or registers itself (RFC 9728, RFC 8414, OpenID Connect
// Discovery, and the MCP specification's fallback /register). doclib has
// none; a client sends no key there, and "Missing API key" would mislead
// one that had sent a key to /mcp.
func oauthPath(p string) bool {
	for _, prefix := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return p == "/register" || p == "/authorize" || p == "/token"
}

// keylessError is the 401 of a request without a key to path: err, the
// missing key's, except on two kinds of path that a newcomer tries first.
// Both stay refusals of a request without a key (the order of checks puts
// authentication before routing); only their words differ.
//   - An OAuth path: words that an MCP client shows (noOAuth).
//   - The root, which is no endpoint: where the endpoints and their
//     reference are, as Stripe's API answers its root without a key
//     (docs/design.md, "GET /").
func keylessError(path string, err error) error {
	switch {
	case oauthPath(path):
		return doclib.Errorf(doclib.EUnauthorised, "This API uses no OAuth: there is no authorization server or client registration. Send the API key itself in the Authorization header, \"Bearer <API_KEY>\", to every endpoint, /mcp included; if a key was sent and refused, the 401 of that request says why.")
	case path == "/":
		return doclib.Errorf(doclib.EUnauthorised, "Missing API key. This is the doclib API: every request sends an API key in the Authorization header as \"Bearer <API_KEY>\". Start with GET /libraries; the endpoints are described in docs/api.md of the doclib repository, and MCP clients use POST /mcp.")
	}
	return err
}

// accessEntry is what the access log learns about a request on its way in.
type accessEntry struct{ principal *doclib.Principal }

// bearerKey checks the request's bearer key: the default Authenticate.
func (s *server) bearerKey(r *http.Request) (*doclib.Principal, error) {
	secret, err := Bearer(r.Header.Values("Authorization"))
	if err != nil {
		return nil, err
	}
	return s.Service.Authenticate(r.Context(), secret)
}

// Bearer extracts the secret of an "Authorization: Bearer <key>" header from
// the header's values. No header gives an empty secret, which Authenticate
// answers with 401 unauthorised; the Lambda authorizer uses it too.
func Bearer(values []string) (string, error) {
	switch {
	case len(values) == 0:
		return "", nil // Authenticate names the missing key
	case len(values) > 1:
		return "", doclib.Errorf(doclib.EUnauthorised, "Send exactly one Authorization header, \"Bearer <API_KEY>\".")
	}
	scheme, secret, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return "", doclib.Errorf(doclib.EUnauthorised, "The Authorization header must be \"Bearer <API_KEY>\".")
	}
	return strings.TrimSpace(secret), nil
}

// route answers unknown or unclean paths with 404 (never a redirect) and hands
// the rest to the mux.
func (s *server) route() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || path.Clean(p) != p {
			notFound(w, r)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeErrorPlain(w, r, doclib.Errorf(doclib.ENotFound, "There is no endpoint at %s. The endpoints are GET /libraries, /libraries/{id}, /libraries/{id}/tags, /categories, /applications, /graph and /documents, /documents/{id}, /documents/{id}/traverse, /documents/{id}/source-recordings and /search/documents.", doclib.Quote(r.URL.Path)))
}

// get lets GET and HEAD through and answers every other method with 405.
func get(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			writeErrorPlain(w, r, doclib.Errorf(doclib.EMethodNotAllowed, "%s is not allowed on %s; this API is read-only and serves GET only.", r.Method, doclib.Quote(r.URL.Path)))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// secretPrefix begins every key secret doclib mints (doclib-admin keys
// create, doclib-dataset), and the demo's.
const secretPrefix = "dlk_"

// logPath is the request's path as the logs show it: a segment that looks
// like a key secret, pasted into the URL by mistake, is replaced, so that
// the logs never hold one.
func logPath(p string) string {
	if !strings.Contains(p, secretPrefix) {
		return p
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, secretPrefix) {
			segs[i] = secretPrefix + "(redacted)"
		}
	}
	return strings.Join(segs, "/")
}
