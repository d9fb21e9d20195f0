package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
)

// TestAccountHelp: the 401, 402 and 403 answers end with the deployment's
// sentence of who fixes what is lacking, the self-hosted default when none
// is set, and never send a client to an app the deployment may not have.
func TestAccountHelp(t *testing.T) {
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	// answers returns the message of each refusal, by code.
	answers := func(opts ...service.Option) map[string]string {
		svc := service.New(memory.New(d), now, append(opts, service.WithSearch(&search.Searcher{}, memory.NewLedger(d.Workspaces)))...)
		out := map[string]string{}
		_, err := svc.Authenticate(ctx, "dlk_demo_not_a_key")
		out[doclib.EUnauthorised] = doclib.ErrorMessage(err)
		_, err = svc.Authenticate(ctx, "dlk_demo_expired_key")
		out[doclib.EKeyExpired] = doclib.ErrorMessage(err)
		_, err = svc.Authenticate(ctx, "dlk_demo_removed_device")
		out[doclib.EKeyDeviceRemoved] = doclib.ErrorMessage(err)
		for secret, code := range map[string]string{"dlk_demo_no_ai_credit": doclib.EInsufficientCredit, "dlk_demo_suspended": doclib.ESubscriptionSuspend} {
			p, err := svc.Authenticate(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			_, err = svc.Search(ctx, p, service.SearchParams{Query: "stock", Page: service.Page{Number: 1, Size: 5}})
			if doclib.ErrorCode(err) != code {
				t.Fatalf("%s: %v, want %s", secret, err, code)
			}
			out[code] = doclib.ErrorMessage(err)
		}
		p, err := svc.Authenticate(ctx, "dlk_demo_no_recordings")
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.SourceRecordings(ctx, p, "doc_x", service.Page{Number: 1, Size: 5})
		out[doclib.EForbidden] = doclib.ErrorMessage(err)
		return out
	}
	steps := map[string]string{
		doclib.EUnauthorised:        "create a new API key",
		doclib.EKeyExpired:          "create a new API key",
		doclib.EKeyDeviceRemoved:    "create a new API key",
		doclib.EInsufficientCredit:  "add AI credit to the workspace",
		doclib.ESubscriptionSuspend: "renew the workspace's subscription",
		doclib.EForbidden:           "create a key with recording-details access",
	}
	for code, msg := range answers() {
		want := "Ask the administrator of this doclib deployment to " + steps[code] + "."
		if !strings.HasSuffix(msg, want) || strings.Contains(msg, "desktop app") {
			t.Errorf("%s by default: %q, want it to end %q", code, msg, want)
		}
	}
	help, err := doclib.ParseAccountHelp("In the Acme app, {action} (Settings > Workspace).")
	if err != nil {
		t.Fatal(err)
	}
	for code, msg := range answers(service.WithAccountHelp(help)) {
		if want := "In the Acme app, " + steps[code] + " (Settings > Workspace)."; !strings.HasSuffix(msg, want) {
			t.Errorf("%s with a product's sentence: %q, want it to end %q", code, msg, want)
		}
	}
	for _, bad := range []string{"Ask your admin.", "{action} or {action}"} {
		if _, err := doclib.ParseAccountHelp(bad); err == nil || !strings.Contains(err.Error(), "{action}") {
			t.Errorf("ParseAccountHelp(%q): %v", bad, err)
		}
	}
}
