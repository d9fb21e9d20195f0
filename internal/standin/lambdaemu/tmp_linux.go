package lambdaemu

import "golang.org/x/sys/unix"

// limitFileSize sets the process's RLIMIT_FSIZE to bytes (see tmp.go).
func limitFileSize(pid int, bytes int64) error {
	lim := unix.Rlimit{Cur: uint64(bytes), Max: uint64(bytes)}
	return unix.Prlimit(pid, unix.RLIMIT_FSIZE, &lim, nil)
}
