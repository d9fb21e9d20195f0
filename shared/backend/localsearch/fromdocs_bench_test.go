package localsearch_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// benchDims is the vector size production uses (Titan v2's default).
const benchDims = 1024

// benchDocs makes the IndexDocs of a generated demo data set of n documents,
// as a snapshot would hold them, with random unit vectors (seeded) in place of
// embeddings: one per document and one per readable recording, shared by the
// documents it is behind.
func benchDocs(b *testing.B, n int) []search.IndexDoc {
	b.Helper()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: n}))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	vector := func() []float32 {
		v := make([]float32, benchDims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		search.Normalize(v)
		return v
	}
	recs := readableRecordings(d)
	recVec := map[string][]float32{}
	for _, r := range d.Recordings { // in the data set's order: the vectors are seeded
		if _, ok := recs[r.DocumentIDs[0]]; ok && slices.Contains(recs[r.DocumentIDs[0]], r) {
			recVec[r.ID] = vector()
		}
	}
	docs := make([]search.IndexDoc, len(d.Documents))
	for i, doc := range d.Documents {
		var vs [][]float32
		for _, r := range recs[doc.ID] {
			vs = append(vs, recVec[r.ID])
		}
		docs[i] = search.NewIndexDoc(doc, vector(), recs[doc.ID], vs)
	}
	return docs
}

// readableRecordings lists, per document ID, the readable recordings behind
// it (search.Readable, under its workspace's plan).
func readableRecordings(d *doclib.DataSet) map[string][]*doclib.Recording {
	plans := map[string]doclib.Plan{}
	for _, w := range d.Workspaces {
		plans[w.ID] = w.Plan
	}
	ws := map[string]string{}
	for _, doc := range d.Documents {
		ws[doc.ID] = doc.WorkspaceID
	}
	recs := map[string][]*doclib.Recording{}
	for _, r := range d.Recordings {
		if plan, ok := plans[ws[r.DocumentIDs[0]]]; ok && search.Readable(r, plan) {
			for _, id := range r.DocumentIDs {
				recs[id] = append(recs[id], r)
			}
		}
	}
	return recs
}

func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkFromDocs builds the embedded index from a snapshot's IndexDocs at
// 1k, 10k and 100k documents. It reports the heap the index holds once the
// IndexDocs are dropped (index-MiB), the heap of the IndexDocs themselves
// (docs-MiB) and what the build allocated (alloc-MiB).
func BenchmarkFromDocs(b *testing.B) {
	e, err := offline.NewHashing(benchDims, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			base := heapMiB()
			docs := benchDocs(b, n)
			withDocs := heapMiB()
			var x *localsearch.Index
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for b.Loop() {
				if x, err = localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			st := x.Stats()
			docs = nil
			index := heapMiB() - base
			b.ReportMetric(index, "index-MiB")
			b.ReportMetric(withDocs-base, "docs-MiB")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20)/float64(b.N), "alloc-MiB")
			b.Logf("%d documents, %d recordings, %d terms, %d postings, %d MiB of vectors",
				st.Documents, st.Recordings, st.Terms, st.Postings, st.VectorBytes>>20)
			runtime.KeepAlive(x)
		})
	}
}

// BenchmarkReadSegment reads the index FromDocs builds, written as a segment
// file, at 1k, 10k and 100k documents: what a search instance does in place
// of a build. It reports the segment's size (file-MiB), the heap the index
// read holds (index-MiB) and what the read allocated (alloc-MiB).
func BenchmarkReadSegment(b *testing.B) {
	e, err := offline.NewHashing(benchDims, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			x, err := localsearch.FromDocs(context.Background(), benchDocs(b, n), e, localsearch.Options{})
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			if _, _, err := localsearch.WriteSegment(&buf, x, nil); err != nil {
				b.Fatal(err)
			}
			x = nil
			file := buf.Bytes()
			runtime.GC() // the build's garbage is not the read's
			var y *localsearch.Index
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for b.Loop() {
				if y, _, err = localsearch.ReadSegment(bytes.NewReader(file), int64(len(file)), e); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			with := heapMiB()
			runtime.KeepAlive(y)
			b.ReportMetric(float64(len(file))/(1<<20), "file-MiB")
			b.ReportMetric(with-heapMiB(), "index-MiB")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20)/float64(b.N), "alloc-MiB")
		})
	}
}
