// Command search is the Lambda function behind API Gateway for the search
// routes (httpapi.Routes of group "search"): the shared handler, wired once
// per container by awsapp.
package main

import (
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/httpapi"
)

func main() { lambdaapp.Main(lambdaapp.APIGroup(httpapi.GroupSearch)) }
