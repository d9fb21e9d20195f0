package stack

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/dynamo"
)

// recorder is a DynamoDB client that records the partition keys each
// operation touches and answers "not found".
type recorder struct {
	dynamo.Client // nil: any other call panics, which the test should see
	mu            sync.Mutex
	keys          map[string][]string // operation -> partition keys
}

func (r *recorder) add(op string, key map[string]types.AttributeValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pk, _ := key[dynamo.TableSchema().PartitionKey].(*types.AttributeValueMemberS)
	if pk == nil {
		r.keys[op] = append(r.keys[op], "<no string partition key>")
		return
	}
	r.keys[op] = append(r.keys[op], pk.Value)
}

func (r *recorder) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.add("GetItem", in.Key)
	return &dynamodb.GetItemOutput{}, nil
}

func (r *recorder) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	r.add("UpdateItem", in.Key)
	return &dynamodb.UpdateItemOutput{Attributes: map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "1"}}}, nil
}

// TestLeadingKeysMatchTheStore checks the dynamodb:LeadingKeys prefixes of
// the roles against the keys shared/dynamo really uses: the rate limiter's
// and the ledger's updates, and the authorizer's lookups of a key, its
// workspace and its device.
func TestLeadingKeysMatchTheStore(t *testing.T) {
	ctx := context.Background()
	r := &recorder{keys: map[string][]string{}}
	table := &dynamo.Table{Client: r, Name: "t"}
	now := time.Now()

	lim := dynamo.NewLimiter(table)
	if _, err := lim.Take(ctx, "key:abc", 100, time.Minute, now); err != nil {
		t.Fatal(err)
	}
	if err := lim.Release(ctx, "ip:192.0.2.1", time.Minute, now); err != nil {
		t.Fatal(err)
	}
	limiter := r.keys["UpdateItem"]
	r.keys = map[string][]string{}
	led := dynamo.NewLedger(table)
	_ = led.Spend(ctx, "ws_1") // "no credit" or nil: only the key matters
	_ = led.Refund(ctx, "ws_1")
	ledger := r.keys["UpdateItem"]
	r.keys = map[string][]string{}
	store := dynamo.NewStore(table)
	_, _ = store.APIKey(ctx, doclib.HashKey("dlk_live_secret"))
	_, _ = store.Workspace(ctx, "ws_1")
	_, _ = store.Device(ctx, "ws_1", "dev_1")
	authorizer := r.keys["GetItem"]

	check := func(what string, keys []string, n int, prefixes ...string) {
		t.Helper()
		if len(keys) != n {
			t.Fatalf("%s: %d requests recorded (%v), want %d", what, len(keys), keys, n)
		}
		for _, k := range keys {
			ok := false
			for _, p := range prefixes {
				ok = ok || strings.HasPrefix(k, p)
			}
			if !ok {
				t.Errorf("%s touches partition %q, outside the role's LeadingKeys %v", what, k, prefixes)
			}
		}
	}
	check("rate limiter (libraries, documents, search)", limiter, 2, leadRateLimit)
	check("ledger (search)", ledger, 2, leadWorkspace)
	check("authorizer lookups", authorizer, 3, leadKey, leadWorkspace)
	// The ledger's prefix must not open the limiter's, or the other way round.
	if strings.HasPrefix(leadRateLimit, leadWorkspace) || strings.HasPrefix(leadWorkspace, leadRateLimit) {
		t.Error("prefixes overlap")
	}
}
