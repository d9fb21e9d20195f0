package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	"github.com/doclib/doclib/internal/suites/demoapi"
	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
)

// syncBuffer is a buffer safe to read while run writes to it.
type syncBuffer = demoapi.SyncBuffer

var baseURL = regexp.MustCompile(`doclib read API at (http://\S+)`)

// start runs the server as main does and returns its base URL and a stop func
// that cancels it (as SIGINT does) and returns run's error.
func start(t *testing.T, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	return startWith(t, nil, args...)
}

// startWith is start with environment variables.
func startWith(t *testing.T, env map[string]string, args ...string) (string, *syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, func(k string) string { return env[k] }, out, out) }()
	// Start-up takes a second or two; only a server that never starts takes
	// minutes, however busy the machine.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if m := baseURL.FindStringSubmatch(out.String()); m != nil {
			stop := func() error { cancel(); return <-done }
			return m[1], out, stop
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("server stopped early: %v\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no base URL printed:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestServesDemoAndPrintsWorkingCurlLines(t *testing.T) {
	base, out, stop := start(t, "--addr", "127.0.0.1:0")
	banner := out.String()
	for _, k := range demo.Keys {
		if !strings.Contains(banner, k.Secret) {
			t.Errorf("banner does not list demo key %s", k.Name)
		}
	}
	// Every curl line of the banner works as printed.
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(banner))
	curl := regexp.MustCompile(`curl -s -H 'Authorization: Bearer (\S+)' '(\S+)'`)
	for sc.Scan() {
		m := curl.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		lines++
		if status, body := get(t, m[2], m[1]); status != 200 || !json.Valid(body) {
			t.Errorf("%s: %d %s", sc.Text(), status, body)
		}
	}
	if lines < 4 {
		t.Errorf("only %d curl lines in the banner:\n%s", lines, banner)
	}
	if status, _ := get(t, base+"/libraries", "dlk_demo_expired_key"); status != 401 {
		t.Errorf("expired demo key: %d", status)
	}
	if err := stop(); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if !strings.Contains(out.String(), "Stopped.") {
		t.Errorf("no shutdown message:\n%s", out)
	}
	if _, err := http.Get(base + "/libraries"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestServesDataFile(t *testing.T) {
	b, _ := json.Marshal(fixture.File())
	path := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, stop := start(t, "--addr", "127.0.0.1:0", "--data", path, "--key-limit", "2")
	defer stop()
	status, body := get(t, base+"/libraries/ops", fixture.KeyFull)
	if status != 200 || !strings.Contains(string(body), `"id":"lib_a1"`) {
		t.Fatalf("%d %s", status, body)
	}
	get(t, base+"/libraries", fixture.KeyFull)
	if status, _ := get(t, base+"/libraries", fixture.KeyFull); status != 429 {
		t.Errorf("--key-limit 2: third request %d, want 429", status)
	}
}

func TestBadDataFileExitsWithLoaderMessage(t *testing.T) {
	f := fixture.File()
	f.Edges[0].TargetDocumentID = "doc_gone"
	b, _ := json.Marshal(f)
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"--data", path, "--addr", "127.0.0.1:0"}, func(string) string { return "" }, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `targetDocumentId "doc_gone" does not exist`) || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(out.String(), "doclib read API at") {
		t.Error("server started on a bad file")
	}
	err = run(context.Background(), []string{"--data", filepath.Join(t.TempDir(), "missing.json")}, func(string) string { return "" }, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no data-set file at") || strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--nope"}, {"extra"}, {"--key-limit", "0"}, {"--log-format", "xml"}, {"--rate-window", "1ms"},
		{"--search", "solr"}, {"--search", "opensearch"}, {"--reindex"}, {"--embedder", "word2vec"}, {"--embedder", "openai"},
		{"--embed-dimensions", "-1"}, {"--search-weights", "semantic=2"}, {"--semantic-threshold", "1.5"}, {"--search", "opensearch", "--opensearch-url", "http://x", "--opensearch-aws-service", "s3"}} {
		err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error (exit 2)", args, err)
		}
	}
	var help, errs bytes.Buffer
	err := run(context.Background(), []string{"--help"}, func(string) string { return "" }, &help, &errs)
	if err != nil || !strings.Contains(help.String(), "Examples:") || !strings.Contains(help.String(), "--data") || errs.Len() > 0 {
		t.Errorf("--help: %v\n%s\nstderr: %s", err, help.String(), errs.String())
	}
}

func TestPortInUse(t *testing.T) {
	base, _, stop := start(t, "--addr", "127.0.0.1:0")
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	err := run(context.Background(), []string{"--addr", addr}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cannot listen") {
		t.Errorf("second server on %s: %v", addr, err)
	}
}

// TestServesSearchWithAnHTTPEmbedder: --embedder openai embeds the data set and
// the queries through an OpenAI-compatible server, with the key from the
// environment, which never shows in the output.
func TestServesSearchWithAnHTTPEmbedder(t *testing.T) {
	const secret = "sk-test-embedding-key-0123456789"
	var calls atomic.Int32
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct{ Input []string }
		if r.Header.Get("Authorization") != "Bearer "+secret || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"unauthorised"}}`, http.StatusUnauthorized)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, text := range req.Input {
			v := []float32{0.1, 0.1, 0.1}
			if strings.Contains(strings.ToLower(text), "password") {
				v[0] = 5
			}
			data = append(data, item{i, v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer fake.Close()
	base, out, stop := startWith(t, map[string]string{"DOCLIB_EMBED_API_KEY": secret},
		"--addr", "127.0.0.1:0", "--embedder", "openai", "--embed-url", fake.URL+"/v1", "--embed-model", "fake")
	defer stop()
	status, body := get(t, base+"/search/documents?q=forgotten%20password", "dlk_demo_full_scope")
	if status != 200 || !strings.Contains(string(body), `"semantic"`) {
		t.Fatalf("search through the HTTP embedder: %d %.300s", status, body)
	}
	if calls.Load() < 2 || !strings.Contains(out.String(), "openai/fake") {
		t.Errorf("%d calls to the embedder; banner:\n%s", calls.Load(), out)
	}
	if strings.Contains(out.String(), secret) {
		t.Error("the embedding API key was printed")
	}
}

// TestServesSearchFromOpenSearch: --search opensearch loads the served data
// into a new index behind the alias and answers searches from the cluster.
func TestServesSearchFromOpenSearch(t *testing.T) {
	cluster := fakeopensearch.Start(t)
	base, out, stop := start(t, "--addr", "127.0.0.1:0", "--search", "opensearch", "--opensearch-url", cluster.URL,
		"--opensearch-alias", "docs")
	defer stop()
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := cluster.Indexed("docs"); len(got) != len(d.Documents) {
		t.Fatalf("%d documents indexed, want the demo's %d", len(got), len(d.Documents))
	}
	if !strings.Contains(out.String(), "behind alias docs") {
		t.Errorf("banner:\n%s", out)
	}
	before := len(cluster.Requests())
	status, body := get(t, base+"/search/documents?q=reset+password", "dlk_demo_full_scope")
	if status != 200 || !strings.Contains(string(body), `"lexical"`) {
		t.Fatalf("search: %d %.300s", status, body)
	}
	if reqs := cluster.Requests()[before:]; !slices.Contains(reqs, "POST /docs/_search") {
		t.Errorf("the search did not reach the cluster: %v", reqs)
	}
	// Scope holds on the cluster: a word found in two libraries, searched with
	// a key for one of them, counts only that library's documents (the
	// service would drop an out-of-scope hit, but not its count).
	type results struct {
		MatchedTotal int `json:"matchedTotal"`
		Documents    []struct {
			Library struct{ ID string } `json:"library"`
		} `json:"documents"`
		Facets struct {
			Libraries []struct {
				ID            string `json:"id"`
				DocumentCount int    `json:"documentCount"`
			} `json:"libraries"`
		} `json:"facets"`
	}
	for _, word := range []string{"account", "report", "review", "update", "access", "request"} {
		var all, one results
		_, raw := get(t, base+"/search/documents?q="+word, "dlk_demo_full_scope")
		if err := json.Unmarshal(raw, &all); err != nil {
			t.Fatal(err)
		}
		inFinance := 0
		for _, l := range all.Facets.Libraries {
			if l.ID == "lib_finance" {
				inFinance = l.DocumentCount
			}
		}
		if inFinance == 0 || inFinance == all.MatchedTotal {
			continue
		}
		status, raw := get(t, base+"/search/documents?q="+word, "dlk_demo_one_library")
		if err := json.Unmarshal(raw, &one); status != 200 || err != nil {
			t.Fatalf("%q with the one-library key: %d %s", word, status, raw)
		}
		if one.MatchedTotal != inFinance || len(one.Facets.Libraries) != 1 || len(one.Documents) == 0 {
			t.Errorf("%q with the one-library key: matchedTotal %d (lib_finance has %d), facets %+v",
				word, one.MatchedTotal, inFinance, one.Facets.Libraries)
		}
		for _, d := range one.Documents {
			if d.Library.ID != "lib_finance" {
				t.Errorf("%q with the one-library key found a document of %s", word, d.Library.ID)
			}
		}
		return
	}
	t.Fatal("no test word is found in lib_finance and another library")
}

// TestOpenSearchIndexOfAnotherEmbedder: an existing index made with another
// embedder is refused with what to do, and --reindex rebuilds it.
func TestOpenSearchIndexOfAnotherEmbedder(t *testing.T) {
	tbl, d := importedTable(t)
	ctx := context.Background()
	cluster := fakeopensearch.Start(t)
	cluster.CreateIndex("doclib-documents-old", "doclib-documents", map[string]any{"embedder": "openai/other", "schema": 1})
	args := []string{"--addr", "127.0.0.1:0", "--store", "dynamodb", "--table", tbl.Name, "--search", "opensearch", "--opensearch-url", cluster.URL}
	err := run(ctx, args, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"openai/other"`) || !strings.Contains(err.Error(), "--reindex") {
		t.Fatalf("error %v, want one naming the other embedder and --reindex", err)
	}
	if len(cluster.Indexed("doclib-documents")) != 0 {
		t.Fatal("the refused index was written")
	}
	base, _, stop := start(t, append(args, "--reindex")...)
	defer stop()
	if got := cluster.Indexed("doclib-documents"); len(got) != len(d.Documents) {
		t.Errorf("%d documents indexed after --reindex, want %d", len(got), len(d.Documents))
	}
	if status, body := get(t, base+"/search/documents?q=reset+password", fixture.KeyFull); status != 200 || !strings.Contains(string(body), "doc_a1_1") {
		t.Errorf("search after --reindex: %d %.300s", status, body)
	}
}

// importedTable is a dynalite table holding the fixture, with the AWS
// configuration of the process pointed at it.
func importedTable(t *testing.T) (*dynamo.Table, *doclib.DataSet) {
	t.Helper()
	srv := dynalitetest.Start(t)
	tbl := &dynamo.Table{Client: srv.Client(t), Name: srv.TableName(t)}
	ctx := context.Background()
	if err := tbl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Import(ctx, d, "g", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", srv.Endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	return tbl, d
}

func TestMain(m *testing.M) {
	code := m.Run()
	dynalitetest.Stop()
	os.Exit(code)
}

// TestServesADynamoDBTable: --store dynamodb serves the same API from a table.
func TestServesADynamoDBTable(t *testing.T) {
	tbl, _ := importedTable(t)
	base, out, stop := start(t, "--addr", "127.0.0.1:0", "--store", "dynamodb", "--table", tbl.Name)
	defer stop()
	if !strings.Contains(out.String(), "DynamoDB table "+tbl.Name) {
		t.Errorf("banner:\n%s", out)
	}
	for path, want := range map[string]string{
		"/libraries":                         `"lib_a1"`,
		"/documents/doc_a1_1":                `"Reset a user's password"`,
		"/search/documents?q=reset+password": `"lexical"`,
	} {
		if status, body := get(t, base+path, fixture.KeyFull); status != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.200s", path, status, body)
		}
	}
	if code := usageExit(t, "--store", "dynamodb"); code != 2 {
		t.Errorf("--store dynamodb without --table: exit %d", code)
	}
}

func usageExit(t *testing.T, args ...string) int {
	t.Helper()
	_, err := parseFlags(args, func(string) string { return "" }, io.Discard)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 0
}

// TestIndexDir: with --index-dir the first start builds the search index
// and writes it, a restart over the same data reads it and answers the
// same, and other data is indexed again.
func TestIndexDir(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "data.json")
	write := func(f *dataset.File) {
		t.Helper()
		b, _ := json.Marshal(f)
		if err := os.WriteFile(data, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(fixture.File())
	searchOnce := func(want string) string {
		t.Helper()
		base, out, stop := start(t, "--addr", "127.0.0.1:0", "--data", data, "--index-dir", dir)
		defer stop()
		if !strings.Contains(out.String(), "Search index "+want+" "+dir) {
			t.Fatalf("want the index %s %s:\n%s", want, dir, out)
		}
		// No raw log line above the banner (issue 38: the read's own
		// "in service ... load=262ms" line stood there, and read as a
		// contradiction of the time the index line gave).
		if before, _, _ := strings.Cut(out.String(), "doclib read API at"); strings.Contains(before, "level=INFO") {
			t.Errorf("log lines above the banner:\n%s", before)
		}
		status, body := get(t, base+"/search/documents?q=password", fixture.KeyFull)
		if status != 200 {
			t.Fatalf("search: %d %s", status, body)
		}
		return string(body)
	}
	first := searchOnce("built and written to")
	if again := searchOnce("read from"); again != first {
		t.Errorf("a restart answers\n%s\nwhere the first start answered\n%s", again, first)
	}
	// Other data: built again.
	f := fixture.File()
	f.Documents[0].Title += " (changed)"
	write(f)
	searchOnce("built and written to")
	searchOnce("read from")
	// The flag is for a data set in memory with the embedded engine.
	for _, args := range [][]string{{"--index-dir", dir, "--search", "opensearch", "--opensearch-url", "http://127.0.0.1:1"},
		{"--index-dir", dir, "--store", "dynamodb", "--table", "t"}} {
		if code := usageExit(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
}
