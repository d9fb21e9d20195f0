//go:build !unix

package functions_test

// vectorArena is the heap where files cannot be mapped: the sizing harness
// then holds the vectors in memory (see sizing_arena_unix_test.go).
type vectorArena struct{}

func newVectorArena(string) *vectorArena { return &vectorArena{} }

func (*vectorArena) vector(dims int) []float32 { return make([]float32, dims) }

func (*vectorArena) release() {}
