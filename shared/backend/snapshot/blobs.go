// Package snapshot is the embedded search tier's index in an object store:
// immutable segments, each an index ready to search (package localsearch's
// segment files), and a manifest that names the live ones. The indexer
// writes each stream batch as a new segment and publishes a manifest that
// adds it, with a conditional write; it merges runs of segments in the
// background of its commits (MergePolicy). The search function reads the
// manifest and the segments it does not hold yet, at init and then at most
// every few seconds, so a small change costs a search instance a small read.
//
// The single-snapshot format of earlier versions (one object rewritten whole
// at every commit, named by a pointer) is still read, so that an upgraded
// stack keeps its index: the writer publishes it as the first segment.
package snapshot

import (
	"context"
	"errors"
	"io"
)

// Blobs is the object store the snapshots live in: an S3 bucket with
// versioning on (package s3blobs), or memory in tests. Its calls are safe
// for concurrent use.
type Blobs interface {
	// Get reads an object: its current version, or opt.Version when set.
	// A missing key or version is ErrNotFound; with opt.IfNoneMatch equal to
	// the current version's ETag it is ErrNotModified. The caller closes the
	// body.
	Get(ctx context.Context, key string, opt GetOptions) (io.ReadCloser, Object, error)
	// Put writes body, size bytes, whole, as key's new current version, if
	// cond holds (ErrConflict when it does not). A Put that fails leaves the
	// current version as it was.
	Put(ctx context.Context, key string, body io.ReadSeeker, size int64, cond Condition) (Object, error)
	// PutStream writes, unconditionally, what write writes to the Writer it
	// is given as key's new current version, without knowing its size
	// beforehand: over S3, a multipart upload (UploadParts). It fails if
	// write does, and a PutStream that fails leaves the current version as
	// it was and no upload behind. The Object's Size is the bytes written.
	PutStream(ctx context.Context, key string, write func(io.Writer) error) (Object, error)
	// Delete deletes key (in a versioned bucket, a delete marker: the
	// lifecycle removes the versions). A missing key is no error.
	Delete(ctx context.Context, key string) error
}

// GetOptions choose what Get reads.
type GetOptions struct {
	// Version reads that version of the key rather than the current one.
	Version string
	// IfNoneMatch is an ETag: Get answers ErrNotModified when the current
	// version still has it.
	IfNoneMatch string
	// Offset and Length, when Length > 0, read bytes [Offset,
	// Offset+Length) of the object only (S3's Range: bytes=first-last):
	// the body holds those bytes, or fewer when the object ends first, and
	// Object.Size is still the whole object's size. An Offset at or past
	// the object's end is ErrRange (S3's 416).
	Offset, Length int64
}

// Condition is the precondition of a Put (S3's conditional writes).
type Condition struct {
	// IfMatch is the ETag the current version must have.
	IfMatch string
	// IfNoneMatch requires that the key have no current version.
	IfNoneMatch bool
}

// Object describes one version of a key.
type Object struct {
	ETag, Version string
	Size          int64
}

// Errors of Blobs.
var (
	ErrNotFound    = errors.New("snapshot: no such object")
	ErrNotModified = errors.New("snapshot: not modified")
	ErrConflict    = errors.New("snapshot: the object changed since it was read")
	ErrRange       = errors.New("snapshot: the range starts past the object's end")
)
