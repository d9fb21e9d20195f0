package usageplan

import (
	"maps"
	"strings"
	"testing"

	doclib "github.com/doclib/doclib/shared"
)

func TestValue(t *testing.T) {
	h := doclib.HashKey("dk_test_secret")
	v := Value("acme", h)

	// Registered API keys and the authorizer must agree on every value ever
	// issued: changing the scheme needs a migration, not just a code change.
	const want = "dlu35f5c4d9c11fd63894a79ec1d959bf69a13390a5c634674fe0dcc4349a888a71"
	if v != want {
		t.Errorf("Value = %s, want %s", v, want)
	}
	if again := Value("acme", doclib.HashKey("dk_test_secret")); again != v {
		t.Errorf("Value not deterministic: %s then %s", v, again)
	}
	if len(v) < 20 || len(v) > 128 || !alnum(v) {
		t.Errorf("Value %q: want 20-128 characters of [A-Za-z0-9]", v)
	}
	if strings.Contains(v, h.String()) {
		t.Errorf("Value %q contains the key hash", v)
	}
	if other := Value("acme", doclib.HashKey("dk_other_secret")); other == v {
		t.Errorf("two hashes give the same value %s", v)
	}
	// API key values are unique in the account that every customer's stack
	// shares: the same doclib key in two stacks must give two values.
	if other := Value("globex", h); other == v {
		t.Errorf("two customers give the same value %s", v)
	}
}

func TestParsePlans(t *testing.T) {
	want := Plans{Customer: "acme-2", ByTier: map[string]string{"individual": "abc123", "team": "def456", "enterprise": "ghi789"}}
	for _, in := range []string{
		"customer=acme-2,individual=abc123,team=def456,enterprise=ghi789",
		" enterprise = ghi789 , team=def456,individual=abc123 , customer= acme-2",
	} {
		got, err := ParsePlans(in)
		if err != nil {
			t.Errorf("ParsePlans(%q): %v", in, err)
		} else if got.Customer != want.Customer || !maps.Equal(got.ByTier, want.ByTier) {
			t.Errorf("ParsePlans(%q) = %v, want %v", in, got, want)
		}
	}

	// Tiers may share a usage plan.
	if _, err := ParsePlans("customer=x,individual=a1,team=a1,enterprise=b2"); err != nil {
		t.Errorf("shared plan: %v", err)
	}

	for _, c := range []struct{ in, want string }{
		{"", "set DOCLIB_USAGE_PLANS"},
		{"  ", "set DOCLIB_USAGE_PLANS"},
		{"individual=abc123,team=def456,enterprise=ghi789", "names no customer"},
		{"customer=a,customer=b,individual=abc123,team=def456,enterprise=ghi789", "customer twice"},
		{"customer=Acme,individual=abc123,team=def456,enterprise=ghi789", `customer "Acme"`},
		{"customer=a,individual=abc123,team=def456", `no usage plan for tier "enterprise"`},
		{"customer=a,individual=abc123,team=def456,enterprise=ghi789,gold=x1", `unknown tier "gold"`},
		{"customer=a,individual=abc123,team=def456,individual=x1,enterprise=ghi789", `tier "individual" twice`},
		{"customer=a,individual,team=def456,enterprise=ghi789", `"individual" is not tier=<usage plan id>`},
		{"customer=a,individual=,team=def456,enterprise=ghi789", `"individual=" is not tier=<usage plan id>`},
		{"customer=a,individual=abc123,,team=def456,enterprise=ghi789", "empty entry"},
		{"customer=a,individual=abc/123,team=def456,enterprise=ghi789", `usage plan id "abc/123"`},
	} {
		got, err := ParsePlans(c.in)
		if err == nil {
			t.Errorf("ParsePlans(%q) = %v, want an error", c.in, got)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePlans(%q) error %q does not say %q", c.in, err, c.want)
		}
	}
}

func TestKeyName(t *testing.T) {
	v := Value("acme", doclib.HashKey("dk_test_secret"))
	if got := KeyName("acme", v); got != "doclib-acme-"+v {
		t.Errorf("KeyName = %s", got)
	}
	// Another customer's names never start with this one's: the name query
	// is a prefix match, and the exact comparison and the tag do the rest.
	if strings.HasPrefix(KeyName("acme-x", v), KeyName("acme", v)) {
		t.Error("names of two customers share a prefix")
	}
}
