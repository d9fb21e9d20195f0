package awscheck

import (
	"encoding/json"
	"fmt"
	"strings"
)

// token is one lexeme of a DynamoDB expression.
type token struct {
	kind byte // 'i' identifier, '#' name placeholder, ':' value placeholder, 'd' digits, 'p' punctuation
	text string
}

// tokenize splits a projection, condition, filter, key-condition or update
// expression. It knows only as much of the grammar as naming attributes
// needs: DynamoDB validates the rest, and answers a malformed expression
// itself once the call is forwarded.
func tokenize(expr string) ([]token, error) {
	var out []token
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || c == ':':
			j := i + 1
			for j < len(expr) && isWord(expr[j]) {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("a lone %q at %d", c, i)
			}
			out = append(out, token{c, expr[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(expr) && expr[j] >= '0' && expr[j] <= '9' {
				j++
			}
			out = append(out, token{'d', expr[i:j]})
			i = j
		case isWord(c):
			j := i
			for j < len(expr) && isWord(expr[j]) {
				j++
			}
			out = append(out, token{'i', expr[i:j]})
			i = j
		case c == '<' || c == '>':
			j := i + 1
			if j < len(expr) && (expr[j] == '=' || c == '<' && expr[j] == '>') {
				j++
			}
			out = append(out, token{'p', expr[i:j]})
			i = j
		case strings.IndexByte(".[](),=+-", c) >= 0:
			out = append(out, token{'p', string(c)})
			i++
		default:
			return nil, fmt.Errorf("unexpected %q at %d", c, i)
		}
	}
	return out, nil
}

// keywords are the expression grammar's words; DynamoDB reserves them, so
// they never name an attribute without a # placeholder.
var keywords = map[string]bool{"and": true, "or": true, "not": true, "between": true, "in": true,
	"set": true, "remove": true, "add": true, "delete": true}

// topLevelNames returns the top-level attribute each path in expr starts
// with (a.b[2].c names a), placeholders resolved through names. That is
// what dynamodb:Attributes lists: a request touching a nested attribute
// accesses the top-level one that holds it.
func topLevelNames(expr string, names map[string]string) ([]string, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, t := range toks {
		if t.kind != 'i' && t.kind != '#' {
			continue
		}
		if i > 0 && toks[i-1].text == "." {
			continue // a nested element: its top-level attribute came first
		}
		if t.kind == 'i' && (keywords[strings.ToLower(t.text)] || i+1 < len(toks) && toks[i+1].text == "(") {
			continue // a keyword or a function name
		}
		n, err := resolve(t, names)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// equalityValue finds "attr = :v" (either way round) in a key condition
// expression for the attribute named attr, and returns :v's value.
func equalityValue(expr, attr string, names map[string]string, values map[string]json.RawMessage) (string, bool) {
	toks, err := tokenize(expr)
	if err != nil {
		return "", false
	}
	for i := 1; i+1 < len(toks); i++ {
		if toks[i].text != "=" {
			continue
		}
		l, r := toks[i-1], toks[i+1]
		if r.kind == 'i' || r.kind == '#' {
			l, r = r, l
		}
		if l.kind != 'i' && l.kind != '#' || r.kind != ':' {
			continue
		}
		if n, err := resolve(l, names); err != nil || n != attr {
			continue
		}
		if v, ok := values[r.text]; ok {
			return attrString(v)
		}
	}
	return "", false
}

func resolve(t token, names map[string]string) (string, error) {
	if t.kind != '#' {
		return t.text, nil
	}
	n, ok := names[t.text]
	if !ok {
		return "", fmt.Errorf("the expression attribute name %s is not defined", t.text)
	}
	return n, nil
}

// attrString is a key attribute value as IAM compares it: the string of an
// S, N or B value (B stays base64, as on the wire).
func attrString(raw json.RawMessage) (string, bool) {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	for _, k := range []string{"S", "N", "B"} {
		if s, ok := v[k]; ok {
			var out string
			if json.Unmarshal(s, &out) == nil {
				return out, true
			}
		}
	}
	return "", false
}
