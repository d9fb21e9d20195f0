package localsearch_test

import (
	"cmp"
	"context"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// BenchmarkLargeIndex measures the engine, in one process, at the size
// DOCLIB_LARGE_INDEX names (skipped when unset; docs/performance.md reports
// 1,000,000): the generated documents, with random unit vectors of 1,024
// dimensions, are written as a reindex writes them, in segments of 25,000
// documents (files in a temporary folder); then the segments are read four
// at a time, as a search instance reads them, and searched. It reports the
// index's bytes (index-MB), the reading (read-ms), the heap the index holds
// (heap-MB), and the percentiles of a whole search (candidates, rules,
// facets and page: match-p50-ms, match-p99-ms), which the loop runs.
func BenchmarkLargeIndex(b *testing.B) {
	n, e := largeSize(b)
	ctx := context.Background()
	files, indexBytes, libs := writeLargeIndex(b, n, e)
	runtime.GC()
	before := heapMiB()
	start := time.Now()
	segs := readLargeIndex(b, files, e)
	readTook := time.Since(start)
	heap := heapMiB() - before

	rules := search.DefaultRules(e.ID())
	var took []time.Duration
	i := 0
	for b.Loop() {
		q := &search.Query{Text: sizingTexts[i%len(sizingTexts)], Vector: largeVector(strconv.Itoa(i)),
			Libraries: libs, Rules: &rules, Limit: 20}
		i++
		t := time.Now()
		if _, err := (search.Local{Retriever: segs}).Match(ctx, q); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t))
	}
	b.ReportMetric(float64(indexBytes)/1e6, "index-MB")
	b.ReportMetric(float64(readTook)/1e6, "read-ms")
	b.ReportMetric(heap, "heap-MB")
	b.ReportMetric(percentile(took, 0.5), "match-p50-ms")
	b.ReportMetric(percentile(took, 0.99), "match-p99-ms")
}

// largeSize is the number of documents DOCLIB_LARGE_INDEX names (the
// benchmark is skipped when it is unset), and the embedder of the queries.
func largeSize(b *testing.B) (int, search.Embedder) {
	n, _ := strconv.Atoi(os.Getenv("DOCLIB_LARGE_INDEX"))
	if n <= 0 {
		b.Skip("set DOCLIB_LARGE_INDEX to a number of documents")
	}
	e, err := offline.NewHashing(benchDims, nil)
	if err != nil {
		b.Fatal(err)
	}
	return n, e
}

// readLargeIndex reads the segment files four at a time, as a search
// instance reads them, and returns them as one index, oldest first.
func readLargeIndex(b *testing.B, files []string, e search.Embedder) *localsearch.Segments {
	read := make([]*localsearch.Index, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, name := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f, err := os.Open(name)
			if err != nil {
				b.Error(err)
				return
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				b.Error(err)
				return
			}
			if read[i], _, err = localsearch.ReadSegment(f, st.Size(), e); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	segs := localsearch.NewSegments(e)
	for _, x := range read {
		var err error
		if segs, err = segs.With(x, nil); err != nil {
			b.Fatal(err)
		}
	}
	return segs
}

// largeQueries are the segments of DOCLIB_LARGE_INDEX documents that
// BenchmarkLargeQuery reads, once for all its runs (one per -cpu value).
var largeQueries struct {
	n    int
	segs *localsearch.Segments
	libs []string
}

// BenchmarkLargeQuery measures a warm query at the size DOCLIB_LARGE_INDEX
// names (skipped when unset), over the segments BenchmarkLargeIndex writes
// and reads (25,000 documents each): the engine's part alone (candidates:
// Candidates, every candidate counted) and the whole search in process
// (match). Each reports the percentiles of its loop (p50-ms, p99-ms). Run
// with -cpu 1,2 to see what the cores give.
func BenchmarkLargeQuery(b *testing.B) {
	n, e := largeSize(b)
	ctx := context.Background()
	if largeQueries.n != n {
		files, _, libs := writeLargeIndex(b, n, e)
		largeQueries.n, largeQueries.segs, largeQueries.libs = n, readLargeIndex(b, files, e), libs
	}
	segs, libs := largeQueries.segs, largeQueries.libs
	rules := search.DefaultRules(e.ID())
	query := func(i int) *search.Query {
		return &search.Query{Text: sizingTexts[i%len(sizingTexts)], Vector: largeVector(strconv.Itoa(i)),
			Libraries: libs, Rules: &rules, Limit: 20}
	}
	for _, c := range []struct {
		name string
		run  func(q *search.Query) error
	}{
		{"candidates", func(q *search.Query) error {
			return segs.Candidates(ctx, q, func(search.Candidate) {})
		}},
		{"match", func(q *search.Query) error {
			_, err := (search.Local{Retriever: segs}).Match(ctx, q)
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			queries := make([]*search.Query, len(sizingTexts)) // made outside the loop: vectors allocate
			for i := range queries {
				queries[i] = query(i)
			}
			var took []time.Duration
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				t := time.Now()
				if err := c.run(q); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t))
			}
			b.ReportMetric(percentile(took, 0.5), "p50-ms")
			b.ReportMetric(percentile(took, 0.99), "p99-ms")
		})
	}
}

// percentile is the p-th percentile of took, in milliseconds; took is sorted.
func percentile(took []time.Duration, p float64) float64 {
	slices.Sort(took)
	return float64(took[min(len(took)-1, int(p*float64(len(took))))]) / 1e6
}

// largeVector is a random unit vector that is a function of id: a recording
// behind documents of several segments has one vector, without a table of
// them all.
func largeVector(id string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(id))
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))
	v := make([]float32, benchDims)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	search.Normalize(v)
	return v
}

// writeLargeIndex writes n generated documents as segments of 25,000, by
// library then ID, and returns the files, their bytes and the libraries.
func writeLargeIndex(b *testing.B, n int, e search.Embedder) ([]string, int64, []string) {
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: n}))
	if err != nil {
		b.Fatal(err)
	}
	recs := readableRecordings(d)
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	docs := d.Documents
	slices.SortFunc(docs, func(a, b *doclib.Document) int {
		return cmp.Or(strings.Compare(a.LibraryID, b.LibraryID), strings.Compare(a.ID, b.ID))
	})
	dir := b.TempDir()
	var files []string
	var total int64
	start := time.Now()
	for from := 0; from < len(docs); from += 25_000 {
		chunk := docs[from:min(from+25_000, len(docs))]
		in := make([]search.IndexDoc, len(chunk))
		for i, doc := range chunk {
			var vs [][]float32
			for _, r := range recs[doc.ID] {
				vs = append(vs, largeVector(r.ID))
			}
			in[i] = search.NewIndexDoc(doc, largeVector(doc.ID), recs[doc.ID], vs)
		}
		x, err := localsearch.FromDocs(context.Background(), in, e, localsearch.Options{})
		if err != nil {
			b.Fatal(err)
		}
		name := filepath.Join(dir, strconv.Itoa(from)+".seg")
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		size, _, err := localsearch.WriteSegment(f, x, nil)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		files, total = append(files, name), total+size
	}
	b.Logf("%d documents written as %d segments, %.0f MB, in %s", len(docs), len(files), float64(total)/1e6, time.Since(start).Round(time.Second))
	return files, total, libs
}

// sizingTexts are the queries of functions' BenchmarkEmbeddedTier.
var sizingTexts = []string{
	"reset password", "vpn", "close the month", "onboard a new employee laptop",
	"invoice approval", "quarterly forecast", "rotate the certificate", "crm lead import",
	"expense report", "backup restore database", "printer", "purchase order vendor",
	"grant access to the shared drive", "payroll", "renew the contract", "mfa",
}
