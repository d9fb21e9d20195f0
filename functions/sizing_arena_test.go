package functions_test

import (
	"os"
	"testing"
)

// TestVectorArena: each vector is its own, zeroed, and keeps what is
// written to it; release removes the arena's files.
func TestVectorArena(t *testing.T) {
	dir := t.TempDir()
	a := newVectorArena(dir)
	vs := make([][]float32, 3000)
	for i := range vs {
		vs[i] = a.vector(1024)
		for j, x := range vs[i] {
			if x != 0 {
				t.Fatalf("vector %d starts with %g at %d", i, x, j)
			}
		}
		for j := range vs[i] {
			vs[i][j] = float32(i)
		}
	}
	for i, v := range vs {
		if len(v) != 1024 || v[0] != float32(i) || v[1023] != float32(i) {
			t.Fatalf("vector %d holds %g..%g (%d values), want %d", i, v[0], v[len(v)-1], len(v), i)
		}
	}
	a.release()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("release left %d files", len(left))
	}
}
