package stack

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/doclib/doclib/infra/domainsizes"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/settings"
)

// Search backends: the "search" context value.
//
// SearchDomain runs an OpenSearch Service managed domain: it is billed by
// the hour whether or not anyone searches. SearchEmbedded runs the project's
// embedded engine inside the search function over a snapshot that the
// indexer writes to S3: idle, it costs the snapshots' storage and nothing
// else (infra/README.md, "Search tiers").
//
// OpenSearch Serverless was an option and was removed (issue 12): a reindex
// ends with POST /<index>/_refresh, which is not among the operations AWS
// lists for Serverless collections; the alias swap needed alias rights its
// data access policy did not grant; and the index's vectors are faiss HNSW
// on a cosine space, which the collection's engine was found not to offer.
// Nothing here could run it (docs/search.md, "OpenSearch Serverless"), so a
// context that asks for it is refused with that reason rather than deployed
// to fail.
const (
	SearchDomain     = "domain"     // an Amazon OpenSearch Service managed domain
	SearchEmbedded   = "embedded"   // the embedded engine in Lambda over snapshots in S3
	searchServerless = "serverless" // refused: see above
)

// DefaultSearchMemoryMB is the search function's memory in the embedded tier
// when searchMemoryMb is not given. It comes from docs/performance.md's
// measurements of the function under the runtime emulator ("Quantized
// vectors"): at 100,000 documents, the most the tier is advised for, an
// instance peaks at 727 MB, so 2,048 MB leaves the Go heap its headroom;
// Lambda also gives CPU in proportion to memory (a whole vCPU at 1,769 MB),
// which init, the swap and the scan of a large index use.
const DefaultSearchMemoryMB = 2048

// Config is one customer's stack, read from the CDK context (`cdk deploy -c
// key=value`, or the "context" of cdk.json). Every value has a default, so
// `go run ./infra` with no context synthesizes the "demo" customer.
type Config struct {
	// Customer names the stack (Doclib-<customer>) and the resources that
	// carry a name (domain, collection, functions, API).
	Customer string
	// Search is SearchDomain or SearchEmbedded.
	Search string
	// SearchMemoryMB is the search function's memory in the embedded tier
	// (DefaultSearchMemoryMB unless given); 0 in the domain tier.
	SearchMemoryMB int
	// OpenSearchSize names the domain's sizing profile (infra/domainsizes);
	// the fields below start from it, and the Domain* context keys override
	// the instance type, count and volume. In the embedded tier, which has
	// no domain, they are all empty.
	OpenSearchSize string
	// DomainInstanceType, DomainInstanceCount and DomainVolumeGB size the
	// domain's data nodes; DomainZones is the availability zones they spread
	// over (1 turns zone awareness off).
	DomainInstanceType  string
	DomainInstanceCount int
	DomainVolumeGB      int
	DomainZones         int
	// DomainMasterType and DomainMasterCount are the dedicated master nodes;
	// a count of 0 has none (the data nodes elect a master among them).
	DomainMasterType  string
	DomainMasterCount int
	// BedrockModel and EmbedDimensions choose the embedding model.
	BedrockModel    string
	EmbedDimensions int
	// KeyLimit and IPLimit are requests per minute per key and per client IP.
	KeyLimit, IPLimit int
	// StageRateLimit and StageBurstLimit are the most the whole stage admits
	// (every key and IP together), in requests per second and a bucket of
	// requests. API Gateway has no bucket for a whole stage: a stage's
	// throttle applies to each of its methods, each with a bucket of its
	// own. The stack therefore gives each of the stage's methods an equal
	// share (MethodThrottle), so that the methods together never admit more
	// than these, whichever methods the traffic hits.
	StageRateLimit, StageBurstLimit int
	// AuthorizerCacheSeconds is the TTL of API Gateway's authorizer cache.
	AuthorizerCacheSeconds int
	// AuthorizerReservedConcurrency and IndexerReservedConcurrency reserve
	// that many concurrent executions for the authorizer and the indexer; 0
	// reserves none, and no function reserves any unless asked: Lambda
	// refuses a reservation that leaves the account fewer unreserved
	// executions than its minimum (100, or the whole quota on an account
	// whose quota is lower, as new accounts' 10 is), and the stack would fail
	// to create (infra/README.md, "Reserved concurrency").
	AuthorizerReservedConcurrency int
	IndexerReservedConcurrency    int
	// LogRetentionDays applies to every log group of the stack.
	LogRetentionDays int
	// AlarmEmail, when set, subscribes to the alarms' SNS topic.
	AlarmEmail string
	// AccountHelp, when set, is the sentence the API's 401, 402 and 403
	// answers end with, "{action}" standing for the step
	// (doclib.ParseAccountHelp; the functions' DOCLIB_ACCOUNT_HELP): for a
	// deployment with a product in front of it, which says where its users
	// do what. Unset, the functions say to ask the deployment's
	// administrator.
	AccountHelp string
	// UsagePlans puts every key in its tier's API Gateway usage plan, a
	// backstop behind the function's exact per-key limit. False leaves the
	// limit to the function alone and spends no usage plan or API key of the
	// account's quotas (infra/README.md, "Many customers in one account").
	UsagePlans bool
	// ResponseStreaming has API Gateway stream the functions' answers
	// (integrations with ResponseTransferMode STREAM), so that an answer of
	// any size the spec allows arrives whole: a buffered Lambda answer is
	// at most 6 MB. False is the buffered integration, for a Region where
	// Lambda response streaming is not offered: answers over 6 MB then fail
	// with 503 unavailable (docs/design.md, "Answers of any size").
	ResponseStreaming bool
	// Retain keeps the table (with deletion protection), the domain and the
	// log groups when the stack is deleted. False is for test stacks:
	// `cdk destroy` then deletes them with everything in them.
	Retain bool
}

// Defaults are the values of a context key that is not given.
var Defaults = Config{ // the standard size (infra/domainsizes)
	Customer:            "demo",
	Search:              SearchDomain,
	OpenSearchSize:      domainsizes.Standard,
	DomainInstanceType:  domainsizes.Profiles[1].InstanceType,
	DomainInstanceCount: domainsizes.Profiles[1].InstanceCount,
	DomainVolumeGB:      domainsizes.Profiles[1].VolumeGB,
	DomainZones:         domainsizes.Profiles[1].Zones,
	BedrockModel:        "amazon.titan-embed-text-v2:0",
	EmbedDimensions:     1024,
	KeyLimit:            doclib.KeyLimit,
	IPLimit:             doclib.IPLimit,
	// Every customer stack shares the account's Region-wide API Gateway quota
	// (10,000 requests per second, burst 5,000, by default) and its Lambda
	// concurrency: one stage may take a tenth of the rate and two fifths of the
	// burst, far above what its keys' limits add up to in ordinary use.
	StageRateLimit:  1000,
	StageBurstLimit: 2000,
	// None by default: a reservation takes concurrency from every other
	// function of the account (Lambda keeps 100 unreserved), and new accounts
	// may have far less than 1,000 in all (10 is common), where any
	// reservation at all is refused.
	AuthorizerReservedConcurrency: 0,
	IndexerReservedConcurrency:    0,
	// 60 s rather than API Gateway's default of 300 s: a revoked key, a
	// removed device or a suspended subscription takes effect within this
	// time, since a cached Allow is not asked again.
	AuthorizerCacheSeconds: 60,
	LogRetentionDays:       90,
	Retain:                 true,
	UsagePlans:             true,
	ResponseStreaming:      true,
}

// Context keys.
const (
	KeyCustomer               = "customer"
	KeySearch                 = "search"
	KeySearchMemoryMB         = "searchMemoryMb"
	KeyOpenSearchSize         = "opensearchSize"
	KeyDomainInstanceType     = "domainInstanceType"
	KeyDomainInstanceCount    = "domainInstanceCount"
	KeyDomainVolumeGB         = "domainVolumeGb"
	KeyBedrockModel           = "bedrockModel"
	KeyEmbedDimensions        = "embedDimensions"
	KeyKeyLimit               = "keyLimit"
	KeyIPLimit                = "ipLimit"
	KeyStageRateLimit         = "stageRateLimit"
	KeyStageBurstLimit        = "stageBurstLimit"
	KeyAuthorizerCacheSeconds = "authorizerCacheSeconds"
	KeyAuthorizerConcurrency  = "authorizerReservedConcurrency"
	KeyIndexerConcurrency     = "indexerReservedConcurrency"
	KeyLogRetentionDays       = "logRetentionDays"
	KeyAlarmEmail             = "alarmEmail"
	KeyRetain                 = "retain"
	KeyUsagePlans             = "usagePlans"
	KeyResponseStreaming      = "responseStreaming"
	KeyAccountHelp            = "accountHelp"
)

// The domain's name is doclib-<customer> and may have 28 characters; a
// collection's name 32. Lower case, digits and hyphens suit both.
var customerPattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}[a-z0-9]$|^[a-z]$`)

var instanceTypePattern = regexp.MustCompile(`^[a-z0-9]+\.[a-z0-9]+\.search$`)

// Bedrock model IDs: provider.name-version[:n], no wildcard (it becomes part
// of an IAM resource ARN).
var modelPattern = regexp.MustCompile(`^[a-z0-9-]+\.[a-zA-Z0-9.:-]+$`)

// retentionDays are the retentions CloudWatch Logs accepts, in days.
var retentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

var emailPattern = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)

// ParseConfig reads the context through get, which returns nil for a key
// that is not set (the CDK's TryGetContext). Values may be strings (from
// `-c key=value`) or JSON numbers (from cdk.json). An error names the key,
// the value and what is accepted.
func ParseConfig(get func(key string) any) (Config, error) {
	c := Defaults
	p := parser{get: get}
	p.str(KeyCustomer, &c.Customer, func(v string) error {
		if !customerPattern.MatchString(v) {
			return fmt.Errorf("use 1 to 21 lower-case letters, digits or hyphens, starting with a letter and not ending with a hyphen (it names the stack Doclib-<customer> and the OpenSearch domain doclib-<customer>)")
		}
		return nil
	})
	p.str(KeySearch, &c.Search, func(v string) error {
		if v == searchServerless {
			return fmt.Errorf("OpenSearch Serverless is not supported: doclib's reindex refreshes the index (_refresh) and its vectors use faiss HNSW on a cosine space, and a Serverless collection offers neither (docs/search.md); use %q, an OpenSearch Service managed domain", SearchDomain)
		}
		if v != SearchDomain && v != SearchEmbedded {
			return fmt.Errorf("use %q (an OpenSearch Service managed domain) or %q (the embedded engine in Lambda over snapshots in S3)", SearchDomain, SearchEmbedded)
		}
		return nil
	})
	p.refuseOtherTier(c.Search)
	p.str(KeyOpenSearchSize, &c.OpenSearchSize, func(v string) error {
		prof, ok := domainsizes.Named(v)
		if !ok {
			return fmt.Errorf("use %s (docs: infra/README.md, \"OpenSearch sizes\")", domainsizes.Names())
		}
		c.DomainInstanceType, c.DomainInstanceCount, c.DomainVolumeGB = prof.InstanceType, prof.InstanceCount, prof.VolumeGB
		c.DomainZones, c.DomainMasterType, c.DomainMasterCount = prof.Zones, prof.MasterType, prof.MasterCount
		return nil
	})
	p.str(KeyDomainInstanceType, &c.DomainInstanceType, func(v string) error {
		if !instanceTypePattern.MatchString(v) {
			return fmt.Errorf("use an OpenSearch Service instance type such as r7g.large.search")
		}
		return nil
	})
	p.int(KeyDomainInstanceCount, &c.DomainInstanceCount, func(n int) error {
		if z := c.DomainZones; n < z || n%z != 0 || n > 80 {
			return fmt.Errorf("use a multiple of %d up to 80: the %s size spreads its data nodes evenly over %d availability zone(s)", z, c.OpenSearchSize, z)
		}
		return nil
	})
	p.int(KeyDomainVolumeGB, &c.DomainVolumeGB, func(n int) error {
		if n < 10 || n > 16384 {
			return fmt.Errorf("use a size in GB from 10 to 16384")
		}
		return nil
	})
	p.str(KeyBedrockModel, &c.BedrockModel, func(v string) error {
		if !modelPattern.MatchString(v) {
			return fmt.Errorf("use a Bedrock foundation model ID such as amazon.titan-embed-text-v2:0")
		}
		return nil
	})
	p.int(KeyEmbedDimensions, &c.EmbedDimensions, func(n int) error {
		if n != 256 && n != 512 && n != 1024 {
			return fmt.Errorf("use 256, 512 or 1024 (the sizes Titan Text Embeddings V2 returns)")
		}
		return nil
	})
	p.int(KeyKeyLimit, &c.KeyLimit, func(n int) error {
		if n < 1 || n > 1_000_000 {
			return fmt.Errorf("use requests per minute from 1 to 1000000")
		}
		return nil
	})
	p.int(KeyIPLimit, &c.IPLimit, func(n int) error {
		if n < 10 || n > 2_000_000_000 {
			return fmt.Errorf("use requests per minute from 10 (the lowest limit of an AWS WAF rate-based rule) to 2000000000")
		}
		return nil
	})
	p.int(KeyStageRateLimit, &c.StageRateLimit, func(n int) error {
		if m := stageMethods(); n < m || n > 100_000 {
			return fmt.Errorf("use requests per second from %d (one for each of the stage's %d methods, which share it) to 100000 (the account's Region-wide quota, 10000 by default, caps it anyway)", m, m)
		}
		return nil
	})
	p.int(KeyStageBurstLimit, &c.StageBurstLimit, func(n int) error {
		if m := stageMethods(); n < m || n > 100_000 {
			return fmt.Errorf("use a burst of requests from %d (one for each of the stage's %d methods, which share it) to 100000 (the account's Region-wide quota, 5000 by default, caps it anyway)", m, m)
		}
		return nil
	})
	p.int(KeyAuthorizerConcurrency, &c.AuthorizerReservedConcurrency, reservation)
	p.int(KeyIndexerConcurrency, &c.IndexerReservedConcurrency, reservation)
	p.int(KeyAuthorizerCacheSeconds, &c.AuthorizerCacheSeconds, func(n int) error {
		if n < 0 || n > 3600 {
			return fmt.Errorf("use seconds from 0 (no cache) to 3600")
		}
		return nil
	})
	p.int(KeyLogRetentionDays, &c.LogRetentionDays, func(n int) error {
		if !slices.Contains(retentionDays, n) {
			return fmt.Errorf("use a retention CloudWatch Logs accepts: %s", joinInts(retentionDays))
		}
		return nil
	})
	p.str(KeyAlarmEmail, &c.AlarmEmail, func(v string) error {
		if v != "" && !emailPattern.MatchString(v) {
			return fmt.Errorf("use an e-mail address, or leave it out for alarms without notifications")
		}
		return nil
	})
	p.str(KeyAccountHelp, &c.AccountHelp, func(v string) error {
		_, err := doclib.ParseAccountHelp(v)
		return err
	})
	p.bool(KeyRetain, &c.Retain)
	p.bool(KeyUsagePlans, &c.UsagePlans)
	p.bool(KeyResponseStreaming, &c.ResponseStreaming)
	p.tier(&c)
	return c, p.err
}

// reservation checks a reserved concurrency. Whether the account can spare
// it is the account's business: scripts/customer's preflight reads the
// account's quota and stops before a deploy that Lambda would refuse.
func reservation(n int) error {
	if n < 0 || n > 10_000 {
		return fmt.Errorf("use 0 (no reservation) or a number of concurrent executions up to 10000 that leaves the account at least 100 unreserved (an account whose quota is 100 or less cannot reserve any)")
	}
	return nil
}

// domainKeys size the OpenSearch domain, which only the domain tier has.
var domainKeys = []string{KeyOpenSearchSize, KeyDomainInstanceType, KeyDomainInstanceCount, KeyDomainVolumeGB}

// refuseOtherTier refuses the keys that belong to the other search tier
// than search's, before they are read. Such a key is refused rather than
// ignored: a user who sizes a domain for an embedded stack, or the embedded
// search function for a domain stack, expects it to take effect, and would
// otherwise deploy something other than what they asked for.
func (p *parser) refuseOtherTier(search string) {
	if search == SearchEmbedded {
		for _, k := range domainKeys {
			if v := p.get(k); p.given(v) {
				p.fail(k, v, fmt.Errorf("search=%s has no OpenSearch domain to size; leave %s out, or use search=%s", SearchEmbedded, k, SearchDomain))
			}
		}
		return
	}
	if v := p.get(KeySearchMemoryMB); p.given(v) {
		p.fail(KeySearchMemoryMB, v, fmt.Errorf("it sizes the search function of search=%s; with search=%s the function has %d MB (the domain does the searching)",
			SearchEmbedded, search, sizes[lambdaapp.FunctionSearch].memoryMB))
	}
}

// tier reads the embedded tier's keys, and leaves the domain's fields empty
// in the embedded tier, which has no domain.
func (p *parser) tier(c *Config) {
	if c.Search != SearchEmbedded {
		return
	}
	c.OpenSearchSize, c.DomainInstanceType, c.DomainInstanceCount, c.DomainVolumeGB = "", "", 0, 0
	c.DomainZones, c.DomainMasterType, c.DomainMasterCount = 0, "", 0
	c.SearchMemoryMB = DefaultSearchMemoryMB
	p.int(KeySearchMemoryMB, &c.SearchMemoryMB, func(n int) error {
		if n < 128 || n > 10240 {
			return fmt.Errorf("use a Lambda memory size in MB from 128 to 10240")
		}
		return nil
	})
}

// given tells whether a context value was set: -c key= (empty) keeps the
// default, as if it were not.
func (p *parser) given(v any) bool {
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s) != ""
	}
	return v != nil
}

// parser keeps the first error, so that ParseConfig reads as a list of keys.
type parser struct {
	get func(string) any
	err error
}

func (p *parser) fail(key string, v any, err error) {
	if p.err == nil {
		p.err = fmt.Errorf("context %s=%v: %w", key, v, err)
	}
}

func (p *parser) str(key string, dst *string, check func(string) error) {
	raw := p.get(key)
	if raw == nil {
		return
	}
	v, ok := raw.(string)
	if !ok {
		p.fail(key, raw, fmt.Errorf("not a string"))
		return
	}
	v = strings.TrimSpace(v)
	if v == "" && key != KeyAlarmEmail {
		return // -c key= keeps the default
	}
	if err := check(v); err != nil {
		p.fail(key, v, err)
		return
	}
	*dst = v
}

func (p *parser) int(key string, dst *int, check func(int) error) {
	raw := p.get(key)
	if raw == nil {
		return
	}
	var n int
	switch v := raw.(type) {
	case string:
		v = strings.TrimSpace(v)
		if v == "" {
			return
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			p.fail(key, v, fmt.Errorf("not a whole number"))
			return
		}
		n = i
	case float64: // a JSON number from cdk.json
		if v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
			p.fail(key, v, fmt.Errorf("not a whole number"))
			return
		}
		n = int(v)
	default:
		p.fail(key, raw, fmt.Errorf("not a whole number"))
		return
	}
	if err := check(n); err != nil {
		p.fail(key, n, err)
		return
	}
	*dst = n
}

// bool reads true or false, as a string (-c key=false) or a JSON boolean.
func (p *parser) bool(key string, dst *bool) {
	switch v := p.get(key).(type) {
	case nil:
	case bool:
		*dst = v
	case string:
		switch strings.TrimSpace(v) {
		case "":
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			p.fail(key, v, fmt.Errorf("use true or false"))
		}
	default:
		p.fail(key, v, fmt.Errorf("use true or false"))
	}
}

// removal is what deleting the stack does to the resources that hold data:
// keep them (Retain), or delete them (test stacks).
func (c Config) removal() awscdk.RemovalPolicy {
	if c.Retain {
		return awscdk.RemovalPolicy_RETAIN
	}
	return awscdk.RemovalPolicy_DESTROY
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// transferMode is the API integrations' ResponseTransferMode, as
// settings.EnvResponseTransfer gives it to the functions.
func (c Config) transferMode() string {
	if c.ResponseStreaming {
		return settings.TransferStream
	}
	return settings.TransferBuffered
}

// StackName is the CloudFormation stack's name.
func (c Config) StackName() string { return "Doclib-" + c.Customer }

// ResourcePrefix starts the names of named resources: doclib-<customer>.
func (c Config) ResourcePrefix() string { return "doclib-" + c.Customer }

// planHeadroom is how many times the per-key limit the usage plans admit.
// The plans are a backstop behind the function's exact fixed windows
// (docs/api.md: exactly KeyLimit requests succeed per window), never the
// limit itself: a client may send KeyLimit requests at the end of one window
// and KeyLimit more at the start of the next, 2×KeyLimit within moments, all
// of which the spec allows. A bucket of 2×KeyLimit refilled at 2×KeyLimit a
// minute admits every pattern of at most KeyLimit per window (any span of
// k windows' length holds at most (k+1)×KeyLimit such requests, and the
// bucket offers 2×KeyLimit + 2k×KeyLimit ≥ (k+1)×KeyLimit), with room to
// spare for the gateway's best-effort counting.
const planHeadroom = 2

// stageMethods is the number of methods of the stage: one ANY per route of
// apiRoutes, /mcp's included.
func stageMethods() int { return len(apiRoutes()) }

// MethodThrottle is each method's share of the stage's limits: its rate (in
// requests per second, cut to hundredths) and its burst, so that the
// methods' buckets together admit at most StageRateLimit a second and
// StageBurstLimit at once.
func (c Config) MethodThrottle() (rate float64, burst int) {
	n := stageMethods()
	return math.Floor(float64(c.StageRateLimit)*100/float64(n)) / 100, c.StageBurstLimit / n
}

// PlanRateLimit is the usage plans' steady rate per key, requests per second.
func (c Config) PlanRateLimit() float64 { return float64(planHeadroom*c.KeyLimit) / 60 }

// PlanBurstLimit is the usage plans' bucket per key, in requests.
func (c Config) PlanBurstLimit() int { return planHeadroom * c.KeyLimit }

// ThrottleRetryAfter is the Retry-After of API Gateway's THROTTLED response
// (a usage plan's or the stage's bucket): the time the slower of the two,
// a plan's bucket, takes to hold one request again (at least 1 s).
func (c Config) ThrottleRetryAfter() int {
	return max(1, int(math.Ceil(1/c.PlanRateLimit())))
}
