package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runHTTP starts Run on a free loopback port and returns the URL it logged,
// a stop function that ends ctx and returns Run's error, and Run's log.
func runHTTP(t *testing.T, a *apiServer) (url string, stop func() error, logs *logBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &logBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Client: newClient(t, a.URL, keyFull), Version: "test", HTTPAddr: "127.0.0.1:0", Logger: logs.logger()})
	}()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(hang):
			t.Fatalf("Run did not return within %s of ctx ending", hang)
			return nil
		}
	}
	t.Cleanup(func() {
		stop()
		if strings.Contains(logs.String(), keyFull) {
			t.Errorf("the key is in the log:\n%s", logs)
		}
	})
	re := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1], stop, logs
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned before serving: %v\n%s", err, logs)
		default:
		}
	}
	t.Fatalf("Run never logged its URL:\n%s", logs)
	return "", nil, nil
}

func TestRunServesStreamableHTTPUntilCtxEnds(t *testing.T) {
	url, stop, logs := runHTTP(t, newAPI(t))
	ctx := context.Background()
	// The default client keeps a standalone event stream (a GET) open for
	// the whole session: shutdown must end it, not wait for it.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, toolNames) {
		t.Errorf("tools %v", names)
	}
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_document", Arguments: map[string]any{"id": "doc_it_001"}})
	if err != nil || call.IsError || !strings.Contains(text(call), "# Reset a user's password in Okta") {
		t.Fatalf("get_document over HTTP: %v %v", err, call)
	}

	if err := stop(); err != nil {
		t.Errorf("Run: %v, want nil after ctx ends", err)
	}
	// Had the open event stream held shutdown up, it would have run out its
	// grace period and said so; ending the stream lets it finish gracefully.
	if strings.Contains(logs.String(), "cut off") {
		t.Errorf("shutdown waited out its grace period: the open event stream held it up\n%s", logs)
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Error("the server still answers after shutdown")
	}
}

// A web page in a browser must not reach the tools (and the key behind them)
// of a server on the user's machine.
func TestRunRefusesBrowserPagesOfOtherSites(t *testing.T) {
	url, _, _ := runHTTP(t, newAPI(t))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	for name, headers := range map[string]map[string]string{
		"cross-site fetch": {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
		"DNS rebinding":    {"Host": "evil.example"},
	} {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		req.Host = cmp.Or(headers["Host"], req.Host)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, resp.StatusCode)
		}
	}
}

func TestRunRefusesAnAddressInUse(t *testing.T) {
	url, _, _ := runHTTP(t, newAPI(t))
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	err := Run(context.Background(), Options{Client: newClient(t, "http://127.0.0.1:1", keyFull), HTTPAddr: addr})
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Errorf("Run on a busy address: %v", err)
	}
}

// stdio connects a client to Run over a pair of pipes, as a parent process
// would over the child's stdin and stdout.
func stdio(t *testing.T, ctx context.Context, a *apiServer) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Client: newClient(t, a.URL, keyFull), Version: "test", Stdin: serverIn, Stdout: serverOut})
		serverOut.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, done
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(hang):
		t.Fatalf("Run did not return within %s", hang)
		return nil
	}
}

// hang is how long a test waits for Run to return after its end: it takes
// milliseconds, and only a hang takes minutes, however busy the machine.
const hang = 2 * time.Minute

func TestRunOverStdio(t *testing.T) {
	a := newAPI(t)
	t.Run("the client closes stdin", func(t *testing.T) {
		cs, done := stdio(t, context.Background(), a)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_libraries"})
		if err != nil || res.IsError || !strings.Contains(text(res), "lib_it") {
			t.Fatalf("list_libraries over stdio: %v %v", err, res)
		}
		cs.Close() // closes the server's stdin
		if err := wait(t, done); err != nil {
			t.Errorf("Run: %v, want nil when the client hangs up", err)
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cs, done := stdio(t, ctx, a)
		defer cs.Close()
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := wait(t, done); err != nil {
			t.Errorf("Run: %v, want nil when ctx ends", err)
		}
	})
}

func TestRunNeedsAClient(t *testing.T) {
	if err := Run(context.Background(), Options{}); err == nil {
		t.Error("Run without a client did not fail")
	}
}

// TestRunAnswersWhatCameBeforeStdinClosed: a client that writes its
// requests and closes stdin at once (a script piping a file into doclib
// mcp) gets every answer before the server ends, not just initialize's.
func TestRunAnswersWhatCameBeforeStdinClosed(t *testing.T) {
	a := newAPI(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_libraries","arguments":{}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Client: newClient(t, a.URL, keyFull), Version: "test",
			Stdin: strings.NewReader(in), Stdout: &out})
	}()
	if err := wait(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	answered := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil {
			answered[string(m.ID)] = string(m.Result)
		}
	}
	for _, id := range []string{"1", "2", "3"} {
		if _, ok := answered[id]; !ok {
			t.Errorf("request %s was not answered before the server ended; it wrote:\n%s", id, out.String())
		}
	}
	if !strings.Contains(answered["3"], "lib_it") {
		t.Errorf("list_libraries answered %s, want the libraries", answered["3"])
	}
}

// TestStdioIDsComeBackAsSent: over stdio too, an answer's id is the bytes
// of its request's id, numbers the SDK cannot hold in an int64 included;
// requests in flight at once keep theirs apart. A batch is refused with
// its own error, and the session goes on (the SDK's transport ended it).
func TestStdioIDsComeBackAsSent(t *testing.T) {
	a := newAPI(t)
	sent := []string{"9007199254740993", "1e308", "1.5", "1180591620717411303424", `"\u00e9"`, `"a\/b"`, "9007199254740992", "-0"}
	lines := []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for _, id := range sent[:6] {
		lines = append(lines, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"list_libraries","arguments":{}}}`)
	}
	lines = append(lines, `[{"jsonrpc":"2.0","id":99,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":`+sent[6]+`,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":`+sent[7]+`,"method":"ping"}`)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Client: newClient(t, a.URL, keyFull), Version: "test",
			Stdin: strings.NewReader(strings.Join(lines, "\n") + "\n"), Stdout: &out})
	}()
	if err := wait(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		at, id, _ := idOf([]byte(line))
		if id == nil || line[at[0]:at[1]] != string(id) {
			t.Fatalf("an answer without a readable id: %s", line)
		}
		got[string(id)]++
	}
	if !strings.Contains(out.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: JSON-RPC batches are not accepted`) {
		t.Errorf("a batch was not refused with -32600:\n%s", out.String())
	}
	for _, id := range append([]string{"0"}, sent...) {
		if got[id] != 1 {
			t.Errorf("id %s: answered %d times; answers:\n%s", id, got[id], out.String())
		}
	}
}
