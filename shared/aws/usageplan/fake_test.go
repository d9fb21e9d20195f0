package usageplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
	"github.com/aws/smithy-go"

	"github.com/doclib/doclib/internal/standin/fakeapigateway"
)

// testRegion is the Region of the test clients; TagResource ARNs name it.
const testRegion = "eu-west-1"

// fakeAPIGateway is internal/standin/fakeapigateway's control plane behind a small
// stand-in for IAM, so that a Syncer is tested as it runs in its stack.
//
// The fake itself authorises nothing (in the stand-in an IAM checker does).
// Here a client made by clientAs(customer) is held to the indexer's IAM
// policy of that customer's stack (infra/stack grantUsageKeys): it may create
// keys only tagged TagCustomer=customer and with no other tag, tag resources
// only with that tag, and change or delete only keys that carry it. Every
// request must also be SigV4-signed, and one the fake does not know fails
// the test.
type fakeAPIGateway struct {
	*fakeapigateway.Fake
	t *testing.T

	mu     sync.Mutex
	owners map[string]string // access key ID → customer whose policy applies
}

func newFake(t *testing.T, plans ...string) *fakeAPIGateway {
	f := &fakeAPIGateway{Fake: fakeapigateway.New(plans...), t: t, owners: map[string]string{}}
	f.SetRegion(testRegion)
	f.SetPageSize(2) // small, to make the client page
	return f
}

// clientAs returns an API Gateway client talking to f over HTTP, configured
// like a real one except for the endpoint and a retryer that does not wait,
// and held to customer's IAM policy.
func (f *fakeAPIGateway) clientAs(customer string) *apigateway.Client {
	srv := httptest.NewServer(f.handler())
	f.t.Cleanup(srv.Close)
	akid := "AKID" + strings.ToUpper(customer)
	f.mu.Lock()
	f.owners[akid] = customer
	f.mu.Unlock()
	return f.clientWith(srv.URL, akid)
}

// clientFor returns a client of endpoint held to no policy.
func (f *fakeAPIGateway) clientFor(endpoint string) *apigateway.Client {
	return f.clientWith(endpoint, "AKIDEXAMPLE")
}

func (f *fakeAPIGateway) clientWith(endpoint, akid string) *apigateway.Client {
	return apigateway.New(apigateway.Options{
		Region:       testRegion,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(akid, "test-secret", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			o.RateLimiter = ratelimit.None
		}),
	})
}

// handler is the fake behind the signature check and the policy.
func (f *fakeAPIGateway) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
			f.t.Errorf("%s %s: request not SigV4-signed (Authorization %q)", r.Method, r.URL.Path, auth)
		}
		if action, ok := f.allowed(r); !ok {
			f.Refuse(w, r, denied(action))
			return
		}
		f.Fake.ServeHTTP(w, r)
		if strings.HasPrefix(w.Header().Get("x-amzn-ErrorType"), "UnknownOperationException") {
			f.t.Errorf("fake API Gateway: unexpected %s %s", r.Method, r.URL)
		}
	})
}

// allowed applies the policy of r's signer, if any, and returns the IAM
// action it checked. Requests the policy does not cover pass, as do changes
// to a key that does not exist: the fake answers those as not found.
func (f *fakeAPIGateway) allowed(r *http.Request) (action string, ok bool) {
	customer := f.caller(r)
	action = "apigateway:" + r.Method
	if customer == "" {
		return action, true
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/apikeys",
		r.Method == http.MethodPut && strings.HasPrefix(path, "/tags/"):
		// aws:RequestTag and aws:TagKeys: exactly the customer's tag.
		var in struct{ Tags map[string]string }
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(raw))
		_ = json.Unmarshal(raw, &in)
		return action, len(in.Tags) == 1 && in.Tags[TagCustomer] == customer
	case (r.Method == http.MethodPatch || r.Method == http.MethodDelete) && strings.HasPrefix(path, "/apikeys/"):
		// aws:ResourceTag: the key carries the customer's tag.
		id := strings.TrimPrefix(path, "/apikeys/")
		if _, exists := f.Key(id); !exists {
			return action, true
		}
		return action, f.Tags("arn:aws:apigateway:" + testRegion + "::/apikeys/" + id)[TagCustomer] == customer
	}
	return action, true
}

// caller is the customer whose IAM policy binds r's signer, or "" for none.
func (f *fakeAPIGateway) caller(r *http.Request) string {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	akid, _, _ := strings.Cut(cred, "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.owners[akid]
}

func denied(action string) fakeapigateway.Error {
	return fakeapigateway.Error{Status: http.StatusForbidden, Type: "AccessDeniedException",
		Message: "User: arn:aws:sts::123456789012:assumed-role/indexer/x is not authorized to perform: " + action}
}

// fail queues failures for the next requests of op.
func (f *fakeAPIGateway) fail(op string, errs ...fakeapigateway.Error) { f.Fail(op, errs...) }

// addKey puts a key straight into the state, as an earlier run or a person
// left it. A name "name|customer" tags the key with that customer.
func (f *fakeAPIGateway) addKey(name, value string, enabled bool, plans ...string) fakeapigateway.Key {
	f.t.Helper()
	name, customer, tagged := strings.Cut(name, "|")
	k := fakeapigateway.Key{Name: name, Value: value, Enabled: enabled, UsagePlans: plans}
	if tagged {
		k.Tags = map[string]string{TagCustomer: customer}
	}
	return f.add(k)
}

// add puts k straight into the state.
func (f *fakeAPIGateway) add(k fakeapigateway.Key) fakeapigateway.Key {
	f.t.Helper()
	k, err := f.AddKey(k)
	if err != nil {
		f.t.Fatal(err)
	}
	return k
}

// named returns the keys named name.
func (f *fakeAPIGateway) named(name string) []fakeapigateway.Key {
	var ks []fakeapigateway.Key
	for _, k := range f.Keys() {
		if k.Name == name {
			ks = append(ks, k)
		}
	}
	return ks
}

// plansOf returns the usage plans key ID is in, sorted.
func (f *fakeAPIGateway) plansOf(id string) []string {
	k, _ := f.Key(id)
	return k.UsagePlans
}

// requests returns the request log and empties it.
func (f *fakeAPIGateway) requests() []fakeapigateway.Request { return f.TakeRequests() }

// key returns a copy of the key with ID id.
func (f *fakeAPIGateway) key(id string) fakeapigateway.Key {
	k, _ := f.Key(id)
	return k
}

// The stand-in for IAM refuses what the stack's policy refuses, so that a
// Syncer reaching for another stack's key fails here as it would in AWS.
func TestFakePolicy(t *testing.T) {
	f := newFake(t, "planteam")
	c := f.clientAs("acme")
	ctx := t.Context()
	bolts := f.addKey("doclib-bolt-x|bolt", testValue("bolt's"), true, "planteam")
	for name, call := range map[string]func() error{
		"create with another customer's tag": func() error {
			_, err := c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("x"), Value: aws.String(testValue("x")),
				Tags: map[string]string{TagCustomer: "bolt"}})
			return err
		},
		"create with a second tag": func() error {
			_, err := c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("x"), Value: aws.String(testValue("x")),
				Tags: map[string]string{TagCustomer: "acme", "other": "y"}})
			return err
		},
		"tag another customer's key": func() error {
			_, err := c.TagResource(ctx, &apigateway.TagResourceInput{ResourceArn: aws.String("arn:aws:apigateway:" + testRegion + "::/apikeys/" + bolts.ID),
				Tags: map[string]string{TagCustomer: "bolt"}})
			return err
		},
		"delete another customer's key": func() error {
			_, err := c.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: aws.String(bolts.ID)})
			return err
		},
	} {
		var apiErr smithy.APIError
		if err := call(); !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDeniedException" {
			t.Errorf("%s: %v, want AccessDeniedException", name, err)
		}
	}
	log := f.requests()
	if len(log) != 4 {
		t.Fatalf("%d requests logged, want the 4 refused", len(log))
	}
	for _, r := range log {
		if r.Status != http.StatusForbidden || r.Op == "" {
			t.Errorf("logged %+v, want a named operation refused with 403", r)
		}
	}
	if got := f.key(bolts.ID); got.Tags[TagCustomer] != "bolt" || len(f.Keys()) != 1 {
		t.Errorf("refused calls changed the state: %+v, %d keys", got, len(f.Keys()))
	}
}
