package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
)

// Search benchmarks: GET /search/documents through the whole handler on
// synthetic sets of 10k and 100k documents, with the full-scope demo key (the
// libraries of ws_acme, about 83% of the documents) and the offline embedder.
// They report the index build time and heap once, and the p50 and p99 latency
// of a search over the relevance set's queries, cycled (their vectors are
// cached after the first round, as a repeated query's would be).

type freeLedger struct{}

func (freeLedger) Spend(context.Context, string) error  { return nil }
func (freeLedger) Refund(context.Context, string) error { return nil }

type searchBench struct {
	handler   http.Handler
	build     time.Duration
	heapBytes uint64
	stats     localsearch.Stats
}

var (
	searchBenchMu sync.Mutex
	searchBenches = map[int]*searchBench{}
)

func searchSetup(b *testing.B, docs int) *searchBench {
	b.Helper()
	searchBenchMu.Lock()
	defer searchBenchMu.Unlock()
	if sb := searchBenches[docs]; sb != nil {
		return sb
	}
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: docs}))
	if err != nil {
		b.Fatal(err)
	}
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	x, err := localsearch.Build(context.Background(), d, e, localsearch.Options{Fit: true}) // as doclib-server does
	if err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	searcher := &search.Searcher{Backend: search.Local{Retriever: x}, Embedder: search.Cached(x.Embedder(), 0), Rules: search.DefaultRules(x.EmbedderID())}
	svc := service.New(memory.New(d), nil, service.WithSearch(searcher, freeLedger{}))
	sb := &searchBench{handler: httpapi.NewServer(httpapi.Config{Service: svc}), build: build,
		heapBytes: after.HeapAlloc - before.HeapAlloc, stats: x.Stats()}
	searchBenches[docs] = sb
	return sb
}

func benchQueries(b *testing.B) []string {
	b.Helper()
	raw, err := os.ReadFile("../search/testdata/relevance.json")
	if err != nil {
		b.Fatal(err)
	}
	var f struct {
		Queries []struct{ Query string } `json:"queries"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		b.Fatal(err)
	}
	out := make([]string, 0, len(f.Queries)+2)
	for _, q := range f.Queries {
		out = append(out, "/search/documents?q="+url.QueryEscape(q.Query))
	}
	// A fallback and a filtered search, too.
	return append(out, "/search/documents?q=zzqx+blorf", "/search/documents?q=okta&libraryId=lib_it&tag=access")
}

func benchSearch(b *testing.B, docs int) {
	sb := searchSetup(b, docs)
	paths := benchQueries(b)
	b.Logf("index: %+v", sb.stats)
	var lat []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		req := httptest.NewRequest("GET", paths[i%len(paths)], nil)
		req.Header.Set("Authorization", "Bearer "+demo.Keys[0].Secret)
		rec := httptest.NewRecorder()
		start := time.Now()
		sb.handler.ServeHTTP(rec, req)
		lat = append(lat, time.Since(start))
		if rec.Code != 200 {
			b.Fatalf("%s: %d %s", paths[i%len(paths)], rec.Code, rec.Body)
		}
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(sb.build.Seconds(), "s-build")
	b.ReportMetric(float64(sb.heapBytes)/(1<<20), "MiB-index")
}

func BenchmarkSearch10k(b *testing.B)  { benchSearch(b, 10_000) }
func BenchmarkSearch100k(b *testing.B) { benchSearch(b, 100_000) }
