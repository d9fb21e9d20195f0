package iampolicy

import "testing"

const testRole = "arn:aws:iam::123456789012:role/Search"

// allowedUnder reports whether an Allow of everything under the given
// Condition element lets a request with ctx through.
func allowedUnder(t *testing.T, cond string, ctx map[string][]string) bool {
	t.Helper()
	p := mustParse(t, stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":`+cond))
	return Evaluate(Request{Principal: testRole, Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", Context: ctx}, []*Policy{p}, nil).Allowed
}

func TestConditionOperators(t *testing.T) {
	absent := []string(nil)
	tests := []struct {
		name   string
		op     string // operator name
		values string // the policy's JSON value(s) for key "k"
		ctx    []string
		want   bool
	}{
		{"StringEquals match", "StringEquals", `"demo"`, []string{"demo"}, true},
		{"StringEquals is case-sensitive", "StringEquals", `"demo"`, []string{"Demo"}, false},
		{"StringEquals takes no wildcard", "StringEquals", `"de*"`, []string{"demo"}, false},
		{"StringEquals values are ORed", "StringEquals", `["a","demo"]`, []string{"demo"}, true},
		{"StringEquals absent key", "StringEquals", `"demo"`, absent, false},
		{"StringEquals any of a multivalued key", "StringEquals", `"a"`, []string{"x", "a"}, true},
		{"StringNotEquals other", "StringNotEquals", `["a","b"]`, []string{"c"}, true},
		{"StringNotEquals values are NORed", "StringNotEquals", `["a","b"]`, []string{"b"}, false},
		{"StringNotEquals absent key holds", "StringNotEquals", `"a"`, absent, true},
		{"StringNotEquals multivalued key with a match", "StringNotEquals", `"a"`, []string{"x", "a"}, false},
		{"StringEqualsIgnoreCase", "StringEqualsIgnoreCase", `"Demo"`, []string{"DEMO"}, true},
		{"StringNotEqualsIgnoreCase same", "StringNotEqualsIgnoreCase", `"Demo"`, []string{"demo"}, false},
		{"StringNotEqualsIgnoreCase other", "StringNotEqualsIgnoreCase", `"Demo"`, []string{"prod"}, true},
		{"StringLike star", "StringLike", `"RL#*"`, []string{"RL#lib-1"}, true},
		{"StringLike is case-sensitive", "StringLike", `"RL#*"`, []string{"rl#lib-1"}, false},
		{"StringLike question mark", "StringLike", `"a?c"`, []string{"abc"}, true},
		{"StringLike question mark needs a character", "StringLike", `"a?c"`, []string{"ac"}, false},
		{"StringLike star matches empty", "StringLike", `"RL#*"`, []string{"RL#"}, true},
		{"StringNotLike other", "StringNotLike", `"RL#*"`, []string{"WS#1"}, true},
		{"StringNotLike match", "StringNotLike", `"RL#*"`, []string{"RL#1"}, false},
		{"NumericEquals by value", "NumericEquals", `"10"`, []string{"10.0"}, true},
		{"NumericNotEquals", "NumericNotEquals", `10`, []string{"11"}, true},
		{"NumericNotEquals same", "NumericNotEquals", `10`, []string{"10"}, false},
		{"NumericLessThan", "NumericLessThan", `10`, []string{"9"}, true},
		{"NumericLessThan equal", "NumericLessThan", `10`, []string{"10"}, false},
		{"NumericLessThan not a number", "NumericLessThan", `10`, []string{"nine"}, false},
		{"NumericLessThanEquals", "NumericLessThanEquals", `10`, []string{"10"}, true},
		{"NumericGreaterThan", "NumericGreaterThan", `10`, []string{"10.5"}, true},
		{"NumericGreaterThan equal", "NumericGreaterThan", `10`, []string{"10"}, false},
		{"NumericGreaterThanEquals", "NumericGreaterThanEquals", `10`, []string{"10"}, true},
		{"DateEquals epoch and RFC 3339", "DateEquals", `"2025-01-01T00:00:00Z"`, []string{"1735689600"}, true},
		{"DateEquals across zones", "DateEquals", `"2025-01-01T01:00:00+01:00"`, []string{"2025-01-01T00:00:00Z"}, true},
		{"DateNotEquals", "DateNotEquals", `"2025-01-01"`, []string{"2025-01-02T00:00:00Z"}, true},
		{"DateLessThan", "DateLessThan", `"2025-06-30T23:59:59Z"`, []string{"2025-01-01T00:00:00Z"}, true},
		{"DateLessThan later", "DateLessThan", `"2025-06-30T23:59:59Z"`, []string{"2025-07-01T00:00:00Z"}, false},
		{"DateLessThanEquals equal", "DateLessThanEquals", `"2025-06-30T23:59:59Z"`, []string{"2025-06-30T23:59:59Z"}, true},
		{"DateGreaterThan", "DateGreaterThan", `"2025-04-01T00:00:00Z"`, []string{"2025-04-01T00:00:01Z"}, true},
		{"DateGreaterThan equal", "DateGreaterThan", `"2025-04-01T00:00:00Z"`, []string{"2025-04-01T00:00:00Z"}, false},
		{"DateGreaterThanEquals equal", "DateGreaterThanEquals", `1743465600`, []string{"2025-04-01T00:00:00Z"}, true},
		{"Bool true", "Bool", `true`, []string{"true"}, true},
		{"Bool mismatch", "Bool", `true`, []string{"false"}, false},
		{"Bool absent key", "Bool", `"true"`, absent, false},
		{"BoolIfExists absent key", "BoolIfExists", `"false"`, absent, true},
		{"BinaryEquals", "BinaryEquals", `"QmluYXJ5VmFsdWU="`, []string{"QmluYXJ5VmFsdWU="}, true},
		{"BinaryEquals other bytes", "BinaryEquals", `"QmluYXJ5VmFsdWU="`, []string{"b3RoZXI="}, false},
		{"IpAddress in block", "IpAddress", `"203.0.113.0/24"`, []string{"203.0.113.7"}, true},
		{"IpAddress outside", "IpAddress", `"203.0.113.0/24"`, []string{"198.51.100.1"}, false},
		{"IpAddress single address", "IpAddress", `"203.0.113.7"`, []string{"203.0.113.7"}, true},
		{"IpAddress IPv6", "IpAddress", `"2001:db8::/32"`, []string{"2001:db8::1"}, true},
		{"NotIpAddress outside", "NotIpAddress", `"203.0.113.0/24"`, []string{"198.51.100.1"}, true},
		{"NotIpAddress inside", "NotIpAddress", `"203.0.113.0/24"`, []string{"203.0.113.9"}, false},
		{"ArnEquals", "ArnEquals", `"arn:aws:sns:us-east-1:123456789012:topic"`, []string{"arn:aws:sns:us-east-1:123456789012:topic"}, true},
		{"ArnLike part wildcards", "ArnLike", `"arn:aws:execute-api:*:123456789012:*"`, []string{"arn:aws:execute-api:us-east-1:123456789012:api1/prod/GET/libraries"}, true},
		{"ArnLike other account", "ArnLike", `"arn:aws:execute-api:*:123456789012:*"`, []string{"arn:aws:execute-api:us-east-1:999999999999:api1/prod/GET/x"}, false},
		// A wildcard stays inside its part: 1234* may not swallow ":5678".
		{"ArnLike wildcard stays in its part", "ArnLike", `"arn:aws:sqs:us-east-1:1234*:q"`, []string{"arn:aws:sqs:us-east-1:1234:5678:q"}, false},
		{"ArnLike is case-sensitive", "ArnLike", `"arn:aws:sns:*:123456789012:Topic"`, []string{"arn:aws:sns:us-east-1:123456789012:topic"}, false},
		{"ArnLike not an ARN", "ArnLike", `"arn:aws:sns:*:123456789012:*"`, []string{"topic"}, false},
		{"ArnNotEquals other", "ArnNotEquals", `"arn:aws:sns:us-east-1:123456789012:a"`, []string{"arn:aws:sns:us-east-1:123456789012:b"}, true},
		{"ArnNotLike match", "ArnNotLike", `"arn:aws:sns:*:123456789012:*"`, []string{"arn:aws:sns:us-east-1:123456789012:b"}, false},
		{"ArnNotLike absent key holds", "ArnNotLike", `"arn:aws:sns:*:123456789012:*"`, absent, true},
		{"Null true absent", "Null", `"true"`, absent, true},
		{"Null true empty", "Null", `"true"`, []string{}, true},
		{"Null true present", "Null", `"true"`, []string{"x"}, false},
		{"Null false present", "Null", `false`, []string{"x"}, true},
		{"Null false absent", "Null", `false`, absent, false},
		{"StringEqualsIfExists absent key", "StringEqualsIfExists", `["NONE","UPDATED_OLD"]`, absent, true},
		{"StringEqualsIfExists present other", "StringEqualsIfExists", `["NONE","UPDATED_OLD"]`, []string{"ALL_NEW"}, false},
		{"StringEqualsIfExists present match", "StringEqualsIfExists", `["NONE","UPDATED_OLD"]`, []string{"NONE"}, true},
		{"NumericLessThanIfExists absent key", "NumericLessThanIfExists", `10`, absent, true},
		// The trap: ForAllValues holds when the key is missing or empty.
		{"ForAllValues absent key", "ForAllValues:StringEquals", `["pk","sk"]`, absent, true},
		{"ForAllValues empty key", "ForAllValues:StringEquals", `["pk","sk"]`, []string{}, true},
		{"ForAllValues subset", "ForAllValues:StringEquals", `["pk","sk","n"]`, []string{"sk", "pk"}, true},
		{"ForAllValues one outside", "ForAllValues:StringEquals", `["pk","sk","n"]`, []string{"pk", "plan"}, false},
		{"ForAllValues StringNotLike all outside", "ForAllValues:StringNotLike", `"key1*"`, []string{"key2:audit"}, true},
		{"ForAllValues StringNotLike one inside", "ForAllValues:StringNotLike", `"key1*"`, []string{"key1:legal"}, false},
		{"ForAllValues StringNotLike absent", "ForAllValues:StringNotLike", `"key1*"`, absent, true},
		{"ForAnyValue absent key", "ForAnyValue:StringEquals", `"a"`, absent, false},
		{"ForAnyValue IfExists absent key", "ForAnyValue:StringEqualsIfExists", `"a"`, absent, false},
		{"ForAnyValue one inside", "ForAnyValue:StringEquals", `"a"`, []string{"b", "a"}, true},
		{"ForAnyValue none inside", "ForAnyValue:StringEquals", `"a"`, []string{"b"}, false},
		{"ForAnyValue StringNotEquals one outside", "ForAnyValue:StringNotEquals", `"a"`, []string{"a", "b"}, true},
		{"ForAnyValue StringNotEquals none outside", "ForAnyValue:StringNotEquals", `"a"`, []string{"a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := map[string][]string{}
			if tt.ctx != nil {
				ctx["k"] = tt.ctx
			}
			cond := `{"` + tt.op + `":{"k":` + tt.values + `}}`
			if got := allowedUnder(t, cond, ctx); got != tt.want {
				t.Errorf("%s with k=%q: allowed %v, want %v", cond, tt.ctx, got, tt.want)
			}
		})
	}
}

func TestConditionBlocks(t *testing.T) {
	tests := []struct {
		name string
		cond string
		ctx  map[string][]string
		want bool
	}{
		{"keys in one operator are ANDed: one missing", `{"StringEquals":{"k1":"a","k2":"b"}}`, map[string][]string{"k1": {"a"}}, false},
		{"keys in one operator are ANDed: both", `{"StringEquals":{"k1":"a","k2":"b"}}`, map[string][]string{"k1": {"a"}, "k2": {"b"}}, true},
		{"operators are ANDed", `{"StringEquals":{"k1":"a"},"StringLike":{"k2":"b*"}}`, map[string][]string{"k1": {"a"}, "k2": {"c"}}, false},
		{"key names match case-insensitively", `{"StringEquals":{"aws:RequestTag/doclib:customer":"demo"}}`, map[string][]string{"AWS:REQUESTTAG/DOCLIB:CUSTOMER": {"demo"}}, true},
		{"values stay case-sensitive", `{"StringEquals":{"aws:RequestTag/doclib:customer":"demo"}}`, map[string][]string{"aws:RequestTag/doclib:customer": {"DEMO"}}, false},
		{"aws:PrincipalArn is always in the context", `{"ArnLike":{"aws:PrincipalArn":"arn:aws:iam::123456789012:role/Sea*"}}`, nil, true},
		{"aws:PrincipalAccount is always in the context", `{"StringEquals":{"aws:PrincipalAccount":"123456789012"}}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowedUnder(t, tt.cond, tt.ctx); got != tt.want {
				t.Errorf("%s with %v: allowed %v, want %v", tt.cond, tt.ctx, got, tt.want)
			}
		})
	}
}
