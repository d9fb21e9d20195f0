package localsearch

import (
	"math/bits"
	"runtime"
	"slices"
)

// Where a segment's codes lie. A query reads the int8 codes of the vectors
// its screen passes (probe.passes): those near the query, a few hundred to
// a few thousand of 100,000, which in the documents' order (by library,
// then ID) are spread over most of the code blocks. The codes are written
// instead in an order of their own, near vectors together (clusterOrder),
// so that the vectors a screen passes lie in a few runs of blocks: what a
// query reads does not change, only where it lies.

// clusterOrder places the n vectors of v (sign bits, padded/64 words each)
// in clusters of near ones: k-means over the sign bits (Hamming distance,
// centroids by majority), seeded by vectors evenly spaced, clusters of
// about clusterSize vectors, chained each to the nearest not yet placed
// (so that the clusters a query reads, near each other, lie near each
// other too). It returns the slot of each vector; the result depends on v
// alone, so that a merge writes the segment FromDocs would.
func clusterOrder(v *quantized, padded int) []uint32 {
	n := v.len()
	slot := make([]uint32, n)
	k := min(n/clusterSize, maxClusters)
	if k < 2 {
		for i := range slot {
			slot[i] = uint32(i)
		}
		return slot
	}
	w := padded / 64
	sign := func(i int) []uint64 { return v.sign[i*w : (i+1)*w] }
	cent := make([]uint64, k*w)
	for c := range k {
		copy(cent[c*w:(c+1)*w], sign(c*n/k))
	}
	assign := make([]uint32, n)
	workers := max(1, min(runtime.GOMAXPROCS(0), n/4096))
	for range clusterRounds {
		inShares(n, workers, func(start, end int) {
			for i := start; i < end; i++ {
				s := sign(i)
				best, bestD := 0, 1<<30
				for c := range k {
					d := 0
					for j, b := range cent[c*w : (c+1)*w] {
						d += bits.OnesCount64(b ^ s[j])
					}
					if d < bestD {
						best, bestD = c, d
					}
				}
				assign[i] = uint32(best)
			}
		})
		// The centroids: each bit by majority of its cluster (a cluster
		// left empty keeps its own).
		count := make([]int32, k*padded)
		size := make([]int32, k)
		for i := range n {
			c := int(assign[i])
			size[c]++
			cs := count[c*padded : (c+1)*padded]
			for j, b := range sign(i) {
				for b != 0 {
					t := bits.TrailingZeros64(b)
					cs[j*64+t]++
					b &= b - 1
				}
			}
		}
		for c := range k {
			if size[c] == 0 {
				continue
			}
			dst := cent[c*w : (c+1)*w]
			clear(dst)
			for j, m := range count[c*padded : (c+1)*padded] {
				if 2*m > size[c] {
					dst[j/64] |= 1 << (j % 64)
				}
			}
		}
	}
	// The clusters, chained: from the first, each next the nearest left.
	order := make([]int, 0, k)
	left := make([]bool, k)
	for c := range left {
		left[c] = true
	}
	for c := 0; len(order) < k; {
		order = append(order, c)
		left[c] = false
		next, nextD := -1, 1<<30
		for o := range k {
			if !left[o] {
				continue
			}
			d := 0
			for j, b := range cent[o*w : (o+1)*w] {
				d += bits.OnesCount64(b ^ cent[c*w+j])
			}
			if d < nextD {
				next, nextD = o, d
			}
		}
		c = next
	}
	rank := make([]uint32, k)
	for r, c := range order {
		rank[c] = uint32(r)
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	slices.SortStableFunc(ids, func(a, b uint32) int { return int(rank[assign[a]]) - int(rank[assign[b]]) })
	for s, i := range ids {
		slot[i] = uint32(s)
	}
	return slot
}

// clusterSize is about how many vectors a cluster holds (16 blocks of 16
// KiB of codes at 1,024 dimensions), up to maxClusters clusters (a
// segment of 25,000 documents has 97; the time k-means takes grows with
// their count: about 0.5 s for 25,000 documents at 1,024 dimensions on
// two busy cores); clusterRounds is
// how many rounds of k-means place them. A variable for the tests, which
// cut small segments in clusters.
var clusterSize = 256

const (
	maxClusters   = 256
	clusterRounds = 6
)
