package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// The benchmarks run the whole handler (authentication, parameters, the store,
// JSON encoding) on the 100,000-document synthetic set, without the network.
// Results and the machine they came from are in docs/performance.md.

const benchDocuments = 100_000

var (
	benchOnce    sync.Once
	benchJSON    []byte
	benchHandler http.Handler
	benchDoc     string
)

func benchSetup(b *testing.B) http.Handler {
	b.Helper()
	benchOnce.Do(func() {
		var buf bytes.Buffer
		if err := demo.Encode(&buf, demo.Generate(demo.Options{Documents: benchDocuments})); err != nil {
			b.Fatal(err)
		}
		benchJSON = buf.Bytes()
		d, err := dataset.Load(bytes.NewReader(benchJSON))
		if err != nil {
			b.Fatal(err)
		}
		benchDoc = d.Documents[0].ID
		store := memory.New(d)
		// The answers' own cost: nothing kept between requests.
		benchHandler = httpapi.NewServer(httpapi.Config{Service: service.New(store, nil), MemoBytes: -1})
		benchKept = httpapi.NewServer(httpapi.Config{Service: service.New(store, nil)})
	})
	return benchHandler
}

// benchKept is benchHandler as doclib-server runs it: the answers of the
// snapshot kept for repeated reads (docs/design.md).
var benchKept http.Handler

func serve(b *testing.B, h http.Handler, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+demo.Keys[0].Secret)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec
}

func benchPath(b *testing.B, path string) {
	benchWith(b, benchSetup(b), path)
}

func benchWith(b *testing.B, h http.Handler, path string) {
	rec := serve(b, h, path)
	b.ReportMetric(float64(rec.Body.Len()), "resp-bytes")
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+demo.Keys[0].Secret)
	w := &discard{header: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// As net/http's writer does, the answer goes out without being kept:
		// a recorder's copy of 2 MB would be most of what is measured.
		clear(w.header)
		w.status, w.n = 0, 0
		h.ServeHTTP(w, req)
		if w.status != 200 {
			b.Fatalf("GET %s: %d", path, w.status)
		}
	}
}

// discard is a ResponseWriter that counts the body and keeps nothing.
type discard struct {
	header http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header { return d.header }
func (d *discard) WriteHeader(s int)   { d.status = s }
func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = 200
	}
	d.n += len(p)
	return len(p), nil
}

func BenchmarkDocumentGet(b *testing.B) {
	benchSetup(b)
	benchPath(b, "/documents/"+benchDoc)
}

func BenchmarkDocumentsPage100(b *testing.B) {
	benchPath(b, "/libraries/lib_it/documents?pageSize=100&page=3")
}

func BenchmarkDocumentsPageFiltered(b *testing.B) {
	benchPath(b, "/libraries/lib_it/documents?pageSize=100&tag=security")
}

// BenchmarkDocumentsPageSearch is the one list that scans: a substring of title
// and content, over the largest library of the set (about 40% of its documents).
func BenchmarkDocumentsPageSearch(b *testing.B) {
	benchPath(b, "/libraries/lib_it/documents?pageSize=100&search=password")
}

// BenchmarkDocumentsPageSearchRare is the same scan for a word few documents hold,
// so that the whole library is read to fill the page and count the total.
func BenchmarkDocumentsPageSearchRare(b *testing.B) {
	benchPath(b, "/libraries/lib_it/documents?pageSize=100&search=zzzz-no-such-text")
}

func BenchmarkGraphAtCaps(b *testing.B) {
	h := benchSetup(b)
	var g api.Graph
	if err := json.Unmarshal(serve(b, h, "/libraries/lib_it/graph").Body.Bytes(), &g); err != nil {
		b.Fatal(err)
	}
	b.Logf("graph: %d documents, %d edges, truncated %v", len(g.Documents), len(g.Edges), g.Truncated)
	benchPath(b, "/libraries/lib_it/graph")
}

// BenchmarkGraphAtCapsKept and BenchmarkTraverseDepth3Kept are the same
// requests repeated as doclib-server answers them: from the answers kept.
func BenchmarkGraphAtCapsKept(b *testing.B) {
	benchSetup(b)
	benchWith(b, benchKept, "/libraries/lib_it/graph")
}

func BenchmarkTraverseDepth3Kept(b *testing.B) {
	benchSetup(b)
	benchWith(b, benchKept, "/documents/"+benchDoc+"/traverse?depth=3")
}

func BenchmarkTraverseDepth3(b *testing.B) {
	h := benchSetup(b)
	var tr api.Traversal
	if err := json.Unmarshal(serve(b, h, "/documents/"+benchDoc+"/traverse?depth=3").Body.Bytes(), &tr); err != nil {
		b.Fatal(err)
	}
	b.Logf("traversal: %d nodes, %d edges", len(tr.Nodes), len(tr.Edges))
	benchPath(b, "/documents/"+benchDoc+"/traverse?depth=3")
}

// BenchmarkLoad100k measures loading the synthetic set from its JSON (validation,
// derived values, indexes) and reports the heap the store holds: the live heap
// after the load less the live heap before it, so that whatever else the process
// holds (the JSON itself, other benchmarks' stores) is not counted.
func BenchmarkLoad100k(b *testing.B) {
	benchSetup(b)
	raw := benchJSON
	b.ResetTimer()
	var heap uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		d, err := dataset.Load(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		s := memory.New(d)
		b.ReportMetric(time.Since(start).Seconds(), "s/load")
		d = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(s)
	}
	b.ReportMetric(float64(heap)/(1<<20), "MiB-heap")
}
