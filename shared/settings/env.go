package settings

import (
	"fmt"
	"strconv"

	doclib "github.com/doclib/doclib/shared"
)

// The environment variables of doclib's programs, all named here and nowhere
// else in Go code (TestEnvNamesLiveInEnvGo): the CDK stack sets what the
// Lambda functions read by the same constants, so the two cannot disagree.
// Shell scripts (scripts/) and tests may spell them out.

// Read by the Lambda functions (set by infra/stack) and by the local programs.
const (
	// EnvTable is the DynamoDB table's name; every function gets it.
	EnvTable = "DOCLIB_TABLE"
	// EnvKeyLimit and EnvIPLimit are the per-key and per-IP requests per
	// minute (docs/api.md: 100 and 300).
	EnvKeyLimit = "DOCLIB_KEY_LIMIT"
	EnvIPLimit  = "DOCLIB_IP_LIMIT"
	// EnvCustomer is the stack's customer, for the authorizer: it is part of
	// every usage identifier (usageplan.Value), as in EnvUsagePlans.
	EnvCustomer = "DOCLIB_CUSTOMER"
	// EnvUsagePlans names the stack's customer and maps workspace plans (the
	// usage tiers) to API Gateway usage plan IDs,
	// "customer=acme,individual=a1b2c3,team=d4e5f6,enterprise=g7h8i9": the
	// indexer registers each key's usage identifier in its tier's plan.
	EnvUsagePlans = "DOCLIB_USAGE_PLANS"
	// EnvAccountHelp is the sentence that 401, 402 and 403 answers end with,
	// saying who fixes what a key or workspace lacks; "{action}" in it
	// stands for the step (doclib.AccountHelp). Unset: "Ask the
	// administrator of this doclib deployment to {action}."
	EnvAccountHelp = "DOCLIB_ACCOUNT_HELP"
	// EnvResponseTransfer is how API Gateway invokes the functions that
	// answer the API: STREAM (InvokeWithResponseStream; the default) or
	// BUFFERED (Invoke, at most 6 MB an answer). The stack sets it beside
	// each integration's ResponseTransferMode, so the two always agree.
	EnvResponseTransfer = "DOCLIB_RESPONSE_TRANSFER"
)

// Values of EnvResponseTransfer, as API Gateway names its transfer modes.
const (
	TransferStream   = "STREAM"
	TransferBuffered = "BUFFERED"
)

// The embedder (Embedder.Flags).
const (
	// EnvEmbedder is hash, openai or bedrock ("bedrock" in AWS).
	EnvEmbedder = "DOCLIB_EMBEDDER"
	// EnvEmbedURL is the OpenAI-compatible server's base URL.
	EnvEmbedURL = "DOCLIB_EMBED_URL"
	// EnvEmbedModel and EnvEmbedDimensions choose the model (in AWS
	// amazon.titan-embed-text-v2:0) and its dimensions (256, 512 or 1024).
	EnvEmbedModel      = "DOCLIB_EMBED_MODEL"
	EnvEmbedDimensions = "DOCLIB_EMBED_DIMENSIONS"
	// EnvEmbedAPIKey is the OpenAI-compatible server's key: never a flag,
	// since flags show in process lists.
	EnvEmbedAPIKey = "DOCLIB_EMBED_API_KEY"
	// EnvEmbedBatch, EnvEmbedConcurrency and EnvEmbedTimeout bound how the
	// embedder paces its requests (embedcall.Pacer): the most texts a
	// request, the most requests at once, and the time of a query-sized
	// request, which is also the least any request gets.
	EnvEmbedBatch       = "DOCLIB_EMBED_BATCH"
	EnvEmbedConcurrency = "DOCLIB_EMBED_CONCURRENCY"
	EnvEmbedTimeout     = "DOCLIB_EMBED_TIMEOUT"
)

// The OpenSearch cluster (OpenSearch.Flags).
const (
	// EnvOpenSearchURL is the domain's or collection's endpoint (https://…).
	EnvOpenSearchURL = "DOCLIB_OPENSEARCH_URL"
	// EnvOpenSearchService is "es" for a managed domain, "aoss" for a
	// serverless collection: the SigV4 service name.
	EnvOpenSearchService = "DOCLIB_OPENSEARCH_AWS_SERVICE"
	// EnvOpenSearchAlias is the index alias (default doclib-documents).
	EnvOpenSearchAlias = "DOCLIB_OPENSEARCH_ALIAS"
	// EnvOpenSearchUser and EnvOpenSearchPassword are for basic
	// authentication; never flags.
	EnvOpenSearchUser     = "DOCLIB_OPENSEARCH_USER"
	EnvOpenSearchPassword = "DOCLIB_OPENSEARCH_PASSWORD"
)

// The embedded search tier on Lambda (infra -c search=embedded): the indexer
// publishes snapshots of the search index to a bucket, and the search
// function serves the newest (infra/README.md, "Search tiers").
const (
	// EnvSnapshotBucket is the S3 bucket of the snapshots; with EnvSearch
	// "embedded" the functions use it instead of OpenSearch.
	EnvSnapshotBucket = "DOCLIB_SNAPSHOT_BUCKET"
	// EnvSnapshotPoll is how often, at most, the search function looks for a
	// newer manifest of the index's segments, as a Go duration ("5s", the
	// default).
	EnvSnapshotPoll = "DOCLIB_SNAPSHOT_POLL"
	// EnvSearchCacheMB bounds, in MB, what the search function keeps in
	// memory of the cold parts of the index's segments, which it reads by
	// range (docs/search.md, "The embedded tier on Lambda"). Unset: derived
	// from the function's memory (EnvLambdaMemory), or no bound outside
	// Lambda.
	EnvSearchCacheMB = "DOCLIB_SEARCH_CACHE_MB"
	// EnvSearchRangeFromKB is the size, in KB, from which the search
	// function opens a segment by range (its hot part at load, the cold
	// part as queries need it) instead of reading it whole. Unset: 4096
	// (snapshot.DefaultReadWholeBelow); 0: every segment, whatever its
	// size (a test's setting: the stand-in's demo index is small).
	EnvSearchRangeFromKB = "DOCLIB_SEARCH_RANGE_FROM_KB"
	// EnvSearchPrefetch is "off" to turn off the background read of the
	// cold parts of the segments opened by range: they are then read only
	// as queries need them. Unset or "on": prefetched.
	EnvSearchPrefetch = "DOCLIB_SEARCH_PREFETCH"
	// EnvLambdaMemory is the function's memory in MB, which Lambda sets.
	// The search function sets its Go memory limit to nine tenths of it,
	// unless EnvGoMemLimit is set.
	EnvLambdaMemory = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
	// EnvGoMemLimit is the Go runtime's own memory limit (runtime/debug),
	// which, when set, the search function leaves as it is.
	EnvGoMemLimit = "GOMEMLIMIT"
	// EnvGOGC is the Go collector's percentage, which, when set, the search
	// function leaves as it is; unset, the function sizes it to what its
	// index holds (snapshot.Follower.GCHeadroom).
	EnvGOGC = "GOGC"
)

// The search rules' overrides (Rules.Flags).
const (
	EnvEmbedBudget         = "DOCLIB_EMBED_BUDGET"
	EnvSemanticThreshold   = "DOCLIB_SEMANTIC_THRESHOLD"
	EnvRecordingsThreshold = "DOCLIB_RECORDINGS_THRESHOLD"
	EnvSearchWeights       = "DOCLIB_SEARCH_WEIGHTS"
	EnvSearchFeedback      = "DOCLIB_SEARCH_FEEDBACK"
)

// The local server, cmd/doclib-server.
const (
	// EnvData is a data-set file to serve instead of the demo.
	EnvData = "DOCLIB_DATA"
	// EnvIndexDir is doclib-server's --index-dir: where the embedded search
	// index is kept between runs.
	EnvIndexDir = "DOCLIB_INDEX_DIR"
	// EnvStore is memory or dynamodb; EnvSearch is embedded or opensearch
	// (the Lambda functions read it too: embedded means the snapshots of
	// EnvSnapshotBucket).
	EnvStore  = "DOCLIB_STORE"
	EnvSearch = "DOCLIB_SEARCH"
	// EnvAddr is the HOST:PORT it listens on.
	EnvAddr = "DOCLIB_ADDR"
)

// The command-line client, cmd/doclib.
const (
	// EnvURL is the API's base URL.
	EnvURL = "DOCLIB_URL"
	// EnvAPIKey is the key the client sends as a bearer token.
	EnvAPIKey = "DOCLIB_API_KEY"
)

// The CDK app (infra) and the tests' tools.
const (
	// EnvLambdaDir names a directory of prebuilt functions,
	// <dir>/<name>/bootstrap: the app uses them instead of building (the
	// tests build once and synthesize several times).
	EnvLambdaDir = "DOCLIB_LAMBDA_DIR"
	// EnvLambdaArch is the architecture to build the functions for instead
	// of Lambda's arm64 (the stand-in, internal/standin, runs them here).
	EnvLambdaArch = "DOCLIB_LAMBDA_GOARCH"
	// EnvDynalite overrides where the dynalite executable is
	// (internal/standin/dynalitetest; scripts/tools sets it).
	EnvDynalite = "DOCLIB_DYNALITE"
	// EnvRequireDynalite turns "dynalite is unavailable" from a skip into a
	// failure, so that CI cannot pass by silently skipping the DynamoDB tests.
	EnvRequireDynalite = "DOCLIB_REQUIRE_DYNALITE"
	// EnvDynalitePath, when set, is a folder where the tests' dynalite
	// keeps its tables (LevelDB on disk) instead of in its memory: a table
	// of two million items took 7 to 10 GB of memory (the sizing harness
	// at a million documents, functions/sizing_test.go).
	EnvDynalitePath = "DOCLIB_DYNALITE_PATH"
	// EnvMCPInspector is where the MCP inspector's executable is
	// (internal/suites/inspector; scripts/tools sets it).
	EnvMCPInspector = "DOCLIB_MCP_INSPECTOR"
	// EnvRequireMCPInspector turns "the inspector is unavailable" from a
	// skip into a failure, as EnvRequireDynalite does for dynalite.
	EnvRequireMCPInspector = "DOCLIB_REQUIRE_MCP_INSPECTOR"
	// EnvEmbedServer is the real model's OpenAI-compatible server, a
	// script run with node, and EnvEmbedModules the node_modules folder
	// that holds the model and its runtime (internal/suites/embedmodel;
	// scripts/tools sets both).
	EnvEmbedServer  = "DOCLIB_EMBED_SERVER"
	EnvEmbedModules = "DOCLIB_EMBED_MODULES"
	// EnvRequireEmbedServer turns a missing model from a skip into a
	// failure, as EnvRequireDynalite does for dynalite.
	EnvRequireEmbedServer = "DOCLIB_REQUIRE_EMBED_SERVER"
	// EnvPrefix begins every name above: a test's child process gets none
	// of them (internal/suites/inspector).
	EnvPrefix = "DOCLIB_"
)

// Required returns the value of key, or an error that names it and says why
// it is needed.
func Required(getenv func(string) string, key, why string) (string, error) {
	v := getenv(key)
	if v == "" {
		return "", fmt.Errorf("%s is not set: %s", key, why)
	}
	return v, nil
}

// PerMinute reads a rate limit, in requests per minute, 1 or more; def when
// key is not set.
func PerMinute(getenv func(string) string, key string, def int) (int, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("rate limit: %s=%q must be a whole number of requests per minute, 1 or more", key, v)
	}
	return n, nil
}

// API is what each API function reads from its environment: its table and
// its rate limits.
type API struct {
	Table             string
	KeyLimit, IPLimit int // requests per minute
	AccountHelp       doclib.AccountHelp
	// Streaming is EnvResponseTransfer: true for STREAM.
	Streaming bool
}

// AccountHelpFromEnv reads EnvAccountHelp (the default when unset).
func AccountHelpFromEnv(getenv func(string) string) (doclib.AccountHelp, error) {
	h, err := doclib.ParseAccountHelp(getenv(EnvAccountHelp))
	if err != nil {
		return "", fmt.Errorf("%s: %w", EnvAccountHelp, err)
	}
	return h, nil
}

// APIFromEnv reads EnvTable (required), EnvKeyLimit and EnvIPLimit (the
// spec's limits when unset), EnvAccountHelp and EnvResponseTransfer.
func APIFromEnv(getenv func(string) string) (API, error) {
	var a API
	var err error
	if a.Table, err = Required(getenv, EnvTable, "the stack gives every function its table's name"); err != nil {
		return a, err
	}
	if a.KeyLimit, err = PerMinute(getenv, EnvKeyLimit, doclib.KeyLimit); err != nil {
		return a, err
	}
	if a.IPLimit, err = PerMinute(getenv, EnvIPLimit, doclib.IPLimit); err != nil {
		return a, err
	}
	if a.AccountHelp, err = AccountHelpFromEnv(getenv); err != nil {
		return a, err
	}
	switch v := getenv(EnvResponseTransfer); v {
	case "", TransferStream:
		a.Streaming = true
	case TransferBuffered:
	default:
		return a, fmt.Errorf("%s is %q; set %s or %s, as the stack does beside the integration's ResponseTransferMode",
			EnvResponseTransfer, v, TransferStream, TransferBuffered)
	}
	return a, nil
}
