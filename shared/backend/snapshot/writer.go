package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/doclib/doclib/shared/search"
)

// Writer is the indexer's side of the embedded tier: a search.Index that
// keeps every document's index document in memory and publishes them whole
// at each Commit (search.Committer).
//
// On first use it loads the snapshot the pointer names (none: it starts
// empty) and remembers the pointer's ETag. Commit writes a new version of
// SnapshotKey, then replaces the pointer on condition that it still has that
// ETag, so that of two writers that read the same pointer one publishes and
// the other gets ErrConflict. After a failed Commit the Writer forgets what
// it holds and loads again on its next use: the indexer fails the batch, the
// stream delivers it again, and the retry applies it over whatever was
// published meanwhile, so nothing is lost. A failed Commit never changes the
// snapshot in service: the pointer is written last.
//
// A snapshot of another embedder fails every call, with an error that says
// what cures it, until the pointer changes (Publish, by a reindex with this
// embedder, replaces it). A Writer is safe for concurrent use.
type Writer struct {
	Blobs Blobs
	// Embedder and Dimensions are the ID and vector length of the embedder
	// the documents' vectors come from.
	Embedder   string
	Dimensions int
	// Logger gets a line per publish (slog.Default when nil).
	Logger *slog.Logger
	// Now is the clock of Header.WrittenAt (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	loaded  bool
	docs    *search.DocSet
	etag    string // the pointer's ETag when loaded; "" when there was none
	seq     uint64 // the sequence of the snapshot loaded
	refused error  // the snapshot the pointer named is of another embedder
	refETag string // the ETag of that pointer
}

// NewWriter returns a Writer of e's vectors over b.
func NewWriter(b Blobs, e search.Embedder, log *slog.Logger) *Writer {
	return &Writer{Blobs: b, Embedder: e.ID(), Dimensions: e.Dimensions(), Logger: log}
}

var (
	_ search.Index     = (*Writer)(nil)
	_ search.Committer = (*Writer)(nil)
)

func (w *Writer) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

// Upsert implements search.Index: it replaces docs in memory.
func (w *Writer) Upsert(ctx context.Context, docs []search.IndexDoc) error {
	if err := w.check(docs); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.load(ctx); err != nil {
		return err
	}
	w.docs.Upsert(docs)
	return nil
}

// Delete implements search.Index: it removes the documents in memory.
func (w *Writer) Delete(ctx context.Context, ids []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.load(ctx); err != nil {
		return err
	}
	w.docs.Delete(ids)
	return nil
}

// Commit implements search.Committer: it publishes the documents in memory
// as a new snapshot, unless nothing changed since the last one.
func (w *Writer) Commit(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.docs.Dirty() {
		return nil
	}
	etag, err := w.publish(ctx, w.docs.Sorted(), w.etag, w.seq+1)
	if err != nil {
		w.forget()
		if errors.Is(err, ErrConflict) {
			return fmt.Errorf("%w: %w", search.ErrCommitConflict, err)
		}
		return err
	}
	w.etag, w.seq = etag, w.seq+1
	w.docs.MarkClean()
	return nil
}

// Publish replaces every document with docs and publishes them at once, as
// a reindex does: it reads only the pointer (for its ETag and sequence),
// not the snapshot it names, which may be of another embedder. It fails with
// ErrConflict if another writer publishes in between.
func (w *Writer) Publish(ctx context.Context, docs []search.IndexDoc) error {
	if err := w.check(docs); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forget()
	var seq uint64
	p, obj, err := ReadPointer(ctx, w.Blobs, "")
	switch {
	case errors.Is(err, ErrNotFound):
	case errors.Is(err, ErrCorrupt) && obj.ETag != "":
		w.logger().Warn("snapshot: the pointer is unreadable; a publish replaces it", "error", err)
	case err != nil:
		return err
	default:
		seq = p.Sequence
	}
	set := search.NewDocSet(docs)
	etag, err := w.publish(ctx, set.Sorted(), obj.ETag, seq+1)
	if err != nil {
		return err
	}
	w.docs, w.etag, w.seq, w.loaded = set, etag, seq+1, true
	w.refused, w.refETag = nil, ""
	return nil
}

// check refuses vectors of another length than the embedder's: they could
// never be published.
func (w *Writer) check(docs []search.IndexDoc) error {
	for i := range docs {
		d := &docs[i]
		if len(d.Vector) != w.Dimensions {
			return fmt.Errorf("snapshot: document %q has a vector of %d values, the embedder %q makes %d", d.ID, len(d.Vector), w.Embedder, w.Dimensions)
		}
		for _, r := range d.Recordings {
			if len(r.Vector) != w.Dimensions {
				return fmt.Errorf("snapshot: recording %q of document %q has a vector of %d values, the embedder %q makes %d", r.ID, d.ID, len(r.Vector), w.Embedder, w.Dimensions)
			}
		}
	}
	return nil
}

// forget drops what is in memory: the next use loads the snapshot in
// service again.
func (w *Writer) forget() {
	w.loaded, w.docs, w.etag, w.seq = false, nil, "", 0
}

// load reads the snapshot in service unless it is in memory.
func (w *Writer) load(ctx context.Context) error {
	if w.loaded {
		return nil
	}
	p, obj, err := ReadPointer(ctx, w.Blobs, w.refETag)
	switch {
	case errors.Is(err, ErrNotModified):
		return w.refused // the refused snapshot is still in service
	case errors.Is(err, ErrNotFound):
		w.refused, w.refETag = nil, ""
		w.docs, w.etag, w.seq, w.loaded = search.NewDocSet(nil), "", 0, true
		return nil
	case err != nil:
		return err
	}
	h, docs, err := LoadSnapshot(ctx, w.Blobs, p, Expect{Embedder: w.Embedder, Dimensions: w.Dimensions})
	if errors.Is(err, ErrIncompatible) {
		w.refused, w.refETag = fmt.Errorf("snapshot writer: %w", err), obj.ETag
		return w.refused
	}
	if err != nil {
		return err
	}
	w.refused, w.refETag = nil, ""
	w.docs = search.NewDocSet(docs)
	w.etag, w.seq, w.loaded = obj.ETag, h.Sequence, true
	return nil
}

// publish writes docs as snapshot seq and points the pointer whose ETag was
// etag at it; it returns the pointer's new ETag.
func (w *Writer) publish(ctx context.Context, docs []search.IndexDoc, etag string, seq uint64) (string, error) {
	start := time.Now()
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	h := Header{Embedder: w.Embedder, Dimensions: w.Dimensions, Sequence: seq, WrittenAt: now().UTC()}
	// Streamed to the store as it is encoded, never to disk: a Lambda
	// function's /tmp (512 MB by default) is smaller than the snapshot of
	// 65,000 documents, and a file a timed-out run left there would be
	// the next run's to trip on.
	var sum string
	obj, err := w.Blobs.PutStream(ctx, SnapshotKey, func(dst io.Writer) error {
		var err error
		sum, err = encode(dst, h, docs)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("snapshot: write snapshot %d: %w", seq, err)
	}
	size := obj.Size
	if obj.Version == "" {
		return "", fmt.Errorf("snapshot: %s got no version ID: the bucket must have versioning on", SnapshotKey)
	}
	p := Pointer{Key: SnapshotKey, Version: obj.Version, Sequence: seq, Embedder: w.Embedder, Dimensions: w.Dimensions,
		Documents: len(docs), Bytes: size, Checksum: checksumPrefix + sum, WrittenAt: h.WrittenAt}
	pobj, err := writePointer(ctx, w.Blobs, p, etag)
	if err != nil {
		return "", err
	}
	w.logger().Info("snapshot: published", "sequence", seq, "key", SnapshotKey, "version", obj.Version,
		"documents", len(docs), "bytes", size, "took", time.Since(start))
	return pobj.ETag, nil
}
