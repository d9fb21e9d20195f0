// Command indexer reads the table's DynamoDB Stream and keeps the OpenSearch
// index, and API Gateway's usage keys, in step with the table.
package main

import "github.com/doclib/doclib/shared/aws/lambdaapp"

func main() { lambdaapp.Main(lambdaapp.Indexer) }
