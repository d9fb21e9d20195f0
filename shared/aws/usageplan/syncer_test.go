package usageplan

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/doclib/doclib/internal/standin/fakeapigateway"
	doclib "github.com/doclib/doclib/shared"
)

const testCustomer = "demo"

var testPlans = Plans{Customer: testCustomer, ByTier: map[string]string{"individual": "planind", "team": "planteam", "enterprise": "planent"}}

// setup returns a fake and a Syncer of testPlans held to its stack's IAM policy.
func setup(t *testing.T) (*fakeAPIGateway, *Syncer) {
	t.Helper()
	f := newFake(t, "planind", "planteam", "planent")
	return f, &Syncer{Client: f.clientAs(testCustomer), Plans: testPlans}
}

func testValue(secret string) string { return Value(testCustomer, doclib.HashKey(secret)) }

// name is the name of the test stack's key valued value.
func name(value string) string { return KeyName(testCustomer, value) }

// addNoise adds keys the name query also matches (and one it does not), ahead of
// any key a test creates, so that finding it takes the client to a later page.
func addNoise(f *fakeAPIGateway, value string) {
	f.addKey(name(value)+"A|"+testCustomer, testValue("noise-a"), true, "planteam")
	f.addKey("other", testValue("noise-b"), true)
	f.addKey(name(value)+"B|"+testCustomer, testValue("noise-c"), false)
	f.addKey(name(value)+"C|"+testCustomer, testValue("noise-d"), true, "planent")
}

// writes lists the log's write requests as "Operation" or "Operation planID".
func writes(log []fakeapigateway.Request) []string {
	var ws []string
	for _, r := range log {
		if r.Method == http.MethodGet {
			continue
		}
		w := r.Op
		if parts := strings.Split(r.Path, "/"); parts[1] == "usageplans" {
			w += " " + parts[2]
		}
		ws = append(ws, w)
	}
	return ws
}

func count(log []fakeapigateway.Request, op string) int {
	n := 0
	for _, r := range log {
		if r.Op == op {
			n++
		}
	}
	return n
}

// wantKey checks that exactly one key is named name(value), that it is the
// test stack's doclib key (valued value, tagged with the customer and nothing
// else, enabled) and that it is in exactly plans.
func wantKey(t *testing.T, f *fakeAPIGateway, value string, plans ...string) {
	t.Helper()
	wantKeyOf(t, f, testCustomer, value, plans...)
}

func wantKeyOf(t *testing.T, f *fakeAPIGateway, customer, value string, plans ...string) {
	t.Helper()
	ks := f.named(KeyName(customer, value))
	if len(ks) != 1 {
		t.Fatalf("%d keys named %s, want 1", len(ks), KeyName(customer, short(value)))
	}
	k := ks[0]
	if k.Value != value || !k.Enabled || k.Description != description || len(k.Tags) != 1 || k.Tags[TagCustomer] != customer {
		t.Errorf("key %+v: want value %s, enabled, description %q, tags only %s=%s", k, short(value), description, TagCustomer, customer)
	}
	slices.Sort(plans)
	if got := f.plansOf(k.ID); !slices.Equal(got, plans) {
		t.Errorf("key in plans %v, want %v", got, plans)
	}
}

func TestPutCreatesAndAssociates(t *testing.T) {
	f, s := setup(t)
	v := testValue("create")
	addNoise(f, v)
	if err := s.Put(context.Background(), v, "team"); err != nil {
		t.Fatal(err)
	}
	wantKey(t, f, v, "planteam")

	log := f.requests()
	if got, want := writes(log), []string{"CreateApiKey", "CreateUsagePlanKey planteam"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	var pages, legacy int
	for _, r := range log {
		if r.Op != "GetApiKeys" {
			continue
		}
		if r.Query.Get("includeValues") == "true" {
			t.Errorf("GetApiKeys query %v asks for values", r.Query)
		}
		switch r.Query.Get("name") {
		case name(v):
			pages++
			if (pages > 1) != (r.Query.Get("position") != "") {
				t.Errorf("GetApiKeys page %d has position %q", pages, r.Query.Get("position"))
			}
		case v: // looking for a key from before per-stack names
			legacy++
		default:
			t.Errorf("GetApiKeys query %v: want name=doclib-<customer>-<value> (or <value> for a legacy key)", r.Query)
		}
	}
	if pages != 2 || legacy != 1 { // three prefix matches, two a page; no legacy key
		t.Errorf("%d GetApiKeys pages and %d legacy lookups, want 2 and 1", pages, legacy)
	}
}

func TestPutAgainWritesNothing(t *testing.T) {
	f, s := setup(t)
	v := testValue("again")
	addNoise(f, v) // the key lands on the third page: Put must page to find it
	ctx := context.Background()
	if err := s.Put(ctx, v, "enterprise"); err != nil {
		t.Fatal(err)
	}
	f.requests()
	if err := s.Put(ctx, v, "enterprise"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f.requests()); len(got) != 0 {
		t.Errorf("second Put wrote %v, want nothing", got)
	}
	wantKey(t, f, v, "planent")
}

func TestPutMovesKeyOnTierChange(t *testing.T) {
	f, s := setup(t)
	v := testValue("move")
	ctx := context.Background()
	if err := s.Put(ctx, v, "individual"); err != nil {
		t.Fatal(err)
	}
	f.requests()
	if err := s.Put(ctx, v, "enterprise"); err != nil {
		t.Fatal(err)
	}
	// Leaving first: the fake, like API Gateway, refuses a key in two plans of a stage.
	if got, want := writes(f.requests()), []string{"DeleteUsagePlanKey planind", "CreateUsagePlanKey planent"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	wantKey(t, f, v, "planent")
}

func TestPutRepairs(t *testing.T) {
	for _, c := range []struct {
		name    string
		enabled bool
		plans   []string
		writes  []string
	}{
		{"key in no plan", true, nil, []string{"CreateUsagePlanKey planteam"}},
		{"disabled key", false, []string{"planteam"}, []string{"UpdateApiKey"}},
		{"key in the wrong plans", true, []string{"planind", "planent"}, []string{"DeleteUsagePlanKey planent", "DeleteUsagePlanKey planind", "CreateUsagePlanKey planteam"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, s := setup(t)
			v := testValue("repair")
			f.add(fakeapigateway.Key{Name: name(v), Value: v, Enabled: c.enabled, Description: description,
				Tags: map[string]string{TagCustomer: testCustomer}, UsagePlans: c.plans})
			if err := s.Put(context.Background(), v, "team"); err != nil {
				t.Fatal(err)
			}
			if got := writes(f.requests()); !slices.Equal(got, c.writes) {
				t.Errorf("writes %v, want %v", got, c.writes)
			}
			wantKey(t, f, v, "planteam")
		})
	}
}

// A create whose response was lost is retried by the SDK, and the retry meets
// the key the first attempt made.
func TestPutAfterLostCreateResponse(t *testing.T) {
	f, s := setup(t)
	v := testValue("lost")
	f.fail("CreateApiKey", fakeapigateway.Error{Status: http.StatusBadGateway, Type: "InternalFailure", Message: "upstream gone", Applied: true})
	if err := s.Put(context.Background(), v, "individual"); err != nil {
		t.Fatal(err)
	}
	if n := count(f.requests(), "CreateApiKey"); n != 2 {
		t.Errorf("%d CreateApiKey requests, want 2", n)
	}
	wantKey(t, f, v, "planind")
}

func TestPutUnknownTier(t *testing.T) {
	f, s := setup(t)
	v := testValue("tier")
	err := s.Put(context.Background(), v, "gold")
	if err == nil || !strings.Contains(err.Error(), `"gold"`) || !strings.Contains(err.Error(), "enterprise, individual, team") {
		t.Errorf("Put(gold) = %v, want an error naming the tier and the known ones", err)
	}
	if log := f.requests(); len(log) != 0 {
		t.Errorf("Put with an unknown tier sent %d requests", len(log))
	}
}

func TestPutBadValue(t *testing.T) {
	f, s := setup(t)
	for _, v := range []string{"", "short", "dlu-has-a-dash-0123456789"} {
		if err := s.Put(context.Background(), v, "team"); err == nil {
			t.Errorf("Put(%q) succeeded", v)
		}
	}
	if log := f.requests(); len(log) != 0 {
		t.Errorf("Put with bad values sent %d requests", len(log))
	}
}

func TestPutTwoKeysOfOneName(t *testing.T) {
	f, s := setup(t)
	v := testValue("twice")
	f.addKey(name(v)+"|"+testCustomer, v, true, "planteam")
	f.addKey(name(v)+"|"+testCustomer, testValue("someone else's"), true)
	err := s.Put(context.Background(), v, "team")
	if err == nil || !strings.Contains(err.Error(), "2 API keys are named") || strings.Contains(err.Error(), v) {
		t.Errorf("Put = %v, want an error about two keys that hides the value", err)
	}
	if got := writes(f.requests()); len(got) != 0 {
		t.Errorf("writes %v, want nothing", got)
	}
}

func TestDelete(t *testing.T) {
	f, s := setup(t)
	v := testValue("delete")
	addNoise(f, v)
	ctx := context.Background()
	if err := s.Put(ctx, v, "team"); err != nil {
		t.Fatal(err)
	}
	f.requests()
	if err := s.Delete(ctx, v); err != nil {
		t.Fatal(err)
	}
	if got, want := writes(f.requests()), []string{"DeleteApiKey"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if ks := f.named(name(v)); len(ks) != 0 {
		t.Errorf("key still there: %+v", ks)
	}
	if ks := f.named(name(v) + "A"); len(ks) != 1 {
		t.Errorf("Delete touched a key whose name only starts with the value")
	}
}

func TestDeleteMissing(t *testing.T) {
	f, s := setup(t)
	addNoise(f, testValue("missing"))
	if err := s.Delete(context.Background(), testValue("missing")); err != nil {
		t.Fatal(err)
	}
	if got := writes(f.requests()); len(got) != 0 {
		t.Errorf("writes %v, want nothing", got)
	}
}

func TestDeleteRaceIsFine(t *testing.T) {
	f, s := setup(t)
	v := testValue("race")
	f.addKey(name(v)+"|"+testCustomer, v, true, "planteam")
	// Another deleter got there between our lookup and our delete.
	f.fail("DeleteApiKey", fakeapigateway.Error{Status: http.StatusNotFound, Type: "NotFoundException", Message: "Invalid API Key identifier specified", Applied: true})
	if err := s.Delete(context.Background(), v); err != nil {
		t.Fatal(err)
	}
}

func TestThrottlingIsRetried(t *testing.T) {
	f, s := setup(t)
	v := testValue("throttled")
	tooMany := fakeapigateway.Error{Status: http.StatusTooManyRequests, Type: "TooManyRequestsException", Message: "Too Many Requests"}
	f.fail("GetApiKeys", tooMany)
	f.fail("CreateUsagePlanKey", tooMany, tooMany)
	if err := s.Put(context.Background(), v, "team"); err != nil {
		t.Fatal(err)
	}
	log := f.requests()
	if n := count(log, "CreateUsagePlanKey"); n != 3 {
		t.Errorf("%d CreateUsagePlanKey requests, want 3 (two throttled)", n)
	}
	if n := count(log, "GetApiKeys"); n != 3 {
		t.Errorf("%d GetApiKeys requests, want 3 (one throttled, then ours and the legacy lookup)", n)
	}
	wantKey(t, f, v, "planteam")
}

func TestAccessDenied(t *testing.T) {
	denied := fakeapigateway.Error{Status: http.StatusForbidden, Type: "AccessDeniedException",
		Message: "User: arn:aws:sts::123456789012:assumed-role/indexer/x is not authorized to perform: apigateway:POST"}
	for _, c := range []struct{ op, plan string }{
		{"GetApiKeys", ""},
		{"CreateApiKey", ""},
		{"GetUsagePlanKey", "planent"},
		{"CreateUsagePlanKey", "planteam"},
	} {
		t.Run(c.op, func(t *testing.T) {
			f, s := setup(t)
			v := testValue("denied")
			f.fail(c.op, denied, denied, denied)
			err := s.Put(context.Background(), v, "team")
			if err == nil {
				t.Fatal("Put succeeded")
			}
			msg := err.Error()
			for _, want := range []string{c.op, short(v), c.plan, "AccessDeniedException"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not name %q", msg, want)
				}
			}
			if strings.Contains(msg, v) {
				t.Errorf("error %q contains the whole value", msg)
			}
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDeniedException" {
				t.Errorf("error %v does not unwrap to the API error", err)
			}
			if n := count(f.requests(), c.op); n != 1 {
				t.Errorf("%d %s requests, want 1: access denied is not retried", n, c.op)
			}
		})
	}
}

// A transport error quotes the request URL, and GetApiKeys has the value in its
// query: the error must not pass it on.
func TestTransportErrorHidesValue(t *testing.T) {
	f := newFake(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens there now
	s := &Syncer{Client: f.clientFor(srv.URL), Plans: testPlans}
	v := testValue("offline")
	for name, err := range map[string]error{
		"Put":    s.Put(context.Background(), v, "team"),
		"Delete": s.Delete(context.Background(), v),
	} {
		if err == nil {
			t.Fatalf("%s succeeded with no server", name)
		}
		if strings.Contains(err.Error(), v) || !strings.Contains(err.Error(), short(v)) {
			t.Errorf("%s error %q: want the value's prefix, not the value", name, err)
		}
	}
}

func TestPutNeedsACustomer(t *testing.T) {
	f, _ := setup(t)
	for _, c := range []string{"", "Demo", "-x", "a b"} {
		s := &Syncer{Client: f.clientAs(testCustomer), Plans: Plans{Customer: c, ByTier: testPlans.ByTier}}
		if err := s.Put(context.Background(), testValue("nobody"), "team"); err == nil || !strings.Contains(err.Error(), "customer") {
			t.Errorf("Put with customer %q: %v, want an error about the customer", c, err)
		}
		if err := s.Delete(context.Background(), testValue("nobody")); err == nil {
			t.Errorf("Delete with customer %q succeeded", c)
		}
	}
	if log := f.requests(); len(log) != 0 {
		t.Errorf("a Syncer without a customer sent %d requests", len(log))
	}
}

// Two stacks in one account hold the same doclib key (one data set imported
// into both). Neither may take, join or delete the other's API key: the
// second stack's Put fails, saying why, and its Delete leaves the key alone.
// Both Syncers are held to their own stack's IAM policy.
func TestTwoStacksShareAnAccount(t *testing.T) {
	f := newFake(t, "planind", "planteam", "planent", "bind", "bteam", "bent")
	a := &Syncer{Client: f.clientAs("acme"), Plans: Plans{Customer: "acme", ByTier: testPlans.ByTier}}
	b := &Syncer{Client: f.clientAs("bolt"), Plans: Plans{Customer: "bolt", ByTier: map[string]string{"individual": "bind", "team": "bteam", "enterprise": "bent"}}}
	ctx := context.Background()
	v := testValue("shared")
	if err := a.Put(ctx, v, "team"); err != nil {
		t.Fatal(err)
	}
	f.requests()

	err := b.Put(ctx, v, "enterprise")
	if err == nil || !strings.Contains(err.Error(), "not this stack's") || strings.Contains(err.Error(), v) {
		t.Errorf("second stack's Put = %v, want an error saying the key is another stack's, without the value", err)
	}
	if got, want := writes(f.requests()), []string{"CreateApiKey"}; !slices.Equal(got, want) {
		t.Errorf("second stack's Put wrote %v, want only the refused %v", got, want)
	}
	if err := b.Delete(ctx, v); err != nil {
		t.Fatal(err)
	}
	if got := writes(f.requests()); len(got) != 0 {
		t.Errorf("second stack's Delete wrote %v, want nothing", got)
	}
	wantKeyOf(t, f, "acme", v, "planteam")

	// The first stack still manages its key.
	if err := a.Delete(ctx, v); err != nil {
		t.Fatal(err)
	}
	if ks := f.named(KeyName("acme", v)); len(ks) != 0 {
		t.Errorf("first stack's Delete left %+v", ks)
	}

	// What the stacks really send: the same doclib key imported into both
	// stands for a value per customer, so each stack has its own API key.
	h := doclib.HashKey("dlk_imported_into_both_stacks")
	if err := a.Put(ctx, Value("acme", h), "team"); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, Value("bolt", h), "enterprise"); err != nil {
		t.Errorf("the second stack cannot register the same doclib key: %v", err)
	}
	wantKeyOf(t, f, "acme", Value("acme", h), "planteam")
	wantKeyOf(t, f, "bolt", Value("bolt", h), "bent")
}

// Keys named like the stack's but without its tag (another customer's tag,
// or none) are not the stack's: Put makes its own key and never touches them.
func TestPutIgnoresLookalikes(t *testing.T) {
	f, s := setup(t)
	v := testValue("lookalike")
	other := f.addKey(name(v)+"|intruder", testValue("intruder"), false, "planteam")
	untagged := f.addKey(name(v), testValue("untagged"), false)
	ctx := context.Background()
	if err := s.Put(ctx, v, "individual"); err != nil {
		t.Fatal(err)
	}
	if got, want := writes(f.requests()), []string{"CreateApiKey", "DeleteUsagePlanKey planteam", "CreateUsagePlanKey planind"}; slices.Contains(got, "UpdateApiKey") || got[0] != want[0] {
		t.Errorf("writes %v: want a new key, no change of another's", got)
	}
	for _, k := range []fakeapigateway.Key{other, untagged} {
		if got := f.key(k.ID); got.Enabled || got.Name != name(v) || got.Tags[TagCustomer] != k.Tags[TagCustomer] {
			t.Errorf("lookalike changed: %+v", got)
		}
	}
	var ours int
	for _, k := range f.named(name(v)) {
		if k.Tags[TagCustomer] == testCustomer {
			ours++
			if k.Value != v || !slices.Equal(f.plansOf(k.ID), []string{"planind"}) {
				t.Errorf("the stack's key %+v in %v", k, f.plansOf(k.ID))
			}
		}
	}
	if ours != 1 {
		t.Errorf("%d keys of the stack, want 1", ours)
	}
	if err := s.Put(ctx, v, "individual"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f.requests()); len(got) != 0 {
		t.Errorf("second Put wrote %v, want nothing", got)
	}
}

// A key registered before keys were named and tagged per stack (named its
// value, untagged) is the stack's if it is in one of the stack's plans: Put
// tags it, then renames it, and goes on as with any key.
func TestPutAdoptsLegacyKey(t *testing.T) {
	f, s := setup(t)
	v := testValue("legacy")
	f.add(fakeapigateway.Key{Name: v, Value: v, Enabled: true, Description: description, UsagePlans: []string{"planind"}})
	ctx := context.Background()
	if err := s.Put(ctx, v, "team"); err != nil {
		t.Fatal(err)
	}
	if got, want := writes(f.requests()), []string{"TagResource", "UpdateApiKey", "DeleteUsagePlanKey planind", "CreateUsagePlanKey planteam"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	wantKey(t, f, v, "planteam")
	if ks := f.named(v); len(ks) != 0 {
		t.Errorf("legacy name still there: %+v", ks)
	}
	if err := s.Put(ctx, v, "team"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f.requests()); len(got) != 0 {
		t.Errorf("second Put wrote %v, want nothing", got)
	}
}

// An adoption that tagged the key but stopped before renaming it is finished.
func TestPutFinishesAdoption(t *testing.T) {
	f, s := setup(t)
	v := testValue("half adopted")
	f.add(fakeapigateway.Key{Name: v, Value: v, Enabled: true, Description: description,
		Tags: map[string]string{TagCustomer: testCustomer}, UsagePlans: []string{"planteam"}})
	if err := s.Put(context.Background(), v, "team"); err != nil {
		t.Fatal(err)
	}
	if got, want := writes(f.requests()), []string{"UpdateApiKey"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	wantKey(t, f, v, "planteam")
}

// An untagged key of the value in none of the stack's plans may be another
// stack's from before per-stack keys: it is not adopted, and Put fails.
func TestPutLeavesForeignLegacyKey(t *testing.T) {
	f, s := setup(t)
	f.AddUsagePlan("elsewhere")
	v := testValue("foreign legacy")
	k := f.addKey(v, v, true, "elsewhere")
	ctx := context.Background()
	if err := s.Put(ctx, v, "team"); err == nil || !strings.Contains(err.Error(), "not this stack's") {
		t.Errorf("Put = %v, want an error saying the key is not this stack's", err)
	}
	if err := s.Delete(ctx, v); err != nil {
		t.Fatal(err)
	}
	if got, want := writes(f.requests()), []string{"CreateApiKey"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want only the refused %v", got, want)
	}
	if got := f.key(k.ID); got.Name != v || len(got.Tags) != 0 || !slices.Equal(f.plansOf(k.ID), []string{"elsewhere"}) {
		t.Errorf("foreign key changed: %+v in %v", got, f.plansOf(k.ID))
	}
}

func TestDeleteLegacyKey(t *testing.T) {
	f, s := setup(t)
	v := testValue("legacy delete")
	f.addKey(v, v, true, "planent")
	if err := s.Delete(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if got, want := writes(f.requests()), []string{"TagResource", "UpdateApiKey", "DeleteApiKey"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if ks := append(f.named(v), f.named(name(v))...); len(ks) != 0 {
		t.Errorf("legacy key still there: %+v", ks)
	}
}
