package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// CDKJSON is the CDK app's settings file at the module root: the command the
// CLI runs ("app") and the context every synthesis starts from, which holds
// the feature flags `cdk init` writes for the aws-cdk-lib version in go.mod
// (TestCDKJSONCarriesRecommendedFlags compares them with that version's
// recommended-feature-flags.json).
const CDKJSON = "cdk.json"

// ProjectContext reads the "context" of root's cdk.json.
//
// The CDK CLI reads cdk.json itself and hands its context to the app in
// CDK_CONTEXT_JSON; `go run ./infra` without the CLI (the stand-in, the
// tests, CDK_OUTDIR=… go run ./infra) gets nothing from it. The app
// therefore passes this context as AppProps.Context, which the CDK ranks
// below CDK_CONTEXT_JSON: with the CLI nothing changes, without it the
// feature flags still apply, so that every synthesis of the stack is the
// one `cdk deploy` makes. Without them, for one, a changed authorizer would
// never be redeployed (@aws-cdk/aws-apigateway:authorizerChangeDeploymentLogicalId).
func ProjectContext(root string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(root, CDKJSON))
	if err != nil {
		return nil, fmt.Errorf("read the CDK app's settings: %w", err)
	}
	var f struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", CDKJSON, err)
	}
	if f.Context == nil {
		f.Context = map[string]any{}
	}
	return f.Context, nil
}
