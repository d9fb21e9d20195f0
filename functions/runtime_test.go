// Package functions_test builds every Lambda function as the deploy does and
// as a host binary, and runs each host binary under the stand-in's Lambda
// (internal/standin/lambdaemu): it must start, take an event from the sample
// events in events/, and answer it rightly.
package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	"github.com/doclib/doclib/internal/standin/lambdaemu"
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
	env := map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": srv.Endpoint,
		settings.EnvTable:           table,
		settings.EnvCustomer:        "demo",
		settings.EnvOpenSearchURL:   cluster.URL,
		settings.EnvEmbedder:        "hash", // Bedrock cannot run here; the wiring is the same
	}
	cases := []struct {
		function, event string
		check           func(t *testing.T, answer []byte, ctype string)
		env             map[string]string
		streamed        bool // invoked with response streaming, as API Gateway invokes a STREAM integration
	}{
		{lambdaapp.FunctionLibraries, "apigw-libraries.json", proxyAnswer(200, `"lib_it"`, true), nil, true},
		{lambdaapp.FunctionDocuments, "apigw-document.json", proxyAnswer(200, `"edges"`, true), nil, true},
		{lambdaapp.FunctionSearch, "apigw-search.json", proxyAnswer(200, `"documents"`, true), nil, true},
		// A tools/call of search_documents posted to /mcp: the mcp function
		// has the search function's environment, and searches the same way.
		{lambdaapp.FunctionMCP, "apigw-mcp.json", proxyAnswer(200, `"hits":[{`, true), nil, true},
		// The stack's BUFFERED integration (-c responseStreaming=false).
		{lambdaapp.FunctionDocuments, "apigw-document.json", proxyAnswer(200, `"edges"`, false),
			map[string]string{settings.EnvResponseTransfer: settings.TransferBuffered}, false},
		{lambdaapp.FunctionAuthorizer, "authorizer-allow.json", func(t *testing.T, answer []byte, _ string) {
			if !strings.Contains(string(answer), `"Effect":"Allow"`) || !strings.Contains(string(answer), `"usageIdentifierKey":"dlu`) {
				t.Errorf("authorizer answer %.400s", answer)
			}
		}, nil, false},
		{lambdaapp.FunctionIndexer, "dynamodb-insert-document.json", func(t *testing.T, answer []byte, _ string) {
			if strings.TrimSpace(string(answer)) != `{"batchItemFailures":[]}` && strings.TrimSpace(string(answer)) != `{"batchItemFailures":null}` {
				t.Errorf("indexer answer %s, want no failures", answer)
			}
			reqs := cluster.Requests()
			if reqs[len(reqs)-1] != "POST /_bulk" {
				t.Errorf("the indexer's last request was %q, want its bulk write", reqs[len(reqs)-1])
			}
		}, nil, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s streamed=%v", c.function, c.streamed), func(t *testing.T) {
			event, err := os.ReadFile(filepath.Join("..", "events", c.event))
			if err != nil {
				t.Fatal(err)
			}
			fnEnv := maps.Clone(env)
			maps.Copy(fnEnv, c.env)
			logs := &syncWriter{}
			pool := lambdaemu.Start(lambdaemu.Function{Name: "doclib-test-" + c.function, Path: build(t, c.function, dir, runtime.GOOS, runtime.GOARCH),
				Env: fnEnv, Timeout: time.Minute, MemoryMB: 512, Logs: logs,
				Credentials: func() (string, string, string) { return "local", "local", "" }})
			defer pool.Close()
			start := time.Now()
			var answer []byte
			var ctype string
			// API Gateway invokes the API functions with response streaming
			// unless the stack says BUFFERED.
			if c.streamed {
				st, err := pool.InvokeStream(context.Background(), event)
				if err != nil {
					t.Fatal(err)
				}
				answer, err = io.ReadAll(st)
				st.Close()
				if err != nil {
					t.Fatalf("the function failed: %v\nlogs:\n%s", err, logs.String())
				}
				ctype = st.ContentType()
			} else {
				res, err := pool.Invoke(context.Background(), event)
				if err != nil {
					t.Fatal(err)
				}
				if res.FunctionError != "" {
					t.Fatalf("the function reported an error: %s\nlogs:\n%s", res.Payload, logs.String())
				}
				answer, ctype = res.Payload, "application/json"
			}
			c.check(t, answer, ctype)
			t.Logf("%s: start to first answer %s", c.function, time.Since(start).Round(time.Millisecond))
		})
	}
}

// syncWriter is the log the pool's instances write while the test reads it.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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
