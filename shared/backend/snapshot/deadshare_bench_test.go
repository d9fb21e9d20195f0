package snapshot

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// BenchmarkDeadShare measures the dead share that the default merge policy
// leaves in an index of DOCLIB_DEADSHARE_DOCS documents (100,000 unless
// set) published as a reindex publishes it, after changes of 10% and of
// 50% of its documents, written as the indexer writes a stream's batches:
// 100 documents a commit, each a document chosen at random written again.
// It reports the dead share of the segments' bytes (each segment's bytes
// times its dead documents over its documents, counted by reading the
// segments), the most dead in one segment, the segments, and what the
// commits wrote in all. One run (-benchtime 1x) is the measurement.
func BenchmarkDeadShare(b *testing.B) {
	n := 100_000
	if s := os.Getenv("DOCLIB_DEADSHARE_DOCS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1000 {
			b.Fatalf("DOCLIB_DEADSHARE_DOCS=%q: want a count of 1,000 or more", s)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		m := NewMemory()
		w := newWriter(m)
		all := ids(0, n)
		if err := w.Publish(ctx, docs(all...)); err != nil {
			b.Fatal(err)
		}
		seen := map[string]bool{}
		for _, s := range readMan(b, m).Segments {
			seen[s.Key] = true
		}
		var written int64 // the bytes of the segments the commits wrote
		rng := rand.New(rand.NewPCG(39, uint64(n)))
		const batch = 100
		changed, round := 0, 0
		for _, share := range []float64{0.10, 0.50} {
			for ; changed < int(share*float64(n)); changed += batch {
				round++
				for range batch {
					if err := w.Upsert(ctx, docs(all[rng.IntN(n)])); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				for _, s := range readMan(b, m).Segments {
					if !seen[s.Key] {
						seen[s.Key], written = true, written+s.Bytes
					}
				}
			}
			man := readMan(b, m)
			dead := deadCounts(b, m, testEmb, man, []string{"lib"})
			var deadBytes, total float64
			worst := 0.0
			for i, s := range man.Segments {
				total += float64(s.Bytes)
				if s.Documents > 0 {
					deadBytes += float64(s.Bytes) * float64(dead[i]) / float64(s.Documents)
					worst = max(worst, float64(dead[i])/float64(s.Documents))
				}
			}
			p := strconv.Itoa(int(share*100)) + "pct-"
			b.ReportMetric(100*deadBytes/total, p+"dead-bytes-%")
			b.ReportMetric(100*worst, p+"worst-segment-dead-%")
			b.ReportMetric(float64(len(man.Segments)), p+"segments")
			b.Logf("%d documents, %d changed in %d commits: %d segments, %.1f%% of %.1f MB dead, at most %.1f%% in one; %.1f MB written by the commits",
				n, changed, round, len(man.Segments), 100*deadBytes/total, total/1e6, 100*worst, float64(written)/1e6)
		}
	}
}
