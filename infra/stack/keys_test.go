package stack

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
)

// recorder is a DynamoDB client that records the partition keys each
// operation touches and answers "not found".
type recorder struct {
	dynamo.Client // nil: any other call panics, which the test should see
	mu            sync.Mutex
	keys          map[string][]string // operation -> partition keys
	updates       []*dynamodb.UpdateItemInput
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
	r.mu.Lock()
	r.updates = append(r.updates, in)
	r.mu.Unlock()
	return &dynamodb.UpdateItemOutput{Attributes: map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "1"}}}, nil
}

// TestLeadingKeysMatchTheStore checks the dynamodb:LeadingKeys prefixes of
// the roles against the keys shared/backend/dynamo really uses: the rate limiter's
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

// expressionWords are the keywords and functions of DynamoDB expressions:
// names in an expression that are not attributes.
var expressionWords = []string{"SET", "ADD", "REMOVE", "DELETE", "AND", "OR", "NOT", "BETWEEN", "IN",
	"attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains", "size", "if_not_exists", "list_append"}

var expressionName = regexp.MustCompile(`[:#]?[A-Za-z_][A-Za-z0-9_]*`)

// attributesOf lists the top-level attributes an UpdateItem names: its key's,
// and those of its update and condition expressions (placeholders resolved).
func attributesOf(in *dynamodb.UpdateItemInput) []string {
	var out []string
	for k := range in.Key {
		out = append(out, k)
	}
	for _, e := range []*string{in.UpdateExpression, in.ConditionExpression} {
		if e == nil {
			continue
		}
		for _, w := range expressionName.FindAllString(*e, -1) {
			switch {
			case strings.HasPrefix(w, ":"), slices.Contains(expressionWords, w):
			case strings.HasPrefix(w, "#"):
				out = append(out, in.ExpressionAttributeNames[w])
			default:
				out = append(out, w)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestCountersMatchTheStore checks the dynamodb:Attributes and
// dynamodb:ReturnValues conditions of the counters' UpdateItem grants against
// the requests shared/backend/dynamo makes: each names only its grant's attributes
// and asks back at most the updated ones, so IAM lets it through, and the
// grants allow nothing the store does not need.
func TestCountersMatchTheStore(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	sc := dynamo.TableSchema()
	for _, c := range []struct {
		what  string
		attrs []string
		run   func(*dynamo.Table)
	}{
		{"rate limiter", attrsRateLimit, func(tb *dynamo.Table) {
			lim := dynamo.NewLimiter(tb)
			_, _ = lim.Take(ctx, "key:abc", 100, time.Minute, now)
			_ = lim.Release(ctx, "ip:192.0.2.1", time.Minute, now)
		}},
		{"ledger", attrsCredit, func(tb *dynamo.Table) {
			led := dynamo.NewLedger(tb)
			_ = led.Spend(ctx, "ws_1")
			_ = led.Refund(ctx, "ws_1")
		}},
	} {
		r := &recorder{keys: map[string][]string{}}
		c.run(&dynamo.Table{Client: r, Name: "t"})
		if len(r.updates) != 2 {
			t.Fatalf("%s: %d updates recorded, want 2", c.what, len(r.updates))
		}
		allowed := append([]string{sc.PartitionKey, sc.SortKey}, c.attrs...)
		used := map[string]bool{}
		for _, in := range r.updates {
			for _, a := range attributesOf(in) {
				used[a] = true
				if !slices.Contains(allowed, a) {
					t.Errorf("%s: UpdateItem %q / %q names %s, which its grant does not allow (%v)", c.what,
						deref(in.UpdateExpression), deref(in.ConditionExpression), a, allowed)
				}
			}
			if rv := string(in.ReturnValues); rv != "" && !slices.Contains(counterReturnValues, rv) {
				t.Errorf("%s: ReturnValues %s, which its grant does not allow (%v)", c.what, rv, counterReturnValues)
			}
		}
		for _, a := range c.attrs {
			if !used[a] {
				t.Errorf("%s: the grant allows attribute %s, which the store never names", c.what, a)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
