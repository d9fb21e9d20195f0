package awscheck

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

const (
	account   = "123456789012"
	region    = "us-east-1"
	table     = "Doclib-demo-Table"
	tableARN  = "arn:aws:dynamodb:us-east-1:123456789012:table/Doclib-demo-Table"
	domainARN = "arn:aws:es:us-east-1:123456789012:domain/doclib-demo"
	titan     = "amazon.titan-embed-text-v2:0"
)

// The policies below are the synthesized template's, resolved (see
// internal/standin/iampolicy/testdata), cut to the statements the tests exercise.
const documentsPolicy = `{"Version": "2012-10-17", "Statement": [
 {"Sid": "ReadTable", "Effect": "Allow",
  "Action": ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"],
  "Resource": ["` + tableARN + `", "` + tableARN + `/index/byOrder"]},
 {"Sid": "UpdateRateLimits", "Effect": "Allow", "Action": "dynamodb:UpdateItem", "Resource": "` + tableARN + `",
  "Condition": {
   "ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "sk", "n", "exp"]},
   "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["RL#*"]},
   "StringEqualsIfExists": {"dynamodb:ReturnValues": ["NONE", "UPDATED_OLD", "UPDATED_NEW"]}}}]}`

const searchPolicy = `{"Version": "2012-10-17", "Statement": [
 {"Sid": "OpenSearch", "Effect": "Allow", "Action": "es:ESHttpPost", "Resource": "` + domainARN + `/doclib-documents/_search"},
 {"Sid": "Embed", "Effect": "Allow", "Action": "bedrock:InvokeModel",
  "Resource": "arn:aws:bedrock:us-east-1::foundation-model/` + titan + `"}]}`

const indexerPolicy = `{"Version": "2012-10-17", "Statement": [
 {"Sid": "CreateOwnApiKeys", "Effect": "Allow", "Action": "apigateway:POST", "Resource": "arn:aws:apigateway:us-east-1::/apikeys",
  "Condition": {"ForAllValues:StringEquals": {"aws:TagKeys": ["doclib:customer"]},
                "StringEquals": {"aws:RequestTag/doclib:customer": "demo"}}},
 {"Sid": "ManageOwnApiKeys", "Effect": "Allow", "Action": ["apigateway:PATCH", "apigateway:DELETE"],
  "Resource": "arn:aws:apigateway:us-east-1::/apikeys/*",
  "Condition": {"StringEquals": {"aws:ResourceTag/doclib:customer": "demo"}}},
 {"Sid": "Everything", "Effect": "Allow", "Action": "lambda:*", "Resource": "*"}]}`

// domainPolicy is the domain's access policy: searches for the search role
// only, unless more is given.
func domainPolicy(t *testing.T, extra string) *iampolicy.Policy {
	t.Helper()
	doc := `{"Version": "2012-10-17", "Statement": [
 {"Sid": "SearchQueries", "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:role/Doclib-demo-SearchRole"},
  "Action": "es:ESHttpPost", "Resource": "` + domainARN + `/doclib-documents/_search"},
 {"Sid": "OperatorsThroughIAM", "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
  "Action": "es:ESHttp*", "Resource": "` + domainARN + `/*"}` + extra + `]}`
	return parse(t, doc)
}

func parse(t *testing.T, doc string) *iampolicy.Policy {
	t.Helper()
	p, err := iampolicy.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	return p
}

func role(t *testing.T, name, policy string) Role {
	return Role{ARN: "arn:aws:iam::123456789012:role/Doclib-demo-" + name, Session: "doclib-demo-" + strings.ToLower(name),
		Policies: []*iampolicy.Policy{parse(t, policy)}}
}

// fakeDynamo stands in for dynalite: canned answers, and a log of what was
// forwarded to it.
type fakeDynamo struct {
	mu        sync.Mutex
	describes int
	forwarded []string // X-Amz-Target of each forwarded call
	bodies    [][]byte
}

func (f *fakeDynamo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	f.mu.Lock()
	if op == "DescribeTable" {
		f.describes++
	} else {
		f.forwarded = append(f.forwarded, op)
		f.bodies = append(f.bodies, body)
	}
	f.mu.Unlock()
	if r.Header.Get("Authorization") == "" {
		http.Error(w, "unsigned", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	var out any
	switch op {
	case "DescribeTable":
		out = map[string]any{"Table": map[string]any{"TableName": table,
			"KeySchema": []map[string]string{{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}},
			"GlobalSecondaryIndexes": []map[string]any{{"IndexName": "byOrder",
				"KeySchema": []map[string]string{{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "ord", "KeyType": "RANGE"}}}}}}
	case "GetItem":
		out = map[string]any{"Item": map[string]any{"pk": map[string]string{"S": "LIB#1"}, "sk": map[string]string{"S": "META"},
			"name": map[string]string{"S": "Handbook"}}}
	case "Query", "Scan":
		out = map[string]any{"Items": []any{}, "Count": 0, "ScannedCount": 0}
	default:
		out = map[string]any{}
	}
	json.NewEncoder(w).Encode(out)
}

func (f *fakeDynamo) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.forwarded...)
}

// engines are the tiny stand-ins for the services behind the checker.
type engines struct {
	dynamo   *fakeDynamo
	hits     map[string]int // "es GET /path", "bedrock POST /path", ...
	mu       sync.Mutex
	keyTags  map[string]map[string]string
	checker  *Checker
	logLines []string
}

func (e *engines) hit(service string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.hits[service+" "+r.Method+" "+r.URL.Path]++
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch service {
		case "bedrock":
			io.WriteString(w, `{"embedding":[0.1,0.2],"inputTextTokenCount":2}`)
		case "apigateway":
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, `{"id":"k1","name":"x","enabled":true}`)
			} else {
				w.WriteHeader(http.StatusAccepted)
			}
		default:
			io.WriteString(w, `{"ok":true}`)
		}
	})
}

func (e *engines) count(key string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hits[key]
}

// start runs a checker in front of fresh engines; domain is the domain's
// access policy (nil for none).
func start(t *testing.T, domain *iampolicy.Policy) *engines {
	t.Helper()
	e := &engines{dynamo: &fakeDynamo{}, hits: map[string]int{}, keyTags: map[string]map[string]string{
		"arn:aws:apigateway:us-east-1::/apikeys/mine":   {"doclib:customer": "demo"},
		"arn:aws:apigateway:us-east-1::/apikeys/theirs": {"doclib:customer": "acme"},
	}}
	dyn := httptest.NewServer(e.dynamo)
	t.Cleanup(dyn.Close)
	c, err := Start(Config{Account: account, Region: region, DynamoDB: dyn.URL,
		OpenSearch: e.hit("es"), DomainARN: domainARN, DomainPolicy: domain,
		Bedrock: e.hit("bedrock"), APIGateway: e.hit("apigateway"),
		ResourceTags: func(arn string) map[string]string { return e.keyTags[arn] },
		Logf: func(format string, args ...any) {
			e.mu.Lock()
			e.logLines = append(e.logLines, format)
			e.mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	e.checker = c
	return e
}

// httpClient trusts the checker's CA and nothing else, as a function with
// SSL_CERT_FILE set does.
func (e *engines) httpClient(t *testing.T) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(e.checker.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("CAFile holds no certificate")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// sdkConfig is what a function's SDK loads: the role's credentials and the
// checker as AWS_ENDPOINT_URL.
func (e *engines) sdkConfig(t *testing.T, creds Credentials) aws.Config {
	return aws.Config{
		Region:           region,
		Credentials:      credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken),
		HTTPClient:       e.httpClient(t),
		BaseEndpoint:     aws.String(e.checker.URL()),
		RetryMaxAttempts: 1,
	}
}

func (e *engines) denials() []Denial { return e.checker.Denials() }
