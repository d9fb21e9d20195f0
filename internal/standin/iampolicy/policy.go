// Package iampolicy evaluates AWS IAM policy documents the way IAM does, so
// that the local stand-in of the stack refuses every call the deployed stack's
// roles could not make. It covers same-account requests: identity-based
// policies and one resource-based policy, with actions, resource ARNs,
// principals and conditions. Permissions boundaries, SCPs, session policies
// and policy variables are out of scope; a document that uses a variable is
// refused by Parse rather than matched wrongly.
package iampolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Effect is a statement's effect: Allow or Deny.
type Effect string

// The two effects IAM knows.
const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Policy is a parsed IAM policy document (identity-based or resource-based).
type Policy struct {
	// Version is the policy language version; "2008-10-17" when the
	// document does not say, as IAM assumes.
	Version string
	// ID is the optional Id element.
	ID string
	// Statements are the document's statements, in order.
	Statements []Statement
}

// Statement is one statement of a policy. Its matching rules are unexported
// so that only Parse, which validates them, can build one.
type Statement struct {
	// Sid is the optional statement ID, reported in a Decision.
	Sid string
	// Effect is Allow or Deny.
	Effect Effect

	actions     []string // Action or NotAction patterns
	notAction   bool
	resources   []string // nil when the statement has neither Resource nor NotResource
	notResource bool
	principal   *principals // nil when the statement names no principal
	notPrinc    bool
	conditions  []condition
}

// principals is a Principal or NotPrincipal element.
type principals struct {
	any bool     // "*" or {"AWS": "*"}
	aws []string // role, user or account ARNs and bare account IDs
	// Service, Federated and CanonicalUser principals are kept only to
	// know the element was well formed: a role never matches them.
	other []string
}

// Parse reads a policy document: Statement may be one object or an array; Action/NotAction,
// Resource/NotResource, Principal/NotPrincipal ("*", {"AWS": string|[]}, {"Service": ...}),
// Condition values may be string, bool, number or arrays of them. Unknown elements, an
// unknown Effect or an unknown condition operator are an error (IAM rejects them too), and so
// is a policy variable ${...} anywhere in a Resource or condition value: this evaluator does
// not substitute them, so it refuses the document rather than match it wrongly.
func Parse(doc []byte) (*Policy, error) {
	var top map[string]json.RawMessage
	if err := strictUnmarshal(doc, &top); err != nil {
		return nil, fmt.Errorf("iampolicy: %w", err)
	}
	if top == nil {
		return nil, errors.New("iampolicy: document is not a JSON object")
	}
	p := &Policy{Version: "2008-10-17"}
	var stmts json.RawMessage
	for k, v := range top {
		var err error
		switch k {
		case "Version":
			err = json.Unmarshal(v, &p.Version)
			if err == nil && p.Version != "2012-10-17" && p.Version != "2008-10-17" {
				err = fmt.Errorf("unknown Version %q", p.Version)
			}
		case "Id":
			err = json.Unmarshal(v, &p.ID)
		case "Statement":
			stmts = v
		default:
			err = fmt.Errorf("unknown element %q", k)
		}
		if err != nil {
			return nil, fmt.Errorf("iampolicy: %w", err)
		}
	}
	raws, err := oneOrMany[json.RawMessage](stmts)
	if err == nil && len(raws) == 0 {
		err = errors.New("empty")
	}
	if err != nil {
		return nil, fmt.Errorf("iampolicy: Statement must be an object or a non-empty array: %w", err)
	}
	for i, raw := range raws {
		s, err := parseStatement(raw)
		if err != nil {
			return nil, fmt.Errorf("iampolicy: statement %d: %w", i, err)
		}
		p.Statements = append(p.Statements, s)
	}
	return p, nil
}

func parseStatement(raw json.RawMessage) (Statement, error) {
	var m map[string]json.RawMessage
	if err := strictUnmarshal(raw, &m); err != nil || m == nil {
		return Statement{}, errors.New("not a JSON object")
	}
	var s Statement
	seen := map[string]bool{}
	for k, v := range m {
		seen[k] = true
		var err error
		switch k {
		case "Sid":
			err = json.Unmarshal(v, &s.Sid)
		case "Effect":
			err = json.Unmarshal(v, &s.Effect)
			if err == nil && s.Effect != Allow && s.Effect != Deny {
				err = fmt.Errorf("unknown Effect %q", s.Effect)
			}
		case "Action", "NotAction":
			s.notAction = k == "NotAction"
			s.actions, err = parseActions(v)
		case "Resource", "NotResource":
			s.notResource = k == "NotResource"
			s.resources, err = parseResources(v)
		case "Principal", "NotPrincipal":
			s.notPrinc = k == "NotPrincipal"
			s.principal, err = parsePrincipal(v)
		case "Condition":
			s.conditions, err = parseConditions(v)
		default:
			err = fmt.Errorf("unknown element %q", k)
		}
		if err != nil {
			return Statement{}, fmt.Errorf("%s: %w", k, err)
		}
	}
	switch {
	case s.Effect == "":
		return Statement{}, errors.New("no Effect")
	case seen["Action"] == seen["NotAction"]:
		return Statement{}, errors.New("needs exactly one of Action and NotAction")
	case seen["Resource"] && seen["NotResource"]:
		return Statement{}, errors.New("has both Resource and NotResource")
	case seen["Principal"] && seen["NotPrincipal"]:
		return Statement{}, errors.New("has both Principal and NotPrincipal")
	case s.notPrinc && s.Effect == Allow:
		// IAM supports NotPrincipal only with Deny: with Allow it would
		// grant to everyone else, anonymous callers included.
		return Statement{}, errors.New("NotPrincipal is only supported with Deny")
	}
	return s, nil
}

func parseActions(v json.RawMessage) ([]string, error) {
	as, err := strings1(v)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		if a == "*" {
			continue
		}
		if prefix, name, ok := strings.Cut(a, ":"); !ok || prefix == "" || name == "" {
			return nil, fmt.Errorf("%q is not service:action", a)
		}
	}
	return as, nil
}

func parseResources(v json.RawMessage) ([]string, error) {
	rs, err := strings1(v)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r != "*" && !strings.HasPrefix(r, "arn:") {
			return nil, fmt.Errorf("%q is neither an ARN nor *", r)
		}
		if err := noVariable(r); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

func parsePrincipal(v json.RawMessage) (*principals, error) {
	var star string
	if json.Unmarshal(v, &star) == nil {
		if star != "*" {
			return nil, fmt.Errorf("string form must be \"*\", not %q", star)
		}
		return &principals{any: true}, nil
	}
	var m map[string]json.RawMessage
	if err := strictUnmarshal(v, &m); err != nil || len(m) == 0 {
		return nil, errors.New(`want "*" or an object of AWS, Service, Federated or CanonicalUser`)
	}
	p := &principals{}
	for k, raw := range m {
		names, err := strings1(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "AWS":
			for _, n := range names {
				if n == "*" {
					p.any = true
				} else {
					p.aws = append(p.aws, n)
				}
			}
		case "Service", "Federated", "CanonicalUser":
			p.other = append(p.other, names...)
		default:
			return nil, fmt.Errorf("unknown principal type %q", k)
		}
	}
	return p, nil
}

// noVariable refuses policy variables: evaluating "${aws:username}" as the
// literal text would quietly deny (or, in a Deny, allow) what IAM would not.
// It refuses them under either Version: IAM reads them literally in the
// 2008-10-17 language, but a document that writes one almost surely meant
// the substitution, and failing closed beats matching what it did not mean.
// The escapes ${*}, ${?} and ${$} are refused too, for the same reason.
func noVariable(s string) error {
	if strings.Contains(s, "${") {
		return fmt.Errorf("%q uses a policy variable, which this evaluator does not support", s)
	}
	return nil
}

// strings1 reads a string or a non-empty array of strings.
func strings1(v json.RawMessage) ([]string, error) {
	ss, err := oneOrMany[string](v)
	if err != nil {
		return nil, fmt.Errorf("want a string or an array of strings: %w", err)
	}
	if len(ss) == 0 || slices.Contains(ss, "") {
		return nil, errors.New("empty value")
	}
	return ss, nil
}

// oneOrMany reads either one T or an array of T, as IAM allows for most elements.
func oneOrMany[T any](v json.RawMessage) ([]T, error) {
	if len(v) == 0 {
		return nil, errors.New("missing")
	}
	if v[0] == '[' {
		var many []T
		err := strictUnmarshal(v, &many)
		return many, err
	}
	var one T
	if err := strictUnmarshal(v, &one); err != nil {
		return nil, err
	}
	return []T{one}, nil
}

// strictUnmarshal decodes with numbers kept as written, so that a condition
// value 1.0 stays "1.0" and a large epoch keeps its digits.
func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
