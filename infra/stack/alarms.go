package stack

import (
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
)

// newAlarms watches the API, every function and the indexer's stream. With
// an e-mail address they notify an SNS topic (TLS-only publishing; alarm
// notifications carry no customer data).
func newAlarms(s awscdk.Stack, cfg Config, a *api, fns map[string]*function, failed awssqs.Queue) {
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
		alarm(fnID(name)+"Throttles", f.MetricThrottles(sum), functionErrorLimit, 1, atLeast,
			"The "+name+" function was throttled: the account's Lambda concurrency is exhausted.")
	}
	indexer := fns[lambdaapp.FunctionIndexer].fn
	alarm("IndexerIteratorAge", indexer.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Period: alarmPeriod, Statistic: jsii.String("Maximum")}),
		iteratorAgeMs, 1, above, "The search index is more than 5 minutes behind the table: the indexer is failing or too slow.")
	alarm("IndexerFailures", failed.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: alarmPeriod, Statistic: jsii.String("Maximum")}),
		0, 1, above, "Stream records the indexer gave up on are waiting in its failure queue: fix the cause, then run doclib-admin reindex.")
}
