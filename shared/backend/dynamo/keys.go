package dynamo

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
)

// NewKey is what an operator asks for.
type NewKey struct {
	WorkspaceID string
	// Libraries is ["*"] or a list of library IDs of the workspace.
	Libraries        []string
	RecordingDetails bool
	// ExpiresAt is zero for a key that never expires.
	ExpiresAt time.Time
}

// KeyInfo describes a stored key, never its secret.
type KeyInfo struct {
	ID               string
	WorkspaceID      string
	DeviceID         string
	Libraries        []string // ["*"] for every library
	RecordingDetails bool
	ExpiresAt        string // RFC 3339, or empty
	CreatedAt        string
	// Imported is true for keys of a data set, false for operators' keys.
	Imported bool
}

// secretAlphabet makes secrets that survive copy and paste: letters and digits.
const secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b) // crypto/rand never fails on supported platforms
	for i := range b {
		b[i] = secretAlphabet[int(b[i])%len(secretAlphabet)]
	}
	return string(b)
}

// CreateKey stores a new operator's key and returns its ID and secret. Only the
// SHA-256 of the secret is stored: the secret is shown this once.
// The workspace and its libraries are read strongly consistent: a key made
// right after an import must find them.
func (t *Table) CreateKey(ctx context.Context, k NewKey, now time.Time) (id, secret string, err error) {
	strong := *t
	strong.ConsistentRead = true
	store := NewStore(&strong)
	if _, err := store.Workspace(ctx, k.WorkspaceID); err != nil {
		if err == doclib.ErrNotFound {
			return "", "", fmt.Errorf("workspace %s does not exist in table %s", k.WorkspaceID, t.Name)
		}
		return "", "", err
	}
	all := len(k.Libraries) == 1 && k.Libraries[0] == "*"
	if !all {
		if len(k.Libraries) == 0 {
			return "", "", fmt.Errorf(`give the key's libraries: "*" for all, or library IDs`)
		}
		libs, err := store.Libraries(ctx, k.WorkspaceID)
		if err != nil {
			return "", "", err
		}
		for _, id := range k.Libraries {
			if id == "*" {
				return "", "", fmt.Errorf(`"*" cannot be mixed with library IDs`)
			}
			if !slices.ContainsFunc(libs, func(l *doclib.Library) bool { return l.ID == id }) {
				return "", "", fmt.Errorf("library %s is not a library of workspace %s", id, k.WorkspaceID)
			}
		}
	}
	if !k.ExpiresAt.IsZero() && !k.ExpiresAt.After(now) {
		return "", "", fmt.Errorf("the expiry %s is not in the future", k.ExpiresAt.Format(time.RFC3339))
	}
	id = "key_" + strings.ToLower(randomString(16))
	secret = "dlk_live_" + randomString(40)
	hash := doclib.HashKey(secret)
	ki := keyItem{ID: id, WorkspaceID: k.WorkspaceID, Hash: hash.String(), AllLibraries: all, RecordingDetails: k.RecordingDetails,
		CreatedAt: now.UTC().Format(time.RFC3339)}
	if !all {
		ki.Libraries = k.Libraries
	}
	if !k.ExpiresAt.IsZero() {
		ki.ExpiresAt = k.ExpiresAt.UTC().Format(time.RFC3339)
	}
	// The lookup item first: a failure then leaves no listing of a key that
	// cannot be used. Neither carries ws, so no import prunes an operator's key.
	for _, b := range []base{{PK: pkKey(hash), SK: skKey}, {PK: pkWorkspace(k.WorkspaceID), SK: skKeyRef(id)}} {
		ki.base = b
		it, err := attributevalue.MarshalMap(ki)
		if err != nil {
			return "", "", err
		}
		cctx, cancel := t.call(ctx)
		_, err = t.Client.PutItem(cctx, &dynamodb.PutItemInput{TableName: aws.String(t.Name), Item: it,
			ConditionExpression: aws.String("attribute_not_exists(pk)")})
		cancel()
		if err != nil {
			return "", "", fmt.Errorf("dynamo: create key: %w", err)
		}
	}
	return id, secret, nil
}

// ListKeys lists a workspace's keys, without secrets (none is stored).
func (t *Table) ListKeys(ctx context.Context, workspaceID string) ([]KeyInfo, error) {
	var out []KeyInfo
	var decodeErr error
	err := t.query(ctx, "list keys", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :k)"),
		ExpressionAttributeValues: item{":pk": str(pkWorkspace(workspaceID)), ":k": str("KEY#")},
	}, func(it item) bool {
		var k keyItem
		if decodeErr = attributevalue.UnmarshalMap(it, &k); decodeErr != nil {
			return false
		}
		libs := k.Libraries
		if k.AllLibraries {
			libs = []string{"*"}
		}
		out = append(out, KeyInfo{ID: k.ID, WorkspaceID: k.WorkspaceID, DeviceID: k.DeviceID, Libraries: libs,
			RecordingDetails: k.RecordingDetails, ExpiresAt: k.ExpiresAt, CreatedAt: k.CreatedAt, Imported: k.WS != ""})
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, decodeErr
}

// RevokeKey deletes a key: its lookup item first, so that it stops working at
// once, then its listing, which it reads strongly consistent (a key created a
// moment ago can be revoked).
func (t *Table) RevokeKey(ctx context.Context, workspaceID, id string) error {
	var k keyItem
	ok, err := t.getConsistent(ctx, "get key listing", pkWorkspace(workspaceID), skKeyRef(id), &k)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("workspace %s has no key %s (see keys list)", workspaceID, id)
	}
	for _, kk := range []item{key("KEY#"+k.Hash, skKey), key(pkWorkspace(workspaceID), skKeyRef(id))} {
		cctx, cancel := t.call(ctx)
		_, err := t.Client.DeleteItem(cctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.Name), Key: kk})
		cancel()
		if err != nil {
			return fmt.Errorf("dynamo: revoke key %s: %w", id, err)
		}
	}
	return nil
}

// WorkspaceKeyHashes lists the hashes of a workspace's keys, from their
// listing items: what the indexer needs to move every key of a workspace to
// the usage plan of its new tier.
func (s *Store) WorkspaceKeyHashes(ctx context.Context, workspaceID string) ([]doclib.KeyHash, error) {
	var out []doclib.KeyHash
	var decodeErr error
	err := s.t.query(ctx, "list key hashes", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :k)"),
		ExpressionAttributeValues: item{":pk": str(pkWorkspace(workspaceID)), ":k": str("KEY#")},
		ProjectionExpression:      aws.String("#h"),
		ExpressionAttributeNames:  map[string]string{"#h": "hash"},
	}, func(it item) bool {
		var k struct {
			Hash string `dynamodbav:"hash"`
		}
		if decodeErr = attributevalue.UnmarshalMap(it, &k); decodeErr != nil {
			return false
		}
		h, err := doclib.ParseKeyHash(k.Hash)
		if err != nil {
			decodeErr = fmt.Errorf("dynamo: key listing of workspace %s: %w", workspaceID, err)
			return false
		}
		out = append(out, h)
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, decodeErr
}

// KeyHashes lists the hash of every key in the table, from the keys' lookup
// items (pk KEY#<hash>, sk KEY): what `doclib-admin keys sync` registers
// with API Gateway's usage plans. It scans the table.
func (t *Table) KeyHashes(ctx context.Context) ([]doclib.KeyHash, error) {
	var out []doclib.KeyHash
	err := t.Scan(ctx, 4, func(it item) error {
		pk, _ := it[attrPK].(*types.AttributeValueMemberS)
		sk, _ := it[attrSK].(*types.AttributeValueMemberS)
		if pk == nil || sk == nil || sk.Value != "KEY" || !strings.HasPrefix(pk.Value, "KEY#") {
			return nil
		}
		h, err := doclib.ParseKeyHash(strings.TrimPrefix(pk.Value, "KEY#"))
		if err != nil {
			return fmt.Errorf("dynamo: key item %s: %w", pk.Value, err)
		}
		out = append(out, h)
		return nil
	})
	slices.SortFunc(out, func(a, b doclib.KeyHash) int { return bytes.Compare(a[:], b[:]) })
	return out, err
}
