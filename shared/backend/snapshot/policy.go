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
//
// A segment too large to merge (a reindex's, or a merge of ten) still loses
// documents to later segments: each one written again or deleted leaves a
// dead copy in it. So a segment of at least MinDocuments whose dead share
// passes DeadShare is rewritten without them (Lucene's TieredMergePolicy
// does the same with deletesPctAllowed, 20% at the least), with as many of
// its neighbours as fit in RewriteDocuments live documents, so that
// segments that shrink by rewrites come together again. Each segment then
// holds at most DeadShare of dead documents (one commit's changes more,
// until the next commit), and a rewrite takes place once per DeadShare
// times its size of changes that land in it.
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
	// DeadShare is the share of a segment's documents that may be dead
	// before the segment is rewritten without them; 0: never.
	DeadShare float64
	// RewriteDocuments bounds the live documents of a rewrite's neighbours
	// and itself together; 0: a rewrite takes the segment alone.
	RewriteDocuments int
}

// DefaultMergePolicy merges 10 segments at a time, with segments under
// 1,000 documents at the lowest level, and merges no segment of more than
// 10,000: a merge reads at most 100,000 documents (about 370 MB at 1,024
// dimensions, BenchmarkReadSegment). A segment of 1,000 documents or more
// is rewritten when more than a fifth of them are dead, with neighbours up
// to the 25,000 documents of a reindex's segment (DefaultPublishDocuments).
var DefaultMergePolicy = MergePolicy{Factor: 10, MinDocuments: 1000, MaxMergeDocuments: 10_000, CacheDocuments: 20_000,
	DeadShare: 0.2, RewriteDocuments: DefaultPublishDocuments}

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

// rewrite returns the run [from, to) of segs to rewrite without its dead
// documents, if any: the segment of at least MinDocuments with the largest
// dead share above DeadShare, and its neighbours, the smaller first, while
// the run's live documents stay within RewriteDocuments, up to Factor
// segments. live[i] is the live documents of segs[i], -1 when unknown: a
// segment of unknown count is neither rewritten nor taken in.
func (p MergePolicy) rewrite(segs []SegmentRef, live []int) (from, to int, ok bool) {
	if p.DeadShare <= 0 || len(live) != len(segs) {
		return 0, 0, false
	}
	best, share := -1, p.DeadShare
	for i, s := range segs {
		if live[i] < 0 || s.Documents < max(p.MinDocuments, 1) {
			continue
		}
		if d := float64(s.Documents-live[i]) / float64(s.Documents); d > share {
			best, share = i, d
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	from, to = best, best+1
	n := live[best]
	fits := func(i int) bool { return i >= 0 && i < len(segs) && live[i] >= 0 && n+live[i] <= p.RewriteDocuments }
	for to-from < max(p.Factor, 1) {
		left, right := fits(from-1), fits(to)
		switch {
		case left && (!right || live[from-1] <= live[to]):
			from--
			n += live[from]
		case right:
			n += live[to]
			to++
		default:
			return from, to, true
		}
	}
	return from, to, true
}
