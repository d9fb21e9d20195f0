package standin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/doclib/doclib/shared/api"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/doclib/doclib/internal/standin"
	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakebedrock"
	"github.com/doclib/doclib/internal/suites/apisuite"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/demo"
)

// The stack is synthesized once and run once for the test binary: the
// tests below share it, in the order they are written (the ones that use
// up a limit come last).
var (
	assembly *standin.Synthesized
	synthErr error

	stackOnce sync.Once
	stack     *standin.Stack
	stackErr  error
	stackLogs syncBuffer
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "doclib-standin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !testing.Short() {
		root, _ := filepath.Abs("../..")
		assembly, synthErr = standin.Synth(root, dir, map[string]string{"customer": "demo"})
	}
	code := m.Run()
	if stack != nil {
		_ = stack.Close()
	}
	dynalitetest.Stop()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running returns the shared stand-in with the demo data imported and
// indexed. Every test using it fails if, by its end, any AWS call of a
// function was denied, OpenSearch refused a request, or the indexer gave up
// on a stream record: the template must grant what the code needs, and the
// code must send what OpenSearch accepts.
func running(t *testing.T) *standin.Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("the stand-in synthesizes and runs the whole stack; not in -short")
	}
	if synthErr != nil {
		t.Fatalf("synthesize: %v", synthErr)
	}
	db := dynalitetest.Start(t)
	stackOnce.Do(func() {
		d, err := demo.Load()
		if err != nil {
			stackErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		stack, stackErr = standin.Start(ctx, standin.Options{Assembly: assembly, DynamoDB: db.Endpoint, Data: d,
			Logs: &stackLogs, Run: "t"})
	})
	if stackErr != nil {
		t.Fatalf("stand-in: %v\n%s", stackErr, tail(stackLogs.String(), 60))
	}
	denied, refused := len(stack.Checker.Denials()), len(stack.Search.Refused())
	t.Cleanup(func() {
		for _, d := range stack.Checker.Denials()[denied:] {
			t.Errorf("AWS denied a function's call: %+v", d)
		}
		for _, r := range stack.Search.Refused()[refused:] {
			t.Errorf("OpenSearch refused a request a real cluster would refuse: %s", r)
		}
		if n := stack.Failed(); n > 0 {
			t.Errorf("the indexer gave up on %d stream records", n)
		}
		if t.Failed() {
			t.Logf("stand-in logs (last lines):\n%s", tail(stackLogs.String(), 80))
		}
	})
	return stack
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// clientFrom is an HTTP client whose requests come from ip (127.0.0.x): the
// gateway's WAF and logs see each test as its own caller, as on AWS.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}}
}

func get(t *testing.T, c *http.Client, url, key string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return do(t, c, req)
}

func TestStandInServesTheDemoData(t *testing.T) {
	s := running(t)
	resp, body := get(t, clientFrom("127.0.0.2"), s.URL+"/libraries", "dlk_demo_full_scope")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /libraries: %d %s", resp.StatusCode, body)
	}
	var out struct{ Libraries []struct{ ID string } }
	if err := json.Unmarshal(body, &out); err != nil || len(out.Libraries) == 0 {
		t.Fatalf("GET /libraries: %v %s", err, body)
	}
	// One request per function group, so that each function's first
	// answer (its cold start, in TestColdStarts) is an ordinary request.
	for _, path := range []string{"/documents/doc_it_001", "/search/documents?q=reset+a+password"} {
		resp, body := get(t, clientFrom("127.0.0.2"), s.URL+path, "dlk_demo_full_scope")
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	// And the mcp function, with a message any MCP client may send.
	if resp, body := mcpPost(t, clientFrom("127.0.0.2"), s.URL, "dlk_demo_full_scope", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != 200 {
		t.Errorf("POST /mcp: %d %s", resp.StatusCode, body)
	}
}

// TestANewKeyWorksAtOnce: a key used right after it was created is let in.
// The authorizer reads keys strongly consistent; read eventually, the new key
// reads as missing (the stand-in hides writes of the last second from
// eventual reads, as DynamoDB may), and API Gateway caches that Deny for the
// authorizer's TTL: the key is refused for a minute (issue 25).
func TestANewKeyWorksAtOnce(t *testing.T) {
	s := running(t)
	ctx := context.Background()
	tbl := &dynamo.Table{Client: s.DB, Name: s.Table}
	c := clientFrom("127.0.0.7")
	var secret string
	for attempt := 1; ; attempt++ {
		var err error
		_, secret, err = tbl.CreateKey(ctx, dynamo.NewKey{WorkspaceID: "ws_acme", Libraries: []string{"*"}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, c, s.URL+"/libraries", secret)
		// Until the indexer puts the key in its usage plan, the gateway
		// answers INVALID_API_KEY (401, "retry shortly"): that is not the
		// authorizer's refusal.
		if resp.StatusCode != 200 && !strings.Contains(string(body), "created in the last minute") {
			t.Fatalf("a key used right after it was created: %d %s; the authorizer refused it", resp.StatusCode, body)
		}
		// The authorizer's read came before this one: if the key still
		// reads as missing to an eventual read, the authorizer read it
		// within the window, where an eventual read misses it.
		res, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "KEY#" + doclib.HashKey(secret).String()}, "sk": &types.AttributeValueMemberS{Value: "KEY"}}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Item == nil {
			break
		}
		if attempt == 5 {
			t.Fatalf("five times the request took longer than the stand-in's window (%s): the test cannot tell", s.Stale.Window())
		}
	}
	// Once the indexer registered it with its tier's usage plan, the key
	// answers 200; a cached Deny would answer 401 for the authorizer's TTL.
	// Registering is two calls (CreateApiKey, then CreateUsagePlanKey): the
	// gateway takes the key once it is in a plan, not when it exists.
	value := usageplan.Value("demo", doclib.HashKey(secret))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if k, ok := s.Gateway.KeyByValue(value); ok && k.Enabled && len(k.UsagePlans) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("30 s after the key was created, the indexer has not registered it with a usage plan")
		}
	}
	if resp, body := get(t, c, s.URL+"/libraries", secret); resp.StatusCode != 200 {
		t.Errorf("the new key, registered: %d %s; want 200", resp.StatusCode, body)
	}
}

// TestBedrockThrottlingAnswersFromWords: with Bedrock throttling every
// call, the search function answers from the word signals within its
// embedding budget (1.5 s, the client's backoff cut short), says so in
// unavailableSignals, and spends no credit, since the meaning match did not
// run (docs/search.md, "When the meaning is late"). Once Bedrock answers,
// the same search has its meaning match and spends one credit. Before, it
// answered 503 after waiting up to 5 s.
func TestBedrockThrottlingAnswersFromWords(t *testing.T) {
	s := running(t)
	ledger := dynamo.NewLedger(&dynamo.Table{Client: s.DB, Name: s.Table})
	ctx := context.Background()
	before, err := ledger.Balance(ctx, "ws_solo")
	if err != nil {
		t.Fatal(err)
	}
	const q = "/search/documents?q=send+an+invoice+in+freshbooks"
	s.Bedrock.FailAlways(fakebedrock.Throttling)
	c := clientFrom("127.0.0.3")
	resp, body := get(t, c, s.URL+q, "dlk_demo_individual_plan")
	s.Bedrock.ClearFailures()
	var res api.SearchResults
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &res) != nil {
		t.Fatalf("search with Bedrock throttling: %d %s; want 200 from words", resp.StatusCode, body)
	}
	// The Individual plan has no recordings to match: semantic alone is missing.
	if !slices.Equal(res.UnavailableSignals, []string{"semantic"}) || res.LowConfidence || len(res.Documents) == 0 {
		t.Errorf("search with Bedrock throttling: unavailableSignals %v, lowConfidence %v, %d hits; want word matches without semantic",
			res.UnavailableSignals, res.LowConfidence, len(res.Documents))
	}
	after, err := ledger.Balance(ctx, "ws_solo")
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("credit %d before the search answered from words, %d after: want it not spent", before, after)
	}
	// And once Bedrock answers, the same search spends one credit.
	resp, body = get(t, c, s.URL+q, "dlk_demo_individual_plan")
	if resp.StatusCode != 200 || strings.Contains(string(body), "unavailableSignals") {
		t.Fatalf("search with Bedrock back: %d %s", resp.StatusCode, body)
	}
	if now, _ := ledger.Balance(ctx, "ws_solo"); now != before-1 {
		t.Errorf("credit %d after a search, want %d", now, before-1)
	}
}

func TestAPISuiteThroughTheStandIn(t *testing.T) {
	s := running(t)
	// The stack's gateway responses speak the API's error shape, so the
	// suite holds the stand-in to the local server's answers (GatewayErrors
	// off), except that API Gateway routes before it authenticates
	// (docs/standin.md).
	apisuite.Run(t, apisuite.Target{Name: "stand-in", URL: s.URL, Client: clientFrom("127.0.0.4"), RoutesBeforeAuth: true})
	// The suite's concurrent bursts ran on several instances of a function,
	// so its exact per-key counts held across instances, as on Lambda.
	most, name := 0, ""
	for n, p := range s.Functions {
		if c := len(p.ColdStarts()); c > most {
			most, name = c, n
		}
	}
	if most < 2 {
		t.Errorf("every function ran on one instance: the rate limits were not tested across instances")
	}
	t.Logf("%s ran on %d instances", name, most)
}

// gatewayMade reports whether a response came from API Gateway itself (a
// gateway response) rather than from a function.
func gatewayMade(resp *http.Response) bool { return resp.Header.Get("X-Amzn-ErrorType") != "" }

// rateLimited checks a 429's headers: the spec wants them on every
// rate-limited answer, the gateway's included.
func rateLimited(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "Retry-After"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("gateway 429 without %s: %v %s", h, resp.Header, body)
		}
	}
	if v := resp.Header.Get("X-RateLimit-Remaining"); v != "0" {
		t.Errorf("X-RateLimit-Remaining: %q, want 0", v)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "rate_limited" || e.Error.Message == "" {
		t.Errorf("gateway 429 body %s: want the API's error shape with code rate_limited", body)
	}
}

// The usage plan's throttle is a backstop behind the function's own count:
// past its burst, the gateway answers 429 itself, with the headers.
func TestUsagePlanThrottleAnswers429WithHeaders(t *testing.T) {
	s := running(t)
	c := clientFrom("127.0.0.5")
	for i := 0; i < 400; i++ {
		resp, body := get(t, c, s.URL+"/libraries", "dlk_demo_no_recordings")
		if resp.StatusCode == http.StatusTooManyRequests && gatewayMade(resp) {
			t.Logf("the gateway throttled request %d", i+1)
			rateLimited(t, resp, body)
			return
		}
		if resp.StatusCode != 200 && resp.StatusCode != 429 {
			t.Fatalf("request %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	t.Fatal("400 requests at once and the usage plan never throttled")
}

// The WAF's per-IP rate rule blocks a caller past its limit, with the
// headers: it counts every request, even those the authorizer refuses.
func TestWAFAnswers429WithHeaders(t *testing.T) {
	s := running(t)
	c := clientFrom("127.0.0.6")
	for i := 0; i < 1000; i++ {
		resp, body := get(t, c, s.URL+"/libraries", "")
		if resp.StatusCode == http.StatusTooManyRequests {
			if !gatewayMade(resp) {
				t.Fatalf("request %d: a 429 not from the gateway: %s", i+1, body)
			}
			t.Logf("WAF blocked request %d", i+1)
			rateLimited(t, resp, body)
			return
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("request %d without a key: %d %s", i+1, resp.StatusCode, body)
		}
	}
	t.Fatal("1000 requests from one IP and the WAF never blocked")
}

// Every function started, and answered, under the stand-in; the figures
// go to docs/performance.md.
func TestColdStarts(t *testing.T) {
	s := running(t)
	for name, p := range s.Functions {
		cs := p.ColdStarts()
		if len(cs) == 0 {
			t.Errorf("%s never started", name)
			continue
		}
		for _, c := range cs {
			if c.Error != "" {
				t.Errorf("%s instance %d: init failed: %s", name, c.Instance, c.Error)
			}
		}
		t.Logf("%s: %d cold starts; first: init %v, first answer %v", name, len(cs), cs[0].Init, cs[0].FirstAnswer)
	}
}

// TestWithoutUsagePlans runs a stack synthesized with usagePlans=false: keys
// work with no API Gateway key behind them, the gateway never throttles a
// key, and the function's own limiter alone answers 429 past the key's limit.
func TestWithoutUsagePlans(t *testing.T) {
	if testing.Short() {
		t.Skip("the stand-in synthesizes and runs the whole stack; not in -short")
	}
	_, s, logs, _ := startVariant(t, 3*time.Minute, "np", map[string]string{"customer": "noplans", "usagePlans": "false", "keyLimit": "20"})
	if n := len(s.Template.OfType("AWS::ApiGateway::UsagePlan")); n != 0 {
		t.Fatalf("%d usage plans in a stack without them", n)
	}
	c := clientFrom("127.0.0.9")
	ok := 0
	// The limiter's windows are fixed minutes: a run that crosses into the
	// next one may take a second window's 20 before its refusal.
	firstWindow := time.Now().Truncate(time.Minute)
	for i := 0; i < 60; i++ {
		resp, body := get(t, c, s.URL+"/libraries", "dlk_demo_no_recordings")
		switch {
		case resp.StatusCode == 200:
			ok++
		case resp.StatusCode == http.StatusTooManyRequests && gatewayMade(resp):
			t.Fatalf("request %d: the gateway throttled a key with no usage plan: %s", i+1, body)
		case resp.StatusCode == http.StatusTooManyRequests:
			crossed := time.Now().Truncate(time.Minute).After(firstWindow)
			if ok != 20 && (!crossed || ok < 20 || ok > 40) {
				t.Errorf("the function refused request %d after %d answers, want 20 (keyLimit; up to 40 across a window's end: %v)", i+1, ok, crossed)
			}
			rateLimited(t, resp, body)
			for _, d := range s.Checker.Denials() {
				t.Errorf("AWS denied a function's call: %+v", d)
			}
			return
		default:
			t.Fatalf("request %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	t.Fatalf("60 requests with a limit of 20 and no 429\n%s", tail(logs.String(), 40))
}

// TestAccountHelp: a stack deployed with -c accountHelp ends its 401, 402
// and 403 answers with that sentence: the authorizer's denials (through the
// gateway's ACCESS_DENIED response) as well as the functions' own answers.
func TestAccountHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("the stand-in synthesizes and runs the whole stack; not in -short")
	}
	const help = "In the Acme console, {action}."
	_, s, _, _ := startVariant(t, 3*time.Minute, "ah", map[string]string{"customer": "help", "usagePlans": "false", "accountHelp": help})
	c := clientFrom("127.0.0.31")
	for _, tc := range []struct {
		path, key string
		status    int
		want      string
	}{
		{"/libraries", "dlk_demo_expired_key", 401, "In the Acme console, create a new API key."},
		{"/search/documents?q=reset", "dlk_demo_no_ai_credit", 402, "In the Acme console, add AI credit to the workspace."},
		{"/documents/doc_it_001/source-recordings", "dlk_demo_no_recordings", 403, "In the Acme console, create a key with recording-details access."},
	} {
		resp, body := get(t, c, s.URL+tc.path, tc.key)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) || strings.Contains(string(body), "administrator") {
			t.Errorf("GET %s with %s: %d %s; want %d ending %q", tc.path, tc.key, resp.StatusCode, body, tc.status, tc.want)
		}
	}
}

// startVariant synthesizes the stack with the CDK context given, starts its
// stand-in over dynalite with the demo data imported, and stops both when the
// test ends. ctx bounds the whole run.
func startVariant(t *testing.T, timeout time.Duration, run string, cdkContext map[string]string) (context.Context, *standin.Stack, *syncBuffer, *doclib.DataSet) {
	t.Helper()
	return startVariantOn(t, 0, timeout, run, cdkContext, nil)
}

// startVariantOn is startVariant on an account whose Lambda concurrency
// quota is quota (0: the default, 1,000), with env added to every
// function's environment (standin.Options.FunctionEnv).
func startVariantOn(t *testing.T, quota int, timeout time.Duration, run string, cdkContext, env map[string]string) (context.Context, *standin.Stack, *syncBuffer, *doclib.DataSet) {
	t.Helper()
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	a, err := standin.Synth(root, t.TempDir(), cdkContext)
	if err != nil {
		t.Fatal(err)
	}
	ctx, s, logs := startOpts(t, timeout, standin.Options{Assembly: a, Data: d, Run: run, AccountConcurrency: quota, FunctionEnv: env})
	return ctx, s, logs, d
}

// startWith starts a stand-in of an assembly over dynalite with d imported,
// and stops it when the test ends.
func startWith(t *testing.T, timeout time.Duration, run string, a *standin.Synthesized, d *doclib.DataSet) (context.Context, *standin.Stack, *syncBuffer) {
	t.Helper()
	return startOpts(t, timeout, standin.Options{Assembly: a, Data: d, Run: run})
}

// startOpts starts a stand-in with opts over dynalite (opts.DynamoDB and
// opts.Logs are set here), and stops it when the test ends.
func startOpts(t *testing.T, timeout time.Duration, opts standin.Options) (context.Context, *standin.Stack, *syncBuffer) {
	t.Helper()
	db := dynalitetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	logs := &syncBuffer{}
	opts.DynamoDB, opts.Logs = db.Endpoint, logs
	s, err := standin.Start(ctx, opts)
	if err != nil {
		t.Fatalf("stand-in: %v\n%s", err, tail(logs.String(), 60))
	}
	t.Cleanup(func() { s.Close() })
	return ctx, s, logs
}
