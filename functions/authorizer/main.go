// Command authorizer is API Gateway's REQUEST authorizer: it checks the bearer
// key and returns the policy, the context the functions trust and the usage
// identifier of the key's usage plan.
package main

import "github.com/doclib/doclib/shared/aws/lambdaapp"

func main() { lambdaapp.Main(lambdaapp.Authorizer) }
