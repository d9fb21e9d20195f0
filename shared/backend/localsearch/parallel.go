package localsearch

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelFrom is the amount of work (visible documents, recordings to
// score) above which a step of a query runs on every core: under it, the
// goroutines would cost more than they save. A variable for the tests
// (export_test.go).
var parallelFrom = 8192

// workersFor is the number of goroutines for a step of n units of work: 1
// under parallelFrom, else GOMAXPROCS.
func workersFor(n int) int {
	if n < parallelFrom {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// piece is the ordinals [start, end) of the list numbered list.
type piece struct {
	list int
	span
}

// cut cuts lists of work (list i is the ordinals lists[i]) into pieces of
// about size units, in order: the pieces of a list follow one another, and
// those of list i come before those of list i+1.
func cut(lists []span, size int) []piece {
	size = max(size, 1)
	var out []piece
	for i, sp := range lists {
		for sp.start < sp.end {
			end := sp.end
			if end-sp.start > uint32(size) {
				end = sp.start + uint32(size)
			}
			out = append(out, piece{i, span{sp.start, end}})
			sp.start = end
		}
	}
	return out
}

// pieceSize is the size of the pieces that total units of work are cut into
// for workers goroutines: four pieces a worker, so that a worker slowed
// (the machine is shared, a piece is costlier) leaves its share to the
// others.
func pieceSize(total, workers int) int {
	return max((total+4*workers-1)/(4*workers), 1)
}

// each runs f(i) for every i in [0, n) on workers goroutines (the caller's
// among them), each taking the next i not taken yet, and returns when all
// are done.
func each(n, workers int, f func(i int)) {
	var next atomic.Int64
	run := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			f(i)
		}
	}
	var wg sync.WaitGroup
	for range min(workers, n) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	run()
	wg.Wait()
}

// visible lists the visible ranges of every part, in order, with their
// parts, and counts their documents.
func (v *view) visible() (lists []span, owners []*part, total int) {
	for i := range v.parts {
		for _, sp := range v.parts[i].spans {
			lists = append(lists, sp)
			owners = append(owners, &v.parts[i])
			total += int(sp.end - sp.start)
		}
	}
	return lists, owners, total
}

// eachPart runs f on every part (numbered i), on every core when the parts hold more
// than parallelFrom visible documents, and returns when all are done.
// f reads and writes only its part's scratch.
func (v *view) eachPart(f func(i int, p *part)) {
	_, _, total := v.visible()
	each(len(v.parts), workersFor(total), func(i int) { f(i, &v.parts[i]) })
}
