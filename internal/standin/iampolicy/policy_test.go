package iampolicy

import (
	"strings"
	"testing"
)

func mustParse(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	return p
}

// stmt wraps one statement's JSON members in a 2012-10-17 document.
func stmt(members string) string {
	return `{"Version":"2012-10-17","Statement":{` + members + `}}`
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown top element", `{"Version":"2012-10-17","Statment":[]}`, `unknown element "Statment"`},
		{"unknown version", `{"Version":"2012-10-18","Statement":[]}`, "unknown Version"},
		{"no statements", `{"Version":"2012-10-17","Statement":[]}`, "non-empty array"},
		{"not an object", `[1]`, "iampolicy"},
		{"trailing data", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}} {}`, "trailing data"},
		{"unknown statement element", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Resources":"*"`), `unknown element "Resources"`},
		{"lower-case effect", stmt(`"Effect":"allow","Action":"*","Resource":"*"`), `unknown Effect "allow"`},
		{"no effect", stmt(`"Action":"*","Resource":"*"`), "no Effect"},
		{"no action", stmt(`"Effect":"Allow","Resource":"*"`), "exactly one of Action and NotAction"},
		{"action and notaction", stmt(`"Effect":"Allow","Action":"*","NotAction":"s3:*","Resource":"*"`), "exactly one of Action and NotAction"},
		{"resource and notresource", stmt(`"Effect":"Allow","Action":"*","Resource":"*","NotResource":"*"`), "both Resource and NotResource"},
		{"principal and notprincipal", stmt(`"Effect":"Deny","Action":"*","Resource":"*","Principal":"*","NotPrincipal":"*"`), "both Principal and NotPrincipal"},
		{"notprincipal with allow", stmt(`"Effect":"Allow","Action":"*","Resource":"*","NotPrincipal":{"AWS":"123456789012"}`), "only supported with Deny"},
		{"action without service", stmt(`"Effect":"Allow","Action":"GetItem","Resource":"*"`), "not service:action"},
		{"empty action", stmt(`"Effect":"Allow","Action":[],"Resource":"*"`), "empty value"},
		{"resource not an arn", stmt(`"Effect":"Allow","Action":"*","Resource":"Doclib-demo-Table"`), "neither an ARN nor *"},
		{"principal string", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Principal":"123456789012"`), `must be "*"`},
		{"principal type", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Principal":{"Role":"x"}`), `unknown principal type "Role"`},
		{"unknown operator", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEqualz":{"k":"v"}}`), `unknown condition operator "StringEqualz"`},
		{"unknown set operator", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForSomeValues:StringEquals":{"k":"v"}}`), "unknown condition operator"},
		{"null if exists", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"NullIfExists":{"k":"true"}}`), "unknown condition operator"},
		{"null with set operator", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"ForAllValues:Null":{"k":"true"}}`), "no set operator"},
		{"variable in resource", stmt(`"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::b/${aws:username}/*"`), "policy variable"},
		{"variable in condition", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"aws:PrincipalTag/team":"${aws:username}"}}`), "policy variable"},
		{"variable without Version", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::b/${aws:username}"}}`, "policy variable"},
		{"variable escape", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringLike":{"k":"a${*}b"}}`), "policy variable"},
		{"NaN number", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"NumericNotEquals":{"k":"NaN"}}`), `bad value "NaN"`},
		{"hex number", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"NumericEquals":{"k":"0x10"}}`), `bad value "0x10"`},
		{"bad number", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"NumericLessThan":{"k":"ten"}}`), `bad value "ten"`},
		{"bad date", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"DateLessThan":{"k":"next week"}}`), `bad value "next week"`},
		{"bad bool", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"Bool":{"k":"yes"}}`), `bad value "yes"`},
		{"bad base64", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"BinaryEquals":{"k":"!!"}}`), `bad value "!!"`},
		{"bad ip", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"IpAddress":{"k":"10.0.0.0/33"}}`), "bad value"},
		{"object condition value", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"k":{"a":"b"}}}`), "not a string, bool or number"},
		{"null condition value", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"k":null}}`), "not a string, bool or number"},
		{"empty condition values", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{"k":[]}}`), "no values"},
		{"empty operator block", stmt(`"Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringEquals":{}}`), "no condition keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			if err == nil {
				t.Fatalf("Parse accepted %s", tt.doc)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	p := mustParse(t, `{
		"Version": "2012-10-17", "Id": "doc",
		"Statement": [
			{"Sid": "One", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": ["arn:aws:s3:::b/*"],
			 "Principal": {"AWS": ["arn:aws:iam::123456789012:role/R", "123456789012"], "Service": "lambda.amazonaws.com"},
			 "Condition": {"Bool": {"aws:SecureTransport": true}, "NumericLessThan": {"s3:max-keys": [10, 20.5]}}},
			{"Effect": "Deny", "NotAction": "s3:*", "NotResource": "*", "NotPrincipal": {"AWS": "*"}}
		]}`)
	if p.Version != "2012-10-17" || p.ID != "doc" || len(p.Statements) != 2 {
		t.Fatalf("got %+v", p)
	}
	if s := p.Statements[0]; s.Sid != "One" || s.Effect != Allow || len(s.conditions) != 2 {
		t.Errorf("statement 0 = %+v", s)
	}
	if got := mustParse(t, `{"Statement":{"Effect":"Allow","Action":"*"}}`); got.Version != "2008-10-17" {
		t.Errorf("default Version = %q, want 2008-10-17", got.Version)
	}
}
