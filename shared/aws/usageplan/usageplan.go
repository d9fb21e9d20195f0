// Package usageplan keeps Amazon API Gateway's API keys in step with doclib's keys.
//
// doclib's REST API sits behind API Gateway with a Lambda REQUEST authorizer and
// apiKeySource AUTHORIZER: clients never send an API Gateway key. The authorizer
// checks the doclib key and returns a usageIdentifierKey, and API Gateway
// throttles the request by the usage plan of the API key whose value equals it.
// API Gateway only knows the API keys it has been given: on methods that require
// an API key (usage plans apply to no others) it refuses a request whose
// usageIdentifierKey matches no enabled API key in a usage plan of the stage,
// however valid the doclib key. So every doclib key needs exactly one
// API Gateway API key, valued Value(hash), registered in the usage plan of its
// workspace's tier and in no other. Syncer.Put and Syncer.Delete maintain that
// as keys are created, change tier with their workspace, and go away.
//
// API keys are account- and Region-wide, and every customer's stack shares the
// account. So a stack's keys carry its customer twice: in their name,
// KeyName(customer, value), and in the tag TagCustomer, which the indexer's IAM
// policy requires on every key it creates, changes or deletes. A Syncer only
// ever finds, changes or deletes keys with both.
package usageplan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	doclib "github.com/doclib/doclib/shared"
)

// Value returns the API Gateway API key value standing for a doclib key whose
// secret hashes to h, in the stack of customer. The authorizer returns it as
// usageIdentifierKey.
//
// It is derived from the hash rather than being the hash because the hash is
// what doclib's key store is looked up by, and API key values are readable by
// anyone allowed apigateway:GET; a derived value links the two only for those
// who already hold the hash. The customer is in it because an API key value
// is unique in the account and every customer's stack shares the account: the
// same doclib key imported into two stacks stands for two API keys, one in
// each stack's plans. The version in the input lets the scheme change without
// new values colliding with old ones (v1 had no customer).
func Value(customer string, h doclib.KeyHash) string {
	sum := sha256.Sum256([]byte("doclib-usage-v2:" + customer + ":" + h.String()))
	return "dlu" + hex.EncodeToString(sum[:]) // 67 characters of [a-z0-9]
}

// TagCustomer is the tag of every API key a Syncer creates: its value is the
// customer of the stack. The stack's IAM policy lets the indexer create keys
// only with this tag (and no other), and change or delete only keys that carry
// it with its own customer.
const TagCustomer = "doclib:customer"

// KeyName is the name of the API key valued value in customer's stack:
// doclib-<customer>-<value>.
func KeyName(customer, value string) string { return "doclib-" + customer + "-" + value }

// Plans are a stack's usage plans: the customer the stack serves (it names and
// tags the stack's API keys) and a usage plan ID per tier (a workspace plan:
// "individual", "team", "enterprise").
type Plans struct {
	Customer string
	ByTier   map[string]string
}

// tiers are the workspace plans every Plans from ParsePlans must cover: a key
// of a tier without a usage plan could never be admitted by API Gateway.
var tiers = []string{string(doclib.PlanIndividual), string(doclib.PlanTeam), string(doclib.PlanEnterprise)}

const plansHelp = "set DOCLIB_USAGE_PLANS to customer=<customer>,individual=<usage plan id>,team=<usage plan id>,enterprise=<usage plan id>"

// customerKey is the DOCLIB_USAGE_PLANS entry that names the customer.
const customerKey = "customer"

// ParsePlans reads "customer=acme,individual=abc123,team=def456,enterprise=ghi789",
// the DOCLIB_USAGE_PLANS variable. The customer and every tier must be given
// exactly once; an error names the part that is wrong.
func ParsePlans(s string) (Plans, error) {
	if strings.TrimSpace(s) == "" {
		return Plans{}, errors.New("usageplan: no usage plans: " + plansHelp)
	}
	p := Plans{ByTier: map[string]string{}}
	for part := range strings.SplitSeq(s, ",") {
		tier, id, ok := strings.Cut(part, "=")
		tier, id = strings.TrimSpace(tier), strings.TrimSpace(id)
		switch {
		case strings.TrimSpace(part) == "":
			return Plans{}, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS %q has an empty entry (stray comma?)", s)
		case !ok || tier == "" || id == "":
			return Plans{}, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS entry %q is not tier=<usage plan id> or customer=<customer>", part)
		case tier == customerKey && p.Customer != "":
			return Plans{}, errors.New("usageplan: DOCLIB_USAGE_PLANS gives the customer twice")
		case tier == customerKey:
			if err := checkCustomer(id); err != nil {
				return Plans{}, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS entry %q: %w", part, err)
			}
			p.Customer = id
			continue
		case !slices.Contains(tiers, tier):
			return Plans{}, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS entry %q: unknown tier %q (want %s or one of %s)", part, tier, customerKey, strings.Join(tiers, ", "))
		case p.ByTier[tier] != "":
			return Plans{}, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS gives tier %q twice", tier)
		case !alnum(id):
			// IDs go into request paths, so anything but letters and digits is a typo.
			return Plans{}, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS entry %q: usage plan id %q is not letters and digits", part, id)
		}
		p.ByTier[tier] = id
	}
	if p.Customer == "" {
		return Plans{}, errors.New("usageplan: DOCLIB_USAGE_PLANS names no customer: " + plansHelp)
	}
	for _, tier := range tiers {
		if p.ByTier[tier] == "" {
			return Plans{}, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS has no usage plan for tier %q: %s", tier, plansHelp)
		}
	}
	return p, nil
}

// checkCustomer accepts what the stack accepts as a customer (and a little
// more): 1 to 63 lower-case letters, digits and hyphens, starting with a
// letter. The customer goes into key names and a tag value.
func checkCustomer(c string) error {
	ok := len(c) >= 1 && len(c) <= 63 && 'a' <= c[0] && c[0] <= 'z'
	for _, r := range []byte(c) {
		ok = ok && ('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-')
	}
	if !ok {
		return fmt.Errorf("customer %q is not 1 to 63 lower-case letters, digits or hyphens starting with a letter", c)
	}
	return nil
}

// tiers lists p's tiers in order, for messages.
func (p Plans) tiers() []string {
	ts := make([]string, 0, len(p.ByTier))
	for t := range p.ByTier {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// name describes usage plan id for a message, with the tier(s) it serves.
func (p Plans) name(id string) string {
	var ts []string
	for _, t := range p.tiers() {
		if p.ByTier[t] == id {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return "usage plan " + id
	}
	return fmt.Sprintf("usage plan %s (%s)", id, strings.Join(ts, ", "))
}

func alnum(s string) bool {
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}
