// Package dynamo keeps doclib's data in one DynamoDB table (docs/dynamodb.md):
// the read store, the import that writes it, operators' keys, the fixed-window
// rate limiter and the AI-credit ledger. Every access pattern is one request or
// one batch of parallel requests, so that each endpoint stays within its budget
// of round trips.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
)

// Names of the table's attributes and indexes.
const (
	attrPK  = "pk"
	attrSK  = "sk"
	attrOrd = "ord" // the sort key of the byOrder local index
	attrWS  = "ws"  // the workspace of an imported item: the byWorkspace index
	attrGen = "gen" // the import generation that wrote an item
	attrTTL = "exp" // epoch seconds after which DynamoDB may delete an item

	// IndexOrder orders a partition's items by ord: a library's documents by
	// updatedAt desc then ID, a document's recordings shared first by
	// clientCreatedAt desc then ID.
	IndexOrder = "byOrder"
	// IndexWorkspace lists the items an import wrote for a workspace (keys and
	// generation only), for --prune.
	IndexWorkspace = "byWorkspace"
)

// Key prefixes and fixed sort keys (docs/dynamodb.md).
const (
	skWorkspace = "WS"
	skCredit    = "CREDIT"
	skKey       = "KEY"
	skDocument  = "A"
	skGraphMeta = "G#META"
)

func pkWorkspace(ws string) string                  { return "WS#" + ws }
func skDevice(id string) string                     { return "DEV#" + id }
func skKeyRef(id string) string                     { return "KEY#" + id }
func skLibrary(id string) string                    { return "LIB#" + id }
func skSlug(slug string) string                     { return "SLUG#" + slug }
func pkKey(h doclib.KeyHash) string                 { return "KEY#" + h.String() }
func pkLibrary(id string) string                    { return "LIB#" + id }
func skListed(doc string) string                    { return "D#" + doc }
func skGraphChunk(i int) string                     { return fmt.Sprintf("G#%04d", i) }
func pkDocument(id string) string                   { return "DOC#" + id }
func skOut(target, label string) string             { return "O#" + target + "#" + label }
func skIn(source, label string) string              { return "I#" + source + "#" + label }
func skRecording(id string) string                  { return "R#" + id }
func pkLimit(bucket string, w int64) string         { return fmt.Sprintf("RL#%s#%d", bucket, w) }
func ordListed(updated time.Time, id string) string { return invert(updated) + "#" + id }

// ordRecording puts shared recordings under R# and private ones under P#, so
// that listing R# can never show a private one, and a recording that becomes
// private leaves the listing when its item is rewritten.
func ordRecording(shared bool, created time.Time, id string) string {
	prefix := "P#"
	if shared {
		prefix = "R#"
	}
	return prefix + invert(created) + "#" + id
}

// invert writes t so that a later time sorts first.
func invert(t time.Time) string {
	return fmt.Sprintf("%019d", int64(math.MaxInt64)-t.UnixMicro())
}

// Client is the part of the DynamoDB client the package uses.
type Client interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

var _ Client = (*dynamodb.Client)(nil)

// Table is one doclib table and the client to reach it. Build it once at start.
type Table struct {
	Client Client
	Name   string
	// Timeout bounds every request, its retries included (5 s when 0).
	Timeout time.Duration
	// Concurrency bounds the parallel requests of one batch (16 when 0).
	Concurrency int
	// ConsistentRead makes reads strongly consistent (twice the read cost). The
	// API reads eventually; the indexer reads consistently, so that a document it
	// re-reads after a stream record is never the version before it.
	ConsistentRead bool
}

func (t *Table) timeout() time.Duration {
	if t.Timeout <= 0 {
		return 5 * time.Second
	}
	return t.Timeout
}

func (t *Table) concurrency() int {
	if t.Concurrency <= 0 {
		return 16
	}
	return t.Concurrency
}

// call gives one request its deadline.
func (t *Table) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, t.timeout())
}

// unavailable wraps a DynamoDB failure the SDK's retries did not cure: clients
// get 503 unavailable with a generic sentence, the cause goes to the log only.
func unavailable(op string, err error) error {
	return doclib.Unavailable(fmt.Errorf("dynamo: %s: %w", op, err))
}

func conditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// CreateTable creates the table for local use and tests (production tables come
// from the CDK app with the same definition) and waits until it is active.
func (t *Table) CreateTable(ctx context.Context) error {
	sc := TableSchema()
	s := func(name string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(name string, kt types.KeyType) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: kt}
	}
	_, err := t.Client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(t.Name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{s(sc.PartitionKey), s(sc.SortKey), s(sc.OrderKey), s(sc.WorkspaceKey)},
		KeySchema:            []types.KeySchemaElement{key(sc.PartitionKey, types.KeyTypeHash), key(sc.SortKey, types.KeyTypeRange)},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{{IndexName: aws.String(sc.OrderIndex),
			KeySchema:  []types.KeySchemaElement{key(sc.PartitionKey, types.KeyTypeHash), key(sc.OrderKey, types.KeyTypeRange)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String(sc.WorkspaceIndex),
			KeySchema:  []types.KeySchemaElement{key(sc.WorkspaceKey, types.KeyTypeHash)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: sc.WorkspaceIndexAttributes}}},
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamo: create table %s: %w", t.Name, err)
	}
	for {
		out, err := t.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name)})
		if err != nil {
			return fmt.Errorf("dynamo: describe table %s: %w", t.Name, err)
		}
		if out.Table.TableStatus == types.TableStatusActive {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	// Rate-limit windows expire by TTL. Local engines may not implement it.
	_, err = t.Client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(t.Name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(sc.TTLAttribute), Enabled: aws.Bool(true)}})
	if err != nil && !strings.Contains(err.Error(), "UnknownOperation") && !strings.Contains(err.Error(), "TimeToLive is already enabled") {
		return fmt.Errorf("dynamo: enable TTL on %s: %w", t.Name, err)
	}
	return nil
}

// Schema names the table's keys, indexes and TTL attribute: what CreateTable
// creates and what the CDK stack must declare. All key attributes are strings.
type Schema struct {
	PartitionKey, SortKey string
	// OrderIndex is a local index sorted by OrderKey, projecting every attribute.
	OrderIndex, OrderKey string
	// WorkspaceIndex is a global index on WorkspaceKey projecting only
	// WorkspaceIndexAttributes beside the keys.
	WorkspaceIndex, WorkspaceKey string
	WorkspaceIndexAttributes     []string
	// TTLAttribute holds epoch seconds after which an item may be deleted.
	TTLAttribute string
}

// TableSchema returns the table's schema.
func TableSchema() Schema {
	return Schema{PartitionKey: attrPK, SortKey: attrSK, OrderIndex: IndexOrder, OrderKey: attrOrd,
		WorkspaceIndex: IndexWorkspace, WorkspaceKey: attrWS, WorkspaceIndexAttributes: []string{attrGen}, TTLAttribute: attrTTL}
}
