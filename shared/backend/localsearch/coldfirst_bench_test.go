package localsearch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// coldBenchLayout names the segment files BenchmarkColdFirstQuery keeps
// between runs: raise it when what WriteSegment writes changes.
const coldBenchLayout = 3

// BenchmarkColdFirstQuery measures the first search after idle over
// segments opened by range, as the search function of the embedded tier
// holds them: DOCLIB_COLD_SIZE generated documents (10,000 when unset),
// embedded by the offline hashing embedder at 1,024 dimensions (the fake
// Bedrock's vectors), written as a reindex writes them (sorted, in
// segments of 25,000, calibrated), kept in a temporary folder between runs.
// Each of the sizing searches runs alone over the segments opened afresh
// (an empty cache), reading through a source at S3's modelled speed (a
// first byte of 20 ms, 75 MB/s a connection, 150 MB/s in all). Reported:
// the hot parts' bytes per document (hot-B/doc), and of the first search
// ("reset password") and of the mean of all: its bytes read (cold-KB),
// ranged reads, rounds of reads, time (first-ms, cold-ms) and of it the
// time some read was in progress (first-s3-ms, cold-s3-ms); the log cuts the
// bytes by section, and the hot part by section; open-ms is the time
// OpenSegment takes for every segment, one after the other.
func BenchmarkColdFirstQuery(b *testing.B) {
	n := 10_000
	if s := os.Getenv("DOCLIB_COLD_SIZE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	e, err := offline.NewHashing(benchDims, nil)
	if err != nil {
		b.Fatal(err)
	}
	files, cal, libs := coldBenchSegments(b, n, e)

	// The hot parts, by section.
	hotBy := map[string]int64{}
	var hot int64
	var names []string
	for _, f := range files {
		for _, s := range localsearch.SegmentSections(f) {
			if strings.HasPrefix(s.Name, "cold:") {
				continue
			}
			if _, ok := hotBy[s.Name]; !ok {
				names = append(names, s.Name)
			}
			hotBy[s.Name] += s.To - s.From
			hot += s.To - s.From
		}
	}
	var lines []string
	for _, name := range names {
		lines = append(lines, fmt.Sprintf("%-45s %8.1f B/doc", name, float64(hotBy[name])/float64(n)))
	}
	b.Logf("%d documents in %d segments; hot parts %.1f MB, %.1f B/doc:\n%s", n, len(files), float64(hot)/1e6, float64(hot)/float64(n), strings.Join(lines, "\n"))
	// Opening the segments from their hot parts, one after the other.
	var opening time.Duration
	for _, f := range files {
		hot := coldBenchHot(f)
		start := time.Now()
		if _, _, err := localsearch.OpenSegment(hot, int64(len(f)), e, &modelledSource{data: f, link: &s3Link{}}, localsearch.NewCache(0)); err != nil {
			b.Fatal(err)
		}
		opening += time.Since(start)
	}

	rules := search.DefaultRules(e.ID())
	type result struct {
		bytes, reads, rounds int64
		wait, s3             time.Duration
		by                   map[string]int64
	}
	run := func(text string, prefetch bool) result {
		link := &s3Link{}
		cache := localsearch.NewCache(0)
		segs := localsearch.NewSegments(e)
		var srcs []*modelledSource
		var xs []*localsearch.Index
		for _, f := range files {
			src := &modelledSource{data: f, link: link}
			x, del, err := localsearch.OpenSegment(coldBenchHot(f), int64(len(f)), e, src, cache)
			if err != nil {
				b.Fatal(err)
			}
			if segs, err = segs.With(x, del); err != nil {
				b.Fatal(err)
			}
			srcs, xs = append(srcs, src), append(xs, x)
		}
		pctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		if prefetch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = cache.Prefetch(pctx, xs)
			}()
		}
		searcher := &search.Searcher{Backend: search.Local{Retriever: segs, Cal: cal}, Embedder: search.Cached(e, 0), Rules: rules}
		for _, s := range srcs {
			s.reset()
		}
		before := cache.Stats()
		start := time.Now()
		if _, err := searcher.Search(ctx, search.Request{Text: text, Libraries: libs, Limit: 20}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		stop()
		wg.Wait()
		after := cache.Stats()
		r := result{rounds: after.Rounds - before.Rounds, wait: took, by: map[string]int64{}}
		var all [][4]int64
		for i, s := range srcs {
			secs := localsearch.SegmentSections(files[i])
			rs := s.taken(start.Add(took))
			all = append(all, rs...)
			for _, rd := range rs {
				r.bytes += rd[1]
				r.reads++
				for _, sec := range secs {
					if lo, hi := max(sec.From, rd[0]), min(sec.To, rd[0]+rd[1]); hi > lo {
						r.by[sec.Name] += hi - lo
					}
				}
			}
		}
		r.s3 = waited(all)
		return r
	}
	report := func(label string, rs []result) {
		var sum result
		sum.by = map[string]int64{}
		for _, r := range rs {
			sum.bytes += r.bytes
			sum.reads += r.reads
			sum.rounds += r.rounds
			sum.wait += r.wait
			sum.s3 += r.s3
			for k, v := range r.by {
				sum.by[k] += v
			}
		}
		k := float64(len(rs))
		var by []string
		for name, v := range sum.by {
			by = append(by, fmt.Sprintf("%s %.0f KB", name, float64(v)/k/1e3))
		}
		sort.Strings(by)
		b.Logf("%s: %.0f KB in %.1f reads, %.1f rounds, %.0f ms, of which S3 %.0f (%s)", label, float64(sum.bytes)/k/1e3, float64(sum.reads)/k,
			float64(sum.rounds)/k, float64(sum.wait)/k/1e6, float64(sum.s3)/k/1e6, strings.Join(by, ", "))
	}
	var first, all, pre []result
	for b.Loop() {
		first = append(first, run(sizingTexts[0], false))
		pre = append(pre, run(sizingTexts[0], true))
		for _, text := range sizingTexts {
			r := run(text, false)
			all = append(all, r)
			if testing.Verbose() {
				report(fmt.Sprintf("%q", text), []result{r})
			}
		}
	}
	report("the first search", first)
	report("the first search, the prefetch started with it", pre)
	report("a cold search (mean of the sizing searches)", all)
	mean := func(rs []result, f func(result) float64) float64 {
		var s float64
		for _, r := range rs {
			s += f(r)
		}
		return s / float64(len(rs))
	}
	b.ReportMetric(float64(hot)/float64(n), "hot-B/doc")
	b.ReportMetric(float64(opening)/1e6, "open-ms")
	b.ReportMetric(mean(first, func(r result) float64 { return float64(r.bytes) / 1e3 }), "first-KB")
	b.ReportMetric(mean(first, func(r result) float64 { return float64(r.rounds) }), "first-rounds")
	b.ReportMetric(mean(first, func(r result) float64 { return float64(r.wait) / 1e6 }), "first-ms")
	b.ReportMetric(mean(first, func(r result) float64 { return float64(r.s3) / 1e6 }), "first-s3-ms")
	b.ReportMetric(mean(pre, func(r result) float64 { return float64(r.wait) / 1e6 }), "first-prefetching-ms")
	b.ReportMetric(mean(all, func(r result) float64 { return float64(r.bytes) / 1e3 }), "cold-KB")
	b.ReportMetric(mean(all, func(r result) float64 { return float64(r.reads) }), "cold-reads")
	b.ReportMetric(mean(all, func(r result) float64 { return float64(r.rounds) }), "cold-rounds")
	b.ReportMetric(mean(all, func(r result) float64 { return float64(r.wait) / 1e6 }), "cold-ms")
	b.ReportMetric(mean(all, func(r result) float64 { return float64(r.s3) / 1e6 }), "cold-s3-ms")
}

// coldBenchHot is a copy of the hot part of f, a segment file.
func coldBenchHot(f []byte) []byte {
	var n int64
	for _, s := range localsearch.SegmentSections(f) {
		if !strings.HasPrefix(s.Name, "cold:") {
			n = s.To
		}
	}
	b := localsearch.HotBuffer(n)
	copy(b, f[:n])
	return b
}

// coldBenchSegments writes (or reads back, from an earlier run) the
// segment files of n generated documents, as a reindex writes them, and
// their calibration; and returns them with the libraries.
func coldBenchSegments(b *testing.B, n int, e search.Embedder) ([][]byte, *search.Calibration, []string) {
	b.Helper()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: n}))
	if err != nil {
		b.Fatal(err)
	}
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("doclib-coldbench-%d-v%d", n, coldBenchLayout))
	if raw, err := os.ReadFile(filepath.Join(dir, "calibration.json")); err == nil {
		var cal *search.Calibration
		if err := json.Unmarshal(raw, &cal); err != nil {
			b.Fatal(err)
		}
		var files [][]byte
		for i := 0; ; i++ {
			f, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i)+".seg"))
			if err != nil {
				break
			}
			files = append(files, f)
		}
		if len(files) > 0 {
			return files, cal, libs
		}
	}
	ctx := context.Background()
	var docs []search.IndexDoc
	if err := search.DocsFromData(ctx, d, e, 0, func(batch []search.IndexDoc) error {
		docs = append(docs, batch...)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	docs = search.NewDocSet(docs).Sorted()
	var xs []*localsearch.Index
	var files [][]byte
	for from := 0; from < len(docs); from += 25_000 {
		x, err := localsearch.FromDocs(ctx, docs[from:min(from+25_000, len(docs))], e, localsearch.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if _, _, err := localsearch.WriteSegment(&buf, x, nil); err != nil {
			b.Fatal(err)
		}
		xs, files = append(xs, x), append(files, buf.Bytes())
	}
	cal, err := search.Calibrate(ctx, e, docs, func(w string) bool {
		return slices.ContainsFunc(xs, func(x *localsearch.Index) bool { return x.Knows(w) })
	})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(cal)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i, f := range files {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".seg"), f, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "calibration.json"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	return files, cal, libs
}

// s3Link is the function's share of S3's bandwidth, which its reads share.
type s3Link struct {
	mu   sync.Mutex
	free time.Time // when what was sent so far is through
}

// Modelled S3: a first byte after 20 ms, then 75 MB/s a connection and 150
// MB/s for the function (fakes3.DefaultSpeed).
const (
	s3FirstByte = 20 * time.Millisecond
	s3PerConn   = 75e6
	s3PerFunc   = 150e6
)

// modelledSource is a segment file read by range at S3's modelled speed;
// it records the reads (offset, bytes) and when they began.
type modelledSource struct {
	data  []byte
	link  *s3Link
	mu    sync.Mutex
	reads [][4]int64 // offset, bytes, start and end (Unix nanoseconds)
}

func (s *modelledSource) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	start := time.Now()
	s.link.mu.Lock()
	from := start.Add(s3FirstByte)
	if s.link.free.After(from) {
		from = s.link.free
	}
	s.link.free = from.Add(time.Duration(float64(n) / s3PerFunc * 1e9))
	done := start.Add(s3FirstByte + time.Duration(float64(n)/s3PerConn*1e9))
	if s.link.free.After(done) {
		done = s.link.free
	}
	s.link.mu.Unlock()
	s.mu.Lock()
	s.reads = append(s.reads, [4]int64{off, n, start.UnixNano(), done.UnixNano()})
	s.mu.Unlock()
	select {
	case <-time.After(time.Until(done)):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return io.NopCloser(bytes.NewReader(s.data[off : off+n])), nil
}

// reset forgets the reads so far.
func (s *modelledSource) reset() {
	s.mu.Lock()
	s.reads = nil
	s.mu.Unlock()
}

// taken are the reads begun before t: offset, bytes, start and end.
func (s *modelledSource) taken(t time.Time) [][4]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][4]int64
	for _, r := range s.reads {
		if r[2] < t.UnixNano() {
			out = append(out, r)
		}
	}
	return out
}

// waited is how long some read of rs was in progress: the union of their
// times.
func waited(rs [][4]int64) time.Duration {
	slices.SortFunc(rs, func(a, b [4]int64) int { return int(a[2] - b[2]) })
	var total, end int64
	for _, r := range rs {
		if r[3] <= end {
			continue
		}
		total += r[3] - max(r[2], end)
		end = r[3]
	}
	return time.Duration(total)
}
