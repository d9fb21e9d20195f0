package awscheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// openSearch checks calls to the domain's OpenSearch API (signing name
// "es"): the action is es:ESHttp<Method>, the resource the domain's ARN
// followed by the request path, and the domain's access policy takes part
// as the resource-based policy.
type openSearch struct{ c *Checker }

func (o *openSearch) checks(_ context.Context, r *http.Request, _ []byte) ([]check, error) {
	if o.c.cfg.OpenSearch == nil || o.c.cfg.DomainARN == "" {
		return nil, &apiError{http.StatusForbidden, "AccessDeniedException", "the local stand-in serves no OpenSearch domain"}
	}
	// The path as OpenSearch reads it (decoded); "/" stays "/", so the
	// domain root is DomainARN+"/", which "domain/<name>/*" covers.
	return []check{{action: "es:ESHttp" + methodWord(r.Method), resource: o.c.cfg.DomainARN + r.URL.Path,
		resourcePolicy: o.c.cfg.DomainPolicy, noSecureTransport: true}}, nil
}

// methodWord is GET -> Get, as the ESHttp* actions spell methods.
func methodWord(m string) string {
	if m == "" {
		return ""
	}
	return m[:1] + strings.ToLower(m[1:])
}

// anonymous evaluates an unsigned call against the domain's access policy
// alone, as the domain does: a policy allowing "*" admits it.
func (o *openSearch) anonymous(w http.ResponseWriter, r *http.Request, body []byte) {
	cks, err := o.checks(r.Context(), r, body)
	if err != nil {
		o.refuse(w, &authError{"MissingAuthenticationToken", "Missing Authentication Token"})
		return
	}
	ck := cks[0]
	req := iampolicy.Request{Principal: "anonymous", Action: ck.action, Resource: ck.resource, Context: map[string][]string{}}
	d := iampolicy.Decision{Reason: fmt.Sprintf("because no resource-based policy allows the %s action", ck.action)}
	if ck.resourcePolicy != nil {
		if d2 := iampolicy.Evaluate(req, nil, ck.resourcePolicy); d2.Allowed || strings.Contains(d2.Reason, "explicit deny") {
			d = d2
		}
	}
	if !d.Allowed {
		o.c.record(Denial{Principal: "anonymous", Action: ck.action, Resource: ck.resource, Reason: d.Reason})
		o.deny(w, ck, "anonymous", d)
		return
	}
	o.forward(w, r, body)
}

func (o *openSearch) refuse(w http.ResponseWriter, e *authError) {
	writeOpenSearchError(w, http.StatusForbidden, "message", e.msg)
}

// deny answers as the domain does: 403 and a message that, unlike other
// services', names no resource.
func (o *openSearch) deny(w http.ResponseWriter, c check, principal string, d iampolicy.Decision) {
	writeOpenSearchError(w, http.StatusForbidden, "Message", fmt.Sprintf("User: %s is not authorized to perform: %s %s", principal, c.action, d.Reason))
}

func (o *openSearch) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	forwardTo(o.c.cfg.OpenSearch, w, r, body)
}

func (o *openSearch) fail(w http.ResponseWriter, e *apiError) {
	writeOpenSearchError(w, e.status, "message", e.msg)
}

// writeOpenSearchError writes the domain's own 403 body, {"Message": ...}
// for a denial and {"message": ...} for a bad signature.
func writeOpenSearchError(w http.ResponseWriter, status int, key, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{key: msg})
}
