package standin

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/doclib/doclib/internal/standin/cfn"
)

// The account and Region every stand-in runs in.
const (
	Account = "123456789012"
	Region  = "us-east-1"
)

// physical assigns every resource of t the values CloudFormation would give
// it on creation: names taken from the properties where the template sets
// them, generated "<stack>-<LogicalID>-<SUFFIX>" names otherwise, IDs and
// ARNs in the formats of each service. run makes the generated names unique
// per stand-in (tables of several stand-ins share one dynalite). Where a
// resource is served by the stand-in (the OpenSearch domain's endpoint), the
// value is the stand-in's address.
func physical(t *cfn.Template, stack, run, searchHost string) cfn.Values {
	v := cfn.Values{Account: Account, Region: Region, Partition: "aws", URLSuffix: "amazonaws.com", StackName: stack,
		Ref: map[string]string{}, Attr: map[string]string{}}
	gen := func(id string, max int) string {
		h := sha256.Sum256([]byte(run + id))
		name := fmt.Sprintf("%s-%s-%X", stack, id, h[:6])
		if len(name) > max {
			name = name[len(name)-max:]
		}
		return name
	}
	shortID := func(id string) string {
		h := sha256.Sum256([]byte(run + id))
		return strings.ToLower(fmt.Sprintf("%x", h[:5]))
	}
	arn := func(svc, rest string) string { return "arn:aws:" + svc + ":" + Region + ":" + Account + ":" + rest }
	prop := func(r cfn.Resource, name string) string {
		s, _ := r.Properties[name].(string)
		return s
	}
	for id, r := range t.Resources {
		switch r.Type {
		case "AWS::DynamoDB::Table":
			name := prop(r, "TableName")
			if name == "" {
				name = gen(id, 255)
			}
			v.Ref[id] = name
			v.Attr[id+".Arn"] = arn("dynamodb", "table/"+name)
			v.Attr[id+".StreamArn"] = arn("dynamodb", "table/"+name+"/stream/2026-01-01T00:00:00.000")
		case "AWS::IAM::Role":
			name := prop(r, "RoleName")
			if name == "" {
				name = gen(id, 64)
			}
			v.Ref[id] = name
			v.Attr[id+".Arn"] = "arn:aws:iam::" + Account + ":role/" + name
			v.Attr[id+".RoleId"] = "AROA" + strings.ToUpper(shortID(id))
		case "AWS::IAM::Policy":
			v.Ref[id] = gen(id, 128)
		case "AWS::Lambda::Function":
			name := prop(r, "FunctionName")
			if name == "" {
				name = gen(id, 64)
			}
			v.Ref[id] = name
			v.Attr[id+".Arn"] = arn("lambda", "function:"+name)
		case "AWS::Logs::LogGroup":
			name := prop(r, "LogGroupName")
			if name == "" {
				name = gen(id, 512)
			}
			v.Ref[id] = name
			v.Attr[id+".Arn"] = arn("logs", "log-group:"+name+":*")
		case "AWS::S3::Bucket":
			// Bucket names are global, lower case, at most 63 characters.
			name := prop(r, "BucketName")
			if name == "" {
				name = strings.ToLower(gen(id, 63))
			}
			v.Ref[id] = name
			v.Attr[id+".Arn"] = "arn:aws:s3:::" + name
			v.Attr[id+".DomainName"] = name + ".s3.amazonaws.com"
			v.Attr[id+".RegionalDomainName"] = name + ".s3." + Region + ".amazonaws.com"
		case "AWS::OpenSearchService::Domain":
			name := prop(r, "DomainName")
			if name == "" {
				name = strings.ToLower(gen(id, 28))
			}
			v.Ref[id] = name
			v.Attr[id+".Arn"] = arn("es", "domain/"+name)
			v.Attr[id+".DomainArn"] = v.Attr[id+".Arn"]
			v.Attr[id+".DomainEndpoint"] = searchHost
		case "AWS::ApiGateway::RestApi":
			v.Ref[id] = shortID(id)
			v.Attr[id+".RootResourceId"] = shortID(id + "/")
		case "AWS::ApiGateway::Stage":
			v.Ref[id] = prop(r, "StageName")
		case "AWS::SQS::Queue":
			name := prop(r, "QueueName")
			if name == "" {
				name = gen(id, 80)
			}
			v.Ref[id] = "https://sqs." + Region + ".amazonaws.com/" + Account + "/" + name
			v.Attr[id+".Arn"] = arn("sqs", name)
			v.Attr[id+".QueueName"] = name
		case "AWS::WAFv2::WebACL":
			v.Ref[id] = gen(id, 128)
			v.Attr[id+".Arn"] = arn("wafv2", "regional/webacl/"+gen(id, 128)+"/"+shortID(id))
		default:
			// API Gateway resources, methods, deployments, authorizers,
			// usage plans, and whatever else: an opaque ID.
			v.Ref[id] = shortID(id)
		}
	}
	return v
}
