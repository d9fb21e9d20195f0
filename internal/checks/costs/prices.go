// Package costs estimates what a customer stack costs on AWS, per tier and
// size: at rest per month, per million reads and per million searches. The
// list prices are data here, each with where it was read; the assumptions
// (request mix, Lambda memory and duration, log bytes, snapshot sizes) are
// named fields; and the tables in README.md and docs/costs.md are generated
// from them, so that a test fails when a published figure drifts from its
// inputs (go test ./internal/checks/costs -update rewrites them).
package costs

// Price is one list price, in US dollars per Unit, with its source.
type Price struct {
	USD    float64
	Unit   string
	Source string // the page (or where it was not found, why this figure)
	Date   string // the date the source gives for the price, or "undated"
}

// Region and AsOf say where and when the prices hold.
const (
	Region = "us-east-1"
	AsOf   = "2026-10"
)

// PriceList is every price the estimates use, us-east-1, on demand, without
// free tiers (a free tier is per account, and many stacks share one).
type PriceList struct {
	OpenSearchHour map[string]Price // instance type → $ per instance-hour
	OpenSearchGP3  Price            // $ per GB-month of gp3 on a data node

	LambdaGBSecond Price // arm64, first tier
	LambdaRequest  Price // per request

	APIGatewayREST Price // per request, first 333 million a month

	DynamoWrite   Price // per on-demand write request unit
	DynamoRead    Price // per on-demand read request unit
	DynamoStorage Price // per GB-month, Standard table class
	DynamoPITR    Price // per GB-month of continuous backups

	S3Storage Price // per GB-month, S3 Standard
	S3Put     Price // per PUT, COPY, POST or LIST request
	S3Get     Price // per GET (and HEAD) request

	WAFWebACL  Price // per web ACL-month
	WAFRule    Price // per rule-month
	WAFRequest Price // per request inspected

	Alarm       Price // per standard-resolution alarm-month
	LogsIngest  Price // per GB ingested, Standard log class
	LogsStorage Price // per GB-month stored
	XRayTrace   Price // per trace recorded

	TitanToken Price // Titan Text Embeddings V2, per input token
}

// Prices are the list prices the README's table is computed from.
var Prices = PriceList{
	OpenSearchHour: map[string]Price{
		"r7g.medium.search": priceListAPI(0.089),
		"r7g.large.search":  priceListAPI(0.178),
		"r7g.xlarge.search": priceListAPI(0.356),
		"m7g.large.search":  priceListAPI(0.135),
	},
	OpenSearchGP3: Price{0.122, "GB-month", "https://aws.amazon.com/opensearch-service/pricing/ as quoted by public IaC docs (\"gp3 $0.122 per GB-month, gp2 $0.135\"); the AWS page itself is not in the stored corpus", "undated"},

	LambdaGBSecond: Price{0.0000133334, "GB-second (arm64)", "https://cloudchipr.com/blog/aws-lambda-pricing (US East, Arm, first 7.5 billion GB-s); the same figure in other stored guides", "2024"},
	LambdaRequest:  Price{0.20 / 1e6, "request", "https://cloudchipr.com/blog/aws-lambda-pricing ($0.20 per million, x86 and Arm alike)", "2024"},

	APIGatewayREST: Price{3.50 / 1e6, "request", "https://docs.aws.amazon.com/whitepapers/latest/best-practices-api-gateway-private-apis-integration/cost-optimization.html (REST, first 333 million a month)", "undated"},

	DynamoWrite:   Price{0.625 / 1e6, "write request unit", "https://airbyte.com/data-engineering-resources/dynamodb-pricing (after the November 2024 on-demand cut of 50%)", "2025-07-21"},
	DynamoRead:    Price{0.125 / 1e6, "read request unit", "https://airbyte.com/data-engineering-resources/dynamodb-pricing (after the November 2024 cut)", "2025-07-21"},
	DynamoStorage: Price{0.25, "GB-month", "https://aws.amazon.com/dynamodb/pricing/ (\"from $0.25 per GB-month\" after 25 GB free per account)", "undated"},
	DynamoPITR:    Price{0.20, "GB-month", "not found in the stored pages; assumed $0.20 per GB-month, the figure behind this README's earlier $0.45 per GB (storage $0.25 + backups)", "undated"},

	S3Storage: Price{0.023, "GB-month", "https://deepeshsoni.com/archives/256 (S3 Standard, first 50 TB, US East)", "undated"},
	S3Put:     Price{0.005 / 1000, "request", "https://c3x.dev/blog/s3-request-fees-explained (S3 Standard Tier 1: PUT, COPY, POST, LIST)", "undated"},
	S3Get:     Price{0.0004 / 1000, "request", "\"S3 request fees explained\" (https://c3x.dev/blog/s3-request-fees-explained): S3 Standard \"GET, HEAD, SELECT (Tier 2): $0.0004 per 1,000 requests\"; the same for US East in \"Understanding AWS S3 Pricing: A Complete Cost Breakdown with Examples\" (https://devnotes.tech/understanding-aws-s3-pricing-a-complete-cost-breakdown-with-examples). A ranged GET is a GET request", "undated"},

	WAFWebACL:  Price{5.00, "web ACL-month", "https://c3x.dev/blog/aws-waf-cost-explained; https://awsnegotiations.com/waf-pricing-strategy.html (2026); AWS: the same in every Region", "2026"},
	WAFRule:    Price{1.00, "rule-month", "same as the web ACL", "2026"},
	WAFRequest: Price{0.60 / 1e6, "request", "same as the web ACL", "2026"},

	Alarm:       Price{0.10, "alarm-month", "not found on a stored AWS page; $0.10 per standard-resolution alarm metric, the figure of this README's earlier table (22 alarms: $2.20)", "undated"},
	LogsIngest:  Price{0.50, "GB", "https://c3x.dev/blog/cloudwatch-logs-cost-optimization (us-east-1, Standard class)", "2026-06"},
	LogsStorage: Price{0.03, "GB-month", "https://c3x.dev/blog/cloudwatch-logs-cost-optimization", "2026-06"},
	XRayTrace:   Price{5.00 / 1e6, "trace recorded", "https://aws.amazon.com/de/xray/pricing/ ($5 per million traces recorded, $0.000005 each)", "undated"},

	TitanToken: Price{0.02 / 1e6, "input token", "not found on a stored AWS page; $0.02 per million tokens ($0.00002 per 1,000), as public docs quote it and as this README used before", "undated"},
}

// priceListAPI is an OpenSearch instance price as a public repository
// records it from the AWS Price List API (service AmazonES, us-east-1, read
// 2026-10-01); a second repository's table agrees for every type used here.
// The stored pages (the AWS pricing page among them) show no r7g row.
func priceListAPI(usd float64) Price {
	return Price{usd, "instance-hour", "AWS Price List API (AmazonES, us-east-1) as two public repositories' price tables record it; no stored AWS page shows the r7g/m7g rows", "2026-10-01"}
}
