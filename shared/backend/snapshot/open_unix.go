//go:build unix

package snapshot

import "syscall"

// openFlags make opening a key's file safe whatever is there: no wait for
// a writer on a named pipe (O_NONBLOCK, which a regular file's reads
// ignore), and no link followed out of the directory (O_NOFOLLOW).
const openFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
