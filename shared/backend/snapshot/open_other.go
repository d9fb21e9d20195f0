//go:build !unix

package snapshot

// openFlags: where there are no named pipes or device files to wait on,
// an ordinary open; openRegular still looks before it opens.
const openFlags = 0
