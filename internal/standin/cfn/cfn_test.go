package cfn

import (
	"encoding/json"
	"strings"
	"testing"
)

func resolver(t *testing.T) *Resolver {
	t.Helper()
	var tm Template
	if err := json.Unmarshal([]byte(`{"Resources":{
		"Fn":{"Type":"AWS::Lambda::Function","Properties":{}},
		"Table":{"Type":"AWS::DynamoDB::Table","Properties":{}}}}`), &tm); err != nil {
		t.Fatal(err)
	}
	return &Resolver{T: &tm, V: Values{Account: "123456789012", Region: "us-east-1", Partition: "aws", URLSuffix: "amazonaws.com",
		Ref:  map[string]string{"Table": "doclib-table"},
		Attr: map[string]string{"Fn.Arn": "arn:aws:lambda:us-east-1:123456789012:function:fn", "Table.Arn": "arn:aws:dynamodb:us-east-1:123456789012:table/doclib-table"}}}
}

func TestResolve(t *testing.T) {
	r := resolver(t)
	for _, c := range []struct{ in, want string }{
		{`{"Ref":"Table"}`, `"doclib-table"`},
		{`{"Fn::GetAtt":["Table","Arn"]}`, `"arn:aws:dynamodb:us-east-1:123456789012:table/doclib-table"`},
		{`{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":x"]]}`, `"arn:aws:x"`},
		// The authorizer URI of a CDK template: Select of Split of an ARN.
		{`{"Fn::Select":[3,{"Fn::Split":[":",{"Fn::GetAtt":["Fn","Arn"]}]}]}`, `"us-east-1"`},
		{`{"Fn::Sub":"cdk-${AWS::AccountId}-${AWS::Region}-${!Literal}"}`, `"cdk-123456789012-us-east-1-${Literal}"`},
		{`{"Fn::Sub":["${A}/${Table.Arn}",{"A":{"Ref":"Table"}}]}`, `"doclib-table/arn:aws:dynamodb:us-east-1:123456789012:table/doclib-table"`},
		{`{"a":[{"Ref":"AWS::Region"},1,true]}`, `{"a":["us-east-1",1,true]}`},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.in), &v); err != nil {
			t.Fatal(err)
		}
		got, err := r.Resolve(v)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("%s = %s, want %s", c.in, b, c.want)
		}
	}
}

// An intrinsic the stand-in cannot resolve fails with its name, so that a
// template it cannot read is never run half-understood.
func TestResolveRefusesWhatItCannotRead(t *testing.T) {
	r := resolver(t)
	for _, c := range []struct{ in, want string }{
		{`{"Ref":"Nope"}`, "unknown resource or parameter Nope"},
		{`{"Ref":"Fn"}`, "no value for Ref Fn (AWS::Lambda::Function)"},
		{`{"Fn::GetAtt":["Fn","Nope"]}`, "no value for Fn::GetAtt Fn.Nope"},
		{`{"Fn::ImportValue":"x"}`, "Fn::ImportValue is not supported"},
		{`{"k":{"Fn::If":["C","a","b"]}}`, "k: cfn: intrinsic function Fn::If"},
	} {
		var v any
		_ = json.Unmarshal([]byte(c.in), &v)
		_, err := r.Resolve(v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to say %q", c.in, err, c.want)
		}
	}
}
