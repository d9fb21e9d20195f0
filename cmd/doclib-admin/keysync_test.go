package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/standin/fakeapigateway"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/backend/dynamo"
)

// TestKeysSync: keys sync registers every key of the table in its
// workspace plan's usage plan (repairing what the indexer gave up on), deletes
// the stack's API keys that no doclib key has, leaves other stacks' keys
// alone, and changes nothing on a second run.
func TestKeysSync(t *testing.T) {
	table, tbl := env(t)
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := admin(t, "import", "--data", fixtureFile(t, nil), "--table", table); code != 0 {
		t.Fatal(errs)
	}
	gw := fakeapigateway.New("planind", "planteam", "planent")
	srv := httptest.NewServer(gw)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_API_GATEWAY", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_REGION", "us-east-1")
	const plans = "customer=acme,individual=planind,team=planteam,enterprise=planent"
	stale := strings.Repeat("s", 40)
	other := strings.Repeat("o", 40)
	for _, k := range []fakeapigateway.Key{
		{Name: usageplan.KeyName("acme", stale), Value: stale, Enabled: true, Tags: map[string]string{usageplan.TagCustomer: "acme"}, UsagePlans: []string{"planteam"}},
		{Name: usageplan.KeyName("zeta", other), Value: other, Enabled: true, Tags: map[string]string{usageplan.TagCustomer: "zeta"}},
	} {
		if _, err := gw.AddKey(k); err != nil {
			t.Fatal(err)
		}
	}

	if code, _, errs := admin(t, "keys", "sync", "--table", table); code != 2 || !strings.Contains(errs, "--usage-plans") {
		t.Errorf("no plans: exit %d\n%s", code, errs)
	}
	code, out, errs := admin(t, "keys", "sync", "--table", table, "--usage-plans", plans)
	if code != 0 {
		t.Fatalf("keys sync: exit %d\n%s%s", code, out, errs)
	}
	ctx := context.Background()
	hashes, err := tbl.KeyHashes(ctx)
	if err != nil || len(hashes) == 0 {
		t.Fatalf("key hashes %v, %v", hashes, err)
	}
	store := dynamo.NewStore(tbl)
	tierPlan := map[string]string{"individual": "planind", "team": "planteam", "enterprise": "planent"}
	for _, h := range hashes {
		k, err := store.APIKey(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := store.Workspace(ctx, k.WorkspaceID)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := gw.KeyByValue(usageplan.Value("acme", h))
		if !ok || !got.Enabled || len(got.UsagePlans) != 1 || got.UsagePlans[0] != tierPlan[string(ws.Plan)] {
			t.Errorf("key of %s (plan %s): registered %v %+v", k.WorkspaceID, ws.Plan, ok, got)
		}
	}
	if _, ok := gw.KeyByValue(stale); ok {
		t.Error("the stack's stale API key was not deleted")
	}
	if _, ok := gw.KeyByValue(other); !ok {
		t.Error("another stack's API key was deleted")
	}
	if !strings.Contains(out, "deleted 1 stale API keys") {
		t.Errorf("output %q", out)
	}
	gw.TakeRequests()
	if code, out, errs := admin(t, "keys", "sync", "--table", table, "--usage-plans", plans); code != 0 || !strings.Contains(out, "deleted 0 stale") {
		t.Fatalf("second run: exit %d\n%s%s", code, out, errs)
	}
	for _, r := range gw.TakeRequests() {
		if r.Method != "GET" {
			t.Errorf("the second run changed something: %s %s", r.Method, r.Path)
		}
	}
}
