package stack

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// omittedFlags are the feature flags `cdk init` writes that cdk.json leaves
// out, each with the reason. None: every recommended flag is on.
var omittedFlags = map[string]string{}

// cdkLib is the aws-cdk-go module the app is built with.
const cdkLib = "github.com/aws/aws-cdk-go/awscdk/v2"

// recommendedFlags reads the feature flags that `cdk init` writes into a new
// app's cdk.json for the aws-cdk-lib version in go.mod: the package's
// recommended-feature-flags.json, from the aws-cdk-lib tarball that the Go
// module carries for jsii.
func recommendedFlags(t *testing.T) (string, map[string]any) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", cdkLib).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", cdkLib, err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	tgz := filepath.Join(dir, "jsii", "aws-cdk-lib-"+strings.TrimPrefix(version, "v")+".tgz")
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatalf("the aws-cdk-lib package of %s %s: %v", cdkLib, version, err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s has no package/recommended-feature-flags.json", tgz)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "package/recommended-feature-flags.json" {
			continue
		}
		var flags map[string]any
		if err := json.NewDecoder(tr).Decode(&flags); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		return version, flags
	}
}

// TestCDKJSONCarriesRecommendedFlags: cdk.json sets every feature flag that
// `cdk init` writes for the CDK version in go.mod, at its recommended value,
// unless omittedFlags names it with a reason; and nothing else. Without
// them the stack is synthesized with the CDK's v1-era defaults, among which
// a changed authorizer never reaches the stage.
func TestCDKJSONCarriesRecommendedFlags(t *testing.T) {
	version, want := recommendedFlags(t)
	got, err := ProjectContext(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 50 {
		t.Fatalf("only %d recommended flags read for %s %s", len(want), cdkLib, version)
	}
	for flag, v := range want {
		if why, ok := omittedFlags[flag]; ok {
			if _, set := got[flag]; set {
				t.Errorf("cdk.json sets %s, which omittedFlags says is left out (%s)", flag, why)
			}
			continue
		}
		g, ok := got[flag]
		if !ok {
			t.Errorf("cdk.json lacks %s (cdk init of %s writes %v); add it, or name it in omittedFlags with the reason", flag, version, v)
		} else if !reflect.DeepEqual(g, v) {
			t.Errorf("cdk.json sets %s to %v; cdk init of %s writes %v", flag, g, version, v)
		}
	}
	for flag := range got {
		if _, ok := want[flag]; !ok && strings.HasPrefix(flag, "@aws-cdk") {
			t.Errorf("cdk.json sets %s, which %s does not recommend", flag, version)
		}
	}
}

// deploymentID is the logical ID of the REST API's one Deployment, and the
// one the stage names.
func deploymentID(t *testing.T, s *synthesized) string {
	t.Helper()
	id := s.one(t, "AWS::ApiGateway::Deployment").ID
	if got := ref(s.one(t, "AWS::ApiGateway::Stage").Props["DeploymentId"]); got != id {
		t.Fatalf("the stage deploys %s, not the template's deployment %s", got, id)
	}
	return id
}

// TestAuthorizerChangeRedeploys: a changed authorizer setting gives the
// Deployment another logical ID, so that CloudFormation creates a new
// deployment and the stage serves the change; a Deployment whose logical ID
// stays the same is never updated, and the stage keeps the old authorizer.
// With the feature flag off, as without cdk.json's context, that is what
// happens.
func TestAuthorizerChangeRedeploys(t *testing.T) {
	const flag = "@aws-cdk/aws-apigateway:authorizerChangeDeploymentLogicalId"
	ids := map[string]string{}
	for _, flagOn := range []bool{true, false} {
		for _, ttl := range []string{"60", "120"} {
			s := synth(t, map[string]any{KeyAuthorizerCacheSeconds: ttl, flag: flagOn})
			ids[fmt.Sprintf("%v %s", flagOn, ttl)] = deploymentID(t, s)
		}
	}
	if ids["true 60"] == ids["true 120"] {
		t.Errorf("authorizerCacheSeconds 60 and 120 give the same Deployment %s: the new TTL would never reach the stage", ids["true 60"])
	}
	if ids["false 60"] != ids["false 120"] {
		t.Errorf("with %s off the Deployment changed (%s, %s): the test no longer shows what the flag does", flag, ids["false 60"], ids["false 120"])
	}
}
