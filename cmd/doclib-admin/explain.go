package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/doclib/doclib/shared/backend/dynamo"
)

// explain turns what the AWS SDK and the flag parser return into sentences
// in the operator's terms, each with the next step: the SDK's text (operation
// names, status codes, request IDs, Go error chains) never reaches the
// terminal. Errors doclib wrote itself pass through.
func (a *app) explain(ctx context.Context, err error) error {
	var ue usageError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	plain := a.plain(ctx, err)
	if plain != err && strings.Contains(err.Error(), "import stopped") {
		return fmt.Errorf("%w; the import stopped partway: run it again to finish it (it is idempotent)", plain)
	}
	return plain
}

func (a *app) plain(ctx context.Context, err error) error {
	var where string // " at URL", " in region R", or nothing known
	if ep, region := a.getenv("AWS_ENDPOINT_URL_DYNAMODB"), a.getenv("AWS_REGION"); ep != "" {
		where = " at " + ep
	} else if region != "" {
		where = " in region " + region
	}
	table := a.table
	var api smithy.APIError
	var dns *net.DNSError
	var op *net.OpError
	var oe *smithy.OperationError
	switch {
	case ctx.Err() != nil:
		return errors.New("interrupted; run the command again (an import finishes where it stopped)")
	case errors.Is(err, dynamo.ErrTableMissing):
		return tableMissing(table, where)
	case !errors.As(err, &oe) || oe.Service() != "DynamoDB":
		return err // not DynamoDB's: OpenSearch's and Lambda's errors name what failed
	case errors.As(err, &api):
		return explainAPI(api, table, where)
	case credentialsMissing(err):
		return errors.New("no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
			"(for a local DynamoDB any values do), and run again")
	case errors.As(err, &dns):
		return fmt.Errorf("cannot find DynamoDB's host %s: check AWS_ENDPOINT_URL_DYNAMODB (for a local DynamoDB) or AWS_REGION, and the network", dns.Name)
	case errors.As(err, &op):
		return fmt.Errorf("cannot reach DynamoDB%s (%s): start the local DynamoDB (dynalite --port 8000) or correct "+
			"AWS_ENDPOINT_URL_DYNAMODB; for AWS itself, unset it and check the network", where, netReason(op))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("DynamoDB%s did not answer in time: check the network and run again", where)
	}
	return err
}

func explainAPI(api smithy.APIError, table, where string) error {
	switch api.ErrorCode() {
	case "ResourceNotFoundException":
		return tableMissing(table, where)
	case "AccessDeniedException":
		return fmt.Errorf("the AWS credentials in use may not do this on table %s: use a profile or role the stack grants "+
			"access to the table (AWS_PROFILE), or ask the account's administrator", table)
	case "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException", "ExpiredToken",
		"MissingAuthenticationTokenException", "IncompleteSignature", "InvalidClientTokenId":
		return errors.New("AWS did not accept the credentials (unknown, expired or mistyped): refresh them " +
			"(aws sso login, or new access keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and run again")
	case "ConditionalCheckFailedException", "TransactionConflictException":
		return errors.New("the item changed while the command ran: run it again")
	case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded", "LimitExceededException":
		return fmt.Errorf("DynamoDB is throttling requests to table %s: wait a minute and run again", table)
	case "ResourceInUseException":
		return fmt.Errorf("table %s is being created, changed or deleted: wait until it is active and run again", table)
	}
	msg := strings.TrimSpace(api.ErrorMessage())
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Errorf("DynamoDB refused the request on table %s (%s): %s", table, api.ErrorCode(), msg)
}

func tableMissing(table, where string) error {
	return fmt.Errorf("table %s does not exist%s: check --table and AWS_REGION, or create it with "+
		"`doclib-admin create-table --table %s` (local) or by deploying the stack", table, where, table)
}

// credentialsMissing recognises the SDK's failure to find credentials, which
// has no exported type of its own.
func credentialsMissing(err error) bool {
	s := err.Error()
	for _, sign := range []string{"get credentials", "failed to retrieve credentials", "failed to refresh cached credentials", "no EC2 IMDS role found"} {
		if strings.Contains(s, sign) {
			return true
		}
	}
	return false
}

func netReason(op *net.OpError) string {
	s := op.Err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// flagProblem is how the flag parser words a bad value.
var flagProblem = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: (.*)$`)

// explainFlag rewords the flag parser's complaint about a value, which names
// the Go function that refused it.
func explainFlag(err error) error {
	m := flagProblem.FindStringSubmatch(err.Error())
	if m == nil {
		return usageError{err}
	}
	value, flag, why := m[1], m[2], m[3]
	name := strings.SplitN(flag, ", ", 2)
	flag = name[len(name)-1]
	switch {
	case strings.Contains(why, "ParseInt"), strings.Contains(why, "ParseUint"), strings.Contains(why, "Atoi"):
		return usageError{fmt.Errorf("%s %q is not a whole number", flag, value)}
	case strings.Contains(why, "ParseFloat"):
		return usageError{fmt.Errorf("%s %q is not a number", flag, value)}
	case strings.Contains(why, "ParseBool"):
		return usageError{fmt.Errorf("%s %q is not true or false", flag, value)}
	case strings.Contains(why, "ParseDuration"), strings.Contains(why, "time: "):
		return usageError{fmt.Errorf("%s %q is not a duration such as 30s or 2m", flag, value)}
	}
	return usageError{fmt.Errorf("%s %q: %s", flag, value, why)}
}
