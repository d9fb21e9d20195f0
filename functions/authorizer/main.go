// Command authorizer is API Gateway's REQUEST authorizer: it checks the bearer
// key and returns the policy, the context the functions trust and the usage
// identifier of the key's usage plan.
package main

import "github.com/doclib/doclib/shared/awsapp"

func main() { awsapp.Main(awsapp.Authorizer) }
