package costs

import (
	"fmt"
	"math"

	"github.com/doclib/doclib/infra/domainsizes"
)

// HoursPerMonth is AWS's month for hourly prices.
const HoursPerMonth = 730

// Domain is one OpenSearch size, as the stack builds it.
type Domain = domainsizes.Profile

// Domains are the sizes of -c search=domain: the stack's own.
var Domains = domainsizes.Profiles

// Function is a Lambda function's share of one request.
type Function struct {
	MemoryMB   int
	DurationMS float64 // billed duration of a warm invocation
	InitMS     float64 // a cold start's INIT phase, billed since August 2025
}

// Assumptions are the inputs that are not prices. Each is a guess to be
// replaced by a measurement (docs/performance.md) when there is one.
type Assumptions struct {
	// Per stack.
	WAFRules        int     // the per-IP rate rule
	AlarmsDomain    int     // infra/stack/alarms.go with a domain
	AlarmsEmbedded  int     // the same without the seven domain alarms
	TableGB         float64 // table size, with point-in-time recovery
	IndexMB         float64 // the embedded index's segments (10k documents)
	IndexCopies     float64 // the live segments, and the retired ones awaiting deletion and expiry
	LogRetentionMon float64 // months a log byte is stored (logRetentionDays 90)

	// Per request (reads and searches alike).
	RateLimitWrites float64 // write units: the per-key and per-workspace windows
	ReadUnits       float64 // read units of the request's items
	LogBytes        float64 // access log plus the function's JSON log
	XRaySampled     float64 // share of requests X-Ray records
	ColdStartShare  float64 // share of invocations that start an environment
	Read            Function

	// Per search.
	LedgerWrites      float64 // the credit ledger's write units
	QueryTokens       float64 // Titan tokens of a query
	SearchDomain      Function
	SearchEmbedded    Function
	PointerGetsPerHit float64 // conditional GETs of the manifest per search

	// What a cold search instance GETs from S3 (ColdStartGETs): the
	// manifest; each segment's hot part, which every query needs, at init;
	// the rest of the index in ranged GETs of RangeMB, as searches touch it
	// and as the background prefetch reads it; and the first search's
	// ranged GETs on an empty cache. S3 bills each GET, ranged or whole.
	IndexSegments     float64 // segments of the index (a reindex writes 25,000 documents a segment)
	HotGETsPerSegment float64 // GETs of a segment's hot part at init
	RangeMB           float64 // bytes of a ranged GET of a segment's cold part
	FirstSearchGETs   float64 // ranged GETs of the first search of an instance

	// Per document change.
	ChangesPerSnapshot float64 // stream records the indexer folds into one segment (a batch)
	PutsPerSnapshot    float64 // PUTs per batch: its segment and the manifest, and the merges' share
	SnapshotWriteMS    float64 // the indexer's time per batch: index, write, publish, and the merges' share
	WarmInstances      float64 // warm search instances that read each new segment
	GETsPerNewSegment  float64 // a warm instance's GETs of a new segment: its hot part, then the rest
	IndexerMemoryMB    int
	DocTokens          float64 // Titan tokens of a document
	ItemsPerDoc        float64 // table items an import writes per document
}

// Assumed are the assumptions behind the README's table (docs/costs.md says why).
var Assumed = Assumptions{
	WAFRules:        1,
	AlarmsDomain:    24,
	AlarmsEmbedded:  17,
	TableGB:         1,
	IndexMB:         36,
	IndexCopies:     1.2,
	LogRetentionMon: 3,

	RateLimitWrites: 2,
	ReadUnits:       3,
	LogBytes:        800,
	XRaySampled:     0.08,
	ColdStartShare:  0.01,
	Read:            Function{MemoryMB: 1024, DurationMS: 20, InitMS: 300},

	LedgerWrites:      1,
	QueryTokens:       8,
	SearchDomain:      Function{MemoryMB: 1024, DurationMS: 100, InitMS: 300},
	SearchEmbedded:    Function{MemoryMB: 2048, DurationMS: 90, InitMS: 1500},
	PointerGetsPerHit: 0.2,
	IndexSegments:     1,
	HotGETsPerSegment: 1,
	RangeMB:           4,  // the prefetch reads a segment's cold part 4 MiB at a time (localsearch's prefetchRun)
	FirstSearchGETs:   29, // BenchmarkEmbeddedTier at 10,000 documents: 30 ranged GETs to the first answer, one of them the hot part (docs/performance.md)

	ChangesPerSnapshot: 50,
	PutsPerSnapshot:    2.3, // docs/costs.md: 2 per batch, and merges every 10, 100 and 1,000 batches
	SnapshotWriteMS:    100,
	WarmInstances:      2,
	GETsPerNewSegment:  2,
	IndexerMemoryMB:    3008,
	DocTokens:          350,
	ItemsPerDoc:        9,
}

// Line is one item of an estimate: what, how it is computed, and dollars.
type Line struct {
	What string
	How  string
	USD  float64
}

// Estimate is a sum of lines.
type Estimate []Line

// Total is the estimate's sum.
func (e Estimate) Total() float64 {
	t := 0.0
	for _, l := range e {
		t += l.USD
	}
	return t
}

func (p PriceList) hour(t string) float64 {
	pr, ok := p.OpenSearchHour[t]
	if !ok {
		panic("costs: no price for " + t)
	}
	return pr.USD
}

// fixed is what every stack pays each month whatever its traffic.
func fixed(p PriceList, a Assumptions, alarms int) Estimate {
	return Estimate{
		{"WAF web ACL and its rate rule", fmt.Sprintf("$%.2f + %d × $%.2f", p.WAFWebACL.USD, a.WAFRules, p.WAFRule.USD), p.WAFWebACL.USD + float64(a.WAFRules)*p.WAFRule.USD},
		{"CloudWatch alarms", fmt.Sprintf("%d × $%.2f", alarms, p.Alarm.USD), float64(alarms) * p.Alarm.USD},
		{"DynamoDB storage and point-in-time recovery", fmt.Sprintf("%.0f GB × ($%.2f + $%.2f)", a.TableGB, p.DynamoStorage.USD, p.DynamoPITR.USD), a.TableGB * (p.DynamoStorage.USD + p.DynamoPITR.USD)},
	}
}

// AtRestDomain is a month of a domain stack with no traffic.
func AtRestDomain(p PriceList, a Assumptions, d Domain) Estimate {
	e := Estimate{
		{"OpenSearch data nodes", fmt.Sprintf("%d × %s × $%.3f/h × %d h", d.InstanceCount, d.InstanceType, p.hour(d.InstanceType), HoursPerMonth), float64(d.InstanceCount) * p.hour(d.InstanceType) * HoursPerMonth},
		{"OpenSearch gp3 volumes", fmt.Sprintf("%d × %d GB × $%.3f", d.InstanceCount, d.VolumeGB, p.OpenSearchGP3.USD), float64(d.InstanceCount*d.VolumeGB) * p.OpenSearchGP3.USD},
	}
	if d.MasterCount > 0 {
		e = append(e, Line{"OpenSearch dedicated masters", fmt.Sprintf("%d × %s × $%.3f/h × %d h", d.MasterCount, d.MasterType, p.hour(d.MasterType), HoursPerMonth), float64(d.MasterCount) * p.hour(d.MasterType) * HoursPerMonth})
	}
	return append(e, fixed(p, a, a.AlarmsDomain)...)
}

// AtRestEmbedded is a month of an embedded stack with no traffic: no warm
// search function, so no manifest polling either.
func AtRestEmbedded(p PriceList, a Assumptions) Estimate {
	gb := a.IndexMB * a.IndexCopies / 1000
	return append(fixed(p, a, a.AlarmsEmbedded),
		Line{"S3 index segments (live, and retired awaiting expiry)", fmt.Sprintf("%.1f × %.0f MB × $%.3f", a.IndexCopies, a.IndexMB, p.S3Storage.USD), gb * p.S3Storage.USD})
}

// lambda is a million invocations of f, cold starts included.
func lambda(p PriceList, a Assumptions, f Function, what string) Estimate {
	gb := float64(f.MemoryMB) / 1024
	return Estimate{
		{what + ": requests", fmt.Sprintf("1M × $%.2f/M", p.LambdaRequest.USD*1e6), 1e6 * p.LambdaRequest.USD},
		{what + ": duration", fmt.Sprintf("1M × %.0f ms × %.0f GB × $%.10f", f.DurationMS, gb, p.LambdaGBSecond.USD), 1e6 * f.DurationMS / 1000 * gb * p.LambdaGBSecond.USD},
		{what + ": cold starts (INIT billed)", fmt.Sprintf("%.0f%% × 1M × %.0f ms × %.0f GB", a.ColdStartShare*100, f.InitMS, gb), a.ColdStartShare * 1e6 * f.InitMS / 1000 * gb * p.LambdaGBSecond.USD},
	}
}

// request is what a million API requests cost whatever they ask.
func request(p PriceList, a Assumptions) Estimate {
	logGB := 1e6 * a.LogBytes / 1e9
	return Estimate{
		{"API Gateway REST", "1M × $3.50/M", 1e6 * p.APIGatewayREST.USD},
		{"WAF requests", "1M × $0.60/M", 1e6 * p.WAFRequest.USD},
		{"DynamoDB rate-limit writes", fmt.Sprintf("%.0f WRU × $%.3f/M", a.RateLimitWrites, p.DynamoWrite.USD*1e6), a.RateLimitWrites * 1e6 * p.DynamoWrite.USD},
		{"DynamoDB reads", fmt.Sprintf("%.0f RRU × $%.3f/M", a.ReadUnits, p.DynamoRead.USD*1e6), a.ReadUnits * 1e6 * p.DynamoRead.USD},
		{"CloudWatch Logs", fmt.Sprintf("%.1f GB × ($%.2f + %.0f months × $%.2f)", logGB, p.LogsIngest.USD, a.LogRetentionMon, p.LogsStorage.USD), logGB * (p.LogsIngest.USD + a.LogRetentionMon*p.LogsStorage.USD)},
		{"X-Ray traces", fmt.Sprintf("%.0f%% × 1M × $5/M", a.XRaySampled*100), a.XRaySampled * 1e6 * p.XRayTrace.USD},
	}
}

// PerMillionReads is a million reads (libraries and documents routes); the
// same on both tiers.
func PerMillionReads(p PriceList, a Assumptions) Estimate {
	return append(request(p, a), lambda(p, a, a.Read, "Lambda")...)
}

func search(p PriceList, a Assumptions, f Function) Estimate {
	e := append(request(p, a), lambda(p, a, f, "Lambda search")...)
	return append(e,
		Line{"DynamoDB credit ledger", fmt.Sprintf("%.0f WRU × $%.3f/M", a.LedgerWrites, p.DynamoWrite.USD*1e6), a.LedgerWrites * 1e6 * p.DynamoWrite.USD},
		Line{"Titan V2 query embedding", fmt.Sprintf("1M × %.0f tokens × $0.02/M tokens", a.QueryTokens), 1e6 * a.QueryTokens * p.TitanToken.USD},
	)
}

// PerMillionSearchesDomain is a million searches on a domain stack; the
// domain itself is in the at-rest figure.
func PerMillionSearchesDomain(p PriceList, a Assumptions) Estimate {
	return search(p, a, a.SearchDomain)
}

// PerMillionSearchesEmbedded is a million searches on an embedded stack: a
// larger function, a longer cold start (it reads the segments), the
// segments' GETs at each cold start and the manifest's conditional GETs.
func PerMillionSearchesEmbedded(p PriceList, a Assumptions) Estimate {
	return append(search(p, a, a.SearchEmbedded),
		Line{"S3 manifest polls", fmt.Sprintf("%.2f GET per search × $0.0004/1,000", a.PointerGetsPerHit), a.PointerGetsPerHit * 1e6 * p.S3Get.USD},
		coldStartGETs(p, a))
}

// ColdStartGETs are the S3 GETs of one cold search instance: the manifest,
// each segment's hot part, the ranged GETs that read the rest of the index
// (IndexMB in RangeMB ranges), and the first search's.
func ColdStartGETs(a Assumptions) float64 {
	return 1 + a.IndexSegments*a.HotGETsPerSegment + math.Ceil(a.IndexMB/a.RangeMB) + a.FirstSearchGETs
}

// coldStartGETs is a million searches' share of the cold starts' GETs.
func coldStartGETs(p PriceList, a Assumptions) Line {
	n := ColdStartGETs(a)
	return Line{"S3 GETs per cold start, ranged ones included",
		fmt.Sprintf("%.0f%% × 1M × %.0f GETs (manifest 1, hot parts %.0f, ranges of %.0f MB %.0f, first search %.0f) × $0.0004/1,000",
			a.ColdStartShare*100, n, a.IndexSegments*a.HotGETsPerSegment, a.RangeMB, math.Ceil(a.IndexMB/a.RangeMB), a.FirstSearchGETs),
		a.ColdStartShare * 1e6 * n * p.S3Get.USD}
}

// ColdStartGETsAtSize is the cold starts' GETs of a million searches on an
// index of indexMB in segments: what the index's size does to the one
// S3 line that grows with it.
func ColdStartGETsAtSize(p PriceList, a Assumptions, indexMB, segments float64) Estimate {
	a.IndexMB, a.IndexSegments = indexMB, segments
	return Estimate{coldStartGETs(p, a)}
}

// PerMillionChangesEmbedded is what the embedded tier adds per million
// document changes: the segments the indexer writes and merges, and the
// warm search instances' reads of them.
func PerMillionChangesEmbedded(p PriceList, a Assumptions) Estimate {
	n := 1e6 / a.ChangesPerSnapshot
	gb := float64(a.IndexerMemoryMB) / 1024
	return Estimate{
		{"S3 segment and manifest PUTs", fmt.Sprintf("%.0f batches × %.1f PUTs × $0.005/1,000", n, a.PutsPerSnapshot), n * a.PutsPerSnapshot * p.S3Put.USD},
		{"Indexer time writing segments", fmt.Sprintf("%.0f × %.1f s × %.0f GB", n, a.SnapshotWriteMS/1000, gb), n * a.SnapshotWriteMS / 1000 * gb * p.LambdaGBSecond.USD},
		{"S3 segment GETs by warm search instances", fmt.Sprintf("%.0f batches × %.0f instances × %.0f GETs × $0.0004/1,000", n, a.WarmInstances, a.GETsPerNewSegment), n * a.WarmInstances * a.GETsPerNewSegment * p.S3Get.USD},
	}
}

// PerMillionDocumentsIndexed is what both tiers pay to import and embed a
// million documents.
func PerMillionDocumentsIndexed(p PriceList, a Assumptions) Estimate {
	return Estimate{
		{"Titan V2 document embeddings", fmt.Sprintf("1M × %.0f tokens × $0.02/M tokens", a.DocTokens), 1e6 * a.DocTokens * p.TitanToken.USD},
		{"DynamoDB import writes", fmt.Sprintf("1M × %.0f items × $0.625/M", a.ItemsPerDoc), 1e6 * a.ItemsPerDoc * p.DynamoWrite.USD},
	}
}

// Dollars formats an amount as the tables print it: cents below $100,
// whole dollars above.
func Dollars(usd float64) string {
	if usd >= 100 {
		return fmt.Sprintf("$%s", thousands(int(math.Round(usd))))
	}
	return fmt.Sprintf("$%.2f", usd)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
