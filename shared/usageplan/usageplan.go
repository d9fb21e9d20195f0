// Package usageplan keeps Amazon API Gateway's API keys in step with doclib's keys.
//
// doclib's REST API sits behind API Gateway with a Lambda REQUEST authorizer and
// apiKeySource AUTHORIZER: clients never send an API Gateway key. The authorizer
// checks the doclib key and returns a usageIdentifierKey, and API Gateway
// throttles the request by the usage plan of the API key whose value equals it.
// API Gateway only knows the API keys it has been given: on methods that require
// an API key (usage plans apply to no others) it refuses (403) a request whose
// usageIdentifierKey matches no enabled API key in a usage plan of the stage,
// however valid the doclib key. So every doclib key needs exactly one
// API Gateway API key, valued Value(hash), registered in the usage plan of its
// workspace's tier and in no other. Syncer.Put and Syncer.Delete maintain that
// as keys are created, change tier with their workspace, and go away.
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
// secret hashes to h. The authorizer returns it as usageIdentifierKey.
//
// It is derived from the hash rather than being the hash because the hash is
// what doclib's key store is looked up by, and API key values are readable by
// anyone allowed apigateway:GET; a derived value links the two only for those
// who already hold the hash. The "v1" in the input lets the scheme change later
// without new values colliding with old ones.
func Value(h doclib.KeyHash) string {
	sum := sha256.Sum256([]byte("doclib-usage-v1:" + h.String()))
	return "dlu" + hex.EncodeToString(sum[:]) // 67 characters of [a-z0-9]
}

// Plans maps a tier (a workspace plan: "individual", "team", "enterprise") to a
// usage plan ID.
type Plans map[string]string

// tiers are the workspace plans every Plans from ParsePlans must cover: a key
// of a tier without a usage plan could never be admitted by API Gateway.
var tiers = []string{string(doclib.PlanIndividual), string(doclib.PlanTeam), string(doclib.PlanEnterprise)}

const plansHelp = "set DOCLIB_USAGE_PLANS to individual=<usage plan id>,team=<usage plan id>,enterprise=<usage plan id>"

// ParsePlans reads "individual=abc123,team=def456,enterprise=ghi789", the
// DOCLIB_USAGE_PLANS variable. Every tier must be given exactly once; an error
// names the part that is wrong.
func ParsePlans(s string) (Plans, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("usageplan: no usage plans: " + plansHelp)
	}
	p := Plans{}
	for part := range strings.SplitSeq(s, ",") {
		tier, id, ok := strings.Cut(part, "=")
		tier, id = strings.TrimSpace(tier), strings.TrimSpace(id)
		switch {
		case strings.TrimSpace(part) == "":
			return nil, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS %q has an empty entry (stray comma?)", s)
		case !ok || tier == "" || id == "":
			return nil, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS entry %q is not tier=<usage plan id>", part)
		case !slices.Contains(tiers, tier):
			return nil, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS entry %q: unknown tier %q (want one of %s)", part, tier, strings.Join(tiers, ", "))
		case p[tier] != "":
			return nil, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS gives tier %q twice", tier)
		case !alnum(id):
			// IDs go into request paths, so anything but letters and digits is a typo.
			return nil, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS entry %q: usage plan id %q is not letters and digits", part, id)
		}
		p[tier] = id
	}
	for _, tier := range tiers {
		if p[tier] == "" {
			return nil, fmt.Errorf("usageplan: DOCLIB_USAGE_PLANS has no usage plan for tier %q: %s", tier, plansHelp)
		}
	}
	return p, nil
}

// tiers lists p's tiers in order, for messages.
func (p Plans) tiers() []string {
	ts := make([]string, 0, len(p))
	for t := range p {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// name describes usage plan id for a message, with the tier(s) it serves.
func (p Plans) name(id string) string {
	var ts []string
	for _, t := range p.tiers() {
		if p[t] == id {
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
