package faultproxy_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/faultproxy"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalitetest.Stop()
	os.Exit(code)
}

// fixture is a table in dynalite, a proxy in front of dynalite, and a direct
// client to check what really got written.
type fixture struct {
	srv    *dynalitetest.Server
	proxy  *faultproxy.Proxy
	direct *dynamodb.Client
	table  string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	srv := dynalitetest.Start(t)
	f := &fixture{srv: srv, direct: srv.Client(t), table: srv.TableName(t)}
	_, err := f.direct.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String(f.table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	// dynalite answers CreateTable with the table still CREATING and makes it
	// ACTIVE a moment later, even with --createTableMs 0: wait, or the first
	// read may find no table.
	w := dynamodb.NewTableExistsWaiter(f.direct, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 10 * time.Millisecond })
	if err := w.Wait(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(f.table)}, 10*time.Second); err != nil {
		t.Fatalf("waiting for the table: %v", err)
	}
	f.proxy = faultproxy.New(srv.Endpoint)
	t.Cleanup(f.proxy.Close)
	return f
}

// client returns a client that goes through the proxy.
func (f *fixture) client(t *testing.T, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	viaProxy := func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(f.proxy.URL()) }
	return f.srv.Client(t, append([]func(*dynamodb.Options){viaProxy}, opts...)...)
}

// noRetries makes the first failure the call's result.
func noRetries(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }

// fastRetries keeps the SDK's standard retry decisions but not its backoff
// of up to seconds, to keep the tests quick.
func fastRetries(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) {
			return time.Millisecond, nil
		})
	})
}

func (f *fixture) put(c *dynamodb.Client, pk string) error {
	_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(f.table),
		Item:      map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
	})
	return err
}

func (f *fixture) exists(t *testing.T, pk string) bool {
	t.Helper()
	out, err := f.direct.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.table),
		Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
	})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	return out.Item != nil
}

func (f *fixture) get(c *dynamodb.Client) error {
	_, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.table),
		Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}},
	})
	return err
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func isRetryable(err error) bool {
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

func isThrottle(err error) bool {
	return retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) == aws.TrueTernary
}

func TestThrottleIsRetriedByDefaultRetryer(t *testing.T) {
	f := setup(t)
	f.proxy.Fail(faultproxy.Rule{Op: "DynamoDB_20120810.PutItem", Next: 2, Fault: faultproxy.Throttle})
	if err := f.put(f.client(t), "a"); err != nil {
		t.Fatalf("PutItem with default retries: %v", err)
	}
	if got := f.proxy.Injected("PutItem"); got != 2 {
		t.Errorf("Injected(PutItem) = %d, want 2", got)
	}
	if got := f.proxy.Requests("DynamoDB_20120810.PutItem"); got != 3 {
		t.Errorf("Requests(PutItem) = %d, want 3 (two throttled, one forwarded)", got)
	}
	if !f.exists(t, "a") {
		t.Errorf("item not written")
	}
}

func TestThrottleWithoutRetriesIsThrottlingException(t *testing.T) {
	f := setup(t)
	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.Throttle})
	err := f.put(f.client(t, noRetries), "a")
	if code := apiCode(err); code != "ThrottlingException" {
		t.Fatalf("error code = %q (err %v), want ThrottlingException", code, err)
	}
	var te *types.ThrottlingException
	if !errors.As(err, &te) {
		t.Errorf("error %T is not *types.ThrottlingException", err)
	} else if te.ErrorMessage() != "Rate of requests exceeds the allowed throughput." {
		t.Errorf("message = %q", te.ErrorMessage())
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusBadRequest {
		t.Errorf("want an HTTP 400 response error, got %v", err)
	}
	if !isThrottle(err) || !isRetryable(err) {
		t.Errorf("SDK retryer: throttle=%v retryable=%v, want both", isThrottle(err), isRetryable(err))
	}
	if f.exists(t, "a") {
		t.Errorf("throttled write reached dynalite")
	}
}

func TestProvisionedThroughputExceeded(t *testing.T) {
	f := setup(t)
	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.ProvisionedThroughputExceeded})
	err := f.put(f.client(t, noRetries), "a")
	var pe *types.ProvisionedThroughputExceededException
	if !errors.As(err, &pe) || apiCode(err) != "ProvisionedThroughputExceededException" {
		t.Fatalf("err = %v (code %q), want ProvisionedThroughputExceededException", err, apiCode(err))
	}
	if !isThrottle(err) || !isRetryable(err) {
		t.Errorf("SDK retryer: throttle=%v retryable=%v, want both", isThrottle(err), isRetryable(err))
	}
	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.ProvisionedThroughputExceeded})
	if err := f.put(f.client(t, fastRetries), "a"); err != nil {
		t.Fatalf("PutItem with retries: %v", err)
	}
}

func TestInternalErrorIsRetried(t *testing.T) {
	f := setup(t)
	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.InternalError})
	err := f.put(f.client(t, noRetries), "a")
	var ie *types.InternalServerError
	if !errors.As(err, &ie) || apiCode(err) != "InternalServerError" {
		t.Fatalf("err = %v (code %q), want InternalServerError", err, apiCode(err))
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != http.StatusInternalServerError {
		t.Errorf("want an HTTP 500 response error, got %v", err)
	}
	if !isRetryable(err) || isThrottle(err) {
		t.Errorf("SDK retryer: retryable=%v throttle=%v, want retryable non-throttle", isRetryable(err), isThrottle(err))
	}

	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.InternalError})
	if err := f.put(f.client(t, fastRetries), "b"); err != nil {
		t.Fatalf("PutItem with retries: %v", err)
	}
	if got := f.proxy.Injected("PutItem"); got != 2 {
		t.Errorf("Injected(PutItem) = %d, want 2", got)
	}
	if !f.exists(t, "b") {
		t.Errorf("item not written after retry")
	}
}

func TestDropIsATransportErrorTheSDKRetries(t *testing.T) {
	f := setup(t)
	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.Drop})
	err := f.put(f.client(t, noRetries), "a")
	var se *smithyhttp.RequestSendError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a *smithyhttp.RequestSendError", err, err)
	}
	if code := apiCode(err); code != "" {
		t.Errorf("dropped connection decoded as API error %q", code)
	}
	if !isRetryable(err) {
		t.Errorf("SDK retryer does not retry %v", err)
	}
	if f.exists(t, "a") {
		t.Errorf("dropped write reached dynalite")
	}

	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.Drop})
	if err := f.put(f.client(t, fastRetries), "b"); err != nil {
		t.Fatalf("PutItem with retries: %v", err)
	}
	if !f.exists(t, "b") {
		t.Errorf("item not written after retry")
	}
}

func TestDropResponseAppliesTheWrite(t *testing.T) {
	f := setup(t)
	f.proxy.Fail(faultproxy.Rule{Op: "PutItem", Next: 1, Fault: faultproxy.DropResponse})
	c := f.client(t, fastRetries)
	create := func() error {
		_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{
			TableName:           aws.String(f.table),
			Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}},
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		})
		return err
	}
	// The first attempt creates the item but its answer is lost; the
	// retry then finds the item there: the case idempotent writers handle.
	var ccf *types.ConditionalCheckFailedException
	if err := create(); !errors.As(err, &ccf) {
		t.Fatalf("err = %v, want ConditionalCheckFailedException from the retry", err)
	}
	if !f.exists(t, "a") {
		t.Errorf("item not written")
	}
}

func TestEveryCountsOnlyTheRulesOperation(t *testing.T) {
	f := setup(t)
	f.proxy.Fail(faultproxy.Rule{Op: "GetItem", Every: 3, Fault: faultproxy.InternalError})
	c := f.client(t, noRetries)
	var failed []int
	for i := 1; i <= 9; i++ {
		if err := f.put(c, "p"); err != nil {
			t.Fatalf("PutItem %d: %v", i, err)
		}
		if err := f.get(c); err != nil {
			failed = append(failed, i)
		}
	}
	if want := []int{3, 6, 9}; !slices.Equal(failed, want) {
		t.Errorf("failed GetItems = %v, want %v", failed, want)
	}
	if got := f.proxy.Injected("GetItem"); got != 3 {
		t.Errorf("Injected(GetItem) = %d, want 3", got)
	}
	if got := f.proxy.Injected("PutItem"); got != 0 {
		t.Errorf("Injected(PutItem) = %d, want 0", got)
	}
	if got, want := f.proxy.Requests(""), 18; got != want {
		t.Errorf("Requests(\"\") = %d, want %d", got, want)
	}
	if got := f.proxy.Injected(""); got != 3 {
		t.Errorf("Injected(\"\") = %d, want 3", got)
	}

	f.proxy.Clear()
	for i := range 3 {
		if err := f.get(c); err != nil {
			t.Fatalf("GetItem %d after Clear: %v", i, err)
		}
	}
}

func TestRateIsDeterministicAndMaxBoundsIt(t *testing.T) {
	f := setup(t)
	pattern := func(rule faultproxy.Rule) []bool {
		p := faultproxy.New(f.srv.Endpoint)
		defer p.Close()
		p.Fail(rule)
		c := f.srv.Client(t, noRetries, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(p.URL()) })
		var out []bool
		for range 30 {
			out = append(out, f.get(c) != nil)
		}
		return out
	}
	rule := faultproxy.Rule{Rate: 0.3, Seed: 42, Fault: faultproxy.Throttle}
	a, b := pattern(rule), pattern(rule)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different failures:\n%v\n%v", a, b)
	}
	n := 0
	for _, failed := range a {
		if failed {
			n++
		}
	}
	if n == 0 || n == len(a) {
		t.Fatalf("Rate 0.3 failed %d of %d requests", n, len(a))
	}

	rule.Max = 2
	n = 0
	for _, failed := range pattern(rule) {
		if failed {
			n++
		}
	}
	if n != 2 {
		t.Errorf("Max 2: %d failures, want 2", n)
	}
}

func TestAfterNFiresOnceAfterNSuccessfulForwards(t *testing.T) {
	f := setup(t)
	c := f.client(t, noRetries)
	if err := f.get(c); err != nil { // before AfterN: not counted
		t.Fatal(err)
	}
	calls := 0
	f.proxy.AfterN(3, func() { calls++ })
	f.proxy.Fail(faultproxy.Rule{Next: 2, Fault: faultproxy.Throttle})
	for i := 1; i <= 6; i++ {
		_ = f.get(c)
		// Requests 1 and 2 are throttled, so the 3rd success is request 5.
		want := 0
		if i >= 5 {
			want = 1
		}
		if calls != want {
			t.Fatalf("after request %d: hook called %d times, want %d", i, calls, want)
		}
	}

	ran := false
	f.proxy.AfterN(0, func() { ran = true })
	if !ran {
		t.Errorf("AfterN(0) did not run the hook at once")
	}
}
