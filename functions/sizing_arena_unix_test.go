//go:build unix

package functions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"
)

// vectorArena hands out vectors from files mapped into memory, not from
// the Go heap: laying down a million documents' index holds 2.6 million
// vectors of 1,024 float32s (10.6 GB) until the writer has published them,
// which a heap (with the collector's room on top) cannot on this machine.
// The kernel writes the mapped pages back to their files and drops them
// under pressure, and reads them again as the writer goes through the
// documents. The vectors hold the same values: only where they live
// differs. After release no vector of the arena may be touched.
type vectorArena struct {
	mu    sync.Mutex
	dir   string
	maps  [][]byte
	cur   []byte // the mapping vectors are carved from
	off   int
	files int
}

// arenaFile is the size of each mapped file.
const arenaFile = 1 << 30

func newVectorArena(dir string) *vectorArena { return &vectorArena{dir: dir} }

// vector returns a zeroed vector of dims values.
func (a *vectorArena) vector(dims int) []float32 {
	n := dims * 4
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil || a.off+n > len(a.cur) {
		a.grow()
	}
	v := unsafe.Slice((*float32)(unsafe.Pointer(&a.cur[a.off])), dims)
	a.off += n
	return v
}

func (a *vectorArena) grow() {
	name := filepath.Join(a.dir, fmt.Sprintf("vectors-%d", a.files))
	a.files++
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		panic(fmt.Sprintf("vector arena: %v", err))
	}
	defer f.Close()
	if err := f.Truncate(arenaFile); err != nil {
		panic(fmt.Sprintf("vector arena: %v", err))
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, arenaFile, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		panic(fmt.Sprintf("vector arena: %v", err))
	}
	a.maps, a.cur, a.off = append(a.maps, m), m, 0
}

// release unmaps every file and removes it.
func (a *vectorArena) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.maps {
		_ = syscall.Munmap(m)
	}
	a.maps, a.cur, a.off = nil, nil, 0
	for i := range a.files {
		_ = os.Remove(filepath.Join(a.dir, fmt.Sprintf("vectors-%d", i)))
	}
}
