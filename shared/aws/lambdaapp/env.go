// Package lambdaapp wires doclib's Lambda functions from their environment. The
// CDK stack (infra/) sets the variables named here, and each function's main
// calls one builder of this package: the names are written once, so the stack
// and the code cannot disagree.
package lambdaapp

// Environment variables of the functions. Every function gets EnvTable; the
// others go only to the functions that use them.
const (
	// EnvTable is the DynamoDB table's name.
	EnvTable = "DOCLIB_TABLE"
	// EnvKeyLimit and EnvIPLimit are the per-key and per-IP requests per
	// minute (decisions.md: 100 and 300).
	EnvKeyLimit = "DOCLIB_KEY_LIMIT"
	EnvIPLimit  = "DOCLIB_IP_LIMIT"
	// EnvOpenSearchURL is the domain's or collection's endpoint (https://…).
	EnvOpenSearchURL = "DOCLIB_OPENSEARCH_URL"
	// EnvOpenSearchService is "es" for a managed domain, "aoss" for a
	// serverless collection: the SigV4 service name.
	EnvOpenSearchService = "DOCLIB_OPENSEARCH_AWS_SERVICE"
	// EnvOpenSearchAlias is the index alias (default doclib-documents).
	EnvOpenSearchAlias = "DOCLIB_OPENSEARCH_ALIAS"
	// EnvEmbedder is "bedrock" in AWS; EnvEmbedModel and EnvEmbedDimensions
	// choose the model (amazon.titan-embed-text-v2:0) and its 256, 512 or
	// 1024 dimensions.
	EnvEmbedder        = "DOCLIB_EMBEDDER"
	EnvEmbedModel      = "DOCLIB_EMBED_MODEL"
	EnvEmbedDimensions = "DOCLIB_EMBED_DIMENSIONS"
	// EnvUsagePlans names the stack's customer and maps workspace plans (the
	// usage tiers) to API Gateway usage plan IDs,
	// "customer=acme,individual=a1b2c3,team=d4e5f6,enterprise=g7h8i9": the
	// indexer registers each key's usage identifier in its tier's plan.
	EnvUsagePlans = "DOCLIB_USAGE_PLANS"
	// EnvCustomer is the stack's customer, for the authorizer: it is part of
	// every usage identifier (usageplan.Value), as in EnvUsagePlans.
	EnvCustomer = "DOCLIB_CUSTOMER"
)

// Function names, each the folder of its main under functions/.
const (
	FunctionLibraries  = "libraries"
	FunctionDocuments  = "documents"
	FunctionSearch     = "search"
	FunctionAuthorizer = "authorizer"
	FunctionIndexer    = "indexer"
)

// Functions lists every function, in the order the stack creates them.
var Functions = []string{FunctionLibraries, FunctionDocuments, FunctionSearch, FunctionAuthorizer, FunctionIndexer}
