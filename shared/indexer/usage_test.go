package indexer_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/indexer"
)

// fakeKeys is the table's keys for the usage sync.
type fakeKeys struct {
	*fakeSource
	keys    map[doclib.KeyHash]*doclib.APIKey
	listErr error
}

func (k *fakeKeys) APIKey(_ context.Context, h doclib.KeyHash) (*doclib.APIKey, error) {
	if key, ok := k.keys[h]; ok {
		return key, nil
	}
	return nil, doclib.ErrNotFound
}

func (k *fakeKeys) WorkspaceKeyHashes(_ context.Context, ws string) ([]doclib.KeyHash, error) {
	if k.listErr != nil {
		return nil, k.listErr
	}
	var out []doclib.KeyHash
	for h, key := range k.keys {
		if key.WorkspaceID == ws {
			out = append(out, h)
		}
	}
	return out, nil
}

// fakeUsage records the usage plans' state: key → tier.
type fakeUsage struct {
	mu     sync.Mutex
	tiers  map[doclib.KeyHash]string
	calls  []string
	failOn doclib.KeyHash
}

func (u *fakeUsage) Put(_ context.Context, h doclib.KeyHash, tier string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls = append(u.calls, "put "+h.String()[:4]+" "+tier)
	if h == u.failOn {
		return errors.New("TooManyRequestsException")
	}
	u.tiers[h] = tier
	return nil
}

func (u *fakeUsage) Delete(_ context.Context, h doclib.KeyHash) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls = append(u.calls, "delete "+h.String()[:4])
	delete(u.tiers, h)
	return nil
}

func keyRecord(name, seq string, h doclib.KeyHash, old, new map[string]events.DynamoDBAttributeValue) events.DynamoDBEventRecord {
	return record(name, seq, "KEY#"+h.String(), "KEY", old, new)
}

func usageWorld(t *testing.T) (*indexer.Indexer, *fakeKeys, *fakeUsage, [3]doclib.KeyHash) {
	src := world()
	hs := [3]doclib.KeyHash{doclib.HashKey("a"), doclib.HashKey("b"), doclib.HashKey("c")}
	keys := &fakeKeys{fakeSource: src, keys: map[doclib.KeyHash]*doclib.APIKey{
		hs[0]: {ID: "key_a", WorkspaceID: "ws_acme", Hash: hs[0]},
		hs[1]: {ID: "key_b", WorkspaceID: "ws_acme", Hash: hs[1]},
		hs[2]: {ID: "key_c", WorkspaceID: "ws_solo", Hash: hs[2]},
	}}
	usage := &fakeUsage{tiers: map[doclib.KeyHash]string{}}
	x := newIndexer(t, src, newFakeIndex())
	x.Usage, x.Keys = usage, keys
	return x, keys, usage, hs
}

func TestUsageKeysFollowTheTable(t *testing.T) {
	x, keys, usage, hs := usageWorld(t)
	// A new key joins its workspace's tier; a copy of the record changes nothing more.
	ins := keyRecord("INSERT", "1", hs[0], nil, image("id", "key_a", "gen", "g1"))
	if failed := handle(t, x, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{ins, ins}}); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	if usage.tiers[hs[0]] != "team" || len(usage.calls) != 1 {
		t.Fatalf("tiers %v after %v", usage.tiers, usage.calls)
	}
	// An import that rewrote the key as it was (only gen differs) touches nothing.
	usage.calls = nil
	handle(t, x, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		keyRecord("MODIFY", "2", hs[0], image("id", "key_a", "gen", "g1"), image("id", "key_a", "gen", "g2")),
	}})
	if len(usage.calls) != 0 {
		t.Errorf("a gen-only change synced %v", usage.calls)
	}
	// A revoked key leaves the plans.
	delete(keys.keys, hs[0])
	handle(t, x, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{keyRecord("REMOVE", "3", hs[0], image("id", "key_a"), nil)}})
	if _, ok := usage.tiers[hs[0]]; ok || !slices.Contains(usage.calls, "delete "+hs[0].String()[:4]) {
		t.Errorf("a removed key is still registered: %v after %v", usage.tiers, usage.calls)
	}
}

func TestUsageKeysMoveWithTheWorkspacePlan(t *testing.T) {
	x, _, usage, hs := usageWorld(t)
	usage.tiers[hs[0]], usage.tiers[hs[1]], usage.tiers[hs[2]] = "team", "team", "individual"
	x.Source.(*fakeSource).workspaces["ws_acme"].Plan = doclib.PlanEnterprise
	failed := handle(t, x, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "1", "WS#ws_acme", "WS", image("plan", "team"), image("plan", "enterprise")),
	}})
	if failed != nil || usage.tiers[hs[0]] != "enterprise" || usage.tiers[hs[1]] != "enterprise" || usage.tiers[hs[2]] != "individual" {
		t.Errorf("failed %v, tiers %v", failed, usage.tiers)
	}
}

func TestUsageFailuresFailTheirRecordsOnly(t *testing.T) {
	x, keys, usage, hs := usageWorld(t)
	usage.failOn = hs[1]
	failed := handle(t, x, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		keyRecord("INSERT", "1", hs[0], nil, image("id", "key_a")),
		keyRecord("INSERT", "2", hs[1], nil, image("id", "key_b")),
		record("MODIFY", "3", "DOC#doc_it_001", "A", image("title", "a"), image("title", "b")),
	}})
	if !slices.Equal(failed, []string{"2"}) || usage.tiers[hs[0]] != "team" {
		t.Errorf("failed %v, tiers %v", failed, usage.tiers)
	}
	keys.listErr = errors.New("throttled")
	failed = handle(t, x, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "4", "WS#ws_acme", "WS", image("plan", "team"), image("plan", "enterprise")),
	}})
	if !slices.Equal(failed, []string{"4"}) {
		t.Errorf("a workspace whose keys cannot be listed: failed %v", failed)
	}
}

func TestKeyRecordsWithoutUsageSync(t *testing.T) {
	x := newIndexer(t, world(), newFakeIndex())
	c, err := x.Affected(keyRecord("INSERT", "1", doclib.HashKey("a"), nil, image("id", "key_a")))
	if err != nil || !c.Empty() {
		t.Errorf("without usage sync a key touches nothing: %+v %v", c, err)
	}
	x, _, _, _ = usageWorld(t)
	_, err = x.Affected(record("INSERT", "1", "KEY#not-a-hash", "KEY", nil, image("id", "key_a")))
	if err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("a malformed key hash: %v", err)
	}
}
