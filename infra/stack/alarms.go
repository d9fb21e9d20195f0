package stack

import (
	"fmt"
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/doclib/doclib/shared/aws/lambdaapp"
)

// alarmMinutes is the period of every alarm's metric.
const alarmMinutes = 5

// Thresholds. Each alarm says in its description what it means.
const (
	api5xxThreshold = 5    // 5xx answers in 5 minutes
	apiP99Ms        = 2000 // p99 latency, 3 periods in a row
	// api429Threshold: refused requests in 5 minutes; a few clients at their
	// limit are normal, this many means a client is looping or an attack.
	api429Threshold    = 300
	iteratorAgeMs      = 5 * 60 * 1000 // the index is 5 minutes behind the table
	functionErrorLimit = 1             // any unhandled error or throttle is news
	// reservedIndexerThrottlePeriods: an indexer with reserved concurrency
	// (indexerReservedConcurrency) is throttled in the ordinary course when
	// the stream has more shards than it reserves; throttles in 3 periods
	// in a row are news.
	reservedIndexerThrottlePeriods = 3
)

// newAlarms watches the API, every function and the indexer's stream. With
// an e-mail address they notify an SNS topic (TLS-only publishing; alarm
// notifications carry no customer data).
func newAlarms(s awscdk.Stack, cfg Config, a *api, fns map[string]*function, failed awssqs.Queue, search *searchBackend) {
	var action awscloudwatch.IAlarmAction
	if cfg.AlarmEmail != "" {
		topic := awssns.NewTopic(s, jsii.String("Alarms"), &awssns.TopicProps{
			DisplayName: jsii.String("doclib " + cfg.Customer + " alarms"),
			EnforceSSL:  jsii.Bool(true),
		})
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.AlarmEmail), nil))
		action = awscloudwatchactions.NewSnsAction(topic)
	}
	alarm := func(id string, m awscloudwatch.IMetric, threshold float64, periods int, op awscloudwatch.ComparisonOperator, about string) {
		al := awscloudwatch.NewAlarm(s, jsii.String("Alarm"+id), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(cfg.ResourcePrefix() + "-" + id),
			AlarmDescription:   jsii.String(about),
			Metric:             m,
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(float64(periods)),
			ComparisonOperator: op,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		if action != nil {
			al.AddAlarmAction(action)
		}
	}
	alarmPeriod := awscdk.Duration_Minutes(jsii.Number(alarmMinutes))
	atLeast := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
	above := awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD
	sum := &awscloudwatch.MetricOptions{Period: alarmPeriod, Statistic: jsii.String("Sum")}

	alarm("Api5xx", a.rest.MetricServerError(sum), api5xxThreshold, 1, atLeast,
		"The API answered 5xx at least 5 times in 5 minutes: see the functions' errors and the access log.")
	alarm("ApiLatencyP99", a.rest.MetricLatency(&awscloudwatch.MetricOptions{Period: alarmPeriod, Statistic: jsii.String("p99")}),
		apiP99Ms, 3, above, "The API's p99 latency has been above 2 s for 15 minutes.")

	// API Gateway has no 429 metric (4XXError counts every 4xx): count the
	// access log's lines with status 429, from the handler, the usage plans
	// or WAF alike.
	rateLimited := awslogs.NewMetricFilter(s, jsii.String("Api429Filter"), &awslogs.MetricFilterProps{
		LogGroup:        a.accessLogs,
		FilterPattern:   awslogs.FilterPattern_NumberValue(jsii.String("$.status"), jsii.String("="), jsii.Number(429)),
		MetricNamespace: jsii.String("Doclib/" + cfg.Customer),
		MetricName:      jsii.String("RateLimited"),
		MetricValue:     jsii.String("1"),
	})
	alarm("Api429", rateLimited.Metric(sum), api429Threshold, 1, atLeast,
		"The API refused at least 300 requests in 5 minutes with 429 rate_limited: a client is looping or the limits are too low.")

	for _, name := range lambdaapp.Functions {
		f := fns[name].fn
		alarm(fnID(name)+"Errors", f.MetricErrors(sum), functionErrorLimit, 1, atLeast,
			"The "+name+" function failed (unhandled error or timeout): see its log group.")
		if name == lambdaapp.FunctionIndexer && cfg.IndexerReservedConcurrency > 0 {
			// A reservation smaller than the stream's shards: the batches
			// of the others are throttled while it runs, and retried; only
			// a backlog that lasts is news.
			alarm(fnID(name)+"Throttles", f.MetricThrottles(sum), functionErrorLimit, reservedIndexerThrottlePeriods, atLeast,
				fmt.Sprintf("The indexer has been throttled for 15 minutes: its reserved concurrency of %d (indexerReservedConcurrency) makes the batches of other stream shards wait, and they have been waiting that long. Throttled batches are retried, not lost; see IndexerIteratorAge.", cfg.IndexerReservedConcurrency))
			continue
		}
		alarm(fnID(name)+"Throttles", f.MetricThrottles(sum), functionErrorLimit, 1, atLeast,
			"The "+name+" function was throttled: the account's Lambda concurrency is exhausted.")
	}
	indexer := fns[lambdaapp.FunctionIndexer].fn
	alarm("IndexerIteratorAge", indexer.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Period: alarmPeriod, Statistic: jsii.String("Maximum")}),
		iteratorAgeMs, 1, above, "The search index is more than 5 minutes behind the table: the indexer is failing or too slow.")
	if cfg.Search == SearchDomain {
		domainAlarms(cfg, search, alarm)
	}

	alarm("IndexerFailures", failed.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: alarmPeriod, Statistic: jsii.String("Maximum")}),
		0, 1, above, "Stream records the indexer gave up on are waiting in its failure queue: fix the cause, then run doclib-admin reindex.")
}

// domainAlarms are AWS's recommended alarms for an OpenSearch Service domain
// (its developer guide, "Recommended CloudWatch alarms"), with the search
// latency beside them: metrics of the AWS/ES namespace, per domain and
// account.
func domainAlarms(cfg Config, search *searchBackend, alarm func(string, awscloudwatch.IMetric, float64, int, awscloudwatch.ComparisonOperator, string)) {
	metric := func(name, statistic string, minutes float64) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace:     jsii.String("AWS/ES"),
			MetricName:    jsii.String(name),
			DimensionsMap: &map[string]*string{"DomainName": jsii.String(search.domainName), "ClientId": awscdk.Aws_ACCOUNT_ID()},
			Statistic:     jsii.String(statistic),
			Period:        awscdk.Duration_Minutes(jsii.Number(minutes)),
		})
	}
	atLeast := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
	atMost := awscloudwatch.ComparisonOperator_LESS_THAN_OR_EQUAL_TO_THRESHOLD
	alarm("DomainRed", metric("ClusterStatus.red", "Maximum", 1), 1, 1, atLeast,
		"The search domain is red: a shard of the index has no copy on any node, and searches fail. See the domain's health in the console; doclib-admin reindex rebuilds the index from the table.")
	alarm("DomainYellow", metric("ClusterStatus.yellow", "Maximum", 1), 1, 5, atLeast,
		"The search domain has been yellow for 5 minutes: a copy of the index could not be placed on a node.")
	// AWS's guide: 25% of a node's storage, in MiB.
	freeMiB := float64(cfg.DomainVolumeGB) * 1024 * domainFreeStorageShare
	alarm("DomainFreeStorage", metric("FreeStorageSpace", "Minimum", 1), freeMiB, 1, atMost,
		"A search node is down to a quarter of its storage: raise domainVolumeGb, or choose a larger opensearchSize.")
	alarm("DomainWritesBlocked", metric("ClusterIndexWritesBlocked", "Maximum", 5), 1, 1, atLeast,
		"The search domain is refusing writes: the indexer's batches fail until it accepts them again (storage or memory is exhausted).")
	alarm("DomainJVMPressure", metric("JVMMemoryPressure", "Maximum", 1), domainJVMPressure, 3, atLeast,
		"A search node's JVM heap has been at least 95% full for 3 minutes: it may run out of memory; choose a larger opensearchSize.")
	alarm("DomainCPU", metric("CPUUtilization", "Maximum", 15), domainCPUPercent, 3, atLeast,
		"A search node's CPU has been at least 80% busy for 45 minutes: choose a larger opensearchSize or more nodes.")
	alarm("DomainSearchLatency", metric("SearchLatency", "Average", alarmMinutes), domainSearchLatencyMs, 3, atLeast,
		"Searches have taken at least half a second on the domain for 15 minutes (the embedded engine answers in milliseconds): choose a larger opensearchSize.")
}

// Domain thresholds (AWS's recommended alarms; the search latency is ours).
const (
	domainFreeStorageShare = 0.25
	domainJVMPressure      = 95
	domainCPUPercent       = 80
	domainSearchLatencyMs  = 500
)
