package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// Stream settings of the indexer.
const (
	streamBatchSize = 50 // indexer.DefaultBatchSize: one Upsert per batch
	// streamRetries bounds the retries of a failing batch (halved each time
	// by bisection) before its records go to the failure queue.
	streamRetries = 5
)

// connectStream feeds the table's stream to the indexer. The indexer reports
// the records it could not handle (ReportBatchItemFailures), Lambda retries
// from the first of them and splits a failing batch in two, and after
// streamRetries a record's description goes to an encrypted queue, kept 14
// days, for `doclib-admin reindex` or a person to act on. Records are
// idempotent for the indexer (it re-reads the table), so retries are safe.
func connectStream(s awscdk.Stack, t awsdynamodb.Table, indexer *function) awssqs.Queue {
	failed := awssqs.NewQueue(s, jsii.String("IndexerFailures"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	grantStream(indexer.role, t)
	awslambda.NewEventSourceMapping(s, jsii.String("IndexerStream"), &awslambda.EventSourceMappingProps{
		Target:                  indexer.fn,
		EventSourceArn:          t.TableStreamArn(),
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(streamBatchSize),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(1)),
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(streamRetries),
		OnFailure:               awslambdaeventsources.NewSqsDlq(failed),
	})
	return failed
}
