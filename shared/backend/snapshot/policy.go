package snapshot

import (
	"math"
	"slices"
)

// MergePolicy chooses which segments a writer merges: a log-structured
// policy, Lucene's LogMergePolicy. A segment's level is the logarithm, base
// Factor, of its document count (MinDocuments when it has fewer); from the
// oldest segment on, the segments down to 0.75 level below the largest
// remaining one form a band (smaller segments in between join the band of the
// larger one after them), and Factor adjacent segments of a band are merged
// into one, a level up. A segment over MaxMergeDocuments is never merged.
//
// Why log-structured rather than tiered (Lucene's TieredMergePolicy, which
// merges any segments of similar size): a segment's documents replace those
// of older segments, so only adjacent segments can be merged without
// changing what is live, and a log-structured policy merges adjacent runs
// only. It keeps the count below Factor per level, about Factor−1 times
// log_Factor(documents/MinDocuments) in all (45 at a million documents with
// the defaults), and writes each document once per level it climbs (about
// 3 times to reach a million): few segments per query, little rewritten.
type MergePolicy struct {
	// Factor is how many segments a merge takes, and the size ratio of a
	// level to the one below.
	Factor int
	// MinDocuments is the size below which every segment is of the lowest
	// level: the many small segments of stream batches merge among
	// themselves, every Factor batches.
	MinDocuments int
	// MaxMergeDocuments is the largest segment a merge takes (Lucene's
	// maxMergeDocs): a merge then reads at most Factor times it, which
	// bounds the indexer's memory; larger segments (a reindex's, or a merge
	// of ten of these) stay as they are.
	MaxMergeDocuments int
	// CacheDocuments is the largest segment a writer keeps in memory after
	// writing it, to merge it without reading it back.
	CacheDocuments int
}

// DefaultMergePolicy merges 10 segments at a time, with segments under
// 1,000 documents at the lowest level, and merges no segment of more than
// 10,000: a merge reads at most 100,000 documents (about 860 MB at 1,024
// dimensions, BenchmarkReadSegment).
var DefaultMergePolicy = MergePolicy{Factor: 10, MinDocuments: 1000, MaxMergeDocuments: 10_000, CacheDocuments: 20_000}

// next returns the first run [from, to) of segs to merge, if any.
func (p MergePolicy) next(segs []SegmentRef) (from, to int, ok bool) {
	n, f := len(segs), p.Factor
	if f < 2 || n < f {
		return 0, 0, false
	}
	norm := math.Log(float64(f))
	floor := math.Log(float64(max(p.MinDocuments, 1))) / norm
	level := make([]float64, n)
	for i, s := range segs {
		level[i] = math.Log(float64(max(s.Documents, p.MinDocuments, 1))) / norm
	}
	for start := 0; start < n; {
		top := level[start]
		for _, l := range level[start:] {
			top = max(top, l)
		}
		bottom := top - 0.75
		if top <= floor {
			bottom = -1 // every segment at the floor is of one band
		}
		upto := n - 1
		for upto >= start && level[upto] < bottom {
			upto--
		}
		for from := start; from+f <= upto+1; from++ {
			if !slices.ContainsFunc(segs[from:from+f], p.tooLarge) {
				return from, from + f, true
			}
		}
		start = upto + 1
	}
	return 0, 0, false
}

func (p MergePolicy) tooLarge(s SegmentRef) bool {
	return p.MaxMergeDocuments > 0 && s.Documents > p.MaxMergeDocuments
}
