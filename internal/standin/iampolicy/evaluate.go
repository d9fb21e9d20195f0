package iampolicy

import (
	"fmt"
	"strings"
)

// Request is one call to evaluate.
type Request struct {
	Principal string              // the caller's role ARN, arn:aws:iam::123456789012:role/Name
	Action    string              // "dynamodb:GetItem" (service prefix and action match case-insensitively, as IAM does)
	Resource  string              // the resource ARN
	Context   map[string][]string // condition keys -> values; key names match case-insensitively; a missing key is absent (IfExists / Null semantics)
}

// Decision is the outcome.
type Decision struct {
	Allowed bool
	// Reason, when denied, in the words AWS uses in its AccessDenied messages:
	// "because no identity-based policy allows the <action> action",
	// "with an explicit deny in an identity-based policy", "... in a resource-based policy".
	Reason string
	// Sid is the Sid of the statement that decided, the Deny that denied or
	// the Allow that allowed, so a failing test can point at it; empty when
	// no statement decided or it has no Sid.
	Sid string
}

// Message is the AccessDenied message AWS would send for a denied request.
func (d Decision) Message(req Request) string {
	return fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s",
		req.Principal, req.Action, req.Resource, d.Reason)
}

// Evaluate decides a same-account request: an explicit Deny in any policy denies; otherwise
// it is allowed when an identity-based policy allows it, or when the resource-based policy
// (may be nil) allows it for this principal by name (a resource policy naming the account root,
// arn:aws:iam::<acct>:root or the bare account ID, delegates to IAM: it alone allows nothing).
//
// Policies IAM would refuse to attach, an identity-based one naming a
// principal or lacking Resource, a resource-based one naming none, deny
// everything with a Reason that says so: Parse cannot tell the two kinds
// apart, and guessing would pass a template that cannot deploy.
func Evaluate(req Request, identity []*Policy, resource *Policy) Decision {
	if reason := misplaced(identity, resource); reason != "" {
		return Decision{Reason: reason}
	}
	c := caller(req)
	for _, p := range identity {
		if s := p.first(Deny, req, c, false); s != nil {
			return Decision{Reason: "with an explicit deny in an identity-based policy", Sid: s.Sid}
		}
	}
	if resource != nil {
		if s := resource.first(Deny, req, c, true); s != nil {
			return Decision{Reason: "with an explicit deny in a resource-based policy", Sid: s.Sid}
		}
	}
	for _, p := range identity {
		if s := p.first(Allow, req, c, false); s != nil {
			return Decision{Allowed: true, Sid: s.Sid}
		}
	}
	if resource != nil {
		if s := resource.first(Allow, req, c, true); s != nil {
			return Decision{Allowed: true, Sid: s.Sid}
		}
	}
	return Decision{Reason: fmt.Sprintf("because no identity-based policy allows the %s action", req.Action)}
}

func misplaced(identity []*Policy, resource *Policy) string {
	for _, p := range identity {
		for i, s := range p.Statements {
			if s.principal != nil {
				return fmt.Sprintf("because statement %d of an identity-based policy names a principal, which IAM refuses", i)
			}
			if s.resources == nil {
				return fmt.Sprintf("because statement %d of an identity-based policy has no Resource, which IAM refuses", i)
			}
		}
	}
	if resource != nil {
		for i, s := range resource.Statements {
			if s.principal == nil {
				return fmt.Sprintf("because statement %d of the resource-based policy names no principal, which IAM refuses", i)
			}
		}
	}
	return ""
}

// who is the caller as IAM sees it: its ARN, its account, and the request
// context with key names lower-cased.
type who struct {
	arn, account, root string
	ctx                map[string][]string
}

func caller(req Request) who {
	w := who{arn: req.Principal, ctx: make(map[string][]string, len(req.Context)+2)}
	if parts := strings.SplitN(req.Principal, ":", 6); len(parts) == 6 && parts[0] == "arn" {
		w.account = parts[4]
		w.root = "arn:" + parts[1] + ":iam::" + parts[4] + ":root"
	}
	for k, v := range req.Context {
		k = strings.ToLower(k)
		w.ctx[k] = append(w.ctx[k], v...)
	}
	// IAM puts these two in every request context; a caller's own value wins.
	if _, ok := w.ctx["aws:principalarn"]; !ok && w.arn != "" {
		w.ctx["aws:principalarn"] = []string{w.arn}
	}
	if _, ok := w.ctx["aws:principalaccount"]; !ok && w.account != "" {
		w.ctx["aws:principalaccount"] = []string{w.account}
	}
	return w
}

// first returns the first statement with the effect that applies to req.
func (p *Policy) first(e Effect, req Request, c who, resourceBased bool) *Statement {
	for i := range p.Statements {
		s := &p.Statements[i]
		if s.Effect == e && s.applies(req, c, resourceBased) {
			return s
		}
	}
	return nil
}

func (s *Statement) applies(req Request, c who, resourceBased bool) bool {
	if anyMatch(s.actions, req.Action, true) == s.notAction {
		return false
	}
	// A resource-based statement without Resource means the resource the
	// policy is attached to, which is the one being called.
	if s.resources != nil && anyMatch(s.resources, req.Resource, false) == s.notResource {
		return false
	}
	if resourceBased && !s.names(c) {
		return false
	}
	for i := range s.conditions {
		if !s.conditions[i].holds(c.ctx) {
			return false
		}
	}
	return true
}

// names reports whether a resource-based statement reaches the caller.
func (s *Statement) names(c who) bool {
	p := s.principal
	isAccount := func(n string) bool { return c.account != "" && (n == c.account || n == c.root) }
	if s.notPrinc {
		// IAM checks the account, then the role: a NotPrincipal Deny
		// spares the caller only when it excepts both.
		if p.any {
			return false
		}
		var role, account bool
		for _, n := range p.aws {
			role = role || n == c.arn
			account = account || isAccount(n)
		}
		return !(role && account)
	}
	if p.any {
		return true
	}
	for _, n := range p.aws {
		if n == c.arn {
			return true
		}
		// Naming the account hands the decision to the account's own IAM
		// policies, so it allows nothing here; a Deny naming the account
		// reaches every identity in it.
		if s.Effect == Deny && isAccount(n) {
			return true
		}
	}
	return false
}

// anyMatch reports whether s matches any of the wildcard patterns; fold makes
// it case-insensitive, as IAM is for actions and not for resource ARNs.
func anyMatch(patterns []string, s string, fold bool) bool {
	if fold {
		s = strings.ToLower(s)
	}
	for _, p := range patterns {
		if fold {
			p = strings.ToLower(p)
		}
		if glob(p, s) {
			return true
		}
	}
	return false
}
