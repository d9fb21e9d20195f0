package standin

import (
	"slices"
	"testing"

	"github.com/doclib/doclib/internal/standin/cfn"
)

// TestRestAPIReadsBinaryMediaTypes: a template's BinaryMediaTypes, written
// with ~1 for each slash as CloudFormation takes them, reach the gateway as
// media types, so that it base64-encodes exactly those request bodies; a
// REST API without them (the stack's) passes every body as text.
func TestRestAPIReadsBinaryMediaTypes(t *testing.T) {
	for _, c := range []struct {
		property string
		want     []string
	}{
		{``, nil},
		{`"BinaryMediaTypes": ["image~1png", "application~1octet-stream", "*~1*"],`, []string{"image/png", "application/octet-stream", "*/*"}},
	} {
		tmpl, err := cfn.Parse([]byte(`{"Resources": {
			"Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {` + c.property + ` "Name": "x"}},
			"Stage": {"Type": "AWS::ApiGateway::Stage", "Properties": {"StageName": "api", "RestApiId": {"Ref": "Api"}}}
		}}`))
		if err != nil {
			t.Fatal(err)
		}
		api, err := restAPI(tmpl, &cfn.Resolver{T: tmpl, V: cfn.Values{Region: "us-east-1", Account: "123456789012",
			Ref: map[string]string{"Api": "abc123", "Stage": "api"}, Attr: map[string]string{"Api.RootResourceId": "root"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(api.BinaryMediaTypes, c.want) {
			t.Errorf("%s: binary media types %q, want %q", c.property, api.BinaryMediaTypes, c.want)
		}
	}
}
