package lambdaapp

// Function names, each the folder of its main under functions/.
const (
	FunctionLibraries  = "libraries"
	FunctionDocuments  = "documents"
	FunctionSearch     = "search"
	FunctionMCP        = "mcp"
	FunctionAuthorizer = "authorizer"
	FunctionIndexer    = "indexer"
)

// Functions lists every function, in the order the stack creates them.
var Functions = []string{FunctionLibraries, FunctionDocuments, FunctionSearch, FunctionMCP, FunctionAuthorizer, FunctionIndexer}
