package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/shared/backend/dynamo"
)

// Stream settings of the indexer.
const (
	streamBatchSize = 50 // indexer.DefaultBatchSize: one Upsert per batch
	// streamRetries bounds the retries of a failing batch (halved each time
	// by bisection) before its records go to the failure queue.
	streamRetries = 5
	// streamWindowSec gathers records for up to this long before invoking
	// the indexer.
	streamWindowSec = 1
)

// Stream settings of the indexer in the embedded tier, where every batch
// ends in writing a whole snapshot: a burst of writes (an import, a plan
// change) should cost one snapshot, not one per 50 records.
//
//   - embeddedBatchSize: Lambda passes a batch whole in one invocation, cut
//     at the 6 MB payload limit of a synchronous invoke whatever the batch
//     size; a DynamoDB stream mapping takes up to 10,000 records. Records
//     carry both images of items of a few KB, so 1,000 of them is about
//     where the payload limit cuts anyway: a larger size would not make
//     larger batches.
//   - embeddedWindowSec: wait up to 10 s for the batch to fill. An edit
//     reaches search that much later (plus the search function's poll of
//     the pointer, EnvSnapshotPoll, 5 s by default); an import of thousands
//     of records becomes a few snapshots instead of hundreds.
const (
	embeddedBatchSize = 1000
	embeddedWindowSec = 10
)

// streamFilters keep the stream records the indexer acts on (shared/indexer
// Indexer.Affected) and drop the rest before Lambda is invoked: the rate
// limiter's RL# windows (two writes per request, and their TTL deletes), the
// AI-credit ledger's WS#…/CREDIT (one per search), devices, key listings,
// library list copies and graphs, and documents' edges. What is left:
//
//   - DOC#<d> with sk A (the document) or R#<r> (a recording behind it);
//   - WS#<ws> with sk WS (the workspace: a plan change re-indexes it);
//   - KEY#<hash> with sk KEY (a key: usage plan registration).
//
// Lambda ORs the filters (at most 5 by default). TestStreamFilters runs every
// kind of record through the indexer and these patterns.
var streamFilters = []map[string]any{
	streamKeys(map[string]any{"prefix": "DOC#"}, "A", map[string]any{"prefix": "R#"}),
	streamKeys(map[string]any{"prefix": "WS#"}, "WS"),
	streamKeys(map[string]any{"prefix": "KEY#"}, "KEY"),
}

// streamKeys is a filter on a record's keys: pk matches pk, sk one of sks.
func streamKeys(pk any, sks ...any) map[string]any {
	sc := dynamo.TableSchema()
	return map[string]any{"dynamodb": map[string]any{"Keys": map[string]any{
		sc.PartitionKey: map[string]any{"S": []any{pk}},
		sc.SortKey:      map[string]any{"S": sks},
	}}}
}

// connectStream feeds the table's stream to the indexer. The indexer reports
// the records it could not handle (ReportBatchItemFailures), Lambda retries
// from the first of them and splits a failing batch in two, and after
// streamRetries a record's description goes to an encrypted queue, kept 14
// days, for `doclib-admin reindex` or a person to act on. Records are
// idempotent for the indexer (it re-reads the table), so retries are safe.
// Only the records streamFilters keep invoke it.
func connectStream(s awscdk.Stack, cfg Config, t awsdynamodb.Table, indexer *function) (awssqs.Queue, awslambda.EventSourceMapping) {
	failed := awssqs.NewQueue(s, jsii.String("IndexerFailures"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	grantStream(indexer.role, t)
	filters := make([]*map[string]any, len(streamFilters))
	for i, f := range streamFilters {
		filters[i] = awslambda.FilterCriteria_Filter(&f)
	}
	batch, window := streamBatchSize, streamWindowSec
	if cfg.Search == SearchEmbedded {
		batch, window = embeddedBatchSize, embeddedWindowSec
	}
	mapping := awslambda.NewEventSourceMapping(s, jsii.String("IndexerStream"), &awslambda.EventSourceMappingProps{
		Target:                  indexer.fn,
		EventSourceArn:          t.TableStreamArn(),
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(batch),
		MaxBatchingWindow:       awscdk.Duration_Seconds(jsii.Number(window)),
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(streamRetries),
		OnFailure:               awslambdaeventsources.NewSqsDlq(failed),
		Filters:                 &filters,
	})
	return failed, mapping
}
