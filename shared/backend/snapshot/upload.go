package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Streamed uploads. A snapshot is sent as it is encoded, through S3's
// multipart upload, so that the writer needs neither disk (a Lambda
// function's /tmp is 512 MB unless configured larger, and a snapshot of
// 65,000 documents is about that) nor memory for the whole object: it holds
// one part at a time. The limits are S3's ("Amazon S3 multipart upload
// limits", https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html):
// every part but the last at least 5 MiB, at most 10,000 parts.
const (
	// PartSize is the size of every part of a streamed upload but the last,
	// and so what a streamed upload holds in memory: 16 MiB, nothing beside
	// the indexer's 3 GB that holds the documents. Each part is a request
	// billed as a PUT (internal/checks/costs counts 8 for a 78 MB snapshot:
	// create, 5 parts, complete and the pointer); 16 MiB parts take an
	// object up to 160 GiB, and a 500 MB snapshot is 30 UploadPart calls.
	PartSize = 16 << 20
	// MinPartSize is S3's smallest part but the last.
	MinPartSize = 5 << 20
	// MaxParts is S3's largest part number.
	MaxParts = 10_000
)

// abortTimeout bounds the AbortMultipartUpload of a failed upload, which
// runs even when the caller's context has ended (often why it failed).
const abortTimeout = 30 * time.Second

// Multipart is one streamed upload of a key as S3's API has it; UploadParts
// drives it and a Blobs' PutStream provides it.
type Multipart interface {
	// PutWhole writes data as the key's new current version in one request
	// (PutObject): a body that fits in one part is not worth three calls.
	PutWhole(ctx context.Context, data []byte) (Object, error)
	// Create starts the upload (CreateMultipartUpload).
	Create(ctx context.Context) error
	// UploadPart uploads part n, from 1 (UploadPart). data is reused once
	// it returns.
	UploadPart(ctx context.Context, n int, data []byte) error
	// Complete makes the parts uploaded, in order, the key's new current
	// version (CompleteMultipartUpload).
	Complete(ctx context.Context) (Object, error)
	// Abort discards the upload and the parts uploaded so far
	// (AbortMultipartUpload), so that none is left billed.
	Abort(ctx context.Context) error
}

// UploadParts calls write with a Writer that sends what it is given through
// u: in one PutWhole if it all fits in one part of partSize bytes, else as
// a multipart upload whose parts are uploaded as they fill, one at a time.
// It returns the object written, with Size the bytes written. If write or
// an upload fails, an upload that was created is aborted, and the error
// says so if the abort failed too (the bucket's lifecycle rule then aborts
// it after a day).
func UploadParts(ctx context.Context, u Multipart, partSize int, write func(io.Writer) error) (Object, error) {
	if partSize < MinPartSize {
		return Object{}, fmt.Errorf("snapshot: a part size of %d bytes is under S3's minimum, %d", partSize, MinPartSize)
	}
	pw := &partWriter{ctx: ctx, u: u, size: partSize}
	obj, err := pw.run(write)
	if err == nil || !pw.created {
		return obj, err
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	if aerr := u.Abort(actx); aerr != nil {
		return Object{}, errors.Join(err, fmt.Errorf("and the multipart upload could not be aborted (the bucket's lifecycle rule aborts it): %w", aerr))
	}
	return Object{}, err
}

// partWriter cuts what it is written into parts. It uploads a full part
// only when more bytes come, so that the last part is never empty and a
// body of exactly one part goes whole.
type partWriter struct {
	ctx     context.Context
	u       Multipart
	size    int    // the part size
	buf     []byte // the part being filled; grows to size at most
	parts   int    // parts uploaded
	written int64
	created bool
	err     error // the first failure: every later Write returns it
}

func (w *partWriter) run(write func(io.Writer) error) (Object, error) {
	if err := write(w); err != nil {
		return Object{}, err
	}
	if w.err != nil { // write ignored a failed Write
		return Object{}, w.err
	}
	var obj Object
	var err error
	if !w.created {
		obj, err = w.u.PutWhole(w.ctx, w.buf)
	} else if err = w.upload(); err == nil {
		obj, err = w.u.Complete(w.ctx)
	}
	if err != nil {
		return Object{}, err
	}
	obj.Size = w.written
	return obj, nil
}

func (w *partWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(p) > 0 {
		if len(w.buf) == w.size {
			if err := w.upload(); err != nil {
				w.err = err
				return n, err
			}
		}
		k := min(len(p), w.size-len(w.buf))
		if need := len(w.buf) + k; need > cap(w.buf) {
			// Grow by doubling, but never past one part.
			grown := make([]byte, len(w.buf), min(w.size, max(need, 2*cap(w.buf))))
			copy(grown, w.buf)
			w.buf = grown
		}
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		n += k
		w.written += int64(k)
	}
	return n, nil
}

// upload sends the part in buf, creating the upload first if need be.
func (w *partWriter) upload() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if !w.created {
		if err := w.u.Create(w.ctx); err != nil {
			return err
		}
		w.created = true
	}
	if w.parts == MaxParts {
		return fmt.Errorf("snapshot: the object is over %d parts of %d bytes, S3's largest multipart upload at this part size", MaxParts, w.size)
	}
	w.parts++
	if err := w.u.UploadPart(w.ctx, w.parts, w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return nil
}
