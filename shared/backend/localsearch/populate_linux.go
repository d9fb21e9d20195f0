package localsearch

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate asks the kernel to map b's pages before they are written. On a
// Firecracker guest (Lambda, and the machine docs/performance.md was
// measured on) each first write to a page otherwise traps on its own: 362
// MB of segment arrays took 1.39 s to fill page by page and 0.85 s after
// one madvise. Kernels before 5.14 refuse the advice, and the pages are
// then mapped as they are written, as before.
func populate(b []byte) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first := (start + page - 1) &^ (page - 1)
	end := (start + uintptr(len(b))) &^ (page - 1)
	if end <= first {
		return
	}
	_ = unix.Madvise(b[first-start:end-start], unix.MADV_POPULATE_WRITE)
}
