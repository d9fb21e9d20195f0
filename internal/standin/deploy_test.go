package standin_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin"
)

// TestAuthorizerChangeNeedsANewDeployment: a stack update reaches the
// stage's authorizer only when the Deployment's logical ID changes, as on
// AWS, where CloudFormation never updates a Deployment in place. With the
// CDK's feature flag off (as the stack was before cdk.json carried it), a
// changed authorizerCacheSeconds is synthesized, deployed, and never served;
// with it on (cdk.json), the change gets a new deployment and is served.
func TestAuthorizerChangeNeedsANewDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesizes the stack three times; not in -short")
	}
	const flag = "@aws-cdk/aws-apigateway:authorizerChangeDeploymentLogicalId"
	root, _ := filepath.Abs("../..")
	synth := func(ttl, flagOn string) *standin.Synthesized {
		t.Helper()
		a, err := standin.Synth(root, t.TempDir(), map[string]string{"customer": "upd", "authorizerCacheSeconds": ttl, flag: flagOn})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ttl := func(s *standin.Stack) time.Duration {
		t.Helper()
		_, api := s.Deployed()
		if len(api.Authorizers) != 1 {
			t.Fatalf("%d authorizers served", len(api.Authorizers))
		}
		for _, a := range api.Authorizers {
			return a.TTL
		}
		return 0
	}
	_, s, _ := startWith(t, 2*time.Minute, "upd", synth("60", "false"), nil)
	before, _ := s.Deployed()

	// The fault: with the flag off, the new TTL does not change the
	// Deployment, and the stage keeps serving 60 s.
	newDep, err := s.Update(synth("120", "false"))
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := s.Deployed(); newDep || after != before || ttl(s) != time.Minute {
		t.Fatalf("flag off: new deployment %v (%s, was %s), TTL %v; want the same deployment, still serving 60 s", newDep, after, before, ttl(s))
	}
	// cdk.json's flags: the change gets a deployment of its own, and the
	// stage serves it.
	newDep, err = s.Update(synth("120", "true"))
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := s.Deployed(); !newDep || after == before || ttl(s) != 2*time.Minute {
		t.Fatalf("flag on: new deployment %v (%s, was %s), TTL %v; want a new deployment serving 120 s", newDep, after, before, ttl(s))
	}
	if resp, body := get(t, clientFrom("127.0.0.31"), s.URL+"/libraries", "dlk_demo_full_scope"); resp.StatusCode != 401 {
		t.Fatalf("after the update, a key the empty table does not hold: %d %s; want the authorizer's 401", resp.StatusCode, body)
	}
}
