package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
)

// ErrNoWorkspace is what the operators' workspace methods return for a
// workspace the table does not hold.
var ErrNoWorkspace = errors.New("no such workspace")

// WorkspaceInfo is a workspace as operators see it: its settings and its AI
// credit. HasCredit is false when no credit was ever written (an import
// interrupted before its credit phase): searches then answer 402.
type WorkspaceInfo struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Plan           string `json:"plan"`
	Subscription   string `json:"subscription"`
	OwnProviderKey bool   `json:"ownProviderKey"`
	AICredit       int64  `json:"aiCredit"`
	HasCredit      bool   `json:"hasCredit"`
}

// ListWorkspaces lists the table's workspaces by ID, with their credit. It
// scans the table (operators' use only).
func (t *Table) ListWorkspaces(ctx context.Context) ([]WorkspaceInfo, error) {
	byID := map[string]*WorkspaceInfo{}
	credits := map[string]int64{}
	err := t.Scan(ctx, 4, func(it item) error {
		sk, _ := it[attrSK].(*types.AttributeValueMemberS)
		pk, _ := it[attrPK].(*types.AttributeValueMemberS)
		if sk == nil || pk == nil || !strings.HasPrefix(pk.Value, "WS#") {
			return nil
		}
		switch sk.Value {
		case skWorkspace:
			var w workspaceItem
			if err := attributevalue.UnmarshalMap(it, &w); err != nil {
				return fmt.Errorf("dynamo: list workspaces: decode %s: %w", pk.Value, err)
			}
			byID[w.ID] = &WorkspaceInfo{ID: w.ID, Name: w.Name, Plan: w.Plan, Subscription: w.Subscription, OwnProviderKey: w.OwnProviderKey}
		case skCredit:
			var c creditItem
			if err := attributevalue.UnmarshalMap(it, &c); err != nil {
				return fmt.Errorf("dynamo: list workspaces: decode %s: %w", pk.Value, err)
			}
			credits[strings.TrimPrefix(pk.Value, "WS#")] = c.Credit
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]WorkspaceInfo, 0, len(byID))
	for id, w := range byID {
		w.AICredit, w.HasCredit = credits[id]
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b WorkspaceInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// WorkspaceInfo reads one workspace and its credit, strongly consistent, so
// that it shows a change made a moment ago. It returns ErrNoWorkspace when
// the table has no such workspace.
func (t *Table) WorkspaceInfo(ctx context.Context, id string) (*WorkspaceInfo, error) {
	var w workspaceItem
	ok, err := t.getConsistent(ctx, "get workspace", pkWorkspace(id), skWorkspace, &w)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("workspace %s: %w", id, ErrNoWorkspace)
	}
	var c creditItem
	has, err := t.getConsistent(ctx, "get credit", pkWorkspace(id), skCredit, &c)
	if err != nil {
		return nil, err
	}
	return &WorkspaceInfo{ID: w.ID, Name: w.Name, Plan: w.Plan, Subscription: w.Subscription,
		OwnProviderKey: w.OwnProviderKey, AICredit: c.Credit, HasCredit: has}, nil
}

// SetCredit sets a workspace's credit to n in one write (SET): a search
// spending at the same moment is ordered before it (and overwritten) or
// after it (and spends from n), never lost halfway. It returns the balance.
func (t *Table) SetCredit(ctx context.Context, id string, n int64) (int64, error) {
	return t.updateCredit(ctx, id, "SET credit = :n", n)
}

// AddCredit adds n (1 or more) to a workspace's credit in one atomic
// increment (ADD), the counterpart of the ledger's conditional decrement:
// concurrent searches keep every credit they spend. It returns the balance.
func (t *Table) AddCredit(ctx context.Context, id string, n int64) (int64, error) {
	if n < 1 {
		return 0, fmt.Errorf("dynamo: add credit to %s: %d is not 1 or more", id, n)
	}
	return t.updateCredit(ctx, id, "ADD credit :n", n)
}

func (t *Table) updateCredit(ctx context.Context, id, expr string, n int64) (int64, error) {
	if n < 0 {
		return 0, fmt.Errorf("dynamo: credit of %s: %d is below 0", id, n)
	}
	// The credit item is not the workspace item, and a condition sees only
	// its own item: check that the workspace exists first. Nothing deletes a
	// workspace item, so the check holds for the write that follows.
	if _, err := t.WorkspaceInfo(ctx, id); err != nil {
		return 0, err
	}
	cctx, cancel := t.call(ctx)
	defer cancel()
	res, err := t.Client.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(t.Name),
		Key:                       key(pkWorkspace(id), skCredit),
		UpdateExpression:          aws.String(expr),
		ExpressionAttributeValues: item{":n": num(n)},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, fmt.Errorf("dynamo: credit of %s: %w", id, err)
	}
	var c creditItem
	if err := attributevalue.UnmarshalMap(res.Attributes, &c); err != nil {
		return 0, fmt.Errorf("dynamo: credit of %s: decode: %w", id, err)
	}
	return c.Credit, nil
}

// SetPlan changes a workspace's plan. The stream-fed indexer sees the change
// (a plan change re-indexes the workspace and moves its keys to the tier's
// usage plan). It refuses a plan doclib does not know.
func (t *Table) SetPlan(ctx context.Context, id string, plan doclib.Plan) error {
	if !slices.Contains(doclib.Plans, plan) {
		return fmt.Errorf("dynamo: plan %q is not one of %v", plan, doclib.Plans)
	}
	return t.setWorkspaceField(ctx, id, "plan", string(plan))
}

// SetSubscription changes a workspace's subscription state.
func (t *Table) SetSubscription(ctx context.Context, id, state string) error {
	if !slices.Contains(doclib.Subscriptions, state) {
		return fmt.Errorf("dynamo: subscription %q is not one of %v", state, doclib.Subscriptions)
	}
	return t.setWorkspaceField(ctx, id, "subscription", state)
}

// setWorkspaceField sets one attribute of an existing workspace item, in one
// conditional write.
func (t *Table) setWorkspaceField(ctx context.Context, id, name, value string) error {
	cctx, cancel := t.call(ctx)
	defer cancel()
	_, err := t.Client.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(t.Name),
		Key:                       key(pkWorkspace(id), skWorkspace),
		UpdateExpression:          aws.String("SET #f = :v"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#f": name},
		ExpressionAttributeValues: item{":v": str(value)},
	})
	if conditionFailed(err) {
		return fmt.Errorf("workspace %s: %w", id, ErrNoWorkspace)
	}
	if err != nil {
		return fmt.Errorf("dynamo: set %s of %s: %w", name, id, err)
	}
	return nil
}
