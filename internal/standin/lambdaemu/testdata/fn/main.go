// Command fn is lambdaemu's test function. Its event chooses what an invoke
// does ({"op": ...}); INIT_MODE in its environment chooses how its init
// goes.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type event struct {
	Op   string          `json:"op"`
	Ms   int             `json:"ms"`
	Size int             `json:"size"`
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
}

func main() {
	switch os.Getenv("INIT_MODE") {
	case "exit":
		fmt.Fprintln(os.Stderr, "init: no configuration, giving up")
		os.Exit(1)
	case "slow":
		d, _ := time.ParseDuration(os.Getenv("INIT_SLEEP"))
		time.Sleep(d)
	case "post":
		// What a runtime does when its init fails: report, then wait to be
		// stopped.
		body := `{"errorMessage":"no table configured","errorType":"ConfigError"}`
		req, _ := http.NewRequest("POST", "http://"+os.Getenv("AWS_LAMBDA_RUNTIME_API")+"/2018-06-01/runtime/init/error", strings.NewReader(body))
		req.Header.Set("Lambda-Runtime-Function-Error-Type", "Runtime.ConfigError")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		time.Sleep(time.Hour)
	}
	fmt.Println("init done")
	lambda.Start(handle)
}

// held keeps what "hold" allocated alive across invokes.
var held [][]byte

func handle(ctx context.Context, ev event) (any, error) {
	switch ev.Op {
	case "echo":
		lc, _ := lambdacontext.FromContext(ctx)
		deadline, _ := ctx.Deadline()
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		wd, _ := os.Getwd()
		return map[string]any{
			"data": ev.Data, "env": env, "pid": os.Getpid(), "cwd": wd,
			"requestId": lc.AwsRequestID, "arn": lc.InvokedFunctionArn, "deadlineMs": deadline.UnixMilli(),
		}, nil
	case "sleep":
		time.Sleep(time.Duration(ev.Ms) * time.Millisecond)
		return map[string]any{"pid": os.Getpid()}, nil
	case "error":
		return nil, errors.New("boom")
	case "panic":
		panic("kaboom")
	case "crash":
		fmt.Println("crashing")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "hold":
		// Touch Size MiB and keep it: the peak resident memory must show it.
		held = append(held, bytes.Repeat([]byte{1}, ev.Size<<20))
		return map[string]any{"held": len(held)}, nil
	case "write":
		// Size KiB to the file Name in the temporary directory, 64 KiB at
		// a time, as a program writes a file it does not know the size of.
		f, err := os.OpenFile(filepath.Join(os.TempDir(), ev.Name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		chunk := bytes.Repeat([]byte{7}, 64<<10)
		for left := ev.Size << 10; left > 0; left -= len(chunk) {
			if _, err := f.Write(chunk[:min(left, len(chunk))]); err != nil {
				return nil, err
			}
		}
		return map[string]any{"wrote": ev.Size << 10}, f.Close()
	case "ls":
		// The temporary directory's files and their sizes.
		entries, err := os.ReadDir(os.TempDir())
		if err != nil {
			return nil, err
		}
		files := map[string]int64{}
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				files[e.Name()] = info.Size()
			}
		}
		return map[string]any{"dir": os.TempDir(), "files": files}, nil
	case "big":
		return json.RawMessage(append(append([]byte{'"'}, bytes.Repeat([]byte("x"), ev.Size-2)...), '"')), nil
	case "stream", "streamfail":
		// Size bytes of "x" in API Gateway's streaming format, a chunk of
		// 64 KiB every Ms milliseconds; streamfail's reader fails after them.
		return &events.APIGatewayProxyStreamingResponse{StatusCode: 200,
			Headers: map[string]string{"Content-Type": "text/plain"},
			Body:    &slowReader{left: ev.Size, pause: time.Duration(ev.Ms) * time.Millisecond, fail: ev.Op == "streamfail"}}, nil
	}
	return nil, fmt.Errorf("unknown op %q", ev.Op)
}

// slowReader reads left bytes of "x", pausing before each chunk.
type slowReader struct {
	left  int
	pause time.Duration
	fail  bool
}

func (r *slowReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		if r.fail {
			return 0, errors.New("the disk went away")
		}
		return 0, io.EOF
	}
	time.Sleep(r.pause)
	n := min(len(p), r.left, 64<<10)
	for i := range n {
		p[i] = 'x'
	}
	r.left -= n
	return n, nil
}
