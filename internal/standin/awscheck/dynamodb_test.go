package awscheck

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// apiError unwraps what the SDK made of the checker's answer.
func sdkError(t *testing.T, err error) (code, msg string, status int) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not an API error", err)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return ae.ErrorCode(), ae.ErrorMessage(), status
}

func TestDynamoDBAllowedCallsAreForwarded(t *testing.T) {
	e := start(t, nil)
	db := dynamodb.NewFromConfig(e.sdkConfig(t, e.checker.Credentials(role(t, "DocumentsRole", documentsPolicy))))
	ctx := context.Background()

	for range 2 {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]types.AttributeValue{"pk": str("LIB#1"), "sk": str("META")}})
		if err != nil {
			t.Fatalf("GetItem: %v", err)
		}
		if v, ok := out.Item["name"].(*types.AttributeValueMemberS); !ok || v.Value != "Handbook" {
			t.Fatalf("GetItem answered %v, want dynalite's item", out.Item)
		}
	}
	_, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String("byOrder"),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(ord, :r)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str("LIB#1"), ":r": str("R#")}})
	if err != nil {
		t.Fatalf("Query on the index: %v", err)
	}
	if got := e.dynamo.calls(); !slices.Equal(got, []string{"GetItem", "GetItem", "Query"}) {
		t.Errorf("forwarded %v, want GetItem, GetItem, Query", got)
	}
	if e.dynamo.describes != 1 {
		t.Errorf("DescribeTable asked %d times, want once (cached)", e.dynamo.describes)
	}
	if d := e.denials(); len(d) != 0 {
		t.Errorf("denials %+v, want none", d)
	}
}

func TestDynamoDBActionTheRoleLacksIsDenied(t *testing.T) {
	e := start(t, nil)
	r := role(t, "DocumentsRole", documentsPolicy)
	db := dynamodb.NewFromConfig(e.sdkConfig(t, e.checker.Credentials(r)))

	_, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table)})
	code, msg, status := sdkError(t, err)
	want := "User: arn:aws:sts::123456789012:assumed-role/Doclib-demo-DocumentsRole/doclib-demo-documentsrole " +
		"is not authorized to perform: dynamodb:Scan on resource: " + tableARN +
		" because no identity-based policy allows the dynamodb:Scan action"
	if code != "AccessDeniedException" || msg != want || status != 400 {
		t.Errorf("Scan: %d %s %q\nwant 400 AccessDeniedException %q", status, code, msg, want)
	}
	if got := e.dynamo.calls(); len(got) != 0 {
		t.Errorf("a denied call reached dynalite: %v", got)
	}
	d := e.denials()
	if len(d) != 1 || d[0].Action != "dynamodb:Scan" || d[0].Resource != tableARN ||
		!strings.HasSuffix(d[0].Principal, "assumed-role/Doclib-demo-DocumentsRole/doclib-demo-documentsrole") {
		t.Errorf("denials %+v, want the one Scan", d)
	}
}

// The rate limiter's UpdateItem, as shared/backend/dynamo sends it, against the
// template's UpdateRateLimits statement: the partition must start with RL#,
// the request may name only pk, sk, n and exp, and return nothing else.
func TestDynamoDBFineGrainedConditions(t *testing.T) {
	e := start(t, nil)
	db := dynamodb.NewFromConfig(e.sdkConfig(t, e.checker.Credentials(role(t, "DocumentsRole", documentsPolicy))))
	ctx := context.Background()
	update := func(pk, expr, cond string, rv types.ReturnValue) error {
		in := &dynamodb.UpdateItemInput{TableName: aws.String(table),
			Key:              map[string]types.AttributeValue{"pk": str(pk), "sk": str("MIN#1")},
			UpdateExpression: aws.String(expr), ReturnValues: rv,
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"},
				":exp": &types.AttributeValueMemberN{Value: "9"}, ":limit": &types.AttributeValueMemberN{Value: "60"}}}
		if strings.Contains(expr+cond, "#e") {
			in.ExpressionAttributeNames = map[string]string{"#e": "exp"}
		}
		if cond != "" {
			in.ConditionExpression = aws.String(cond)
		}
		_, err := db.UpdateItem(ctx, in)
		return err
	}

	if err := update("RL#lib-1", "ADD n :one SET #e = :exp", "attribute_not_exists(n) OR n < :limit", types.ReturnValueUpdatedNew); err != nil {
		t.Fatalf("the rate limiter's own update: %v", err)
	}
	if err := update("RL#lib-1", "ADD n :one", "", ""); err != nil {
		t.Fatalf("ReturnValues absent (NONE): %v", err)
	}
	denied := []struct {
		name, pk, expr, cond string
		rv                   types.ReturnValue
	}{
		{"another attribute", "RL#lib-1", "ADD n :one SET credit = :exp", "", ""},
		{"another attribute in the condition", "RL#lib-1", "ADD n :one", "attribute_exists(owner)", ""},
		{"another partition", "WS#w-1", "ADD n :one", "", ""},
		{"returns all values", "RL#lib-1", "ADD n :one", "", types.ReturnValueAllNew},
	}
	for _, tc := range denied {
		err := update(tc.pk, tc.expr, tc.cond, tc.rv)
		if code, msg, _ := sdkError(t, err); code != "AccessDeniedException" ||
			!strings.HasSuffix(msg, "because no identity-based policy allows the dynamodb:UpdateItem action") {
			t.Errorf("%s: %s %q, want AccessDeniedException", tc.name, code, msg)
		}
	}
	if got := e.dynamo.calls(); !slices.Equal(got, []string{"UpdateItem", "UpdateItem"}) {
		t.Errorf("forwarded %v, want the two allowed updates", got)
	}
	if d := e.denials(); len(d) != len(denied) {
		t.Errorf("%d denials, want %d: %+v", len(d), len(denied), d)
	}
}

// What the checker evaluates for each operation: action, resource and the
// fine-grained access keys, as DynamoDB documents them.
func TestDynamoDBChecks(t *testing.T) {
	e := start(t, nil)
	d := e.checker.dynamo
	tests := []struct {
		op, body string
		want     []check
	}{
		{"GetItem", `{"TableName":"T","Key":{"pk":{"S":"KEY#a"},"sk":{"S":"META"}},"ProjectionExpression":"#n, tags[0], meta.owner","ExpressionAttributeNames":{"#n":"name"}}`,
			[]check{{action: "dynamodb:GetItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
				"dynamodb:LeadingKeys": {"KEY#a"}, "dynamodb:Attributes": {"pk", "sk", "name", "tags", "meta"}}}}},
		{"PutItem", `{"TableName":"T","Item":{"pk":{"S":"WS#1"},"sk":{"S":"META"},"credit":{"N":"5"}},"ConditionExpression":"attribute_not_exists(pk)","ReturnConsumedCapacity":"TOTAL"}`,
			[]check{{action: "dynamodb:PutItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
				"dynamodb:LeadingKeys": {"WS#1"}, "dynamodb:Attributes": {"credit", "pk", "sk"}, "dynamodb:ReturnValues": {"NONE"},
				"dynamodb:ReturnConsumedCapacity": {"TOTAL"}}}}},
		{"Query", `{"TableName":"T","IndexName":"byOrder","KeyConditionExpression":":v = #p AND ord > :o","ExpressionAttributeNames":{"#p":"pk"},"ExpressionAttributeValues":{":v":{"S":"LIB#9"},":o":{"S":"0"}},"Select":"COUNT"}`,
			[]check{{action: "dynamodb:Query", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T/index/byOrder", context: map[string][]string{
				"dynamodb:LeadingKeys": {"LIB#9"}, "dynamodb:Attributes": {"pk", "ord"}, "dynamodb:Select": {"COUNT"}}}}},
		{"Query", `{"TableName":"T","KeyConditions":{"pk":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"LIB#1"}]}},"AttributesToGet":["a"]}`,
			[]check{{action: "dynamodb:Query", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
				"dynamodb:LeadingKeys": {"LIB#1"}, "dynamodb:Attributes": {"a", "pk"}, "dynamodb:Select": {"SPECIFIC_ATTRIBUTES"}}}}},
		{"Scan", `{"TableName":"T","FilterExpression":"size(body) > :z","ExpressionAttributeValues":{":z":{"N":"0"}}}`,
			[]check{{action: "dynamodb:Scan", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
				"dynamodb:Attributes": {"body"}, "dynamodb:Select": {"ALL_ATTRIBUTES"}}}}},
		{"DescribeTable", `{"TableName":"T"}`,
			[]check{{action: "dynamodb:DescribeTable", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{}}}},
		{"ListTables", `{}`, []check{{action: "dynamodb:ListTables", resource: "*"}}},
		{"BatchGetItem", `{"RequestItems":{"T":{"Keys":[{"pk":{"S":"A"},"sk":{"S":"1"}},{"pk":{"S":"B"},"sk":{"S":"1"}}]},"U":{"Keys":[{"pk":{"S":"C"},"sk":{"S":"1"}}],"ProjectionExpression":"x"}}}`,
			[]check{
				{action: "dynamodb:BatchGetItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
					"dynamodb:LeadingKeys": {"A", "B"}, "dynamodb:Attributes": {"pk", "sk"}}},
				{action: "dynamodb:BatchGetItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/U", context: map[string][]string{
					"dynamodb:LeadingKeys": {"C"}, "dynamodb:Attributes": {"pk", "sk", "x"}}}}},
		{"BatchWriteItem", `{"RequestItems":{"T":[{"PutRequest":{"Item":{"pk":{"S":"A"},"sk":{"S":"1"},"v":{"S":"x"}}}},{"DeleteRequest":{"Key":{"pk":{"S":"B"},"sk":{"S":"1"}}}}]}}`,
			[]check{{action: "dynamodb:BatchWriteItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
				"dynamodb:LeadingKeys": {"A", "B"}, "dynamodb:Attributes": {"pk", "sk", "v"}}}}},
		{"TransactWriteItems", `{"TransactItems":[{"Update":{"TableName":"T","Key":{"pk":{"S":"WS#1"},"sk":{"S":"META"}},"UpdateExpression":"ADD credit :m"}},{"ConditionCheck":{"TableName":"T","Key":{"pk":{"S":"KEY#1"},"sk":{"S":"K"}},"ConditionExpression":"attribute_exists(pk)"}}]}`,
			[]check{
				{action: "dynamodb:UpdateItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
					"dynamodb:LeadingKeys": {"WS#1"}, "dynamodb:Attributes": {"pk", "sk", "credit"}}},
				{action: "dynamodb:ConditionCheckItem", resource: "arn:aws:dynamodb:us-east-1:123456789012:table/T", context: map[string][]string{
					"dynamodb:LeadingKeys": {"KEY#1"}, "dynamodb:Attributes": {"pk", "sk"}}}}},
	}
	for _, tc := range tests {
		r := newTarget(tc.op)
		got, err := d.checks(context.Background(), r, []byte(tc.body))
		if err != nil {
			t.Errorf("%s: %v", tc.op, err)
			continue
		}
		if !sameChecks(got, tc.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.op, tc.body, got, tc.want)
		}
	}

	// Requests DynamoDB refuses before authorizing are refused as such.
	for _, tc := range []struct{ target, body, code string }{
		{"DynamoDB_20120810.GetItem", `{"TableName":`, "SerializationException"},
		{"DynamoDB_20120810.GetItem", `{"TableName":"T","Key":{"pk":{"S":"a"}},"ProjectionExpression":"#x"}`, "ValidationException"},
		{"Nope.GetItem", `{}`, "UnknownOperationException"},
	} {
		r := newTarget("")
		r.Header.Set("X-Amz-Target", tc.target)
		_, err := d.checks(context.Background(), r, []byte(tc.body))
		var ae *apiError
		if !errors.As(err, &ae) || ae.code != tc.code {
			t.Errorf("%s %s: %v, want %s", tc.target, tc.body, err, tc.code)
		}
	}
}

func sameChecks(a, b []check) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].action != b[i].action || a[i].resource != b[i].resource || len(a[i].context) != len(b[i].context) {
			return false
		}
		for k, v := range b[i].context {
			if !slices.Equal(a[i].context[k], v) {
				return false
			}
		}
	}
	return true
}
