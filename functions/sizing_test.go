package functions_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakebedrock"
	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/internal/standin/lambdaemu"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
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
// HTTP. S3 answers at S3's speed (fakes3.DefaultSpeed: a first byte of 20 ms,
// 75 MB/s per connection, 150 MB/s for the function; docs/standin.md), not
// loopback's, unless DOCLIB_SIZING_S3=loopback. Each size gets a fresh table
// and bucket. Reported per size:
//
//   - index-MB: the published index's size (as a reindex writes it);
//   - init-ms: process start to its first request for an event, which is
//     when the function is ready (a retried init's, if the first overran
//     Lambda's 10 s);
//   - cold-ms: process start to the first search's answer, what a user
//     waits after idle; cold-MB, cold-GETs and cold-ranged-GETs are what S3
//     sent for it (init and first search), from the fake's log;
//   - prefetch-wait-ms: from the second search's answer until the
//     instance's prefetch has read the cold parts, which the warm searches
//     wait for;
//   - maxmem-MB: Lambda's "Max Memory Used" after the warm searches;
//   - p50-ms, p99-ms: warm searches, one at a time, invoke to answer;
//   - engine-p50-ms, engine-p99-ms: the same searches' time inside the
//     function (lambdaemu's Duration) less the time the table's endpoint
//     and the fake Bedrock were answering it: the search backend's, with the
//     handler's own work (the floor: the figure at 1,000 documents);
//   - change-MB: what the indexer writes for a change of 100 documents (a
//     segment and the manifest);
//   - swap-ms, swap-MB, swap-maxmem-MB: the first search after that change
//     is published, which reads it before answering, what S3 sent for it,
//     and the peak memory it leaves.
//
// The sizes are DOCLIB_SIZING's (comma-separated document counts; default
// 1000). The search function's memory is 2,048 MB, or
// DOCLIB_SIZING_MEMORY_MB's: the emulator does not enforce it, but the
// function sizes its cache from it; maxmem-MB says what it used.
// From 500,000 documents dynalite keeps the table on disk, in a temporary
// folder or DOCLIB_DYNALITE_PATH's. DOCLIB_SIZING_GOGC, when set, is the
// function's GOGC, which turns off its sizing of the collector to its index
// (to compare).
//
// What a reindex writes is laid down as a reindex does (DocsFromData, then
// the writer's Publish), with the fake Bedrock's answers computed in this
// process rather than over HTTP (the same bytes: inProcessBedrock). The
// table holds what the searches read (sizing_table_test.go): every
// document's item, and the edges of the documents the searches answer,
// which a first pass of the queries names; DOCLIB_SIZING_TABLE=full imports
// the whole data set instead (nine items a document: 50 minutes at a
// million). 1,000,000 documents take about half an hour. Run:
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
	speed := fakes3.DefaultSpeed
	switch v := os.Getenv("DOCLIB_SIZING_S3"); v {
	case "", "model":
	case "loopback":
		speed = fakes3.Speed{}
	default:
		b.Fatalf("DOCLIB_SIZING_S3=%q: want model (the default) or loopback", v)
	}
	full := false
	switch v := os.Getenv("DOCLIB_SIZING_TABLE"); v {
	case "", "hits":
	case "full":
		full = true
	default:
		b.Fatalf("DOCLIB_SIZING_TABLE=%q: want hits (the default) or full", v)
	}
	if slices.Max(sizes) >= sizingOnDisk && os.Getenv(dynalitetest.EnvPath) == "" {
		// Two million items took dynalite 7 to 10 GB of memory, and the
		// machine's 23 GB ran out with the harness's and the function's:
		// the table goes on disk (LevelDB), which the page cache serves.
		b.Setenv(dynalitetest.EnvPath, b.TempDir())
	}
	bin := build(b, "search", b.TempDir(), runtime.GOOS, runtime.GOARCH)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) { benchEmbeddedTier(b, bin, n, speed, full) })
	}
}

// sizingOnDisk is the size from which the harness's dynalite keeps its
// table on disk (DOCLIB_DYNALITE_PATH) unless told where.
const sizingOnDisk = 500_000

// sizingChanged is how many documents the measured change rewrites.
const sizingChanged = 100

func benchEmbeddedTier(b *testing.B, bin string, n int, speed fakes3.Speed, fullTable bool) {
	ctx := context.Background()
	b.Logf("load average at the start (1, 5, 15 minutes): %s; S3 %+v", loadAverage(), speed)
	b.Cleanup(func() { b.Logf("load average at the end: %s", loadAverage()) })

	// The stack's services, served locally; the table's endpoint and
	// Bedrock record when they answer the function.
	db := dynalitetest.Start(b)
	table := db.TableName(b)
	s3srv := fakes3.New()
	if err := s3srv.CreateBucket("snaps", true); err != nil {
		b.Fatal(err)
	}
	s3srv.SetSpeed(speed)
	s3 := httptest.NewServer(s3srv)
	b.Cleanup(s3.Close)
	fakeBedrock := fakebedrock.New()
	tableWaits, bedrockWaits := newWaits(), newWaits()
	bedrock := httptest.NewServer(bedrockWaits.wrap(fakeBedrock))
	b.Cleanup(bedrock.Close)
	dynalite, err := url.Parse(db.Endpoint)
	if err != nil {
		b.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(dynalite)
	proxy.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
	tableProxy := httptest.NewServer(tableWaits.wrap(proxy))
	b.Cleanup(tableProxy.Close)
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
	start := time.Now()
	f := demo.Generate(demo.Options{Documents: n})
	f.Workspaces = slices.Clone(f.Workspaces)
	for i := range f.Workspaces {
		f.Workspaces[i].AICredit = 1_000_000
	}
	d, err := dataset.Validate(f)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d documents generated in %s", n, time.Since(start).Round(time.Second))

	// The index, as a reindex publishes it. First, while the table is
	// empty: its vectors are the run's peak of memory.
	ss := settings.SearchFromEnv(func(k string) string { return env[k] })
	arena := newVectorArena(b.TempDir())
	e := newFakeBedrockEmbedder(ctx, b, ss.Embedder, fakeBedrock, arena.vector)
	snaps, err := s3blobs.Connect(ctx, ss.Snapshots.Bucket)
	if err != nil {
		b.Fatal(err)
	}
	man, changed := publishIndex(ctx, b, d, e, snaps)
	arena.release()
	e.alloc = func(dims int) []float32 { return make([]float32, dims) } // the arena is gone
	indexBytes := int64(0)
	for _, s := range man.Segments {
		indexBytes += s.Bytes
	}

	// The function, as Lambda runs it, its table behind the recording
	// endpoint.
	fnEnv := map[string]string{}
	for k, v := range env {
		fnEnv[k] = v
	}
	for _, k := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"} {
		fnEnv[k] = aws[k]
	}
	fnEnv["AWS_ENDPOINT_URL_DYNAMODB"] = tableProxy.URL
	fnEnv[settings.EnvSnapshotPoll] = "1s"
	if v := os.Getenv("DOCLIB_SIZING_GOGC"); v != "" {
		// The function's own GOGC, which turns off its sizing of the
		// collector to the index (snapshot.Follower.GCHeadroom): to compare.
		fnEnv[settings.EnvGOGC] = v
	}
	logs := &syncWriter{}
	function := func(timeout time.Duration) *lambdaemu.Pool {
		logs = &syncWriter{}
		pool := lambdaemu.Start(lambdaemu.Function{Name: "doclib-sizing-search", Path: bin, Env: fnEnv,
			Timeout: timeout, MemoryMB: sizingMemoryMB(b), MaxConcurrency: 1, // the emulator does not enforce it
			Credentials: func() (string, string, string) { return "local", "local", "" },
			Logs:        logs})
		b.Cleanup(func() { _ = pool.Close() })
		return pool
	}
	event := searchEvent(b)
	ask := func(pool *lambdaemu.Pool, q string) (time.Duration, lambdaemu.Result, sizingAnswer) {
		b.Helper()
		start := time.Now()
		res, err := pool.Invoke(ctx, event(q))
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		ans, err := decodeAnswer(res.Payload)
		if err != nil || ans.status != http.StatusOK {
			b.Fatalf("search %q: %v %s\n%s", q, err, res.Payload, tail(logs.String(), 3000))
		}
		return took, res, ans
	}

	// The table, as an import writes it: whole, or what the searches read.
	t, err := dynamo.Connect(ctx, table)
	if err != nil {
		b.Fatal(err)
	}
	if err := t.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	var hits map[string]bool // the documents the searches answer (nil: the whole table)
	if fullTable {
		res, err := importAgain(ctx, b, t, d)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("the whole data set imported into dynalite in %s: %d items", time.Since(start).Round(time.Second), res.Items)
	} else {
		res, err := importAgain(ctx, b, t, tableBase(d))
		if err != nil {
			b.Fatal(err)
		}
		// A first pass of the queries, on an instance of its own and at
		// loopback's speed, names the documents they answer.
		s3srv.SetSpeed(fakes3.Speed{})
		first := function(10 * time.Minute)
		hits = map[string]bool{}
		for _, c := range changed {
			hits[c.ID] = true // the swap's search may answer the changed ones
		}
		for _, q := range sizingQueries {
			_, _, ans := ask(first, q)
			for _, id := range ans.ids {
				hits[id] = true
			}
		}
		_ = first.Close()
		s3srv.SetSpeed(speed)
		part := tableHits(d, hits)
		more, err := importAgain(ctx, b, t, part)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("the table laid down in %s: %d items for every document, then %d for the %d documents the searches answer and their %d edges",
			time.Since(start).Round(time.Second), res.Items, more.Items, len(hits), len(part.Edges))
	}

	// The first search starts the function: what a user waits after idle.
	// An init past Lambda's limit (lambdaemu.InitLimit) is retried inside
	// the invoke, as Lambda does; a size that does not answer within the
	// function's timeout is too big for the tier, and the figures say why.
	pool := function(30 * time.Second)
	tableWaits.take()
	bedrockWaits.take()
	mark := s3srv.Mark()
	coldStart := time.Now()
	res, err := pool.Invoke(ctx, event(sizingQueries[0]))
	coldTook := time.Since(coldStart)
	if err != nil {
		b.Fatal(err)
	}
	coldReads := fakes3.Count(s3srv.Since(mark))
	cold := pool.ColdStarts()
	if ans, err := decodeAnswer(res.Payload); err != nil || ans.status != http.StatusOK {
		b.Fatalf("%d documents are too many for the embedded tier: the first search did not answer within the function's timeout (init limit %s): %s after %s, %.1f MB read from S3 in %d GETs; cold starts %+v, max memory %d MB; its log:\n%s",
			n, lambdaemu.InitLimit, res.Payload, coldTook.Round(time.Millisecond), float64(coldReads.GETBytes)/1e6, coldReads.GETs, cold, res.MaxMemoryMB, tail(logs.String(), 2000))
	}
	initTook := time.Duration(0)
	for _, c := range cold {
		if c.Error == "" {
			initTook = c.Init
		} else {
			b.Logf("an init failed (%s) after %s; Lambda tried again inside the first invoke", c.Error, c.Init.Round(time.Millisecond))
		}
	}
	b.Logf("cold: %s to the first answer, %d GETs (%d ranged), %.1f MB from S3, the model's waits %s in all",
		coldTook.Round(time.Millisecond), coldReads.GETs, coldReads.RangedGETs, float64(coldReads.GETBytes)/1e6, coldReads.Wait.Round(time.Millisecond))
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "snapshot: in service") {
			b.Log(line) // how init divides between reading and folding the segments
		}
	}
	ask(pool, sizingQueries[0])
	// Warm is what the instance holds once its prefetch, begun at its first
	// answer, has read the cold parts (docs/search.md, "Read by range"):
	// the warm searches wait for it, as an instance that served its first
	// requests has. (The emulator does not freeze a process between
	// invokes, so the prefetch runs meanwhile; in Lambda it runs only while
	// requests do.)
	prefetchFrom := time.Now()
	for !strings.Contains(logs.String(), "snapshot: prefetched") && time.Since(prefetchFrom) < 2*time.Minute {
		time.Sleep(50 * time.Millisecond)
	}
	prefetchWait := time.Duration(-1)
	if strings.Contains(logs.String(), "snapshot: prefetched") {
		prefetchWait = time.Since(prefetchFrom)
		b.Logf("the prefetch read the cold parts %s after the second answer", prefetchWait.Round(time.Millisecond))
	} else if strings.Contains(logs.String(), `"opened_by_range":0`) {
		b.Log("no segment opened by range: nothing to prefetch")
	} else {
		b.Log("the prefetch did not end within 2 minutes: the warm searches read what it had not")
	}

	var took, engine []time.Duration
	var last lambdaemu.Result
	i := 0
	for b.Loop() {
		tableWaits.take()
		bedrockWaits.take()
		from := time.Now()
		wall, res, ans := ask(pool, sizingQueries[i%len(sizingQueries)])
		to := time.Now()
		waited := within(append(tableWaits.take(), bedrockWaits.take()...), from, to)
		took, engine, last, i = append(took, wall), append(engine, max(res.Duration-waited, 0)), res, i+1
		if hits != nil {
			for _, id := range ans.ids {
				if !hits[id] {
					b.Fatalf("search %q answered %s, which the first pass did not: the table holds no edges of it", sizingQueries[(i-1)%len(sizingQueries)], id)
				}
			}
		}
	}
	b.StopTimer()
	if prefetchWait >= 0 { // reported after the loop, which resets what came before it
		b.ReportMetric(float64(prefetchWait.Milliseconds()), "prefetch-wait-ms")
	}
	p50, p99 := percentiles(took)
	engine50, engine99 := percentiles(engine)

	// A change of 100 documents (new titles), as the indexer commits a
	// stream batch (a writer of its own, as the indexer is a process of its
	// own): what it writes, and the first search past the poll interval,
	// which reads it.
	w := snapshot.NewWriter(snaps, e, slog.New(slog.DiscardHandler))
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
	mark = s3srv.Mark()
	swap, swapped, ans := ask(pool, "reset password")
	swapReads := fakes3.Count(s3srv.Since(mark))
	if c := pool.ColdStarts(); len(c) != len(cold) {
		b.Fatalf("the swap restarted the function: %+v", c)
	}
	if hits != nil {
		// The change may bring documents of the first pass's queries up
		// that it did not answer: their items are in the table, not their
		// edges, which the swap reads less of. Said, not failed.
		missing := 0
		for _, id := range ans.ids {
			if !hits[id] {
				missing++
			}
		}
		if missing > 0 {
			b.Logf("the search after the change answered %d documents the first pass did not; their edges are not in the table", missing)
		}
	}

	b.ReportMetric(float64(indexBytes)/1e6, "index-MB")
	b.ReportMetric(float64(change)/1e6, "change-MB")
	b.ReportMetric(float64(initTook)/1e6, "init-ms")
	b.ReportMetric(float64(coldTook)/1e6, "cold-ms")
	b.ReportMetric(float64(coldReads.GETBytes)/1e6, "cold-MB")
	b.ReportMetric(float64(coldReads.GETs), "cold-GETs")
	b.ReportMetric(float64(coldReads.RangedGETs), "cold-ranged-GETs")
	b.ReportMetric(float64(last.MaxMemoryMB), "maxmem-MB")
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	b.ReportMetric(engine50, "engine-p50-ms")
	b.ReportMetric(engine99, "engine-p99-ms")
	b.ReportMetric(float64(swap)/1e6, "swap-ms")
	b.ReportMetric(float64(swapReads.GETBytes)/1e6, "swap-MB")
	b.ReportMetric(float64(swapped.MaxMemoryMB), "swap-maxmem-MB")
	b.ReportMetric(0, "ns/op") // the percentiles say it better
}

// publishIndex embeds d's documents with e and publishes them with the
// writer's Publish, as doclib-admin reindex does. It returns the manifest
// and sizingChanged of the documents with new titles, for the change the
// harness publishes later; the rest it lets go, with the memory they held.
func publishIndex(ctx context.Context, b *testing.B, d *doclib.DataSet, e search.Embedder, snaps snapshot.Blobs) (snapshot.Manifest, []search.IndexDoc) {
	b.Helper()
	// The heap holds the documents' texts, the segments as the writer
	// makes them and the fake S3's copies: at a million documents, the
	// collector's usual room on top (GOGC=100) would double 8 GB.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	start := time.Now()
	var docs []search.IndexDoc
	if err := search.DocsFromData(ctx, d, e, 0, func(batch []search.IndexDoc) error {
		docs = append(docs, batch...)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	embedded := time.Since(start)
	w := snapshot.NewWriter(snaps, e, slog.New(slog.DiscardHandler))
	if err := w.Publish(ctx, docs); err != nil {
		b.Fatal(err)
	}
	man, _, err := snapshot.ReadManifest(ctx, snaps, "")
	if err != nil {
		b.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	size := int64(0)
	for _, s := range man.Segments {
		size += s.Bytes
	}
	b.Logf("index of %d documents embedded in %s and published in %s: %d segments, %.1f MB (the harness's heap reached %.0f MB)",
		man.Documents, embedded.Round(time.Second), (time.Since(start) - embedded).Round(time.Second), len(man.Segments), float64(size)/1e6,
		float64(ms.HeapSys)/1e6)
	// The changed documents' vectors leave the arena for the heap.
	changed := slices.Clone(docs[:min(sizingChanged, len(docs))])
	for i := range changed {
		c := &changed[i]
		c.Title = "Changed: " + c.Title
		c.Vector = slices.Clone(c.Vector)
		c.Recordings = slices.Clone(c.Recordings)
		for j := range c.Recordings {
			c.Recordings[j].Vector = slices.Clone(c.Recordings[j].Vector)
		}
	}
	clear(docs)
	docs = nil
	debug.FreeOSMemory()
	return man, changed
}

// sizingAnswer is what the harness reads of a search's answer.
type sizingAnswer struct {
	status int
	ids    []string // the documents answered, in order
}

// decodeAnswer reads a proxy integration's answer to a search.
func decodeAnswer(payload []byte) (sizingAnswer, error) {
	var resp struct {
		StatusCode      int    `json:"statusCode"`
		Body            string `json:"body"`
		IsBase64Encoded bool   `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(payload, &resp); err != nil {
		return sizingAnswer{}, fmt.Errorf("the answer is no proxy response: %w", err)
	}
	out := sizingAnswer{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		return out, nil
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return out, fmt.Errorf("the answer's body: %w", err)
		}
	}
	var results api.SearchResults
	if err := json.Unmarshal(body, &results); err != nil {
		return out, fmt.Errorf("the answer's body is no search result: %w", err)
	}
	for _, h := range results.Documents {
		out.ids = append(out.ids, h.ID)
	}
	return out, nil
}

// percentiles are the 50th and 99th of ds, in milliseconds.
func percentiles(ds []time.Duration) (p50, p99 float64) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) float64 { return float64(s[min(len(s)-1, int(p*float64(len(s))))]) / 1e6 }
	return at(0.5), at(0.99)
}

// loadAverage is the machine's load, as /proc/loadavg gives it ("?" where
// there is none): the figures of a run say what else ran.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	return strings.Join(f[:min(3, len(f))], " ")
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

// importAgain imports d into t, and again where an import stops (dynalite,
// holding a million items in one Node process, can be slow enough on a
// busy machine for a batch to pass the SDK's deadline; an import is
// idempotent, docs/dataset.md), at most three times in all.
func importAgain(ctx context.Context, b *testing.B, t *dynamo.Table, d *doclib.DataSet) (*dynamo.ImportResult, error) {
	var res *dynamo.ImportResult
	var err error
	for try := 1; try <= 3; try++ {
		if res, err = t.Import(ctx, d, "sizing", dynamo.ImportOptions{}); err == nil {
			return res, nil
		}
		b.Logf("the table's import, try %d of 3: %v", try, err)
	}
	return res, err
}

// sizingMemoryMB is the search function's memory: the stack's default,
// 2,048 MB, or DOCLIB_SIZING_MEMORY_MB (infra/README.md advises 6,144 MB for
// a million documents). The function sizes its Go memory limit and its
// cache of cold parts from it (snapshot.Follower), which maxmem-MB shows.
func sizingMemoryMB(b *testing.B) int {
	v := os.Getenv("DOCLIB_SIZING_MEMORY_MB")
	if v == "" {
		return 2048
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 128 || n > 10240 {
		b.Fatalf("DOCLIB_SIZING_MEMORY_MB=%q: want Lambda's 128 to 10240", v)
	}
	return n
}
