package dynamo

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
)

// Limiter is the fixed-window rate limiter shared by every process that uses
// the table. Each window of each bucket is one item (the window's start is in
// its key); a take is one conditional increment, so exactly limit requests
// succeed per window however many processes ask at once. TTL removes old
// windows; until it does, they are simply never read again.
type Limiter struct{ t *Table }

var _ doclib.Limiter = (*Limiter)(nil)

// NewLimiter returns the table's rate limiter.
func NewLimiter(t *Table) *Limiter { return &Limiter{t: t} }

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// Take implements doclib.Limiter.
func (l *Limiter) Take(ctx context.Context, bucket string, limit int, window time.Duration, now time.Time) (doclib.Quota, error) {
	start := now.Truncate(window)
	end := start.Add(window)
	q := doclib.Quota{Limit: limit, Reset: end}
	cctx, cancel := l.t.call(ctx)
	defer cancel()
	res, err := l.t.Client.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(l.t.Name),
		Key:                       key(pkLimit(bucket, start.Unix()), "RL"),
		UpdateExpression:          aws.String("ADD n :one SET exp = :exp"),
		ConditionExpression:       aws.String("attribute_not_exists(n) OR n < :limit"),
		ExpressionAttributeValues: item{":one": num(1), ":limit": num(int64(limit)), ":exp": num(end.Add(time.Hour).Unix())},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if conditionFailed(err) {
		return q, nil // refused, and nothing was taken
	}
	if err != nil {
		return q, unavailable("rate limit", err)
	}
	var got rateItem
	if err := attributevalue.UnmarshalMap(res.Attributes, &got); err != nil {
		return q, unavailable("rate limit", err)
	}
	q.Allowed = true
	q.Remaining = limit - got.Count
	return q, nil
}

// Release implements doclib.Limiter: a conditional decrement, never below zero.
func (l *Limiter) Release(ctx context.Context, bucket string, window time.Duration, now time.Time) error {
	cctx, cancel := l.t.call(ctx)
	defer cancel()
	_, err := l.t.Client.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(l.t.Name),
		Key:                       key(pkLimit(bucket, now.Truncate(window).Unix()), "RL"),
		UpdateExpression:          aws.String("ADD n :minus"),
		ConditionExpression:       aws.String("n > :zero"),
		ExpressionAttributeValues: item{":minus": num(-1), ":zero": num(0)},
	})
	if err != nil && !conditionFailed(err) {
		return unavailable("rate limit release", err)
	}
	return nil
}

// Ledger is the AI-credit ledger on the table: one item per workspace, spent by
// a conditional decrement, so concurrent searches from any number of processes
// never spend more than the workspace has.
type Ledger struct{ t *Table }

var _ doclib.Ledger = (*Ledger)(nil)

// NewLedger returns the table's ledger.
func NewLedger(t *Table) *Ledger { return &Ledger{t: t} }

// Spend implements doclib.Ledger.
func (l *Ledger) Spend(ctx context.Context, workspaceID string) error {
	cctx, cancel := l.t.call(ctx)
	defer cancel()
	_, err := l.t.Client.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(l.t.Name),
		Key:                       key(pkWorkspace(workspaceID), skCredit),
		UpdateExpression:          aws.String("ADD credit :minus"),
		ConditionExpression:       aws.String("credit > :zero"),
		ExpressionAttributeValues: item{":minus": num(-1), ":zero": num(0)},
	})
	if conditionFailed(err) {
		return doclib.ErrNoCredit
	}
	if err != nil {
		return unavailable("spend credit", err)
	}
	return nil
}

// Refund implements doclib.Ledger.
func (l *Ledger) Refund(ctx context.Context, workspaceID string) error {
	cctx, cancel := l.t.call(ctx)
	defer cancel()
	_, err := l.t.Client.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(l.t.Name),
		Key:                       key(pkWorkspace(workspaceID), skCredit),
		UpdateExpression:          aws.String("ADD credit :one"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: item{":one": num(1)},
	})
	if err != nil && !conditionFailed(err) {
		return unavailable("refund credit", err)
	}
	return nil
}

// Balance returns a workspace's credit, for operators and tests. It reads
// strongly consistent, as WorkspaceInfo does, so that it shows a spend or a
// refund made a moment ago.
func (l *Ledger) Balance(ctx context.Context, workspaceID string) (int64, error) {
	var c creditItem
	ok, err := l.t.getConsistent(ctx, "get credit", pkWorkspace(workspaceID), skCredit, &c)
	if err != nil || !ok {
		return 0, err
	}
	return c.Credit, nil
}
