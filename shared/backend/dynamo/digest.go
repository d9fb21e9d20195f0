package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
)

// ItemKey is an item's primary key.
type ItemKey struct{ PK, SK string }

// SearchDigests scans the table and returns a digest of each item a search
// index is made from: a document (DOC#<d>, sk A) and each recording behind
// it (sk R#<r>), whole but for the import generation (gen), and a
// workspace's plan (WS#<ws>, sk WS), the one field of it that decides which
// recordings count. Two calls compared tell which of those items were
// written, changed or deleted in between, as a DynamoDB Stream would, for a
// table that has none: a local table, whose embedded index follows it so.
// Every other item is left out: the index holds nothing of it.
func (t *Table) SearchDigests(ctx context.Context) (map[ItemKey]string, error) {
	out := map[ItemKey]string{}
	err := t.Scan(ctx, 4, func(it item) error {
		var key base
		if err := attributevalue.UnmarshalMap(it, &key); err != nil {
			return fmt.Errorf("dynamo: digest an item: %w", err)
		}
		k := ItemKey{PK: key.PK, SK: key.SK}
		var fields map[string]any
		switch {
		case strings.HasPrefix(k.PK, "DOC#") && (k.SK == skDocument || strings.HasPrefix(k.SK, "R#")):
			if err := attributevalue.UnmarshalMap(it, &fields); err != nil {
				return fmt.Errorf("dynamo: digest item %s %s: %w", k.PK, k.SK, err)
			}
			delete(fields, "gen")
		case strings.HasPrefix(k.PK, "WS#") && k.SK == skWorkspace:
			var w workspaceItem
			if err := attributevalue.UnmarshalMap(it, &w); err != nil {
				return fmt.Errorf("dynamo: digest item %s %s: %w", k.PK, k.SK, err)
			}
			fields = map[string]any{"plan": w.Plan}
		default:
			return nil
		}
		b, err := json.Marshal(fields) // map keys in order: a canonical form
		if err != nil {
			return fmt.Errorf("dynamo: digest item %s %s: %w", k.PK, k.SK, err)
		}
		sum := sha256.Sum256(b)
		out[k] = hex.EncodeToString(sum[:16])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
