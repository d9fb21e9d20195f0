package fakeapigateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
	"github.com/aws/aws-sdk-go-v2/service/apigateway/types"
	"github.com/aws/smithy-go"
)

const region = "eu-west-1"

// start serves f and returns the SDK's client for it, configured as in
// production but for the endpoint and a retryer that does not wait.
func start(t *testing.T, f *Fake) (*apigateway.Client, string) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return apigateway.New(apigateway.Options{
		Region:       region,
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			o.RateLimiter = ratelimit.None
		}),
	}), srv.URL
}

func keyARN(id string) string { return "arn:aws:apigateway:" + region + "::/apikeys/" + id }

// value is a valid API key value, unique per name.
func value(name string) string { return "value0123456789abcdef" + name }

// wantCode checks that err is the API error code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != code {
		t.Errorf("%s: error %v, want %s", what, err, code)
	}
}

func TestCreateKeyJoinPlanAndLookUp(t *testing.T) {
	f := New("plan1", "plan2")
	c, _ := start(t, f)
	ctx := context.Background()
	out, err := c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{
		Name: aws.String("doclib-acme-x"), Value: aws.String(value("a")), Enabled: true,
		Description: aws.String("d"), Tags: map[string]string{"doclib:customer": "acme"},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.Id)
	if len(id) != 10 || aws.ToString(out.Value) != value("a") || !out.Enabled || out.Tags["doclib:customer"] != "acme" || out.CreatedDate == nil {
		t.Errorf("CreateApiKey = %+v", out)
	}
	if _, err := c.CreateUsagePlanKey(ctx, &apigateway.CreateUsagePlanKeyInput{
		UsagePlanId: aws.String("plan2"), KeyId: aws.String(id), KeyType: aws.String("API_KEY"),
	}); err != nil {
		t.Fatal(err)
	}

	k, ok := f.KeyByValue(value("a"))
	want := Key{ID: id, Name: "doclib-acme-x", Value: value("a"), Description: "d", Enabled: true,
		Tags: map[string]string{"doclib:customer": "acme"}, UsagePlans: []string{"plan2"}}
	if !ok || k.ID != want.ID || k.Name != want.Name || k.Value != want.Value || k.Description != want.Description ||
		!k.Enabled || !maps.Equal(k.Tags, want.Tags) || !slices.Equal(k.UsagePlans, want.UsagePlans) {
		t.Errorf("KeyByValue = %+v, %v; want %+v", k, ok, want)
	}
	if _, ok := f.KeyByValue(value("nobody")); ok {
		t.Error("KeyByValue found a value no key has")
	}
	if tags := f.Tags(keyARN(id)); !maps.Equal(tags, want.Tags) {
		t.Errorf("Tags = %v", tags)
	}
	// Callers get copies: changing them changes nothing.
	k.Tags["doclib:customer"] = "changed"
	f.Tags(keyARN(id))["doclib:customer"] = "changed"
	if tags := f.Tags(keyARN(id)); tags["doclib:customer"] != "acme" {
		t.Errorf("Tags after changing copies = %v", tags)
	}
	for _, arn := range []string{keyARN("k999999999"), "arn:aws:apigateway:" + region + "::/usageplans/plan2", "nonsense"} {
		if tags := f.Tags(arn); tags != nil {
			t.Errorf("Tags(%s) = %v, want nil", arn, tags)
		}
	}

	got, err := c.GetUsagePlanKey(ctx, &apigateway.GetUsagePlanKeyInput{UsagePlanId: aws.String("plan2"), KeyId: aws.String(id)})
	if err != nil || aws.ToString(got.Id) != id || aws.ToString(got.Type) != "API_KEY" || aws.ToString(got.Value) != value("a") {
		t.Errorf("GetUsagePlanKey = %+v, %v", got, err)
	}
	_, err = c.GetUsagePlanKey(ctx, &apigateway.GetUsagePlanKeyInput{UsagePlanId: aws.String("plan1"), KeyId: aws.String(id)})
	wantCode(t, "GetUsagePlanKey of a plan the key is not in", err, "NotFoundException")
	plans, err := c.GetUsagePlans(ctx, &apigateway.GetUsagePlansInput{KeyId: aws.String(id)})
	if err != nil || len(plans.Items) != 1 || aws.ToString(plans.Items[0].Id) != "plan2" {
		t.Errorf("GetUsagePlans(keyId) = %+v, %v", plans, err)
	}
	members, err := c.GetUsagePlanKeys(ctx, &apigateway.GetUsagePlanKeysInput{UsagePlanId: aws.String("plan2")})
	if err != nil || len(members.Items) != 1 || aws.ToString(members.Items[0].Id) != id {
		t.Errorf("GetUsagePlanKeys = %+v, %v", members, err)
	}
}

func TestCreateAPIKeyRefusals(t *testing.T) {
	f := New()
	c, _ := start(t, f)
	ctx := context.Background()
	if _, err := c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("a"), Value: aws.String(value("dup"))}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("b"), Value: aws.String(value("dup"))})
	var conflict *types.ConflictException
	if !errors.As(err, &conflict) {
		t.Errorf("second key of one value: %v, want ConflictException", err)
	}
	for _, v := range []string{"short", ""} {
		_, err = c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("c"), Value: aws.String(v)})
		var bad *types.BadRequestException
		if !errors.As(err, &bad) || !strings.Contains(bad.ErrorMessage(), "at least 20 characters") {
			t.Errorf("value %q: %v, want BadRequestException", v, err)
		}
	}
	// Without a value API Gateway makes one; without enabled the key is off.
	out, err := c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("d")})
	if err != nil || len(aws.ToString(out.Value)) != 40 || out.Enabled {
		t.Errorf("CreateApiKey without value = %+v, %v; want a generated value, disabled", out, err)
	}
	if n := len(f.Keys()); n != 2 {
		t.Errorf("%d keys, want 2", n)
	}
}

// GetApiKeys matches names by prefix and pages with an opaque position;
// a key deleted between two pages does not make the client skip one.
func TestGetAPIKeysPages(t *testing.T) {
	f := New()
	f.SetPageSize(2)
	c, _ := start(t, f)
	var ids []string
	for _, n := range []string{"app-1", "other", "app-2", "app-3", "app-4", "app-5"} {
		k, err := f.AddKey(Key{Name: n, Value: value(n), Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(n, "app-") {
			ids = append(ids, k.ID)
		}
	}
	ctx := context.Background()
	first, err := c.GetApiKeys(ctx, &apigateway.GetApiKeysInput{NameQuery: aws.String("app-"), Limit: aws.Int32(500)})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 2 || first.Position == nil || first.Items[0].Value != nil {
		t.Fatalf("first page %+v: want 2 keys without values and a position", first)
	}
	// The first key of the next page goes away meanwhile.
	if _, err := c.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: aws.String(ids[2])}); err != nil {
		t.Fatal(err)
	}
	got := []string{aws.ToString(first.Items[0].Id), aws.ToString(first.Items[1].Id)}
	pages := apigateway.NewGetApiKeysPaginator(c, &apigateway.GetApiKeysInput{
		NameQuery: aws.String("app-"), Position: first.Position, IncludeValues: aws.Bool(true),
	})
	for pages.HasMorePages() {
		p, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range p.Items {
			if aws.ToString(k.Value) != value(aws.ToString(k.Name)) {
				t.Errorf("includeValues: key %s has value %q", aws.ToString(k.Name), aws.ToString(k.Value))
			}
			got = append(got, aws.ToString(k.Id))
		}
	}
	if want := []string{ids[0], ids[1], ids[3], ids[4]}; !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	_, err = c.GetApiKeys(ctx, &apigateway.GetApiKeysInput{Position: aws.String("!!not a position")})
	wantCode(t, "GetApiKeys with a bad position", err, "BadRequestException")
}

func TestUpdateAndDeleteAPIKey(t *testing.T) {
	f := New("plan1")
	c, _ := start(t, f)
	ctx := context.Background()
	k, err := f.AddKey(Key{Name: "old", Value: value("u"), UsagePlans: []string{"plan1"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.UpdateApiKey(ctx, &apigateway.UpdateApiKeyInput{ApiKey: aws.String(k.ID), PatchOperations: []types.PatchOperation{
		{Op: types.OpReplace, Path: aws.String("/enabled"), Value: aws.String("true")},
		{Op: types.OpReplace, Path: aws.String("/name"), Value: aws.String("new")},
	}})
	if err != nil || !out.Enabled || aws.ToString(out.Name) != "new" {
		t.Errorf("UpdateApiKey = %+v, %v", out, err)
	}
	// All or nothing: the valid operation before a bad one is not applied.
	_, err = c.UpdateApiKey(ctx, &apigateway.UpdateApiKeyInput{ApiKey: aws.String(k.ID), PatchOperations: []types.PatchOperation{
		{Op: types.OpReplace, Path: aws.String("/description"), Value: aws.String("x")},
		{Op: types.OpReplace, Path: aws.String("/value"), Value: aws.String(value("other"))},
	}})
	wantCode(t, "UpdateApiKey of /value", err, "BadRequestException")
	if got, _ := f.Key(k.ID); got.Description != "" || got.Value != value("u") {
		t.Errorf("after a refused patch: %+v", got)
	}

	if _, err := c.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: aws.String(k.ID)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Key(k.ID); ok {
		t.Error("key still there")
	}
	keys, err := c.GetUsagePlanKeys(ctx, &apigateway.GetUsagePlanKeysInput{UsagePlanId: aws.String("plan1")})
	if err != nil || len(keys.Items) != 0 {
		t.Errorf("usage plan keys after delete: %+v, %v", keys, err)
	}
	_, err = c.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: aws.String(k.ID)})
	var nf *types.NotFoundException
	if !errors.As(err, &nf) {
		t.Errorf("second delete: %v, want NotFoundException", err)
	}
	_, err = c.UpdateApiKey(ctx, &apigateway.UpdateApiKeyInput{ApiKey: aws.String(k.ID)})
	wantCode(t, "UpdateApiKey of a deleted key", err, "NotFoundException")
}

// All the fake's plans serve one stage: a key joins one of them at most.
func TestUsagePlanKeys(t *testing.T) {
	f := New("plan1", "plan2")
	c, _ := start(t, f)
	ctx := context.Background()
	k, err := f.AddKey(Key{Name: "k", Value: value("p"), Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	join := func(plan, id string) error {
		_, err := c.CreateUsagePlanKey(ctx, &apigateway.CreateUsagePlanKeyInput{UsagePlanId: aws.String(plan), KeyId: aws.String(id), KeyType: aws.String("API_KEY")})
		return err
	}
	if err := join("plan1", k.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "join the same plan again", join("plan1", k.ID), "ConflictException")
	wantCode(t, "join a second plan of the stage", join("plan2", k.ID), "ConflictException")
	wantCode(t, "join an unknown plan", join("nope", k.ID), "NotFoundException")
	wantCode(t, "join an unknown key", join("plan2", "k999999999"), "NotFoundException")
	_, err = c.CreateUsagePlanKey(ctx, &apigateway.CreateUsagePlanKeyInput{UsagePlanId: aws.String("plan2"), KeyId: aws.String(k.ID), KeyType: aws.String("OTHER")})
	wantCode(t, "join with a key type other than API_KEY", err, "BadRequestException")

	if _, err := c.DeleteUsagePlanKey(ctx, &apigateway.DeleteUsagePlanKeyInput{UsagePlanId: aws.String("plan1"), KeyId: aws.String(k.ID)}); err != nil {
		t.Fatal(err)
	}
	if err := join("plan2", k.ID); err != nil {
		t.Errorf("join plan2 after leaving plan1: %v", err)
	}
	_, err = c.DeleteUsagePlanKey(ctx, &apigateway.DeleteUsagePlanKeyInput{UsagePlanId: aws.String("plan1"), KeyId: aws.String(k.ID)})
	wantCode(t, "leave a plan the key is not in", err, "NotFoundException")
	if got, _ := f.Key(k.ID); !slices.Equal(got.UsagePlans, []string{"plan2"}) {
		t.Errorf("key in %v, want [plan2]", got.UsagePlans)
	}
	plan, err := c.GetUsagePlan(ctx, &apigateway.GetUsagePlanInput{UsagePlanId: aws.String("plan1")})
	if err != nil || aws.ToString(plan.Id) != "plan1" {
		t.Errorf("GetUsagePlan = %+v, %v", plan, err)
	}
}

func TestTags(t *testing.T) {
	f := New()
	f.SetRegion(region)
	c, _ := start(t, f)
	ctx := context.Background()
	k, err := f.AddKey(Key{Name: "k", Value: value("t"), Tags: map[string]string{"a": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TagResource(ctx, &apigateway.TagResourceInput{ResourceArn: aws.String(keyARN(k.ID)), Tags: map[string]string{"a": "2", "b": "3"}}); err != nil {
		t.Fatal(err)
	}
	if got := f.Tags(keyARN(k.ID)); !maps.Equal(got, map[string]string{"a": "2", "b": "3"}) {
		t.Errorf("Tags after TagResource = %v", got)
	}
	if _, err := c.UntagResource(ctx, &apigateway.UntagResourceInput{ResourceArn: aws.String(keyARN(k.ID)), TagKeys: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetTags(ctx, &apigateway.GetTagsInput{ResourceArn: aws.String(keyARN(k.ID))})
	if err != nil || !maps.Equal(got.Tags, map[string]string{"b": "3"}) {
		t.Errorf("GetTags = %+v, %v", got, err)
	}

	for what, in := range map[string]*apigateway.TagResourceInput{
		"another Region's ARN": {ResourceArn: aws.String("arn:aws:apigateway:us-east-1::/apikeys/" + k.ID), Tags: map[string]string{"x": "y"}},
		"a usage plan's ARN":   {ResourceArn: aws.String("arn:aws:apigateway:" + region + "::/usageplans/p"), Tags: map[string]string{"x": "y"}},
		"an aws: tag":          {ResourceArn: aws.String(keyARN(k.ID)), Tags: map[string]string{"aws:x": "y"}},
	} {
		_, err := c.TagResource(ctx, in)
		wantCode(t, "TagResource of "+what, err, "BadRequestException")
	}
	_, err = c.TagResource(ctx, &apigateway.TagResourceInput{ResourceArn: aws.String(keyARN("k999999999")), Tags: map[string]string{"x": "y"}})
	wantCode(t, "TagResource of a missing key", err, "NotFoundException")
	if got := f.Tags("arn:aws:apigateway:us-east-1::/apikeys/" + k.ID); got != nil {
		t.Errorf("Tags of another Region's ARN = %v", got)
	}
}

// Queued failures answer the next requests of an operation; the SDK retries
// throttling. An applied failure changes the state and loses the answer.
func TestFailAndLog(t *testing.T) {
	f := New("plan1")
	c, _ := start(t, f)
	ctx := context.Background()
	f.Fail("GetApiKeys", Error{Status: http.StatusTooManyRequests, Type: "TooManyRequestsException", Message: "Too Many Requests"})
	if _, err := c.GetApiKeys(ctx, &apigateway.GetApiKeysInput{NameQuery: aws.String("x")}); err != nil {
		t.Errorf("GetApiKeys after one throttle: %v", err)
	}
	f.Fail("CreateApiKey", Error{Status: http.StatusBadRequest, Type: "BadRequestException", Message: "lost", Applied: true})
	_, err := c.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("n"), Value: aws.String(value("f"))})
	wantCode(t, "CreateApiKey with an applied failure", err, "BadRequestException")
	if _, ok := f.KeyByValue(value("f")); !ok {
		t.Error("applied failure: key not created")
	}

	log := f.TakeRequests()
	var got []string
	for _, r := range log {
		got = append(got, r.Op+" "+r.Method+" "+http.StatusText(r.Status))
	}
	want := []string{"GetApiKeys GET Too Many Requests", "GetApiKeys GET OK", "CreateApiKey POST Bad Request"}
	if !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
	if log[0].Path != "/apikeys" || log[0].Query.Get("name") != "x" {
		t.Errorf("log[0] = %+v, want path /apikeys and the name query", log[0])
	}
	if again := f.TakeRequests(); len(again) != 0 {
		t.Errorf("TakeRequests kept %d requests", len(again))
	}
}

// The wire shape of an error, as the SDK's deserialiser reads it, and of a
// call the fake does not know.
func TestErrorShapeAndUnknownOperation(t *testing.T) {
	f := New()
	_, url := start(t, f)
	resp, err := http.Get(url + "/apikeys/k999999999")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var msg struct{ Message string }
	if resp.StatusCode != http.StatusNotFound ||
		resp.Header.Get("x-amzn-ErrorType") != "NotFoundException:http://internal.amazon.com/coral/com.amazonaws.backplane.controlplane/" ||
		resp.Header.Get("x-amzn-RequestId") == "" || json.Unmarshal(body, &msg) != nil || msg.Message != "Invalid API Key identifier specified" {
		t.Errorf("GetApiKey of a missing key: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	resp, err = http.Post(url+"/restapis", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("x-amzn-ErrorType"), "UnknownOperationException") {
		t.Errorf("unknown operation: %d %v", resp.StatusCode, resp.Header)
	}
	if log := f.TakeRequests(); len(log) != 2 || log[0].Op != "GetApiKey" || log[1].Op != "" {
		t.Errorf("log %+v: want GetApiKey, then the unknown call with no Op", log)
	}
}

// A layer in front (an IAM check) refuses with Refuse: the client gets IAM's
// AccessDeniedException, the state is untouched, the log shows the call.
func TestRefuse(t *testing.T) {
	f := New()
	k, err := f.AddKey(Key{Name: "k", Value: value("r")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			f.Refuse(w, r, Error{Status: http.StatusForbidden, Type: "AccessDeniedException", Message: "not authorized to perform: apigateway:DELETE"})
			return
		}
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c := apigateway.New(apigateway.Options{Region: region, BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")})
	_, err = c.DeleteApiKey(context.Background(), &apigateway.DeleteApiKeyInput{ApiKey: aws.String(k.ID)})
	wantCode(t, "refused DeleteApiKey", err, "AccessDeniedException")
	if _, ok := f.Key(k.ID); !ok {
		t.Error("a refused delete deleted the key")
	}
	if log := f.TakeRequests(); len(log) != 1 || log[0].Op != "DeleteApiKey" || log[0].Status != http.StatusForbidden {
		t.Errorf("log %+v, want the refused DeleteApiKey", log)
	}
}

func TestAddKey(t *testing.T) {
	f := New("plan1", "plan2")
	// A state API Gateway would not make, as a test may need it.
	k, err := f.AddKey(Key{Name: "k", UsagePlans: []string{"plan2", "plan1"}})
	if err != nil || len(k.Value) != 40 || !slices.Equal(k.UsagePlans, []string{"plan1", "plan2"}) {
		t.Errorf("AddKey = %+v, %v", k, err)
	}
	if _, err := f.AddKey(Key{ID: "mine"}); err == nil {
		t.Error("AddKey with an ID succeeded")
	}
	if _, err := f.AddKey(Key{UsagePlans: []string{"nope"}}); err == nil {
		t.Error("AddKey into an unknown plan succeeded")
	}
	f.AddUsagePlan("nope")
	if _, err := f.AddKey(Key{UsagePlans: []string{"nope"}}); err != nil {
		t.Errorf("AddKey into an added plan: %v", err)
	}
}
