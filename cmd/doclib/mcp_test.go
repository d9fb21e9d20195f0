package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"doclib-test","version":"0"}}}`

// TestMCPOverStdio talks MCP to `doclib mcp` over its stdin and stdout: the
// server must answer with the configuration's client and write nothing but
// MCP messages to stdout.
func TestMCPOverStdio(t *testing.T) {
	call, stop := startMCP(t, mapEnv{"DOCLIB_URL": apiSrv.URL, "DOCLIB_API_KEY": full})
	res := call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_libraries","arguments":{}}}`)
	if raw, _ := json.Marshal(res); !strings.Contains(string(raw), "lib_it") {
		t.Errorf("list_libraries did not reach the API: %s", raw)
	}
	stop()
}

// startMCP runs `doclib mcp` on pipes and completes the handshake. call
// sends one message and, for a request, returns the answer; stop closes
// stdin, as a client that goes away does, and checks the server ended
// normally.
func startMCP(t *testing.T, env mapEnv) (call func(string) map[string]any, stop func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb syncBuffer
	a := &app{getenv: env.get, stdin: inR, stdout: outW, stderr: &errb,
		userConfigDir: func() (string, error) { return t.TempDir(), nil }}
	done := make(chan int, 1)
	go func() {
		done <- a.run(context.Background(), []string{"mcp"})
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	call = func(msg string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(msg, `"id"`) {
			line, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("no answer to %s: %v\nstderr:\n%s", msg, err, errb.String())
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("stdout holds something else than an MCP message: %q", line)
			}
			return v
		}
		return nil
	}
	init := call(initialize)
	if res, _ := init["result"].(map[string]any); res == nil || res["serverInfo"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	call(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	stop = func() {
		t.Helper()
		inW.Close()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("exit %d\n%s", code, errb.String())
			}
		case <-time.After(hangTimeout):
			t.Fatal("doclib mcp did not stop when stdin closed")
		}
		noKeys(t, result{0, "", errb.String()})
	}
	return call, stop
}

// mapEnv is an environment for getenv.
type mapEnv map[string]string

func (m mapEnv) get(k string) string { return m[k] }

func TestMCPOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	a := &app{getenv: mapEnv{"DOCLIB_URL": apiSrv.URL, "DOCLIB_API_KEY": full}.get, stdout: &out, stderr: &errb,
		userConfigDir: func() (string, error) { return t.TempDir(), nil }}
	done := make(chan int, 1)
	go func() { done <- a.run(ctx, []string{"mcp", "--http", "127.0.0.1:0"}) }()
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`url=(http://\S+)`).FindStringSubmatch(errb.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no address logged:\n%s", errb.String())
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "serverInfo") {
		t.Errorf("initialize over HTTP: %d %s", resp.StatusCode, body)
	}
	cancel() // Ctrl-C: a normal end
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d\n%s", code, errb.String())
		}
	case <-time.After(hangTimeout):
		t.Fatal("doclib mcp --http did not stop")
	}
	noKeys(t, result{0, out.String(), errb.String()})
}

// TestMCPWithoutAKey starts `doclib mcp` with no key anywhere: it serves,
// lists its tools, and answers every call with how to set the key, so that
// a desktop client shows that rather than "disconnected".
func TestMCPWithoutAKey(t *testing.T) {
	call, stop := startMCP(t, mapEnv{"DOCLIB_URL": apiSrv.URL})
	list, _ := json.Marshal(call(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	for _, tool := range []string{"list_libraries", "search_documents", "get_document", "traverse_graph"} {
		if !strings.Contains(string(list), `"name":"`+tool+`"`) {
			t.Errorf("tools/list lacks %s: %s", tool, list)
		}
	}
	for _, params := range []string{`{"name":"list_libraries","arguments":{}}`, `{"name":"search_documents","arguments":{"query":"reset password"}}`,
		`{"name":"get_document","arguments":{"id":7}}`} {
		res := call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":` + params + `}`)
		r, _ := res["result"].(map[string]any)
		raw, _ := json.Marshal(res)
		if r == nil || r["isError"] != true || !strings.Contains(string(raw), `missing_api_key: `) ||
			!strings.Contains(string(raw), `\"env\": {\"DOCLIB_API_KEY\": \"YOUR_KEY\"}`) {
			t.Errorf("%s: %s", params, raw)
		}
	}
	stop()
	if r := newCLI(t, apiSrv.URL, full).run("mcp", "--json"); r.code != 2 {
		t.Errorf("%s", r)
	}
}
