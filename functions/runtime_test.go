// Package functions_test builds every Lambda function as the deploy does and
// as a host binary, and runs each host binary against a Lambda Runtime API
// server inside the test: it must start, fetch an event from the sample events
// in events/, and post the right answer.
package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/aws/lambdabuild"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/settings"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalitetest.Stop()
	os.Exit(code)
}

// build compiles ./functions/<name> into dir for goos/goarch with the
// deploy's command line (goos is linux but for a run on another host) and
// returns the binary's path.
func build(t testing.TB, name, dir, goos, goarch string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := lambdabuild.Command("./"+name, out, goarch)
	cmd.Env = append(cmd.Env, "GOOS="+goos) // the last value of a name wins
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s for %s/%s: %v\n%s", name, goos, goarch, err, b)
	}
	return out
}

// TestBuildForLambda builds every function as the stack deploys it:
// linux/arm64, static, stripped.
func TestBuildForLambda(t *testing.T) {
	dir := t.TempDir()
	for _, name := range lambdaapp.Functions {
		path := build(t, name, dir, "linux", "arm64")
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f MiB for linux/arm64", name, float64(fi.Size())/(1<<20))
	}
}

// runtimeAPI is a minimal Lambda Runtime API (2018-06-01): it hands out one
// event and records the function's answer.
type runtimeAPI struct {
	event    []byte
	mu       sync.Mutex
	answer   []byte
	ctype    string // the answer's Content-Type
	failed   []byte
	answered chan struct{}
	served   bool
}

func (r *runtimeAPI) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	const prefix = "/2018-06-01/runtime/"
	path := strings.TrimPrefix(req.URL.Path, prefix)
	body, _ := io.ReadAll(req.Body)
	switch {
	case req.Method == "GET" && path == "invocation/next":
		r.mu.Lock()
		first := !r.served
		r.served = true
		r.mu.Unlock()
		if !first { // one event per test: hold the function until it is killed
			<-req.Context().Done()
			return
		}
		w.Header().Set("Lambda-Runtime-Aws-Request-Id", "8476a536-e9f4-11e8-9739-2dfe598c3fcd")
		w.Header().Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(60*time.Second).UnixMilli()))
		w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:doclib-test")
		w.Header().Set("Lambda-Runtime-Trace-Id", "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1")
		w.Header().Set("Content-Type", "application/json")
		w.Write(r.event)
	case req.Method == "POST" && strings.HasSuffix(path, "/response"):
		r.mu.Lock()
		r.answer, r.ctype = body, req.Header.Get("Content-Type")
		r.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		close(r.answered)
	case req.Method == "POST" && (strings.HasSuffix(path, "/error") || path == "init/error"):
		r.mu.Lock()
		r.failed = body
		r.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		close(r.answered)
	default:
		http.Error(w, "unknown runtime API call", http.StatusNotFound)
	}
}

// TestFunctionsStartAndAnswerAnEvent runs each function's host build with
// AWS_LAMBDA_RUNTIME_API set, against dynalite holding the demo data and a
// fake OpenSearch cluster, with one sample event each.
func TestFunctionsStartAndAnswerAnEvent(t *testing.T) {
	srv := dynalitetest.Start(t)
	table := srv.TableName(t)
	tbl := &dynamo.Table{Client: srv.Client(t), Name: table}
	ctx := context.Background()
	if err := tbl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Import(ctx, d, "demo", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// The index as doclib-admin reindex leaves it, with the embedder the
	// functions are given.
	cluster := fakeopensearch.Start(t)
	hashing, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	backend, err := opensearch.New(opensearch.Config{URL: cluster.URL, Dimensions: hashing.Dimensions(), Embedder: hashing.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backend.ReindexData(ctx, d, hashing, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := []string{
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"AWS_ENDPOINT_URL_DYNAMODB=" + srv.Endpoint,
		settings.EnvTable + "=" + table,
		settings.EnvCustomer + "=demo",
		settings.EnvOpenSearchURL + "=" + cluster.URL,
		settings.EnvEmbedder + "=hash", // Bedrock cannot run here; the wiring is the same
		"AWS_LAMBDA_FUNCTION_NAME=doclib-test", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
	}
	cases := []struct {
		function, event string
		check           func(t *testing.T, answer []byte, ctype string)
		env             []string
	}{
		{lambdaapp.FunctionLibraries, "apigw-libraries.json", proxyAnswer(200, `"lib_it"`, true), nil},
		{lambdaapp.FunctionDocuments, "apigw-document.json", proxyAnswer(200, `"edges"`, true), nil},
		{lambdaapp.FunctionSearch, "apigw-search.json", proxyAnswer(200, `"documents"`, true), nil},
		// The stack's BUFFERED integration (-c responseStreaming=false).
		{lambdaapp.FunctionDocuments, "apigw-document.json", proxyAnswer(200, `"edges"`, false),
			[]string{settings.EnvResponseTransfer + "=" + settings.TransferBuffered}},
		{lambdaapp.FunctionAuthorizer, "authorizer-allow.json", func(t *testing.T, answer []byte, _ string) {
			if !strings.Contains(string(answer), `"Effect":"Allow"`) || !strings.Contains(string(answer), `"usageIdentifierKey":"dlu`) {
				t.Errorf("authorizer answer %.400s", answer)
			}
		}, nil},
		{lambdaapp.FunctionIndexer, "dynamodb-insert-document.json", func(t *testing.T, answer []byte, _ string) {
			if strings.TrimSpace(string(answer)) != `{"batchItemFailures":[]}` && strings.TrimSpace(string(answer)) != `{"batchItemFailures":null}` {
				t.Errorf("indexer answer %s, want no failures", answer)
			}
			reqs := cluster.Requests()
			if reqs[len(reqs)-1] != "POST /_bulk" {
				t.Errorf("the indexer's last request was %q, want its bulk write", reqs[len(reqs)-1])
			}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.function+strings.Join(c.env, ","), func(t *testing.T) {
			event, err := os.ReadFile(filepath.Join("..", "events", c.event))
			if err != nil {
				t.Fatal(err)
			}
			api := &runtimeAPI{event: event, answered: make(chan struct{})}
			rt := httptest.NewServer(api)
			defer rt.Close()
			bin := build(t, c.function, dir, runtime.GOOS, runtime.GOARCH)
			cmd := exec.Command(bin)
			cmd.Env = append(append(append([]string{}, env...), c.env...), "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(rt.URL, "http://"))
			var logs strings.Builder
			cmd.Stdout, cmd.Stderr = &logs, &logs
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			select {
			case <-api.answered:
			case <-time.After(60 * time.Second):
				t.Fatalf("no answer within 60 s; logs:\n%s", logs.String())
			}
			took := time.Since(start)
			api.mu.Lock()
			answer, ctype, failed := api.answer, api.ctype, api.failed
			api.mu.Unlock()
			if failed != nil {
				t.Fatalf("the function reported an error: %s\nlogs:\n%s", failed, logs.String())
			}
			c.check(t, answer, ctype)
			t.Logf("%s: start to first answer %s", c.function, took.Round(time.Millisecond))
		})
	}
}

// proxyAnswer checks a proxy integration answer's status and body: in API
// Gateway's streaming format (a JSON prelude, eight NUL bytes, the body) or
// as one JSON document.
func proxyAnswer(status int, bodyHas string, streamed bool) func(t *testing.T, answer []byte, ctype string) {
	return func(t *testing.T, answer []byte, ctype string) {
		var resp struct {
			StatusCode        int                 `json:"statusCode"`
			MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
			Body              string              `json:"body"`
		}
		const streamType = "application/vnd.awslambda.http-integration-response"
		if streamed != (ctype == streamType) {
			t.Fatalf("answer Content-Type %q; streamed %v", ctype, streamed)
		}
		if streamed {
			prelude, body, ok := bytes.Cut(answer, make([]byte, 8))
			if !ok {
				t.Fatalf("streamed answer without the eight NUL bytes after its prelude: %.300s", answer)
			}
			answer, resp.Body = prelude, string(body)
		}
		if err := json.Unmarshal(answer, &resp); err != nil {
			t.Fatalf("answer %s: %v", answer, err)
		}
		if resp.StatusCode != status || !strings.Contains(resp.Body, bodyHas) {
			t.Errorf("status %d, body %.300s; want %d with %s", resp.StatusCode, resp.Body, status, bodyHas)
		}
		if len(resp.MultiValueHeaders["X-Ratelimit-Limit"]) != 1 || len(resp.MultiValueHeaders["X-Request-Id"]) != 1 {
			t.Errorf("headers %v: want the rate-limit headers and the request ID", resp.MultiValueHeaders)
		}
	}
}
