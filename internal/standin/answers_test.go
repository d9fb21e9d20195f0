package standin_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/doclib/doclib/internal/standin"
	"github.com/doclib/doclib/internal/standin/restapi"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// bigPaths are the answers the big-answers set makes larger than a buffered
// Lambda answer may be (6 MB): a page of 100 documents (30 MB), a depth-3
// traversal (53 MB) and the graph (7.8 MB).
var bigPaths = []string{
	"/libraries/" + demo.BigLibrary + "/documents?pageSize=100",
	"/documents/doc_big_001/traverse?depth=3",
	"/libraries/" + demo.BigLibrary + "/graph",
}

func bigData(t *testing.T) *doclib.DataSet {
	t.Helper()
	var buf bytes.Buffer
	if err := demo.Encode(&buf, demo.BigAnswers(demo.BigOptions{})); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fetch is one exchange, with when its first body byte came.
type fetch struct {
	status int
	header http.Header
	body   []byte
	ttfb   time.Duration
	took   time.Duration
	err    error // reading the body
}

func fetchWith(t *testing.T, c *http.Client, url, key, accept string) fetch {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept-Encoding", accept) // named: the body comes as sent
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	f := fetch{status: resp.StatusCode, header: resp.Header}
	first := make([]byte, 1)
	n, err := io.ReadFull(resp.Body, first)
	f.ttfb = time.Since(start)
	rest, err2 := io.ReadAll(resp.Body)
	f.body = append(first[:n], rest...)
	f.took = time.Since(start)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		f.err = err
	} else {
		f.err = err2
	}
	return f
}

// TestBigAnswersArriveWhole: through the stack as deployed (streamed
// integrations), the largest answers arrive whole, with exactly the local
// server's bytes, within Lambda's and the gateway's bandwidth caps (the
// stand-in's, AWS's figures), and compressed when asked. The figures go to
// docs/performance.md.
func TestBigAnswersArriveWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("the stand-in synthesizes and runs the whole stack; not in -short")
	}
	if synthErr != nil {
		t.Fatalf("synthesize: %v", synthErr)
	}
	d := bigData(t)
	local := httptest.NewServer(httpapi.NewServer(httpapi.Config{Service: service.New(memory.New(d), nil)}))
	defer local.Close()
	_, s, logs := startWith(t, 10*time.Minute, "big", assembly, d)
	t.Cleanup(func() {
		if n := s.Failed(); n > 0 {
			t.Errorf("the indexer gave up on %d stream records of documents near the size limit", n)
		}
		for _, d := range s.Checker.Denials() {
			t.Errorf("AWS denied a function's call: %+v", d)
		}
		if strings.Contains(logs.String(), "RequestTooLargeException") {
			t.Errorf("a stream batch passed the 6 MB an invocation takes; Lambda's poller ends a batch before")
		}
	})
	c := clientFrom("127.0.0.41")
	c.Timeout = 3 * time.Minute
	key := demo.Keys[0].Secret
	for _, p := range bigPaths {
		want := fetchWith(t, http.DefaultClient, local.URL+p, key, "identity")
		if want.status != 200 || want.err != nil {
			t.Fatalf("local %s: %d %v", p, want.status, want.err)
		}
		got := fetchWith(t, c, s.URL+p, key, "identity")
		if got.status != 200 || got.err != nil || !bytes.Equal(got.body, want.body) {
			t.Errorf("GET %s through the stand-in: %d, %d bytes (read error %v); want 200 with the local server's %d bytes\n%s",
				p, got.status, len(got.body), got.err, len(want.body), tail(logs.String(), 30))
			continue
		}
		if got.header.Get("ETag") != want.header.Get("ETag") {
			t.Errorf("GET %s: ETag %s through the stand-in, %s locally: the same bytes have the same tag", p, got.header.Get("ETag"), want.header.Get("ETag"))
		}
		zipped := fetchWith(t, c, s.URL+p, key, "gzip")
		zr, err := gzip.NewReader(bytes.NewReader(zipped.body))
		var plain []byte
		if err == nil {
			plain, err = io.ReadAll(zr)
		}
		if zipped.status != 200 || zipped.header.Get("Content-Encoding") != "gzip" || err != nil || !bytes.Equal(plain, want.body) {
			t.Errorf("GET %s in gzip: %d, Content-Encoding %q, %v: want the same bytes compressed", p, zipped.status, zipped.header.Get("Content-Encoding"), err)
		}
		t.Logf("GET %s: %.1f MB; locally first byte %s, all %s; stand-in identity first byte %s, all %s; gzip %.1f MB, first byte %s, all %s",
			p, float64(len(want.body))/1e6, want.ttfb.Round(time.Millisecond), want.took.Round(time.Millisecond),
			got.ttfb.Round(time.Millisecond), got.took.Round(time.Millisecond),
			float64(len(zipped.body))/1e6, zipped.ttfb.Round(time.Millisecond), zipped.took.Round(time.Millisecond))
		// Past Lambda's 6 MB burst, the stand-in holds the stream to 2 MB/s.
		if floor := time.Duration(float64(len(got.body)-(6<<20)) / 2e6 * float64(time.Second)); got.took < floor {
			t.Errorf("GET %s: %d bytes in %s, faster than Lambda streams them (at least %s)", p, len(got.body), got.took, floor)
		}
	}
	// A revalidation of the largest answer costs no transfer.
	want := fetchWith(t, http.DefaultClient, local.URL+bigPaths[1], key, "gzip")
	req, _ := http.NewRequest(http.MethodGet, s.URL+bigPaths[1], nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("If-None-Match", want.header.Get("ETag"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Errorf("the traversal with its tag: %d, %d bytes; want 304 and nothing", resp.StatusCode, len(b))
	}
	// A change to the data changes the tag: the old one gets the new answer.
	before := fetchWith(t, c, s.URL+"/documents/doc_big_002", key, "gzip")
	if _, err := s.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(s.Table),
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "DOC#doc_big_002"}, "sk": &types.AttributeValueMemberS{Value: "A"}},
		UpdateExpression:          aws.String("SET title = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: "002 Renamed"}}}); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	// The API reads documents eventually consistent: within the stand-in's
	// window the old tag may still match, and a client asks again, as it
	// would on AWS. A request sent after the window must see the change.
	for {
		sent := time.Now()
		req, _ = http.NewRequest(http.MethodGet, s.URL+"/documents/doc_big_002", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("If-None-Match", before.header.Get("ETag"))
		resp, err = c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified || sent.After(written.Add(s.Stale.Window())) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte("002 Renamed")) || resp.Header.Get("ETag") == before.header.Get("ETag") {
		t.Errorf("after the title changed, the old tag: %d, ETag %s (before %s); want 200 with the new title and another tag",
			resp.StatusCode, resp.Header.Get("ETag"), before.header.Get("ETag"))
	}
}

// TestBufferedIntegrationFailsOnBigAnswers puts back the integration the
// stack had before answers were streamed (-c responseStreaming=false): the
// same requests fail, as they would on AWS, where Lambda refuses a buffered
// response over 6 MB (Function.ResponseSizeTooLarge) and API Gateway answers
// its INTEGRATION_FAILURE response (503 unavailable in this stack). The
// stand-in enforces the limit; without it this test passes nothing.
func TestBufferedIntegrationFailsOnBigAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("the stand-in synthesizes and runs the whole stack; not in -short")
	}
	root, _ := filepath.Abs("../..")
	a, err := standin.Synth(root, t.TempDir(), map[string]string{"customer": "buffered", "usagePlans": "false", "responseStreaming": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(readFile(t, a.Template), "response-streaming-invocations") {
		t.Fatal("responseStreaming=false still streams")
	}
	_, s, logs := startWith(t, 10*time.Minute, "buf", a, bigData(t))
	c := clientFrom("127.0.0.42")
	c.Timeout = 3 * time.Minute
	key := demo.Keys[0].Secret
	for _, p := range bigPaths {
		f := fetchWith(t, c, s.URL+p, key, "gzip")
		if f.status != http.StatusServiceUnavailable || !strings.Contains(string(f.body), `"unavailable"`) {
			t.Errorf("GET %s through a buffered integration: %d %.200s; want the gateway's 503 unavailable", p, f.status, f.body)
		}
	}
	if !strings.Contains(logs.String(), "Function.ResponseSizeTooLarge") {
		t.Errorf("no function refused for its response size:\n%s", tail(logs.String(), 30))
	}
	// Answers under 6 MB still work, compressed by the gateway, for the Go
	// client's Accept-Encoding too; their tag is weak, since the bytes are
	// the gateway's gzip, not the function's JSON. "zstd, gzip", what the
	// client asked before, gets no compression: API Gateway compresses only
	// when the highest-priority coding is one it supports.
	page := s.URL + "/libraries/" + demo.BigLibrary + "/documents?pageSize=10"
	for _, accept := range []string{"gzip", client.AcceptEncoding} {
		f := fetchWith(t, c, page, key, accept)
		if f.status != 200 || f.header.Get("Content-Encoding") != "gzip" {
			t.Errorf("a page of 10 through a buffered integration, Accept-Encoding %q: %d, Content-Encoding %q; want 200 in gzip",
				accept, f.status, f.header.Get("Content-Encoding"))
		}
		if tag := f.header.Get("ETag"); !strings.HasPrefix(tag, `W/"`) {
			t.Errorf("Accept-Encoding %q: the gateway's gzip carries the tag %q; a strong tag names exact bytes, and these are not the function's", accept, tag)
		}
	}
	if f := fetchWith(t, c, page, key, "zstd, gzip"); f.status != 200 || f.header.Get("Content-Encoding") != "" || len(f.body) < 1<<20 {
		t.Errorf(`Accept-Encoding "zstd, gzip": %d, Content-Encoding %q, %d bytes; want the %s page uncompressed, as API Gateway sends it`,
			f.status, f.header.Get("Content-Encoding"), len(f.body), "big")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAStreamOutlastsTheDefaultTimeout: through the stack as deployed, an
// answer whose stream takes longer than API Gateway's default integration
// timeout (29 s) arrives whole, since the template gives each streamed
// integration the function's whole invocation (61 s); with the template's
// timeouts taken out, as the stack had it before, the same answer is cut
// after its status. The gateway paces the answer (a page of 100 demo
// documents) over 40 s of its own clock, which runs ahead as it paces, so
// the test does not wait the 40 s.
func TestAStreamOutlastsTheDefaultTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("the stand-in synthesizes and runs the whole stack; not in -short")
	}
	if synthErr != nil {
		t.Fatalf("synthesize: %v", synthErr)
	}
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	local := httptest.NewServer(httpapi.NewServer(httpapi.Config{Service: service.New(memory.New(d), nil)}))
	defer local.Close()
	const path = "/libraries/it-operations/documents?pageSize=100"
	key := demo.Keys[0].Secret
	want := fetchWith(t, http.DefaultClient, local.URL+path, key, "identity")
	if want.status != 200 || want.err != nil || len(want.body) < 64<<10 {
		t.Fatalf("locally: %d, %d bytes, %v; the test needs an answer of several reads", want.status, len(want.body), want.err)
	}
	clock := &restapi.AheadClock{}
	_, s, logs := startOpts(t, 5*time.Minute, standin.Options{Assembly: assembly, Data: d, Run: "slow",
		Gateway: restapi.Options{Now: clock.Now, Sleep: clock.Sleep, StreamBurst: 1, StreamRate: float64(len(want.body)) / 40}})
	c := clientFrom("127.0.0.43")
	c.Timeout = 3 * time.Minute
	// A first request starts the function, so that its cold start is not
	// in the one that counts.
	if f := fetchWith(t, c, s.URL+path, key, "gzip"); f.status != 200 || f.err != nil {
		t.Fatalf("a first request: %d, %v\n%s", f.status, f.err, tail(logs.String(), 30))
	}

	before := clock.Now()
	got := fetchWith(t, c, s.URL+path, key, "identity")
	took := clock.Now().Sub(before) // the gateway's time: its pacing and the real time the rest took
	if got.status != 200 || got.err != nil || !bytes.Equal(got.body, want.body) {
		t.Errorf("with the template's timeouts: %d, %d bytes (read error %v) after %s of the gateway's time; want the local server's %d bytes\n%s",
			got.status, len(got.body), got.err, took, len(want.body), tail(logs.String(), 30))
	}
	if took < 39*time.Second {
		t.Errorf("the answer took %s of the gateway's time; the test means one longer than 29 s", took)
	}

	newDep, err := s.Update(withoutIntegrationTimeouts(t, assembly))
	if err != nil || !newDep {
		t.Fatalf("deploying the API without integration timeouts: new deployment %v, %v", newDep, err)
	}
	cut := fetchWith(t, c, s.URL+path, key, "identity")
	if cut.status != 200 || cut.err == nil || len(cut.body) >= len(want.body) {
		t.Errorf("with API Gateway's default timeout: %d, %d of %d bytes, read error %v; want 200 and a body cut short",
			cut.status, len(cut.body), len(want.body), cut.err)
	}
}

// withoutIntegrationTimeouts is the assembly a with every integration's
// TimeoutInMillis taken out of its template, under a deployment of another
// logical ID, as the CDK names a deployment whose methods changed (a
// deployment is never updated in place).
func withoutIntegrationTimeouts(t *testing.T, a *standin.Synthesized) *standin.Synthesized {
	t.Helper()
	var tpl map[string]any
	if err := json.Unmarshal([]byte(readFile(t, a.Template)), &tpl); err != nil {
		t.Fatal(err)
	}
	removed, deployment := 0, ""
	for id, r := range tpl["Resources"].(map[string]any) {
		res := r.(map[string]any)
		switch res["Type"] {
		case "AWS::ApiGateway::Method":
			in, _ := res["Properties"].(map[string]any)["Integration"].(map[string]any)
			if _, ok := in["TimeoutInMillis"]; ok {
				delete(in, "TimeoutInMillis")
				removed++
			}
		case "AWS::ApiGateway::Deployment":
			deployment = id
		}
	}
	if removed == 0 || deployment == "" {
		t.Fatalf("the template has %d integration timeouts and deployment %q", removed, deployment)
	}
	b, _ := json.Marshal(tpl)
	b = bytes.ReplaceAll(b, []byte(`"`+deployment+`"`), []byte(`"`+deployment+`Untimed"`))
	p := filepath.Join(t.TempDir(), filepath.Base(a.Template))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return &standin.Synthesized{Dir: a.Dir, Stack: a.Stack, Template: p, Assets: a.Assets}
}
