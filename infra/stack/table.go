package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/shared/backend/dynamo"
)

// newTable declares the table from dynamo.TableSchema(), the definition the
// store's own CreateTable uses, so that the stack and the code cannot
// disagree on a key or an index.
func newTable(s awscdk.Stack, cfg Config) awsdynamodb.Table {
	sc := dynamo.TableSchema()
	str := func(name string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
	}
	t := awsdynamodb.NewTable(s, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: str(sc.PartitionKey),
		SortKey:      str(sc.SortKey),
		// On demand: API traffic is bursty and imports write in bulk.
		BillingMode: awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		// The AWS-managed key (aws/dynamodb): encrypted at rest and logged in
		// CloudTrail, with no key policy to keep in step with the roles.
		Encryption:          awsdynamodb.TableEncryption_AWS_MANAGED,
		TimeToLiveAttribute: jsii.String(sc.TTLAttribute),
		// The indexer re-reads what a record touches; old images tell it what
		// a delete or a move removed from the index.
		Stream: awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		// The table is the system of record: deleting the stack keeps it,
		// unless the stack is a test stack (retain=false).
		RemovalPolicy:      cfg.removal(),
		DeletionProtection: jsii.Bool(cfg.Retain),
	})
	t.AddLocalSecondaryIndex(&awsdynamodb.LocalSecondaryIndexProps{
		IndexName:      jsii.String(sc.OrderIndex),
		SortKey:        str(sc.OrderKey),
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	t.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:        jsii.String(sc.WorkspaceIndex),
		PartitionKey:     str(sc.WorkspaceKey),
		ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
		NonKeyAttributes: jsii.Strings(sc.WorkspaceIndexAttributes...),
	})
	return t
}
