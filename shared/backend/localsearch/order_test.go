package localsearch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestClusterOrderKeepsNearVectorsTogether: 4,000 vectors around 20
// centres, in random order: the slots are a permutation, the same when
// made again, and the vectors around one centre (those a query near it
// passes) lie in a few times as many blocks of 64 codes as they fill,
// where in their own order they lie in nearly every block.
func TestClusterOrderKeepsNearVectorsTogether(t *testing.T) {
	const n, centres, dims, perBlock = 4000, 20, 256, 64
	rng := rand.New(rand.NewPCG(1, 2))
	unit := func(v []float32) []float32 {
		var s float64
		for _, f := range v {
			s += float64(f * f)
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(s))
		}
		return v
	}
	centre := make([][]float32, centres)
	for c := range centre {
		centre[c] = make([]float32, dims)
		for i := range centre[c] {
			centre[c][i] = float32(rng.NormFloat64())
		}
		unit(centre[c])
	}
	of := make([]int, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		of[i] = rng.IntN(centres)
		vecs[i] = make([]float32, dims)
		for j := range vecs[i] {
			vecs[i][j] = centre[of[i]][j] + 0.06*float32(rng.NormFloat64())
		}
		unit(vecs[i])
	}
	r := rotationFor(dims)
	q := r.quantizeAll(n, func(i int) []float32 { return vecs[i] }, 0)
	slot := clusterOrder(&q, r.padded)
	if !slices.Equal(slot, clusterOrder(&q, r.padded)) {
		t.Fatal("the slots differ when made again")
	}
	seen := make([]bool, n)
	for _, s := range slot {
		if int(s) >= n || seen[s] {
			t.Fatalf("slot %d twice or out of range", s)
		}
		seen[s] = true
	}
	// k-means of about n/clusterSize clusters (15 here, for 20 centres)
	// puts some centres in two or three runs: 128 blocks in all for the 74
	// they fill, against 1,200 in their own order.
	var inOrder, inSlots, least int
	for c := range centres {
		ordered, clustered := map[int]bool{}, map[int]bool{}
		members := 0
		for i := range n {
			if of[i] == c {
				members++
				ordered[i/perBlock] = true
				clustered[int(slot[i])/perBlock] = true
			}
		}
		inOrder, inSlots, least = inOrder+len(ordered), inSlots+len(clustered), least+(members+perBlock-1)/perBlock
		if len(clustered) > len(ordered)/2 {
			t.Errorf("centre %d: %d vectors in %d blocks, %d in their own order", c, members, len(clustered), len(ordered))
		}
	}
	t.Logf("the vectors around a centre lie in %d blocks in all, %d in their own order; they fill %d", inSlots, inOrder, least)
	if inSlots > inOrder/4 {
		t.Errorf("the vectors around a centre lie in %d blocks in all, %d in their own order", inSlots, inOrder)
	}
}
