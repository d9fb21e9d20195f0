package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/doclib/doclib/shared/search"
)

// The writer needs to know which documents each segment holds, to count the
// dead ones (replaced or deleted by a later segment) and to leave them out
// of a merge; the manifest counts a segment's documents and deletions but
// does not name them, and a segment read back lists them only to a query.
// So beside each segment it writes, the writer writes its ID list, under
// the segment's key with idsSuffix: a few per cent of the segment's bytes,
// which the writer reads at its first merge instead of the segments
// (docs/search.md, "The embedded tier on Lambda"). Search instances never
// read it. It is deleted with its segment.
const idsSuffix = ".ids"

// idsKey is the key of the ID list of segment key.
func idsKey(key string) string { return key + idsSuffix }

// segIDs is what a segment holds and deletes, by document ID.
type segIDs struct {
	docs    []string // sorted, each once
	deleted []string
}

// An ID list is
//
//	magic      idsMagic
//	key        the segment's key (a uvarint length, then the bytes)
//	counts     documents, deletions (uvarints): the manifest's counts
//	IDs        the documents', sorted, then the deletions (each a uvarint
//	           length, then the bytes)
//	checksum   CRC-32C of everything before it (uint32, little-endian)
const (
	idsMagic = "doclib-segment-ids\x01"
	// maxIDBytes bounds an ID as the list stores it.
	maxIDBytes = 4096
)

// encodeIDs is the ID list of the segment ref names.
func encodeIDs(ref SegmentRef, s *segIDs) []byte {
	b := []byte(idsMagic)
	b = appendIDString(b, ref.Key)
	b = binary.AppendUvarint(b, uint64(len(s.docs)))
	b = binary.AppendUvarint(b, uint64(len(s.deleted)))
	for _, id := range s.docs {
		b = appendIDString(b, id)
	}
	for _, id := range s.deleted {
		b = appendIDString(b, id)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func appendIDString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxIDsSize bounds the ID list of ref: what it reads and allocates.
func maxIDsSize(ref SegmentRef) int64 {
	n := int64(ref.Documents) + int64(ref.Deleted) + 1
	return 4<<10 + n*(maxIDBytes+binary.MaxVarintLen64)
}

// decodeIDs reads the ID list of the segment ref names: one of another
// segment, other counts, unsorted documents or another checksum is
// ErrCorrupt.
func decodeIDs(data []byte, ref SegmentRef) (*segIDs, error) {
	bad := func(what string) error {
		return fmt.Errorf("snapshot: the ID list of segment %s: %s: %w", ref.Key, what, ErrCorrupt)
	}
	if len(data) < len(idsMagic)+4 || !bytes.HasPrefix(data, []byte(idsMagic)) {
		return nil, bad("not an ID list of this format")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, bad("its checksum differs")
	}
	p := idParser{b: body[len(idsMagic):]}
	if key := p.string(); p.err != nil || key != ref.Key {
		return nil, bad("it names another segment")
	}
	nDocs, nDel := p.uvarint(), p.uvarint()
	if p.err != nil || nDocs != uint64(ref.Documents) || nDel != uint64(ref.Deleted) {
		return nil, bad("its counts differ from the manifest's")
	}
	s := &segIDs{docs: make([]string, nDocs), deleted: make([]string, nDel)}
	for i := range s.docs {
		s.docs[i] = p.string()
		if i > 0 && p.err == nil && s.docs[i] <= s.docs[i-1] {
			return nil, bad("its documents are not sorted")
		}
	}
	for i := range s.deleted {
		s.deleted[i] = p.string()
	}
	if p.err != nil || len(p.b) != 0 {
		return nil, bad("it is cut short or runs on")
	}
	return s, nil
}

// idParser reads the strings of an ID list; the counts that size its
// slices were checked against the manifest, and each string against what
// is left, so nothing allocates more than the list's size.
type idParser struct {
	b   []byte
	err error
}

func (p *idParser) uvarint() uint64 {
	if p.err != nil {
		return 0
	}
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		p.err = io.ErrUnexpectedEOF
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *idParser) string() string {
	n := p.uvarint()
	if p.err != nil {
		return ""
	}
	if n > maxIDBytes || n > uint64(len(p.b)) {
		p.err = io.ErrUnexpectedEOF
		return ""
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}

// writeIDs writes the ID list of the segment ref names.
func writeIDs(ctx context.Context, b Blobs, ref SegmentRef, s *segIDs) error {
	data := encodeIDs(ref, s)
	if _, err := b.Put(ctx, idsKey(ref.Key), bytes.NewReader(data), int64(len(data)), Condition{}); err != nil {
		return fmt.Errorf("snapshot: write the ID list of segment %s: %w", ref.Key, err)
	}
	return nil
}

// readIDs reads the ID list of the segment ref names: ErrNotFound when it
// has none (a segment of an earlier version), ErrCorrupt when it is not
// the list of that segment.
func readIDs(ctx context.Context, b Blobs, ref SegmentRef) (*segIDs, error) {
	limit := maxIDsSize(ref)
	body, obj, err := b.Get(ctx, idsKey(ref.Key), GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: read the ID list of segment %s: %w", ref.Key, err)
	}
	defer body.Close()
	if obj.Size > limit {
		return nil, fmt.Errorf("snapshot: the ID list of segment %s is %d bytes, more than %d: %w", ref.Key, obj.Size, limit, ErrCorrupt)
	}
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("snapshot: read the ID list of segment %s: %w", ref.Key, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("snapshot: the ID list of segment %s is more than %d bytes: %w", ref.Key, limit, ErrCorrupt)
	}
	return decodeIDs(data, ref)
}

// sortedIDs is the IDs of docs, sorted.
func sortedIDs(docs []search.IndexDoc) []string {
	out := make([]string, len(docs))
	for i := range docs {
		out[i] = docs[i].ID
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// liveness says which segment of a manifest holds the live copy of each
// document (the newest, unless a later segment deleted it), from the
// segments' ID lists: a segment's dead documents are its documents less
// its live ones.
type liveness struct {
	keys  []string          // the manifest's segments, oldest first
	owner map[string]string // a live document → the key of its segment
	live  map[string]int    // a segment's live documents; absent when it has no ID list
}

func newLiveness() *liveness {
	return &liveness{owner: map[string]string{}, live: map[string]int{}}
}

// add adds segment key, the newest, with its ID list s (nil: none): its
// documents and deletions kill the copies of older segments, and its
// documents are live. Without a list, the kills of the segment go
// uncounted: the older segments' dead counts are then too low, never too
// high, and a merge leaves out only documents that are dead.
func (lv *liveness) add(key string, s *segIDs) {
	lv.keys = append(lv.keys, key)
	if s == nil {
		return
	}
	for _, id := range s.deleted {
		lv.kill(id)
	}
	for _, id := range s.docs {
		lv.kill(id)
		lv.owner[id] = key
	}
	lv.live[key] = len(s.docs)
}

func (lv *liveness) kill(id string) {
	if k, ok := lv.owner[id]; ok {
		lv.live[k]--
		delete(lv.owner, id)
	}
}

// counts returns the live documents of each of segs, -1 where unknown.
func (lv *liveness) counts(segs []SegmentRef) []int {
	out := make([]int, len(segs))
	for i, s := range segs {
		n, ok := lv.live[s.Key]
		if !ok || n < 0 || n > s.Documents {
			n = -1 // no list, or one that disagrees with the manifest
		}
		out[i] = n
	}
	return out
}

// split returns, when every segment of run has an ID list, the IDs of its
// live documents, sorted, and those of its documents that a later segment
// replaced or deleted: what a merge of the run keeps and leaves out.
func (lv *liveness) split(run []SegmentRef, ids map[string]*segIDs) (live, dead []string, ok bool) {
	in := make(map[string]bool, len(run))
	for _, s := range run {
		if _, ok := lv.live[s.Key]; !ok || ids[s.Key] == nil {
			return nil, nil, false
		}
		in[s.Key] = true
	}
	seen := map[string]bool{}
	for _, s := range run {
		for _, id := range ids[s.Key].docs {
			if seen[id] {
				continue
			}
			seen[id] = true
			if in[lv.owner[id]] {
				live = append(live, id)
			} else {
				dead = append(dead, id)
			}
		}
	}
	slices.Sort(live)
	slices.Sort(dead)
	return live, dead, true
}

// replace puts segment key (none when "") in the place of segments [from,
// to), holding live, the run's live documents (split).
func (lv *liveness) replace(from, to int, key string, live []string) {
	for _, k := range lv.keys[from:to] {
		delete(lv.live, k)
	}
	var with []string
	if key != "" {
		with = []string{key}
		for _, id := range live {
			lv.owner[id] = key
		}
		lv.live[key] = len(live)
	}
	lv.keys = slices.Concat(lv.keys[:from], with, lv.keys[to:])
}

// knowIDs remembers the ID list of segment key, which the writer wrote.
func (w *Writer) knowIDs(key string, s *segIDs) {
	if w.ids == nil {
		w.ids = map[string]*segIDs{}
	}
	w.ids[key] = s
}

// liveness brings the writer's liveness to the manifest's segments, and
// returns it: the segments published since it was last brought are added,
// and any other change (another writer's publish, a reindex, a merge of
// unknown documents) makes it again from the ID lists. It reads the lists
// it does not hold (a writer's first merge reads them all: a few per cent
// of the index). It returns nil when a list cannot be read now, which the
// next commit tries again.
func (w *Writer) liveness(ctx context.Context) *liveness {
	segs := w.man.Segments
	lv := w.lv
	if lv == nil || len(lv.keys) > len(segs) || !slices.EqualFunc(lv.keys, segs[:len(lv.keys)], func(k string, s SegmentRef) bool { return k == s.Key }) {
		lv = newLiveness()
	}
	added := segs[len(lv.keys):]
	if err := w.readIDLists(ctx, added); err != nil {
		w.logger().Warn("snapshot: cannot read the segments' ID lists; merges keep dead documents until a commit reads them", "error", err)
		w.lv = nil
		return nil
	}
	for _, s := range added {
		lv.add(s.Key, w.ids[s.Key])
	}
	w.lv = lv
	return lv
}

// idListReaders is how many ID lists a writer reads at once.
const idListReaders = 8

// readIDLists reads the ID lists of segs that the writer does not hold. A
// segment without one (written by an earlier version) or with one that is
// not its list is remembered as having none; another failure is returned.
func (w *Writer) readIDLists(ctx context.Context, segs []SegmentRef) error {
	var todo []SegmentRef
	for _, s := range segs {
		if _, ok := w.ids[s.Key]; !ok {
			todo = append(todo, s)
		}
	}
	lists := make([]*segIDs, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(idListReaders)
	for i, ref := range todo {
		g.Go(func() error {
			s, err := readIDs(gctx, w.Blobs, ref)
			switch {
			case errors.Is(err, ErrNotFound):
			case errors.Is(err, ErrCorrupt):
				w.logger().Error("snapshot: a segment's ID list is unusable; its dead documents are not counted", "key", ref.Key, "error", err)
			case err != nil:
				return err
			}
			lists[i] = s
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, ref := range todo {
		w.knowIDs(ref.Key, lists[i])
	}
	return nil
}
