package iampolicy

import (
	"strings"
	"testing"
)

func TestActionAndResourceMatching(t *testing.T) {
	tests := []struct {
		name, members    string // Action/Resource members of an Allow statement
		action, resource string
		want             bool
	}{
		{"action case-insensitive", `"Action":"dynamodb:GetItem","Resource":"*"`, "DynamoDB:getitem", "arn:aws:dynamodb:us-east-1:1:table/T", true},
		{"action star", `"Action":"dynamodb:Get*","Resource":"*"`, "dynamodb:GetItem", "arn:x", true},
		{"action star is anchored", `"Action":"dynamodb:Get*","Resource":"*"`, "dynamodb:BatchGetItem", "arn:x", false},
		{"action question mark", `"Action":"dynamodb:?etItem","Resource":"*"`, "dynamodb:GetItem", "arn:x", true},
		{"action other service", `"Action":"es:ESHttp*","Resource":"*"`, "s3:ESHttpGet", "arn:x", false},
		{"action all", `"Action":"*","Resource":"*"`, "bedrock:InvokeModel", "arn:x", true},
		{"action list", `"Action":["es:ESHttpGet","es:ESHttpPost"],"Resource":"*"`, "es:ESHttpPost", "arn:x", true},
		{"NotAction other", `"NotAction":"iam:*","Resource":"*"`, "s3:GetObject", "arn:x", true},
		{"NotAction listed, any case", `"NotAction":"iam:*","Resource":"*"`, "IAM:CreateUser", "arn:x", false},
		{"resource trailing star", `"Action":"*","Resource":"arn:aws:es:us-east-1:123456789012:domain/doclib-demo/*"`, "es:ESHttpGet", "arn:aws:es:us-east-1:123456789012:domain/doclib-demo/doclib-documents/_search", true},
		{"resource star needs the slash", `"Action":"*","Resource":"arn:aws:es:us-east-1:123456789012:domain/doclib-demo/*"`, "es:ESHttpGet", "arn:aws:es:us-east-1:123456789012:domain/doclib-demo", false},
		{"resource sibling domain", `"Action":"*","Resource":"arn:aws:es:us-east-1:123456789012:domain/doclib-demo/*"`, "es:ESHttpGet", "arn:aws:es:us-east-1:123456789012:domain/doclib-demo-2/x", false},
		{"resource is case-sensitive", `"Action":"*","Resource":"arn:aws:dynamodb:us-east-1:123456789012:table/Doclib-demo-Table"`, "dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:123456789012:table/doclib-demo-table", false},
		{"resource exact is not a prefix", `"Action":"*","Resource":"arn:aws:dynamodb:us-east-1:123456789012:table/T"`, "dynamodb:Query", "arn:aws:dynamodb:us-east-1:123456789012:table/T/index/byOrder", false},
		{"resource star across slashes", `"Action":"*","Resource":"arn:aws:dynamodb:*:123456789012:table/*"`, "dynamodb:Query", "arn:aws:dynamodb:us-east-1:123456789012:table/T/index/byOrder", true},
		{"resource star across colons", `"Action":"*","Resource":"arn:aws:logs:us-east-1:123456789012:log-group:*"`, "logs:PutLogEvents", "arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/f:log-stream:s", true},
		{"resource question mark", `"Action":"*","Resource":"arn:aws:s3:::b/a?c"`, "s3:GetObject", "arn:aws:s3:::b/abc", true},
		{"resource question mark is one character", `"Action":"*","Resource":"arn:aws:s3:::b/a?c"`, "s3:GetObject", "arn:aws:s3:::b/abbc", false},
		{"NotResource other", `"Action":"*","NotResource":"arn:aws:s3:::secret/*"`, "s3:GetObject", "arn:aws:s3:::public/x", true},
		{"NotResource listed", `"Action":"*","NotResource":"arn:aws:s3:::secret/*"`, "s3:GetObject", "arn:aws:s3:::secret/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, stmt(`"Effect":"Allow",`+tt.members))
			d := Evaluate(Request{Principal: testRole, Action: tt.action, Resource: tt.resource}, []*Policy{p}, nil)
			if d.Allowed != tt.want {
				t.Errorf("%s on %s under {%s}: allowed %v, want %v", tt.action, tt.resource, tt.members, d.Allowed, tt.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	const (
		other  = "arn:aws:iam::123456789012:role/Other"
		domain = "arn:aws:es:us-east-1:123456789012:domain/d/idx/_search"
	)
	allowAll := `{"Version":"2012-10-17","Statement":{"Sid":"All","Effect":"Allow","Action":"es:*","Resource":"*"}}`
	resourceFor := func(effect, principal string) string {
		return stmt(`"Sid":"R","Effect":"` + effect + `","Principal":` + principal + `,"Action":"es:ESHttpPost","Resource":"` + domain + `"`)
	}
	tests := []struct {
		name      string
		principal string
		identity  []string
		resource  string
		ctx       map[string][]string
		allowed   bool
		reason    string // a part of Reason
		sid       string
	}{
		{name: "nothing allows", principal: testRole,
			reason: "because no identity-based policy allows the es:ESHttpPost action"},
		{name: "identity allows", principal: testRole, identity: []string{allowAll}, allowed: true, sid: "All"},
		{name: "identity deny beats allow in another policy", principal: testRole,
			identity: []string{allowAll, stmt(`"Sid":"NoPost","Effect":"Deny","Action":"es:ESHttpPost","Resource":"*"`)},
			reason:   "with an explicit deny in an identity-based policy", sid: "NoPost"},
		{name: "identity deny beats allow in the same policy", principal: testRole,
			identity: []string{`{"Version":"2012-10-17","Statement":[
				{"Effect":"Allow","Action":"es:*","Resource":"*"},
				{"Sid":"D","Effect":"Deny","Action":"es:ESHttp*","Resource":"arn:aws:es:*:*:domain/d/*"}]}`},
			reason: "with an explicit deny in an identity-based policy", sid: "D"},
		{name: "identity deny beats resource allow", principal: testRole,
			identity: []string{stmt(`"Effect":"Deny","Action":"*","Resource":"*"`)},
			resource: resourceFor("Allow", `{"AWS":"`+testRole+`"}`),
			reason:   "with an explicit deny in an identity-based policy"},
		{name: "deny whose condition fails does not deny", principal: testRole,
			identity: []string{allowAll, stmt(`"Effect":"Deny","Action":"*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}`)},
			ctx:      map[string][]string{"aws:SecureTransport": {"true"}}, allowed: true},
		{name: "resource policy naming the role allows alone", principal: testRole,
			resource: resourceFor("Allow", `{"AWS":"`+testRole+`"}`), allowed: true, sid: "R"},
		{name: "resource policy naming the role does not allow another", principal: other,
			resource: resourceFor("Allow", `{"AWS":["`+testRole+`"]}`),
			reason:   "because no identity-based policy allows the es:ESHttpPost action"},
		{name: "resource policy naming the account root allows nothing alone", principal: testRole,
			resource: resourceFor("Allow", `{"AWS":"arn:aws:iam::123456789012:root"}`),
			reason:   "because no identity-based policy allows"},
		{name: "resource policy naming the bare account allows nothing alone", principal: testRole,
			resource: resourceFor("Allow", `{"AWS":"123456789012"}`),
			reason:   "because no identity-based policy allows"},
		{name: "account root delegates to the identity policy", principal: testRole, identity: []string{allowAll},
			resource: resourceFor("Allow", `{"AWS":"arn:aws:iam::123456789012:root"}`), allowed: true, sid: "All"},
		{name: "resource policy for everyone", principal: other, resource: resourceFor("Allow", `"*"`), allowed: true},
		{name: "resource policy for every AWS identity", principal: other, resource: resourceFor("Allow", `{"AWS":"*"}`), allowed: true},
		{name: "service principal is not the role", principal: testRole,
			resource: resourceFor("Allow", `{"Service":"lambda.amazonaws.com"}`), reason: "because no identity-based policy allows"},
		{name: "resource deny naming the role beats identity allow", principal: testRole, identity: []string{allowAll},
			resource: resourceFor("Deny", `{"AWS":"`+testRole+`"}`), reason: "with an explicit deny in a resource-based policy", sid: "R"},
		{name: "resource deny naming the account reaches its roles", principal: testRole, identity: []string{allowAll},
			resource: resourceFor("Deny", `{"AWS":"123456789012"}`), reason: "with an explicit deny in a resource-based policy"},
		{name: "resource deny naming another account", principal: testRole, identity: []string{allowAll},
			resource: resourceFor("Deny", `{"AWS":"arn:aws:iam::999999999999:root"}`), allowed: true},
		{name: "NotPrincipal deny sparing role and account", principal: testRole, identity: []string{allowAll},
			resource: strings.Replace(resourceFor("Deny", `{"AWS":["`+testRole+`","arn:aws:iam::123456789012:root"]}`), `"Principal"`, `"NotPrincipal"`, 1),
			allowed:  true},
		{name: "NotPrincipal deny sparing only the role still denies", principal: testRole, identity: []string{allowAll},
			resource: strings.Replace(resourceFor("Deny", `{"AWS":"`+testRole+`"}`), `"Principal"`, `"NotPrincipal"`, 1),
			reason:   "with an explicit deny in a resource-based policy"},
		{name: "NotPrincipal deny reaches others", principal: other, identity: []string{allowAll},
			resource: strings.Replace(resourceFor("Deny", `{"AWS":["`+testRole+`","123456789012"]}`), `"Principal"`, `"NotPrincipal"`, 1),
			reason:   "with an explicit deny in a resource-based policy"},
		{name: "identity policy naming a principal is refused", principal: testRole,
			identity: []string{stmt(`"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"`)},
			reason:   "names a principal, which IAM refuses"},
		{name: "identity policy without Resource is refused", principal: testRole,
			identity: []string{stmt(`"Effect":"Allow","Action":"*"`)}, reason: "has no Resource, which IAM refuses"},
		{name: "resource policy naming nobody is refused", principal: testRole, identity: []string{allowAll},
			resource: stmt(`"Effect":"Allow","Action":"*","Resource":"*"`), reason: "names no principal, which IAM refuses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var identity []*Policy
			for _, doc := range tt.identity {
				identity = append(identity, mustParse(t, doc))
			}
			var resource *Policy
			if tt.resource != "" {
				resource = mustParse(t, tt.resource)
			}
			d := Evaluate(Request{Principal: tt.principal, Action: "es:ESHttpPost", Resource: domain, Context: tt.ctx}, identity, resource)
			if d.Allowed != tt.allowed || !strings.Contains(d.Reason, tt.reason) || (tt.sid != "" && d.Sid != tt.sid) {
				t.Errorf("got %+v, want allowed %v, reason containing %q, sid %q", d, tt.allowed, tt.reason, tt.sid)
			}
			if d.Allowed && d.Reason != "" {
				t.Errorf("allowed with reason %q", d.Reason)
			}
		})
	}
}

func TestDecisionMessage(t *testing.T) {
	req := Request{Principal: testRole, Action: "dynamodb:PutItem", Resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T"}
	got := Evaluate(req, nil, nil).Message(req)
	want := "User: arn:aws:iam::123456789012:role/Search is not authorized to perform: dynamodb:PutItem" +
		" on resource: arn:aws:dynamodb:us-east-1:123456789012:table/T because no identity-based policy allows the dynamodb:PutItem action"
	if got != want {
		t.Errorf("Message =\n%s\nwant\n%s", got, want)
	}
}
