package lambdaemu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/aws/lambdabuild"
)

// binaries are the test functions of testdata, built as the deploy builds
// functions (lambda.norpc, trimmed, stripped) for the host.
var binaries = map[string]string{}

// leak is set in the test process's environment and must not reach a
// function.
const leak = "LAMBDAEMU_TEST_LEAK"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lambdaemu")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		for _, name := range []string{"fn", "raw"} {
			out := filepath.Join(dir, name, "bootstrap")
			if b, err := lambdabuild.Command("./testdata/"+name, out, runtime.GOARCH).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "build testdata/%s: %v\n%s", name, err, b)
				return 1
			}
			binaries[name] = out
		}
		os.Setenv(leak, "from the test process")
		// An init that overruns the limit costs the tests this, not 10 s.
		initLimit = 300 * time.Millisecond
		return m.Run()
	}()
	os.Exit(code)
}

// start makes a pool for the named test binary, closed when the test ends.
func start(t *testing.T, binary string, fn Function) *Pool {
	t.Helper()
	fn.Path = binaries[binary]
	if fn.Name == "" {
		fn.Name = "doclib-test-" + binary
	}
	p := Start(fn)
	t.Cleanup(func() { p.Close() })
	return p
}

func invoke(t *testing.T, p *Pool, event string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.Invoke(ctx, []byte(event))
	if err != nil {
		t.Fatalf("invoke %s: %v", event, err)
	}
	return res
}

// pidOf is the process that answered an echo or sleep.
func pidOf(t *testing.T, res Result) int {
	t.Helper()
	var v struct{ PID int }
	if err := json.Unmarshal(res.Payload, &v); err != nil || v.PID == 0 {
		t.Fatalf("payload %.300s: no pid (%v)", res.Payload, err)
	}
	return v.PID
}

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// errorPayload decodes Lambda's error object.
func errorPayload(t *testing.T, res Result) errorObject {
	t.Helper()
	if res.FunctionError != "Unhandled" {
		t.Fatalf("FunctionError %q, payload %.300s: want Unhandled", res.FunctionError, res.Payload)
	}
	var e errorObject
	if err := json.Unmarshal(res.Payload, &e); err != nil {
		t.Fatalf("error payload %.300s: %v", res.Payload, err)
	}
	return e
}

// syncBuffer is a log writer the instances and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEchoAndEnvironment: the payload reaches the function as sent, the
// function gets Lambda's reserved variables (over the template's), the
// template's own variables, and nothing else of the test process's
// environment.
func TestEchoAndEnvironment(t *testing.T) {
	var calls atomic.Int32
	logs := &syncBuffer{}
	fn := Function{
		Name: "doclib-demo-search", Timeout: 15 * time.Second, MemoryMB: 512, Region: "eu-west-1",
		Env: map[string]string{
			"DOCLIB_TABLE":  "doclib-demo",
			"SSL_CERT_FILE": "/tmp/ca.pem",
			"AWS_REGION":    "us-west-2",     // reserved: Lambda's value wins
			"TZ":            "Europe/Berlin", // reserved too
		},
		Credentials: func() (string, string, string) {
			n := calls.Add(1)
			return fmt.Sprintf("ASIA%d", n), "secret", "token"
		},
		LogFormat: "JSON", Logs: logs,
	}
	if err := fn.Validate(); err == nil || !strings.Contains(err.Error(), "Reserved keys used in this request: AWS_REGION, TZ") {
		t.Errorf("Validate: %v, want the reserved keys AWS_REGION and TZ refused as CreateFunction does", err)
	}
	p := start(t, "fn", fn)
	res := invoke(t, p, `{"op":"echo","data":{"q":"ünïcode","n":[1,2]}}`)
	if res.FunctionError != "" || !res.Cold || res.Instance != 1 {
		t.Fatalf("first invoke: %+v, want a cold success on instance 1", res)
	}
	var got struct {
		Data       json.RawMessage
		Env        map[string]string
		PID        int
		CWD        string
		RequestID  string
		ARN        string
		DeadlineMs int64
	}
	if err := json.Unmarshal(res.Payload, &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != `{"q":"ünïcode","n":[1,2]}` {
		t.Errorf("event data %s, want it as sent", got.Data)
	}
	dir := filepath.Dir(binaries["fn"])
	want := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME":        "doclib-demo-search",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/doclib-demo-search",
		"AWS_LAMBDA_LOG_FORMAT":           "JSON",
		"AWS_REGION":                      "eu-west-1",
		"AWS_DEFAULT_REGION":              "eu-west-1",
		"AWS_ACCESS_KEY_ID":               "ASIA1",
		"AWS_SECRET_ACCESS_KEY":           "secret",
		"AWS_SESSION_TOKEN":               "token",
		"_HANDLER":                        "bootstrap",
		"LAMBDA_TASK_ROOT":                dir,
		"LAMBDA_RUNTIME_DIR":              "/var/runtime",
		"TZ":                              ":UTC",
		"LANG":                            "en_US.UTF-8",
		"DOCLIB_TABLE":                    "doclib-demo",
		"SSL_CERT_FILE":                   "/tmp/ca.pem",
		"PATH":                            os.Getenv("PATH"),
	}
	for k, v := range want {
		if got.Env[k] != v {
			t.Errorf("%s=%q, want %q", k, got.Env[k], v)
		}
	}
	if !regexp.MustCompile(`^127\.0\.0\.1:\d+$`).MatchString(got.Env["AWS_LAMBDA_RUNTIME_API"]) {
		t.Errorf("AWS_LAMBDA_RUNTIME_API=%q, want the instance's endpoint on 127.0.0.1", got.Env["AWS_LAMBDA_RUNTIME_API"])
	}
	if !regexp.MustCompile(`^\d{4}/\d\d/\d\d/\[\$LATEST\][0-9a-f]{32}$`).MatchString(got.Env["AWS_LAMBDA_LOG_STREAM_NAME"]) {
		t.Errorf("AWS_LAMBDA_LOG_STREAM_NAME=%q", got.Env["AWS_LAMBDA_LOG_STREAM_NAME"])
	}
	// Everything else is the runtime's own doing: aws-lambda-go sets the
	// trace ID from each event. AWS_EXECUTION_ENV is not set for OS-only
	// runtimes; the test process's variables (HOME, GOFLAGS, the leak
	// sentinel) must not be there.
	for k := range got.Env {
		if _, ok := want[k]; !ok && k != "AWS_LAMBDA_RUNTIME_API" && k != "AWS_LAMBDA_LOG_STREAM_NAME" && k != "_X_AMZN_TRACE_ID" && k != "TMPDIR" {
			t.Errorf("unexpected variable %s=%q in the function's environment", k, got.Env[k])
		}
	}
	if got.CWD != dir {
		t.Errorf("working directory %s, want the code's directory %s", got.CWD, dir)
	}
	if got.ARN != "arn:aws:lambda:eu-west-1:123456789012:function:doclib-demo-search" {
		t.Errorf("invoked ARN %s", got.ARN)
	}
	if left := time.Until(time.UnixMilli(got.DeadlineMs)); left < 14*time.Second || left > 15*time.Second {
		t.Errorf("deadline %s away, want the function's 15 s timeout from the invoke", left)
	}

	again := invoke(t, p, `{"op":"echo"}`)
	var got2 struct {
		PID       int
		RequestID string
	}
	if err := json.Unmarshal(again.Payload, &got2); err != nil {
		t.Fatal(err)
	}
	if again.Cold || again.Instance != 1 || got2.PID != got.PID {
		t.Errorf("second invoke %+v pid %d, want the warm instance 1, pid %d", again, got2.PID, got.PID)
	}
	if got2.RequestID == got.RequestID || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(got2.RequestID) {
		t.Errorf("request IDs %s then %s, want two UUIDs", got.RequestID, got2.RequestID)
	}
	if calls.Load() != 1 {
		t.Errorf("credentials asked %d times, want once per instance", calls.Load())
	}
	out := logs.String()
	for _, line := range []string{"doclib-demo-search[1] init done\n", "doclib-demo-search[1] START RequestId: " + got.RequestID, "doclib-demo-search[1] REPORT RequestId: " + got.RequestID} {
		if !strings.Contains(out, line) {
			t.Errorf("logs lack %q:\n%s", line, out)
		}
	}
}

// TestInvokeRefusesWhatLambdaRefuses: events over 6 MB or not JSON are
// refused before any instance starts.
func TestInvokeRefusesWhatLambdaRefuses(t *testing.T) {
	p := start(t, "fn", Function{})
	big := append([]byte(`"`), bytes.Repeat([]byte("x"), MaxRequestSize)...)
	if _, err := p.Invoke(context.Background(), append(big, '"')); !errors.Is(err, ErrRequestTooLarge) {
		t.Errorf("oversized event: %v, want ErrRequestTooLarge", err)
	}
	if _, err := p.Invoke(context.Background(), []byte(`{"op":`)); !errors.Is(err, ErrInvalidRequestContent) {
		t.Errorf("broken JSON: %v, want ErrInvalidRequestContent", err)
	}
	if n := len(p.ColdStarts()); n != 0 {
		t.Errorf("%d instances started for refused invokes", n)
	}
}

// TestConcurrency: parallel invokes start one instance each up to
// MaxConcurrency; beyond it they wait and reuse; a caller that cannot wait
// gets TooManyRequests.
func TestConcurrency(t *testing.T) {
	p := start(t, "fn", Function{MaxConcurrency: 3, Timeout: 10 * time.Second})
	var wg sync.WaitGroup
	results := make([]Result, 5)
	for i := range results {
		wg.Go(func() { results[i] = invoke(t, p, `{"op":"sleep","ms":400}`) })
	}
	wg.Wait()
	instances := map[int]bool{}
	cold := 0
	for _, r := range results {
		instances[r.Instance] = true
		if r.Cold {
			cold++
		}
	}
	if len(instances) != 3 || cold != 3 {
		t.Errorf("5 parallel invokes, at most 3 at once: %d instances, %d cold, want 3 and 3", len(instances), cold)
	}
	// Sequential invokes reuse the warm instances.
	for range 3 {
		if r := invoke(t, p, `{"op":"sleep","ms":1}`); r.Cold || r.Instance > 3 {
			t.Errorf("sequential invoke %+v, want a warm instance", r)
		}
	}
	if n := len(p.ColdStarts()); n != 3 {
		t.Errorf("%d process starts, want 3", n)
	}

	one := start(t, "fn", Function{MaxConcurrency: 1})
	busy := make(chan Result)
	go func() { busy <- invoke(t, one, `{"op":"sleep","ms":800}`) }()
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := one.Invoke(ctx, []byte(`{"op":"echo"}`)); !errors.Is(err, ErrTooManyRequests) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("invoke while the only instance is busy: %v, want TooManyRequests", err)
	}
	if r := <-busy; r.FunctionError != "" {
		t.Errorf("busy invoke: %s", r.Payload)
	}
}

// TestTimeout: an invoke that overruns the timeout gets Lambda's timeout
// error, its process is killed, and the next invoke initialises a new one.
func TestTimeout(t *testing.T) {
	p := start(t, "fn", Function{Timeout: time.Second})
	pid := pidOf(t, invoke(t, p, `{"op":"sleep","ms":1}`))
	began := time.Now()
	res := invoke(t, p, `{"op":"hang"}`)
	if took := time.Since(began); took < time.Second || took > 3*time.Second {
		t.Errorf("the timed-out invoke took %s, want about the 1 s timeout", took)
	}
	e := errorPayload(t, res)
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z [0-9a-f-]{36} Task timed out after 1\.\d\d seconds$`).MatchString(e.ErrorMessage) || e.ErrorType != "" {
		t.Errorf("timeout payload %s, want Lambda's <time> <request id> Task timed out after 1.xx seconds", res.Payload)
	}
	if alive(pid) {
		t.Errorf("process %d still runs after the timeout", pid)
	}
	next := invoke(t, p, `{"op":"sleep","ms":1}`)
	if !next.Cold || next.Instance != res.Instance || pidOf(t, next) == pid {
		t.Errorf("invoke after a timeout: %+v, want a cold start of the reset instance", next)
	}
	cs := p.ColdStarts()
	if len(cs) != 2 || cs[0].InInvoke || !cs[1].InInvoke {
		t.Errorf("cold starts %+v, want the first init and a re-init inside the next invoke", cs)
	}
}

// TestInitFailure: an init that exits, or posts init/error, fails the
// invoke with that error after Lambda's one retry inside the invoke.
func TestInitFailure(t *testing.T) {
	logs := &syncBuffer{}
	p := start(t, "fn", Function{Env: map[string]string{"INIT_MODE": "exit"}, Logs: logs})
	res := invoke(t, p, `{"op":"echo"}`)
	e := errorPayload(t, res)
	if e.ErrorType != "Runtime.ExitError" || !regexp.MustCompile(`^RequestId: [0-9a-f-]{36} Error: Runtime exited with error: exit status 1$`).MatchString(e.ErrorMessage) || !res.Cold {
		t.Errorf("init exits: %+v %s, want a cold Runtime.ExitError", res, res.Payload)
	}
	cs := p.ColdStarts()
	if len(cs) != 2 || cs[0].InInvoke || !cs[1].InInvoke || cs[0].Error != "Runtime.ExitError" || cs[1].Error != "Runtime.ExitError" || cs[0].Init != 0 {
		t.Errorf("cold starts %+v, want a failed init and a failed retry inside the invoke", cs)
	}
	if !strings.Contains(logs.String(), "doclib-test-fn[1] init: no configuration, giving up") {
		t.Errorf("the process's stderr is not in the logs:\n%s", logs.String())
	}

	posted := start(t, "fn", Function{Env: map[string]string{"INIT_MODE": "post"}})
	began := time.Now()
	res = invoke(t, posted, `{"op":"echo"}`)
	if e := errorPayload(t, res); e.ErrorType != "ConfigError" || e.ErrorMessage != "no table configured" {
		t.Errorf("init/error: payload %s, want the posted error", res.Payload)
	}
	if time.Since(began) > 2*time.Second {
		t.Errorf("init/error took %s: the emulator must stop the process, not wait for it", time.Since(began))
	}
	if cs := posted.ColdStarts(); len(cs) != 2 || cs[1].Error != "Runtime.ConfigError" {
		t.Errorf("cold starts %+v, want the posted type", cs)
	}

	missing := Start(Function{Name: "doclib-test-missing", Path: filepath.Join(t.TempDir(), "bootstrap")})
	defer missing.Close()
	if e := errorPayload(t, invoke(t, missing, `{}`)); e.ErrorType != "Runtime.InvalidEntrypoint" {
		t.Errorf("no binary: %+v, want Runtime.InvalidEntrypoint", e)
	}
}

// TestSlowInit: an init over InitLimit is stopped and retried inside the
// invoke, where it shares the function's timeout.
func TestSlowInit(t *testing.T) {
	p := start(t, "fn", Function{Timeout: 2 * time.Second, Env: map[string]string{"INIT_MODE": "slow", "INIT_SLEEP": "600ms"}})
	res := invoke(t, p, `{"op":"sleep","ms":1}`)
	if res.FunctionError != "" || !res.Cold {
		t.Fatalf("slow init within the timeout: %+v %s, want a cold success", res, res.Payload)
	}
	cs := p.ColdStarts()
	if len(cs) != 2 || cs[0].Error != "Sandbox.Timedout" || !cs[1].InInvoke || cs[1].Init < 600*time.Millisecond || cs[1].FirstAnswer < cs[1].Init {
		t.Errorf("cold starts %+v, want the init stopped at the limit, then retried inside the invoke", cs)
	}

	stuck := start(t, "fn", Function{Timeout: time.Second, Env: map[string]string{"INIT_MODE": "slow", "INIT_SLEEP": "1h"}})
	e := errorPayload(t, invoke(t, stuck, `{"op":"sleep","ms":1}`))
	if !strings.Contains(e.ErrorMessage, "Task timed out after 1.") {
		t.Errorf("init longer than the timeout: %+v, want the timeout error", e)
	}
}

// TestFunctionErrors: an error returned by the handler is passed on as the
// runtime posted it and the instance stays warm; a crash mid-invoke or a
// panic resets the instance.
func TestFunctionErrors(t *testing.T) {
	p := start(t, "fn", Function{})
	pid := pidOf(t, invoke(t, p, `{"op":"sleep","ms":1}`))

	res := invoke(t, p, `{"op":"error"}`)
	if string(res.Payload) != `{"errorMessage":"boom","errorType":"errorString"}` || res.FunctionError != "Unhandled" {
		t.Errorf("handler error: %s (%q), want aws-lambda-go's error object, Unhandled", res.Payload, res.FunctionError)
	}
	if r := invoke(t, p, `{"op":"sleep","ms":1}`); r.Cold || pidOf(t, r) != pid {
		t.Errorf("after a handler error: %+v, want the same warm process", r)
	}

	res = invoke(t, p, `{"op":"crash"}`)
	e := errorPayload(t, res)
	if e.ErrorType != "Runtime.ExitError" || !strings.HasSuffix(e.ErrorMessage, "Error: Runtime exited with error: exit status 3") {
		t.Errorf("crash: %s, want Runtime.ExitError with exit status 3", res.Payload)
	}
	after := invoke(t, p, `{"op":"sleep","ms":1}`)
	if !after.Cold || pidOf(t, after) == pid {
		t.Errorf("after a crash: %+v, want a new process", after)
	}

	res = invoke(t, p, `{"op":"panic"}`)
	if e := errorPayload(t, res); e.ErrorType != "string" || e.ErrorMessage != "kaboom" {
		t.Errorf("panic: %s, want the panic as aws-lambda-go reports it", res.Payload)
	}
	if r := invoke(t, p, `{"op":"sleep","ms":1}`); !r.Cold {
		t.Errorf("after a panic (the runtime exits): %+v, want a cold start", r)
	}
}

// TestResponseSize: a response of MaxResponseSize bytes passes; one byte
// more is Function.ResponseSizeTooLarge, and the runtime is told 413.
func TestResponseSize(t *testing.T) {
	p := start(t, "fn", Function{})
	res := invoke(t, p, fmt.Sprintf(`{"op":"big","size":%d}`, MaxResponseSize))
	if res.FunctionError != "" || len(res.Payload) != MaxResponseSize {
		t.Errorf("response of %d bytes: %d bytes, error %q", MaxResponseSize, len(res.Payload), res.FunctionError)
	}
	res = invoke(t, p, fmt.Sprintf(`{"op":"big","size":%d}`, MaxResponseSize+1))
	e := errorPayload(t, res)
	want := fmt.Sprintf("Response payload size (%d bytes) exceeded maximum allowed payload size (%d bytes).", MaxResponseSize+1, MaxResponseSize)
	if e.ErrorType != "Function.ResponseSizeTooLarge" || e.ErrorMessage != want {
		t.Errorf("oversized response: %+v, want Function.ResponseSizeTooLarge: %s", e, want)
	}
	// aws-lambda-go takes the Runtime API's 413 as fatal and exits, so on
	// Lambda too the next invoke is a cold start.
	if r := invoke(t, p, `{"op":"sleep","ms":1}`); !r.Cold || r.FunctionError != "" {
		t.Errorf("after an oversized response: %+v, want a cold start of a new process", r)
	}
}

// TestRuntimeAPI: the headers of an event, and the requests the Runtime API
// refuses: init/error after the init, a response for another ID, a second
// next before answering, and a second answer.
func TestRuntimeAPI(t *testing.T) {
	p := start(t, "raw", Function{Name: "doclib-test-raw", Timeout: 5 * time.Second})
	res := invoke(t, p, `{"hello":"world"}`)
	var first struct {
		Headers map[string][]string
		Payload string
		Codes   map[string]int
	}
	if err := json.Unmarshal(res.Payload, &first); err != nil {
		t.Fatalf("%s: %v", res.Payload, err)
	}
	h := func(k string) string { return strings.Join(first.Headers[k], ",") }
	if first.Payload != `{"hello":"world"}` || h("Content-Type") != "application/json" {
		t.Errorf("event %q as %q", first.Payload, h("Content-Type"))
	}
	if h("Lambda-Runtime-Invoked-Function-Arn") != "arn:aws:lambda:us-east-1:123456789012:function:doclib-test-raw" {
		t.Errorf("ARN header %q", h("Lambda-Runtime-Invoked-Function-Arn"))
	}
	if !regexp.MustCompile(`^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$`).MatchString(h("Lambda-Runtime-Trace-Id")) {
		t.Errorf("trace header %q", h("Lambda-Runtime-Trace-Id"))
	}
	if !regexp.MustCompile(`^\d{13}$`).MatchString(h("Lambda-Runtime-Deadline-Ms")) || h("Lambda-Runtime-Aws-Request-Id") == "" {
		t.Errorf("deadline %q, request ID %q", h("Lambda-Runtime-Deadline-Ms"), h("Lambda-Runtime-Aws-Request-Id"))
	}
	wantCodes := map[string]int{"initErrorAfterNext": 403, "wrongID": 400, "nextWhileUnanswered": 403}
	for k, v := range wantCodes {
		if first.Codes[k] != v {
			t.Errorf("%s: status %d, want %d", k, first.Codes[k], v)
		}
	}
	var second map[string]int
	res = invoke(t, p, `{}`)
	if err := json.Unmarshal(res.Payload, &second); err != nil {
		t.Fatalf("%s: %v", res.Payload, err)
	}
	for k, v := range map[string]int{"firstResponse": 202, "answerTwice": 400, "errorForOldID": 400} {
		if second[k] != v {
			t.Errorf("%s: status %d, want %d", k, second[k], v)
		}
	}
}

// TestColdStarts: each process start is recorded with its init and first
// answer, in order.
func TestColdStarts(t *testing.T) {
	p := start(t, "fn", Function{MaxConcurrency: 2})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { invoke(t, p, `{"op":"sleep","ms":200}`) })
	}
	wg.Wait()
	cs := p.ColdStarts()
	if len(cs) != 2 {
		t.Fatalf("cold starts %+v, want 2", cs)
	}
	got := []int{cs[0].Instance, cs[1].Instance}
	slices.Sort(got)
	if !slices.Equal(got, []int{1, 2}) {
		t.Errorf("instances %v, want 1 and 2", got)
	}
	for _, c := range cs {
		if c.Init <= 0 || c.FirstAnswer < c.Init+200*time.Millisecond || c.InInvoke || c.Error != "" {
			t.Errorf("cold start %+v: want init > 0 and the first answer after the 200 ms handler", c)
		}
		t.Logf("instance %d: init %s, first answer %s", c.Instance, c.Init, c.FirstAnswer)
	}
}

// TestDuration: an invoke's Duration is its handler's time, without the
// init that came before it. Checked against the invoke as the caller timed
// it, which holds both: no bound on how slow the machine is. The init sleeps
// under the tests' 300 ms InitLimit; on a busy machine the process start can
// still push it over, and Lambda's retry inside the invoke is then the init
// that counts, so the last cold start is the one checked.
func TestDuration(t *testing.T) {
	p := start(t, "fn", Function{Timeout: 5 * time.Second, Env: map[string]string{"INIT_MODE": "slow", "INIT_SLEEP": "100ms"}})
	begin := time.Now()
	res := invoke(t, p, `{"op":"sleep","ms":200}`)
	wall := time.Since(begin)
	cs := p.ColdStarts()
	if res.FunctionError != "" || !res.Cold || len(cs) == 0 || cs[len(cs)-1].Init < 100*time.Millisecond {
		t.Fatalf("invoke %+v, cold starts %+v: want a cold start whose init took 100 ms or more", res, cs)
	}
	last := cs[len(cs)-1]
	if res.Duration < 200*time.Millisecond || res.Duration+last.Init > wall {
		t.Errorf("Duration %s, init %s, the invoke took %s: want the 200 ms handler and not the init", res.Duration, last.Init, wall)
	}
	warm := invoke(t, p, `{"op":"sleep","ms":50}`)
	if warm.Cold || warm.Duration < 50*time.Millisecond {
		t.Errorf("a warm invoke's Duration %s, want the 50 ms handler", warm.Duration)
	}
}

// TestClose: Close stops every process, and the pool refuses invokes after.
func TestClose(t *testing.T) {
	p := Start(Function{Name: "doclib-test-close", Path: binaries["fn"], MaxConcurrency: 2})
	pid := pidOf(t, invoke(t, p, `{"op":"sleep","ms":1}`))
	pending := make(chan error, 1)
	go func() {
		_, err := p.Invoke(context.Background(), []byte(`{"op":"hang"}`))
		pending <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-pending; !errors.Is(err, ErrClosed) {
		t.Errorf("invoke in flight at Close: %v, want ErrClosed", err)
	}
	if alive(pid) {
		t.Errorf("process %d outlived Close", pid)
	}
	if _, err := p.Invoke(context.Background(), []byte(`{}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("invoke after Close: %v, want ErrClosed", err)
	}
}

// TestMaxMemoryUsed: the REPORT line and the result give the process's peak
// resident memory, as Lambda's "Max Memory Used" does, and it grows with
// what the function holds.
func TestMaxMemoryUsed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the peak resident memory is read from /proc")
	}
	var logs syncBuffer
	p := start(t, "fn", Function{Logs: &logs})
	before := invoke(t, p, `{"op":"sleep","ms":1}`)
	if before.MaxMemoryMB <= 0 {
		t.Fatalf("MaxMemoryMB %d after an invoke; want the process's peak", before.MaxMemoryMB)
	}
	after := invoke(t, p, `{"op":"hold","size":64}`)
	if after.MaxMemoryMB < before.MaxMemoryMB+64 {
		t.Errorf("after holding 64 MiB the peak is %d MiB, was %d", after.MaxMemoryMB, before.MaxMemoryMB)
	}
	if want := fmt.Sprintf("Max Memory Used: %d MB", after.MaxMemoryMB); !strings.Contains(logs.String(), want) {
		t.Errorf("no REPORT line with %q in:\n%s", want, logs.String())
	}
}
