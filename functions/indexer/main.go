// Command indexer reads the table's DynamoDB Stream and keeps the OpenSearch
// index, and API Gateway's usage keys, in step with the table.
package main

import "github.com/doclib/doclib/shared/awsapp"

func main() { awsapp.Main(awsapp.Indexer) }
