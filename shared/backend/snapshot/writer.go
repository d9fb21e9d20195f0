package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/search"
)

// Writer is the indexer's side of the embedded tier: a search.Index that
// holds the documents written and deleted since the last Commit
// (search.Committer), and publishes them at Commit as one new segment.
//
// On first use it reads the manifest (none: it starts empty) and remembers
// its ETag. Commit writes the batch as a new segment under a key of its own,
// then replaces the manifest, with the segment added, on condition that it
// still has that ETag: of two writers that read the same manifest one
// publishes and the other gets ErrConflict. After a failed Commit the Writer
// forgets the batch and the manifest: the indexer fails the batch, the
// stream delivers it again, and the retry applies it over whatever was
// published meanwhile, so nothing is lost, and a segment written before a
// crash or a conflict is named by no manifest, never served. A failed Commit
// never changes the index in service: the manifest is written last.
//
// After a publish, Commit merges segments as the merge policy asks
// (MergePolicy), each merge published by a manifest of its own: a batch is
// in service before any merge starts, and a merge that fails or loses a
// race is logged and given up, the batch staying published.
//
// A manifest of another embedder fails every call, with an error that says
// what cures it, until the manifest changes (Publish, by a reindex with this
// embedder, replaces it). A Writer is safe for concurrent use.
type Writer struct {
	Blobs Blobs
	// Embedder is the embedder the documents' vectors come from (its ID and
	// dimensions are what the segments record).
	Embedder search.Embedder
	// Source is written in every manifest (Manifest.Source).
	Source string
	// EmbedderFile is written in every manifest (Manifest.EmbedderFile):
	// the file of the embedder, which PutFile wrote.
	EmbedderFile *FileRef
	// Policy chooses the merges (DefaultMergePolicy when zero).
	Policy MergePolicy
	// PublishDocuments bounds the segments of a whole publish (Publish, and
	// the migration of a single snapshot): DefaultPublishDocuments when 0.
	PublishDocuments int
	// RetireAfter is how long a segment no manifest names any more is kept
	// before the writer deletes it (DefaultRetireAfter when 0).
	RetireAfter time.Duration
	// Logger gets a line per publish (slog.Default when nil).
	Logger *slog.Logger
	// Now is the clock of Manifest.WrittenAt (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	loaded  bool
	man     Manifest
	etag    string // the manifest's ETag when loaded; "" when there was none
	batch   map[string]search.IndexDoc
	deleted map[string]bool
	cache   map[string]*segment // segments written or read for merges, by key
	ids     map[string]*segIDs  // the segments' ID lists, by key; nil: the segment has none (ids.go)
	lv      *liveness           // which segment holds each live document, as the ID lists say
	refused error               // the manifest names another embedder
	refETag string              // the ETag of that manifest
}

// NewWriter returns a Writer of e's vectors over b.
func NewWriter(b Blobs, e search.Embedder, log *slog.Logger) *Writer {
	return &Writer{Blobs: b, Embedder: e, Logger: log}
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

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// Upsert implements search.Index: it adds docs to the batch.
func (w *Writer) Upsert(ctx context.Context, docs []search.IndexDoc) error {
	if err := w.check(docs); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.load(ctx); err != nil {
		return err
	}
	for _, d := range docs {
		w.batch[d.ID] = d
		delete(w.deleted, d.ID)
	}
	return nil
}

// Delete implements search.Index: it adds the deletions to the batch.
func (w *Writer) Delete(ctx context.Context, ids []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.load(ctx); err != nil {
		return err
	}
	for _, id := range ids {
		delete(w.batch, id)
		w.deleted[id] = true
	}
	return nil
}

// Commit implements search.Committer: it publishes the batch as a new
// segment, unless it is empty, then merges as the policy asks.
func (w *Writer) Commit(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.loaded || len(w.batch) == 0 && len(w.deleted) == 0 {
		return nil
	}
	docs := make([]search.IndexDoc, 0, len(w.batch))
	for _, d := range w.batch {
		docs = append(docs, d)
	}
	deleted := make([]string, 0, len(w.deleted))
	for id := range w.deleted {
		deleted = append(deleted, id)
	}
	slices.Sort(deleted)
	if len(w.man.Segments) == 0 {
		deleted = nil // nothing older to delete from
	}
	segs := append(slices.Clone(w.man.Segments), SegmentRef{})
	sg, err := w.publish(ctx, docs, deleted, func(ref SegmentRef) []SegmentRef {
		segs[len(segs)-1] = ref
		return segs
	})
	if err != nil {
		w.forget()
		if errors.Is(err, ErrConflict) {
			return fmt.Errorf("%w: %w", search.ErrCommitConflict, err)
		}
		return err
	}
	w.keep(sg)
	clear(w.batch)
	clear(w.deleted)
	w.merge(ctx)
	return nil
}

// DefaultPublishDocuments is the most documents of a segment a whole
// publish writes: 100,000 documents make four segments of about 90 MB at
// 1,024 dimensions, which a search instance reads four at a time
// (Follower.Readers), where one object would be one stream. Segments that
// size are above the merge policy's MaxMergeDocuments: never merged again.
const DefaultPublishDocuments = 25_000

// Publish replaces every document with docs and publishes them at once, as
// a reindex does: segments of at most PublishDocuments documents (by
// library, then ID), and a manifest that names them alone. It reads
// only the manifest's ETag and sequence, not what it names, which may be of
// another embedder. It fails with ErrConflict if another writer publishes
// in between.
func (w *Writer) Publish(ctx context.Context, docs []search.IndexDoc) error {
	if err := w.check(docs); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forget()
	m, obj, err := ReadManifest(ctx, w.Blobs, "")
	switch {
	case errors.Is(err, ErrNotFound):
	case errors.Is(err, ErrCorrupt) && obj.ETag != "":
		w.logger().Warn("snapshot: the manifest is unusable; a publish replaces it", "error", err)
		m = Manifest{Sequence: m.Sequence} // what it names is not to be trusted, nor deleted
	case errors.Is(err, ErrIncompatible) && obj.ETag != "":
		w.logger().Warn("snapshot: the manifest is of another embedder or format; a publish replaces it", "error", err)
	case err != nil:
		return err
	}
	// The segments it names are retired, to be deleted later.
	w.man, w.etag = Manifest{Sequence: m.Sequence, Segments: m.Segments, Retired: m.Retired}, obj.ETag
	if err := w.publishWhole(ctx, docs); err != nil {
		w.forget()
		return err
	}
	w.batch, w.deleted, w.loaded = map[string]search.IndexDoc{}, map[string]bool{}, true
	w.refused, w.refETag = nil, ""
	return nil
}

// publishWhole writes docs, sorted, as segments of at most PublishDocuments
// documents each, then a manifest that names them alone.
func (w *Writer) publishWhole(ctx context.Context, docs []search.IndexDoc) error {
	start := time.Now()
	docs = search.NewDocSet(docs).Sorted()
	per := w.PublishDocuments
	if per <= 0 {
		per = DefaultPublishDocuments
	}
	seq := w.man.Sequence + 1
	var segs []*segment
	var refs []SegmentRef
	var lists []*segIDs
	for from := 0; from == 0 || from < len(docs); from += per {
		chunk := docs[from:min(from+per, len(docs))]
		x, err := localsearch.FromDocs(ctx, chunk, w.Embedder, localsearch.Options{})
		if err != nil {
			return fmt.Errorf("snapshot: index the documents: %w", err)
		}
		sg, err := writeSegment(ctx, w.Blobs, seq, x, nil)
		if err != nil {
			return err
		}
		ids := &segIDs{docs: sortedIDs(chunk)}
		if err := writeIDs(ctx, w.Blobs, sg.ref, ids); err != nil {
			return err
		}
		segs, refs, lists = append(segs, sg), append(refs, sg.ref), append(lists, ids)
	}
	// The whole corpus is here: measure the embedder's chance level on it,
	// for the search instances' thresholds. A word of any segment is a
	// word of the corpus.
	known := func(word string) bool {
		for _, sg := range segs {
			if sg.x.Knows(word) {
				return true
			}
		}
		return false
	}
	cal, err := search.Calibrate(ctx, w.Embedder, docs, known)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// The index is whole without it: the searches keep the embedder's
		// default thresholds until the next reindex calibrates.
		w.logger().Warn("snapshot: cannot calibrate the embedder; its default thresholds hold until the next reindex", "error", err)
	}
	w.man.Calibration = cal
	if err := w.publishManifest(ctx, refs); err != nil {
		return err
	}
	w.logger().Info("snapshot: published", "sequence", seq, "segments", len(refs), "documents", len(docs), "took", time.Since(start))
	for i, sg := range segs {
		w.knowIDs(sg.ref.Key, lists[i])
		w.keep(sg)
	}
	return nil
}

// check refuses vectors of another length than the embedder's: they could
// never be published.
func (w *Writer) check(docs []search.IndexDoc) error {
	dims := w.Embedder.Dimensions()
	for i := range docs {
		d := &docs[i]
		if len(d.Vector) != dims {
			return fmt.Errorf("snapshot: document %q has a vector of %d values, the embedder %q makes %d", d.ID, len(d.Vector), w.Embedder.ID(), dims)
		}
		for _, r := range d.Recordings {
			if len(r.Vector) != dims {
				return fmt.Errorf("snapshot: recording %q of document %q has a vector of %d values, the embedder %q makes %d", r.ID, d.ID, len(r.Vector), w.Embedder.ID(), dims)
			}
		}
	}
	return nil
}

// forget drops the batch and the manifest: the next use reads the manifest
// again, and the stream delivers the batch again.
func (w *Writer) forget() {
	w.loaded, w.man, w.etag, w.batch, w.deleted = false, Manifest{}, "", nil, nil
}

// load reads the manifest unless it is in memory.
func (w *Writer) load(ctx context.Context) error {
	if w.loaded {
		return nil
	}
	m, obj, err := ReadManifest(ctx, w.Blobs, w.refETag)
	switch {
	case errors.Is(err, ErrNotModified):
		return w.refused // the refused manifest is still in service
	case errors.Is(err, ErrNotFound):
		m, obj, err = Manifest{}, Object{}, w.migrate(ctx)
		if err == nil && w.loaded {
			return nil // the single snapshot, published as a segment
		}
	case err == nil:
		err = m.compatible(w.Embedder.ID(), w.Embedder.Dimensions())
	}
	if errors.Is(err, ErrIncompatible) {
		w.refused, w.refETag = fmt.Errorf("snapshot writer: %w", err), obj.ETag
		return w.refused
	}
	if err != nil {
		return err
	}
	w.refused, w.refETag = nil, ""
	w.man, w.etag, w.loaded = m, obj.ETag, true
	w.batch, w.deleted = map[string]search.IndexDoc{}, map[string]bool{}
	return nil
}

// migrate publishes the single-format snapshot the pointer names, if any,
// as the first segment: a stack upgraded from that format keeps its index.
// Without a pointer it does nothing. The caller found no manifest.
func (w *Writer) migrate(ctx context.Context) error {
	p, _, err := ReadPointer(ctx, w.Blobs, "")
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, docs, err := LoadSnapshot(ctx, w.Blobs, p, Expect{Embedder: w.Embedder.ID(), Dimensions: w.Embedder.Dimensions()})
	if err != nil {
		return err
	}
	w.man, w.etag = Manifest{Sequence: p.Sequence}, ""
	if err := w.publishWhole(ctx, docs); err != nil {
		w.forget()
		return err
	}
	w.logger().Info("snapshot: the single-format snapshot is now the first segment", "sequence", p.Sequence, "documents", len(docs))
	w.batch, w.deleted, w.loaded = map[string]search.IndexDoc{}, map[string]bool{}, true
	return nil
}

// publish writes docs and deleted as a new segment, then the manifest whose
// segments list(segment) returns, over the one in memory; it updates the
// manifest in memory.
func (w *Writer) publish(ctx context.Context, docs []search.IndexDoc, deleted []string, list func(SegmentRef) []SegmentRef) (*segment, error) {
	start := time.Now()
	x, err := localsearch.FromDocs(ctx, docs, w.Embedder, localsearch.Options{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: index the batch: %w", err)
	}
	seq := w.man.Sequence + 1
	sg, err := writeSegment(ctx, w.Blobs, seq, x, deleted)
	if err != nil {
		return nil, err
	}
	ids := &segIDs{docs: sortedIDs(docs), deleted: deleted}
	if err := writeIDs(ctx, w.Blobs, sg.ref, ids); err != nil {
		return nil, err
	}
	if err := w.publishManifest(ctx, list(sg.ref)); err != nil {
		return nil, err
	}
	w.knowIDs(sg.ref.Key, ids)
	w.logger().Info("snapshot: published", "sequence", seq, "segment", sg.ref.Key, "documents", sg.ref.Documents,
		"deleted", len(deleted), "bytes", sg.ref.Bytes, "segments", len(w.man.Segments), "took", time.Since(start))
	return sg, nil
}

// DefaultRetireAfter is how long a retired segment is kept: a search
// instance reads the segments a manifest names within seconds of reading it.
const DefaultRetireAfter = 15 * time.Minute

// publishManifest writes the next manifest, of segs, over the one in memory.
// The segments the one in memory named and segs does not are retired; those
// retired longer than RetireAfter ago are deleted first, and a delete that
// fails leaves its segment listed, for the next publish to try again.
func (w *Writer) publishManifest(ctx context.Context, segs []SegmentRef) error {
	now := w.now().UTC()
	m := Manifest{Format: ManifestFormat, Sequence: w.man.Sequence + 1, Embedder: w.Embedder.ID(), Dimensions: w.Embedder.Dimensions(),
		SegmentFormat: localsearch.SegmentFormat, Source: w.Source, EmbedderFile: w.EmbedderFile, Segments: segs, WrittenAt: now}
	if c := w.man.Calibration; c != nil && c.Embedder == w.Embedder.ID() {
		m.Calibration = c // measured by the last whole publish, kept until the next
	}
	live := map[string]bool{}
	for _, s := range segs {
		m.Documents += s.Documents
		live[s.Key] = true
	}
	after := w.RetireAfter
	if after <= 0 {
		after = DefaultRetireAfter
	}
	// Only segments are ever deleted: a manifest of another format is not
	// checked as this one is.
	for _, r := range w.man.Retired {
		if live[r.Key] || !strings.HasPrefix(r.Key, SegmentPrefix) {
			continue
		}
		if now.Sub(r.At) >= after {
			err := w.Blobs.Delete(ctx, idsKey(r.Key)) // first: a list left alone would stay for ever
			if err == nil {
				err = w.Blobs.Delete(ctx, r.Key)
			}
			if err == nil {
				continue
			}
			w.logger().Warn("snapshot: cannot delete a retired segment; the next publish tries again", "key", r.Key, "error", err)
		}
		m.Retired = append(m.Retired, r)
	}
	for _, s := range w.man.Segments {
		if !live[s.Key] && strings.HasPrefix(s.Key, SegmentPrefix) {
			m.Retired = append(m.Retired, Retired{Key: s.Key, At: now})
		}
	}
	if n := len(m.Retired) - maxSegments; n > 0 { // deletes keep failing: forget the oldest
		w.logger().Error("snapshot: too many retired segments left undeleted; the oldest are forgotten (the bucket keeps them)", "forgotten", n)
		m.Retired = m.Retired[n:]
	}
	etag, err := writeManifest(ctx, w.Blobs, m, w.etag)
	if err != nil {
		return err
	}
	w.man, w.etag = m, etag
	return nil
}

// keep caches a segment for later merges, if the policy may merge it soon,
// and drops what the manifest no longer names.
func (w *Writer) keep(sg *segment) {
	if w.cache == nil {
		w.cache = map[string]*segment{}
	}
	live := map[string]bool{}
	for _, s := range w.man.Segments {
		live[s.Key] = true
	}
	for k := range w.cache {
		if !live[k] {
			delete(w.cache, k)
		}
	}
	for k := range w.ids {
		if !live[k] {
			delete(w.ids, k)
		}
	}
	if sg != nil && sg.ref.Documents <= w.policy().CacheDocuments {
		w.cache[sg.ref.Key] = sg
	}
}

func (w *Writer) policy() MergePolicy {
	if w.Policy.Factor == 0 {
		return DefaultMergePolicy
	}
	return w.Policy
}

// merge runs the merges the policy asks for, each published on its own:
// the log-structured ones, then one rewrite of the segment whose dead
// documents passed the policy's share the most, if any
// (MergePolicy.DeadShare). The first that fails ends them, logged: the
// batch is published already. A commit adds a dead document to one
// segment per document it writes or deletes, so one rewrite per commit
// keeps up with the changes; segments that pass the share together (a
// reindex's, under changes spread evenly) are rewritten in turn, one per
// commit, each a read and a write of up to a segment (seconds).
func (w *Writer) merge(ctx context.Context) {
	p := w.policy()
	for range maxMergesPerCommit {
		from, to, ok := p.next(w.man.Segments)
		if !ok {
			break
		}
		if !w.tryMerge(ctx, from, to, false) {
			return
		}
	}
	if p.DeadShare <= 0 {
		return
	}
	if lv := w.liveness(ctx); lv != nil {
		if from, to, ok := p.rewrite(w.man.Segments, lv.counts(w.man.Segments)); ok {
			w.tryMerge(ctx, from, to, true)
		}
	}
}

// tryMerge runs mergeRun, and logs it if it fails: false then.
func (w *Writer) tryMerge(ctx context.Context, from, to int, rewrite bool) bool {
	err := w.mergeRun(ctx, from, to, rewrite)
	if err == nil {
		return true
	}
	w.logger().Warn("snapshot: a merge failed; the segments stay as they are until the next commit tries again",
		"from", from, "to", to, "rewrite", rewrite, "error", err)
	if errors.Is(err, ErrConflict) {
		w.forget()
	}
	return false
}

// maxMergesPerCommit bounds the cascade of log-structured merges one
// commit runs.
const maxMergesPerCommit = 4

// mergeRun replaces segments [from, to) of the manifest by their merge: one
// segment of their live documents, or none when they hold none and delete
// nothing. When every segment of the run has an ID list, the documents a
// later segment replaced or deleted are left out too (a rewrite is such a
// merge); otherwise only those the run itself replaced or deleted.
func (w *Writer) mergeRun(ctx context.Context, from, to int, rewrite bool) error {
	start := time.Now()
	run := w.man.Segments[from:to]
	segs := make([]*segment, len(run))
	for i, ref := range run {
		sg, ok := w.cache[ref.Key]
		if !ok {
			var err error
			if sg, err = readSegment(ctx, w.Blobs, ref, w.Embedder); err != nil {
				return err
			}
		}
		segs[i] = sg
	}
	var live, dead []string
	clean := false
	if lv := w.liveness(ctx); lv != nil {
		live, dead, clean = lv.split(run, w.ids)
	}
	if rewrite && !clean {
		return errors.New("snapshot: a rewrite of segments without ID lists")
	}
	var x *localsearch.Index
	var deleted []string
	var err error
	if clean {
		x, deleted, err = w.mergeLive(ctx, segs, from > 0, dead)
		if err == nil && x.Stats().Documents != len(live) {
			err = fmt.Errorf("snapshot: a merge of %d segments holds %d documents where their ID lists say %d are live", len(run), x.Stats().Documents, len(live))
		}
	} else {
		var tail *localsearch.Segments
		if tail, err = fold(w.Embedder, segs); err == nil {
			x, deleted, err = tail.MergeTail(ctx, from > 0)
		}
	}
	if err != nil {
		return err
	}
	var sg *segment
	var with []SegmentRef
	var ids *segIDs
	if x.Stats().Documents > 0 || len(deleted) > 0 {
		if sg, err = writeSegment(ctx, w.Blobs, w.man.Sequence+1, x, deleted); err != nil {
			return err
		}
		if clean {
			ids = &segIDs{docs: live, deleted: deleted}
			if err := writeIDs(ctx, w.Blobs, sg.ref, ids); err != nil {
				return err
			}
		}
		with = []SegmentRef{sg.ref}
	}
	lv := w.lv
	if err := w.publishManifest(ctx, slices.Concat(w.man.Segments[:from], with, w.man.Segments[to:])); err != nil {
		return err
	}
	key := ""
	if sg != nil {
		key = sg.ref.Key
		w.knowIDs(key, ids)
	}
	if clean && lv != nil {
		lv.replace(from, to, key, live)
	} else {
		w.lv = nil // made again from the lists at the next merge
	}
	w.keep(sg)
	w.logger().Info("snapshot: merged", "sequence", w.man.Sequence, "segments", to-from, "into", key, "rewrite", rewrite,
		"documents", x.Stats().Documents, "dead_left_out", len(dead), "deleted", len(deleted), "bytes", refBytes(sg), "took", time.Since(start))
	return nil
}

func refBytes(sg *segment) int64 {
	if sg == nil {
		return 0
	}
	return sg.ref.Bytes
}

// mergeLive merges segs, a run of the manifest's segments, leaving out the
// documents dead names (those a later segment replaced or deleted); older
// says that segments older than the run exist, whose documents the run's
// deletions still delete. It folds the run between an empty segment that
// stands for the older ones and one that deletes dead, in place of the
// later ones, so that localsearch's merge drops what they kill.
func (w *Writer) mergeLive(ctx context.Context, segs []*segment, older bool, dead []string) (*localsearch.Index, []string, error) {
	empty, err := localsearch.FromDocs(ctx, nil, w.Embedder, localsearch.Options{})
	if err != nil {
		return nil, nil, err
	}
	s := localsearch.NewSegments(w.Embedder)
	first := 0
	if older {
		if s, err = s.With(empty, nil); err != nil {
			return nil, nil, err
		}
		first = 1
	}
	for _, sg := range segs {
		if s, err = s.With(sg.x, sg.deleted); err != nil {
			return nil, nil, err
		}
	}
	if len(dead) > 0 {
		if s, err = s.With(empty, dead); err != nil {
			return nil, nil, err
		}
	}
	return s.Merge(ctx, first, first+len(segs))
}
