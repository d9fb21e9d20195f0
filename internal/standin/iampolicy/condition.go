package iampolicy

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// condition is one key of one operator block: "StringLike": {"k": [...]}.
type condition struct {
	name     string // the operator as written, for messages
	op       operator
	set      setOp
	ifExists bool
	key      string   // lower-cased: IAM matches key names case-insensitively
	values   []string // the policy's values, as strings
}

type setOp int

const (
	single setOp = iota
	forAllValues
	forAnyValue
)

// operator is a base condition operator. match tests one context value
// against one policy value; a negated operator is the NOR of its positive
// form over the policy values, as AWS documents.
type operator struct {
	kind    kind
	match   func(policy, ctx string) bool
	negated bool
}

// kind says how a policy value must be written, checked once by Parse.
type kind int

const (
	kString kind = iota
	kNumber
	kDate
	kBool
	kBinary
	kIP
	kARN
	kNull
)

var operators = map[string]operator{
	"StringEquals":              {kString, func(p, c string) bool { return p == c }, false},
	"StringNotEquals":           {kString, func(p, c string) bool { return p == c }, true},
	"StringEqualsIgnoreCase":    {kString, strings.EqualFold, false},
	"StringNotEqualsIgnoreCase": {kString, strings.EqualFold, true},
	"StringLike":                {kString, func(p, c string) bool { return glob(p, c) }, false},
	"StringNotLike":             {kString, func(p, c string) bool { return glob(p, c) }, true},
	"NumericEquals":             {kNumber, numeric(func(c, p float64) bool { return c == p }), false},
	"NumericNotEquals":          {kNumber, numeric(func(c, p float64) bool { return c == p }), true},
	"NumericLessThan":           {kNumber, numeric(func(c, p float64) bool { return c < p }), false},
	"NumericLessThanEquals":     {kNumber, numeric(func(c, p float64) bool { return c <= p }), false},
	"NumericGreaterThan":        {kNumber, numeric(func(c, p float64) bool { return c > p }), false},
	"NumericGreaterThanEquals":  {kNumber, numeric(func(c, p float64) bool { return c >= p }), false},
	"DateEquals":                {kDate, date(func(c, p time.Time) bool { return c.Equal(p) }), false},
	"DateNotEquals":             {kDate, date(func(c, p time.Time) bool { return c.Equal(p) }), true},
	"DateLessThan":              {kDate, date(func(c, p time.Time) bool { return c.Before(p) }), false},
	"DateLessThanEquals":        {kDate, date(func(c, p time.Time) bool { return !c.After(p) }), false},
	"DateGreaterThan":           {kDate, date(func(c, p time.Time) bool { return c.After(p) }), false},
	"DateGreaterThanEquals":     {kDate, date(func(c, p time.Time) bool { return !c.Before(p) }), false},
	"Bool":                      {kBool, strings.EqualFold, false},
	"BinaryEquals":              {kBinary, binaryEquals, false},
	"IpAddress":                 {kIP, inNetwork, false},
	"NotIpAddress":              {kIP, inNetwork, true},
	// IAM documents ArnEquals and ArnLike alike: both take wildcards and
	// compare the six colon-separated parts one by one.
	"ArnEquals":    {kARN, arnLike, false},
	"ArnLike":      {kARN, arnLike, false},
	"ArnNotEquals": {kARN, arnLike, true},
	"ArnNotLike":   {kARN, arnLike, true},
	"Null":         {kNull, nil, false},
}

func parseConditions(v json.RawMessage) ([]condition, error) {
	var block map[string]map[string]json.RawMessage
	if err := strictUnmarshal(v, &block); err != nil {
		return nil, fmt.Errorf("want {operator: {key: values}}: %w", err)
	}
	var out []condition
	for name, keys := range block {
		c := condition{name: name}
		base := name
		if b, ok := strings.CutPrefix(base, "ForAllValues:"); ok {
			base, c.set = b, forAllValues
		} else if b, ok := strings.CutPrefix(base, "ForAnyValue:"); ok {
			base, c.set = b, forAnyValue
		}
		if b, ok := strings.CutSuffix(base, "IfExists"); ok && b != "Null" {
			base, c.ifExists = b, true
		}
		op, ok := operators[base]
		if !ok {
			return nil, fmt.Errorf("unknown condition operator %q", name)
		}
		if op.kind == kNull && c.set != single {
			return nil, fmt.Errorf("%s: Null takes no set operator", name)
		}
		c.op = op
		if len(keys) == 0 {
			return nil, fmt.Errorf("%s: no condition keys", name)
		}
		for key, raw := range keys {
			vals, err := conditionValues(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, key, err)
			}
			for _, val := range vals {
				if err := checkValue(op.kind, val); err != nil {
					return nil, fmt.Errorf("%s: %s: %w", name, key, err)
				}
			}
			c.key, c.values = strings.ToLower(key), vals
			out = append(out, c)
		}
	}
	return out, nil
}

// conditionValues reads a string, bool or number, or a non-empty array of them.
func conditionValues(raw json.RawMessage) ([]string, error) {
	items, err := oneOrMany[any](raw)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("no values")
	}
	out := make([]string, len(items))
	for i, it := range items {
		switch x := it.(type) {
		case string:
			out[i] = x
		case bool:
			out[i] = strconv.FormatBool(x)
		case json.Number:
			out[i] = x.String()
		default:
			return nil, fmt.Errorf("value %v is not a string, bool or number", it)
		}
	}
	return out, nil
}

// checkValue refuses a policy value IAM would not accept for the operator, so
// that a typo fails at Parse and not as a silent mismatch later.
func checkValue(k kind, v string) error {
	var err error
	switch k {
	case kNumber:
		_, err = parseNumber(v)
	case kDate:
		_, err = parseDate(v)
	case kBool, kNull:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			err = errors.New("want true or false")
		}
	case kBinary:
		_, err = base64.StdEncoding.DecodeString(v)
	case kIP:
		_, err = parsePrefix(v)
	}
	if err != nil {
		return fmt.Errorf("bad value %q: %w", v, err)
	}
	return noVariable(v)
}

// holds evaluates the condition against a request context whose keys are
// lower-cased. A key with no values counts as absent.
func (c *condition) holds(ctx map[string][]string) bool {
	vals := ctx[c.key]
	present := len(vals) > 0
	if c.op.kind == kNull {
		// "true" asks that the key be absent, "false" that it be present.
		for _, v := range c.values {
			if strings.EqualFold(v, "true") != present {
				return true
			}
		}
		return false
	}
	switch c.set {
	case forAllValues:
		// True on an absent or empty key: the trap that makes a bare
		// ForAllValues in an Allow grant requests that lack the key.
		for _, v := range vals {
			if !c.one(v) {
				return false
			}
		}
		return true
	case forAnyValue:
		// False on an absent key even with IfExists, as IAM answers.
		for _, v := range vals {
			if c.one(v) {
				return true
			}
		}
		return false
	}
	if !present {
		// A negated operator holds on an absent key; IfExists makes any
		// operator hold.
		return c.ifExists || c.op.negated
	}
	// A plain operator over a several-valued key: it holds when any value
	// matches; its negation, when none does.
	for _, v := range vals {
		if c.positive(v) {
			return !c.op.negated
		}
	}
	return c.op.negated
}

// one applies the operator to one context value: OR over the policy values,
// NOR for a negated operator.
func (c *condition) one(v string) bool {
	return c.positive(v) != c.op.negated
}

func (c *condition) positive(v string) bool {
	for _, p := range c.values {
		if c.op.match(p, v) {
			return true
		}
	}
	return false
}

func numeric(cmp func(ctx, policy float64) bool) func(string, string) bool {
	return func(p, c string) bool {
		pf, err1 := parseNumber(p)
		cf, err2 := parseNumber(c)
		return err1 == nil && err2 == nil && cmp(cf, pf)
	}
}

// parseNumber reads a decimal number. strconv.ParseFloat alone would also
// take "NaN", "Inf" and hexadecimal, which IAM does not, and NaN would make
// NumericNotEquals hold against everything.
func parseNumber(s string) (float64, error) {
	if strings.ContainsAny(s, "xXnNiI_") {
		return 0, errors.New("not a decimal number")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		err = errors.New("not a finite number")
	}
	return f, err
}

func date(cmp func(ctx, policy time.Time) bool) func(string, string) bool {
	return func(p, c string) bool {
		pt, err1 := parseDate(p)
		ct, err2 := parseDate(c)
		return err1 == nil && err2 == nil && cmp(ct, pt)
	}
}

// parseDate reads the forms IAM accepts: an ISO 8601 date or date-time, or
// seconds since the Unix epoch.
func parseDate(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not an RFC 3339 date or an epoch")
}

// binaryEquals compares base64 text by the bytes it encodes, so that two
// encodings of the same bytes match.
func binaryEquals(p, c string) bool {
	pb, err1 := base64.StdEncoding.DecodeString(p)
	cb, err2 := base64.StdEncoding.DecodeString(c)
	return err1 == nil && err2 == nil && string(pb) == string(cb)
}

// parsePrefix reads a CIDR block or a single address.
func parsePrefix(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.ParsePrefix(s)
}

func inNetwork(p, c string) bool {
	pre, err1 := parsePrefix(p)
	addr, err2 := netip.ParseAddr(c)
	return err1 == nil && err2 == nil && pre.Contains(addr.Unmap())
}

// arnLike matches ARN parts one by one, so a wildcard in one part never
// spills into the next; anything with fewer than six parts never matches.
func arnLike(p, c string) bool {
	pp := strings.SplitN(p, ":", 6)
	cp := strings.SplitN(c, ":", 6)
	if len(pp) != 6 || len(cp) != 6 {
		return false
	}
	for i := range pp {
		if !glob(pp[i], cp[i]) {
			return false
		}
	}
	return true
}

// glob matches s against a pattern where * is any run of characters and ?
// any one character, case-sensitively, across the whole string.
func glob(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti := 0, 0
	star, mark := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			// Let the last * swallow one more character and retry.
			mark++
			pi, ti = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
