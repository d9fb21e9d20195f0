package awscheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/opensearch-project/opensearch-go/v4/signer/awsv2"
)

// newTarget is a DynamoDB request naming op, for calling checks directly.
func newTarget(op string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	return r
}

// raw sends a request signed by hand, for what the SDK will not send: a
// body changed after signing, an old date, another region.
type raw struct {
	creds          Credentials
	service, reg   string
	at             time.Time
	method, path   string
	target         string
	body, sentBody []byte // sentBody, when set, replaces body after signing
}

func (e *engines) send(t *testing.T, q raw) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(q.method, e.checker.URL()+q.path, bytes.NewReader(q.body))
	if err != nil {
		t.Fatal(err)
	}
	if q.target != "" {
		req.Header.Set("X-Amz-Target", q.target)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	}
	if q.creds.AccessKeyID != "" {
		if q.reg == "" {
			q.reg = region
		}
		if q.at.IsZero() {
			q.at = time.Now()
		}
		sum := sha256.Sum256(q.body)
		creds := aws.Credentials{AccessKeyID: q.creds.AccessKeyID, SecretAccessKey: q.creds.SecretAccessKey, SessionToken: q.creds.SessionToken}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), q.service, q.reg, q.at); err != nil {
			t.Fatal(err)
		}
	}
	if q.sentBody != nil {
		req.Body = io.NopCloser(bytes.NewReader(q.sentBody))
		req.ContentLength = int64(len(q.sentBody))
	}
	resp, err := e.httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]string{}
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &out)
	if v := resp.Header.Get("X-Amzn-Errortype"); v != "" {
		out["X-Amzn-ErrorType"] = v
	}
	return resp.StatusCode, out
}

func TestAuthentication(t *testing.T) {
	e := start(t, nil)
	creds := e.checker.Credentials(role(t, "DocumentsRole", documentsPolicy))
	if !strings.HasPrefix(creds.AccessKeyID, "ASIA") || len(creds.AccessKeyID) != 20 || creds.SessionToken == "" {
		t.Fatalf("credentials %+v are not STS-like", creds)
	}
	get := []byte(`{"TableName":"` + table + `","Key":{"pk":{"S":"LIB#1"},"sk":{"S":"META"}}}`)
	target := "DynamoDB_20120810.GetItem"

	// Through the SDK: a wrong secret and an unknown key, decoded as the
	// SDK decodes AWS's own answers.
	ctx := context.Background()
	in := &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"pk": str("LIB#1"), "sk": str("META")}}
	wrongSecret := creds
	wrongSecret.SecretAccessKey = "not-the-secret"
	_, err := dynamodb.NewFromConfig(e.sdkConfig(t, wrongSecret)).GetItem(ctx, in)
	if code, msg, status := sdkError(t, err); code != "InvalidSignatureException" || msg != msgBadSignature || status != 400 {
		t.Errorf("wrong secret: %d %s %q", status, code, msg)
	}
	unknown := Credentials{AccessKeyID: "ASIAAAAAAAAAAAAAAAAA", SecretAccessKey: "x", SessionToken: "y"}
	_, err = dynamodb.NewFromConfig(e.sdkConfig(t, unknown)).GetItem(ctx, in)
	if code, msg, status := sdkError(t, err); code != "UnrecognizedClientException" || msg != msgBadToken || status != 400 {
		t.Errorf("unknown key: %d %s %q", status, code, msg)
	}

	tests := []struct {
		name string
		q    raw
		code string
		msg  string // a prefix of the message
	}{
		{"body changed after signing", raw{creds: creds, sentBody: bytes.Replace(get, []byte("LIB#1"), []byte("LIB#2"), 1)},
			"com.amazon.coral.service#InvalidSignatureException", "The request signature we calculated does not match"},
		{"no session token", raw{creds: Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey}},
			"com.amazon.coral.service#UnrecognizedClientException", msgBadToken},
		{"signed 20 minutes ago", raw{creds: creds, at: time.Now().Add(-20 * time.Minute)},
			"com.amazon.coral.service#InvalidSignatureException", "Signature expired: "},
		{"another region", raw{creds: creds, reg: "eu-west-1"},
			"com.amazon.coral.service#InvalidSignatureException", "Credential should be scoped to a valid region."},
		{"unsigned", raw{}, "com.amazon.coral.service#MissingAuthenticationTokenException", "Request is missing Authentication Token"},
	}
	for _, tc := range tests {
		q := tc.q
		q.service, q.method, q.path, q.target, q.body = "dynamodb", http.MethodPost, "/", target, get
		status, body := e.send(t, q)
		if status != 400 || body["__type"] != tc.code || !strings.HasPrefix(body["message"], tc.msg) {
			t.Errorf("%s: %d %v, want 400 %s %q...", tc.name, status, body, tc.code, tc.msg)
		}
	}
	if got := e.dynamo.calls(); len(got) != 0 {
		t.Errorf("unauthenticated calls reached dynalite: %v", got)
	}
	if d := e.denials(); len(d) != 2+len(tests) {
		t.Errorf("%d denials, want %d: %+v", len(d), 2+len(tests), d)
	} else if d[0].Action != "dynamodb:GetItem" || !strings.HasPrefix(d[0].Reason, "InvalidSignatureException: ") {
		t.Errorf("first denial %+v", d[0])
	}

	// And the same signature, untouched, passes.
	status, _ := e.send(t, raw{creds: creds, service: "dynamodb", method: http.MethodPost, path: "/", target: target, body: get})
	if status != 200 {
		t.Errorf("a well-signed GetItem: %d", status)
	}
}

// esRequest signs as the project's OpenSearch client does (opensearch-go's
// SDK v2 signer, which also sends X-Amz-Content-Sha256).
func (e *engines) esRequest(t *testing.T, creds Credentials, method, path, body string) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(method, e.checker.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if creds.AccessKeyID != "" {
		cfg := e.sdkConfig(t, creds)
		s, err := awsv2.NewSignerWithService(cfg, "es")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SignRequest(req); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := e.httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]string{}
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func TestOpenSearch(t *testing.T) {
	search := role(t, "SearchRole", searchPolicy)
	t.Run("only what both policies allow", func(t *testing.T) {
		e := start(t, domainPolicy(t, ""))
		creds := e.checker.Credentials(search)
		if status, _ := e.esRequest(t, creds, http.MethodPost, "/doclib-documents/_search", `{"query":{"match_all":{}}}`); status != 200 {
			t.Errorf("POST _search: %d", status)
		}
		status, body := e.esRequest(t, creds, http.MethodGet, "/doclib-documents/_mapping", "")
		want := "User: arn:aws:sts::123456789012:assumed-role/Doclib-demo-SearchRole/doclib-demo-searchrole " +
			"is not authorized to perform: es:ESHttpGet because no identity-based policy allows the es:ESHttpGet action"
		if status != 403 || body["Message"] != want {
			t.Errorf("GET _mapping: %d %v\nwant 403 %q", status, body, want)
		}
		if n := e.count("es GET /doclib-documents/_mapping"); n != 0 {
			t.Errorf("a denied GET reached the cluster %d times", n)
		}
		d := e.denials()
		if len(d) != 1 || d[0].Resource != domainARN+"/doclib-documents/_mapping" {
			t.Errorf("denials %+v", d)
		}

		// Unsigned: the domain's policy names no one anonymous.
		status, body = e.esRequest(t, Credentials{}, http.MethodGet, "/", "")
		if status != 403 || body["Message"] != "User: anonymous is not authorized to perform: es:ESHttpGet because no resource-based policy allows the es:ESHttpGet action" {
			t.Errorf("unsigned GET /: %d %v", status, body)
		}
		// A bad signature, in the domain's words.
		bad := creds
		bad.SecretAccessKey = "wrong"
		status, body = e.esRequest(t, bad, http.MethodPost, "/doclib-documents/_search", `{}`)
		if status != 403 || body["message"] != msgBadSignature {
			t.Errorf("bad signature: %d %v", status, body)
		}
	})
	t.Run("the domain policy naming the role suffices", func(t *testing.T) {
		e := start(t, domainPolicy(t, `,
 {"Sid": "SearchMapping", "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:role/Doclib-demo-SearchRole"},
  "Action": "es:ESHttpGet", "Resource": "`+domainARN+`/doclib-documents/_mapping"}`))
		if status, body := e.esRequest(t, e.checker.Credentials(search), http.MethodGet, "/doclib-documents/_mapping", ""); status != 200 {
			t.Errorf("GET _mapping: %d %v", status, body)
		}
		if n := e.count("es GET /doclib-documents/_mapping"); n != 1 {
			t.Errorf("the cluster saw %d GET _mapping, want 1", n)
		}
		if d := e.denials(); len(d) != 0 {
			t.Errorf("denials %+v", d)
		}
	})
}

func TestBedrock(t *testing.T) {
	e := start(t, nil)
	br := bedrockruntime.NewFromConfig(e.sdkConfig(t, e.checker.Credentials(role(t, "SearchRole", searchPolicy))))
	ctx := context.Background()
	body := []byte(`{"inputText":"hello"}`)
	if _, err := br.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(titan), Body: body,
		ContentType: aws.String("application/json")}); err != nil {
		t.Fatalf("InvokeModel %s: %v", titan, err)
	}
	if n := e.count("bedrock POST /model/" + titan + "/invoke"); n != 1 {
		t.Errorf("Bedrock saw %d invokes of %s, want 1", n, titan)
	}

	_, err := br.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String("cohere.embed-english-v3"), Body: body,
		ContentType: aws.String("application/json")})
	var ade *brtypes.AccessDeniedException
	want := "User: arn:aws:sts::123456789012:assumed-role/Doclib-demo-SearchRole/doclib-demo-searchrole is not authorized to perform: " +
		"bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1::foundation-model/cohere.embed-english-v3 " +
		"because no identity-based policy allows the bedrock:InvokeModel action"
	if !errors.As(err, &ade) || ade.ErrorMessage() != want {
		t.Errorf("another model: %v\nwant AccessDeniedException %q", err, want)
	}
	_, _, status := sdkError(t, err)
	if status != 403 {
		t.Errorf("another model: status %d, want 403", status)
	}
	if d := e.denials(); len(d) != 1 || d[0].Action != "bedrock:InvokeModel" {
		t.Errorf("denials %+v", d)
	}
}

func TestAPIGateway(t *testing.T) {
	e := start(t, nil)
	gw := apigateway.NewFromConfig(e.sdkConfig(t, e.checker.Credentials(role(t, "IndexerRole", indexerPolicy))))
	ctx := context.Background()
	create := func(tags map[string]string) error {
		_, err := gw.CreateApiKey(ctx, &apigateway.CreateApiKeyInput{Name: aws.String("k"), Enabled: true, Tags: tags})
		return err
	}
	if err := create(map[string]string{"doclib:customer": "demo"}); err != nil {
		t.Fatalf("CreateApiKey tagged for demo: %v", err)
	}
	for _, tags := range []map[string]string{
		{"doclib:customer": "acme"},
		{"doclib:customer": "demo", "team": "x"},
		nil,
	} {
		err := create(tags)
		code, msg, status := sdkError(t, err)
		if code != "AccessDeniedException" || status != 403 ||
			!strings.Contains(msg, "is not authorized to perform: apigateway:POST on resource: arn:aws:apigateway:us-east-1::/apikeys because") {
			t.Errorf("CreateApiKey tagged %v: %d %s %q", tags, status, code, msg)
		}
	}
	if _, err := gw.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: aws.String("mine")}); err != nil {
		t.Errorf("DeleteApiKey of a demo key: %v", err)
	}
	_, err := gw.DeleteApiKey(ctx, &apigateway.DeleteApiKeyInput{ApiKey: aws.String("theirs")})
	if code, _, _ := sdkError(t, err); code != "AccessDeniedException" {
		t.Errorf("DeleteApiKey of another customer's key: %v", err)
	}
	if n := e.count("apigateway POST /apikeys"); n != 1 {
		t.Errorf("API Gateway saw %d creates, want 1", n)
	}
	if d := e.denials(); len(d) != 4 {
		t.Errorf("%d denials, want 4: %+v", len(d), d)
	}
}

// A service nothing stands in for is refused even when the role's policy
// allows the call: the test must see the function reach for it.
func TestUnknownServiceIsDenied(t *testing.T) {
	e := start(t, nil)
	fn := lambda.NewFromConfig(e.sdkConfig(t, e.checker.Credentials(role(t, "IndexerRole", indexerPolicy))))
	_, err := fn.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("other")})
	if code, _, status := sdkError(t, err); code != "AccessDeniedException" || status != 403 {
		t.Errorf("lambda Invoke: %d %s", status, code)
	}
	if d := e.denials(); len(d) != 1 || !strings.HasPrefix(d[0].Action, "lambda:") {
		t.Errorf("denials %+v", d)
	}
}
