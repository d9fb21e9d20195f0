package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakebedrock"
	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/internal/standin/lambdaemu"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
	"github.com/doclib/doclib/shared/wiring"
)

// sizingQueries are what the measured searches ask, in turn: words of the
// generated documents' procedures, one to five of them.
var sizingQueries = []string{
	"reset password", "vpn", "close the month", "onboard a new employee laptop",
	"invoice approval", "quarterly forecast", "rotate the certificate", "crm lead import",
	"expense report", "backup restore database", "printer", "purchase order vendor",
	"grant access to the shared drive", "payroll", "renew the contract", "mfa",
}

// BenchmarkEmbeddedTier measures the search function of the embedded tier as
// Lambda runs it: the deploy's binary (built for the host) under the runtime
// emulator, its table on dynalite, its index in a real S3-compatible server
// (gofakes3) written by the indexer's writer with 1,024-dimension Bedrock
// vectors (the fake Bedrock's), its query embeddings from the fake Bedrock over
// HTTP. Each size gets a fresh table and bucket. Reported per size:
//
//   - index-MB: the published index's size (one segment, as a reindex
//     writes it);
//   - init-ms: process start to its first request for an event, which is
//     when the segments have been read and checked;
//   - maxmem-MB: Lambda's "Max Memory Used" after the warm searches;
//   - p50-ms, p99-ms: warm searches, one at a time, invoke to answer;
//   - change-MB: what the indexer writes for a change of 100 documents (a
//     segment and the manifest);
//   - swap-ms, swap-maxmem-MB: the first search after that change is
//     published, which reads it before answering, and the peak memory it
//     leaves.
//
// The sizes are DOCLIB_SIZING's (comma-separated document counts; default
// 1000). The search function's own memory setting does not limit the
// emulator; maxmem-MB says what it must be. Importing 100,000 documents into
// dynalite takes about three minutes. Run:
//
//	DOCLIB_SIZING=1000,10000,100000 go test ./functions -run '^$' -bench EmbeddedTier -benchtime 200x -timeout 60m
func BenchmarkEmbeddedTier(b *testing.B) {
	sizes := []int{1000}
	if v := os.Getenv("DOCLIB_SIZING"); v != "" {
		sizes = sizes[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("DOCLIB_SIZING=%q: want comma-separated document counts", v)
			}
			sizes = append(sizes, n)
		}
	}
	bin := build(b, "search", b.TempDir(), runtime.GOOS, runtime.GOARCH)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) { benchEmbeddedTier(b, bin, n) })
	}
}

func benchEmbeddedTier(b *testing.B, bin string, n int) {
	ctx := context.Background()
	// The stack's services, served locally.
	db := dynalitetest.Start(b)
	table := db.TableName(b)
	s3srv := fakes3.New()
	if err := s3srv.CreateBucket("snaps", true); err != nil {
		b.Fatal(err)
	}
	s3 := httptest.NewServer(s3srv)
	b.Cleanup(s3.Close)
	bedrock := httptest.NewServer(fakebedrock.New())
	b.Cleanup(bedrock.Close)
	aws := map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
		"AWS_ENDPOINT_URL_DYNAMODB": db.Endpoint, "AWS_ENDPOINT_URL_S3": s3.URL,
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": bedrock.URL,
	}
	for k, v := range aws {
		b.Setenv(k, v)
	}
	env := map[string]string{
		settings.EnvTable: table, settings.EnvCustomer: "sizing",
		settings.EnvKeyLimit: "1000000", settings.EnvIPLimit: "1000000",
		settings.EnvSearch: "embedded", settings.EnvSnapshotBucket: "snaps",
		settings.EnvEmbedder: "bedrock", settings.EnvEmbedDimensions: "1024",
		// Invoked as a buffered integration: a streamed one's context keeps
		// the stream's time in reserve, more than this function's timeout.
		settings.EnvResponseTransfer: settings.TransferBuffered,
	}

	// The data: n generated documents with enough credit for every search.
	f := demo.Generate(demo.Options{Documents: n})
	f.Workspaces = slices.Clone(f.Workspaces)
	for i := range f.Workspaces {
		f.Workspaces[i].AICredit = 1_000_000
	}
	d, err := dataset.Validate(f)
	if err != nil {
		b.Fatal(err)
	}
	t, err := dynamo.Connect(ctx, table)
	if err != nil {
		b.Fatal(err)
	}
	if err := t.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := t.Import(ctx, d, "sizing", dynamo.ImportOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d documents imported into dynalite in %s", n, time.Since(start).Round(time.Second))

	// The index, as a reindex publishes it.
	ss := settings.SearchFromEnv(func(k string) string { return env[k] })
	e, err := wiring.Embedder(ctx, ss.Embedder)
	if err != nil {
		b.Fatal(err)
	}
	snaps, err := s3blobs.Connect(ctx, ss.Snapshots.Bucket)
	if err != nil {
		b.Fatal(err)
	}
	w := snapshot.NewWriter(snaps, e, slog.New(slog.DiscardHandler))
	start = time.Now()
	var docs []search.IndexDoc
	if err := search.DocsFromData(ctx, d, e, 0, func(batch []search.IndexDoc) error {
		docs = append(docs, batch...)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := w.Publish(ctx, docs); err != nil {
		b.Fatal(err)
	}
	man, _, err := snapshot.ReadManifest(ctx, snaps, "")
	if err != nil {
		b.Fatal(err)
	}
	indexBytes := int64(0)
	for _, s := range man.Segments {
		indexBytes += s.Bytes
	}
	b.Logf("index of %d documents embedded and published in %s: %d segments, %.1f MB", man.Documents, time.Since(start).Round(time.Second),
		len(man.Segments), float64(indexBytes)/1e6)

	// The function, as Lambda runs it.
	fnEnv := map[string]string{}
	for k, v := range env {
		fnEnv[k] = v
	}
	for _, k := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"} {
		fnEnv[k] = aws[k]
	}
	fnEnv[settings.EnvSnapshotPoll] = "1s"
	var logs strings.Builder
	pool := lambdaemu.Start(lambdaemu.Function{Name: "doclib-sizing-search", Path: bin, Env: fnEnv,
		Timeout: 30 * time.Second, MemoryMB: 2048, MaxConcurrency: 1, // the stack's default; the emulator does not enforce it
		Credentials: func() (string, string, string) { return "local", "local", "" },
		Logs:        &logs})
	b.Cleanup(func() { _ = pool.Close() })
	event := searchEvent(b)
	invoke := func(q string) (time.Duration, lambdaemu.Result) {
		b.Helper()
		start := time.Now()
		res, err := pool.Invoke(ctx, event(q))
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		var ans struct {
			StatusCode int    `json:"statusCode"`
			Body       string `json:"body"`
		}
		if json.Unmarshal(res.Payload, &ans); ans.StatusCode != 200 {
			b.Fatalf("search %q: %s\n%s", q, res.Payload, tail(logs.String(), 3000))
		}
		return took, res
	}
	// The first search starts the function. An init past Lambda's limit
	// (lambdaemu.InitLimit) is a finding, not a failure: the size is too
	// big for the tier, and the figures say why.
	if res, err := pool.Invoke(ctx, event(sizingQueries[0])); err != nil {
		b.Fatal(err)
	} else if cold := pool.ColdStarts(); len(cold) == 0 || cold[0].Error != "" {
		b.Fatalf("%d documents are too many for the embedded tier: the function did not start within Lambda's init limit (%s): cold starts %+v, max memory %d MB; its log:\n%s",
			n, lambdaemu.InitLimit, cold, res.MaxMemoryMB, tail(logs.String(), 2000))
	}
	invoke(sizingQueries[0])
	cold := pool.ColdStarts()
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "snapshot: in service") {
			b.Log(line) // how init divides between reading and folding the segments
		}
	}

	var took []time.Duration
	var last lambdaemu.Result
	i := 0
	for b.Loop() {
		d, res := invoke(sizingQueries[i%len(sizingQueries)])
		took, last, i = append(took, d), res, i+1
	}
	b.StopTimer()
	slices.Sort(took)
	pct := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))]) / 1e6
	}

	// A change of 100 documents (new titles), as the indexer commits a
	// stream batch: what it writes, and the first search past the poll
	// interval, which reads it.
	changed := slices.Clone(docs[:min(100, len(docs))])
	for i := range changed {
		changed[i].Title = "Changed: " + changed[i].Title
	}
	if err := w.Upsert(ctx, changed); err != nil {
		b.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	after, _, err := snapshot.ReadManifest(ctx, snaps, "")
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(after)
	change := int64(len(raw)) // the manifest, and the segments it names that the last one did not
	for _, s := range after.Segments {
		if !slices.Contains(man.Segments, s) {
			change += s.Bytes
		}
	}
	time.Sleep(1500 * time.Millisecond)
	swap, swapped := invoke("reset password")
	if c := pool.ColdStarts(); len(c) != 1 {
		b.Fatalf("the swap restarted the function: %+v", c)
	}

	b.ReportMetric(float64(indexBytes)/1e6, "index-MB")
	b.ReportMetric(float64(change)/1e6, "change-MB")
	b.ReportMetric(float64(cold[0].Init)/1e6, "init-ms")
	b.ReportMetric(float64(cold[0].FirstAnswer)/1e6, "first-ms")
	b.ReportMetric(float64(last.MaxMemoryMB), "maxmem-MB")
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(swap)/1e6, "swap-ms")
	b.ReportMetric(float64(swapped.MaxMemoryMB), "swap-maxmem-MB")
	b.ReportMetric(0, "ns/op") // the percentiles say it better
}

// searchEvent returns the sample API Gateway event of a search
// (events/apigw-search.json: the demo's full-scope key, as the authorizer
// passes it) with q as its query.
func searchEvent(tb testing.TB) func(q string) []byte {
	raw, err := os.ReadFile("../events/apigw-search.json")
	if err != nil {
		tb.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		tb.Fatal(err)
	}
	return func(q string) []byte {
		ev["queryStringParameters"] = map[string]string{"q": q, "pageSize": "20"}
		ev["multiValueQueryStringParameters"] = map[string][]string{"q": {q}, "pageSize": {"20"}}
		out, err := json.Marshal(ev)
		if err != nil {
			tb.Fatal(err)
		}
		return out
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
