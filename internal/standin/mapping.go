package standin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/doclib/doclib/internal/standin/cfn"
	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// streamReadActions are what Lambda's event source mapping does with a
// DynamoDB stream as the function's execution role, and what it checks the
// role for when the mapping is created (Lambda Developer Guide, "Using AWS
// Lambda with Amazon DynamoDB": execution role permissions).
var streamReadActions = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}

// checkMappingRights does what Lambda does when CloudFormation creates an
// event source mapping of a DynamoDB stream: it refuses the mapping unless
// the function's execution role may read the stream, and may send to the
// on-failure destination (sqs:SendMessage on a queue, sns:Publish on a
// topic; the destination's own resource policy is evaluated too, as a call
// over HTTPS). The error is Lambda's InvalidParameterValueException, with
// which the stack would fail to create.
func checkMappingRights(t *cfn.Template, r *cfn.Resolver, mappingID string, roles map[string][]*iampolicy.Policy) error {
	p := t.Resources[mappingID].Properties
	fnName, err := r.String(p["FunctionName"])
	if err != nil {
		return err
	}
	fnName = fnName[strings.LastIndex(fnName, ":")+1:]
	roleARN, roleID, err := functionRole(t, r, fnName)
	if err != nil {
		return err
	}
	stream, err := r.String(p["EventSourceArn"])
	if err != nil {
		return err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("standin: creating the event source mapping %s would fail: InvalidParameterValueException: "+format, append([]any{mappingID}, args...)...)
	}
	for _, action := range streamReadActions {
		req := iampolicy.Request{Principal: roleARN, Action: action, Resource: stream}
		if d := iampolicy.Evaluate(req, roles[roleID], nil); !d.Allowed {
			return fail("Cannot access stream %s. Please ensure the role can perform the GetRecords, GetShardIterator, DescribeStream, and ListStreams Actions on your stream in IAM. (%s)", stream, d.Message(req))
		}
	}
	onFailure := mapOf(mapOf(mapOf(p["DestinationConfig"])["OnFailure"]))["Destination"]
	if onFailure == nil {
		return nil
	}
	dest, err := r.String(onFailure)
	if err != nil {
		return err
	}
	var action, kind string
	switch {
	case strings.HasPrefix(dest, "arn:aws:sqs:"):
		action, kind = "sqs:SendMessage", "SQS"
	case strings.HasPrefix(dest, "arn:aws:sns:"):
		action, kind = "sns:Publish", "SNS"
	default:
		return fmt.Errorf("standin: event source mapping %s: on-failure destination %s is neither a queue nor a topic; the stand-in does not emulate it", mappingID, dest)
	}
	resource, err := destinationPolicy(t, r, dest)
	if err != nil {
		return err
	}
	req := iampolicy.Request{Principal: roleARN, Action: action, Resource: dest,
		Context: map[string][]string{"aws:SecureTransport": {"true"}}}
	if d := iampolicy.Evaluate(req, roles[roleID], resource); !d.Allowed {
		return fail("The provided execution role does not have permissions to call %s on %s (%s)", strings.TrimPrefix(action, strings.ToLower(kind)+":"), kind, d.Message(req))
	}
	return nil
}

// functionRole is the execution role of the function named name: its ARN
// and its logical ID.
func functionRole(t *cfn.Template, r *cfn.Resolver, name string) (arn, id string, err error) {
	for _, fid := range t.OfType("AWS::Lambda::Function") {
		if r.V.Ref[fid] != name {
			continue
		}
		if arn, err = r.String(t.Resources[fid].Properties["Role"]); err != nil {
			return "", "", fmt.Errorf("standin: function %s: role: %w", name, err)
		}
		for _, rid := range t.OfType("AWS::IAM::Role") {
			if r.V.Attr[rid+".Arn"] == arn {
				return arn, rid, nil
			}
		}
		return "", "", fmt.Errorf("standin: function %s: role %s is not one of the template", name, arn)
	}
	return "", "", fmt.Errorf("standin: no function %s in the template", name)
}

// destinationPolicy is the resource policy of the queue or topic arn: the
// template's AWS::SQS::QueuePolicy or AWS::SNS::TopicPolicy that names it,
// or nil.
func destinationPolicy(t *cfn.Template, r *cfn.Resolver, arn string) (*iampolicy.Policy, error) {
	var found *iampolicy.Policy
	for _, typ := range []string{"AWS::SQS::QueuePolicy", "AWS::SNS::TopicPolicy"} {
		for _, id := range t.OfType(typ) {
			props := t.Resources[id].Properties
			targets := list(props["Queues"])
			if typ == "AWS::SNS::TopicPolicy" {
				targets = list(props["Topics"])
			}
			var names []string
			for _, q := range targets {
				// A queue is named by its URL (Ref), a topic by its ARN (Ref).
				ref, _ := mapOf(q)["Ref"].(string)
				names = append(names, r.V.Attr[ref+".Arn"], r.V.Ref[ref])
			}
			if !slices.Contains(names, arn) {
				continue
			}
			doc, err := r.JSON(props["PolicyDocument"])
			if err != nil {
				return nil, fmt.Errorf("standin: %s: %w", id, err)
			}
			if found, err = iampolicy.Parse(doc); err != nil {
				return nil, fmt.Errorf("standin: %s: %w", id, err)
			}
		}
	}
	return found, nil
}
