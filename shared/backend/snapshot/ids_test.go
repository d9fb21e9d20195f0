package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/search"
)

// segmentKeys are the segments m holds, without their ID lists.
func segmentKeys(m *Memory) []string {
	var out []string
	for _, k := range m.Keys(SegmentPrefix) {
		if !strings.HasSuffix(k, idsSuffix) {
			out = append(out, k)
		}
	}
	return out
}

// segmentIDs reads the segment ref names and returns its documents' IDs,
// sorted, and its deletions, through the engine's own listing: what the
// segment holds, whatever its ID list says.
func segmentIDs(t testing.TB, b Blobs, e search.Embedder, ref SegmentRef, libs []string) ([]string, []string) {
	t.Helper()
	ctx := context.Background()
	sg, err := readSegment(ctx, b, ref, e)
	if err != nil {
		t.Fatal(err)
	}
	n := sg.x.Stats().Documents
	got, _, err := sg.x.MostActive(ctx, &search.Query{Vector: make([]float32, e.Dimensions()), Libraries: libs}, search.Filter{}, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(got))
	for i, c := range got {
		ids[i] = c.Doc.ID
	}
	if len(ids) != n {
		t.Fatalf("segment %s lists %d of its %d documents", ref.Key, len(ids), n)
	}
	slices.Sort(ids)
	return ids, sg.deleted
}

func readMan(t testing.TB, b Blobs) Manifest {
	t.Helper()
	man, _, err := ReadManifest(context.Background(), b, "")
	if err != nil {
		t.Fatal(err)
	}
	return man
}

// merging is a writer whose policy merges segments of up to 40 documents,
// 10 at a time; a publish writes segments of 50.
func merging(m Blobs) *Writer {
	w := newWriter(m)
	w.Policy = MergePolicy{Factor: 10, MinDocuments: 10, MaxMergeDocuments: 40}
	w.PublishDocuments = 50
	return w
}

// changed is document id as a later version writes it.
func changed(id string, version int) search.IndexDoc {
	d := doc(id)
	d.Title = fmt.Sprintf("title of %s, version %d", id, version)
	return d
}

func ids(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("d%04d", i))
	}
	return out
}

// TestMergeLeavesOutWhatLaterSegmentsKilled merges the two oldest of three
// segments, whose documents the third replaced or deleted: the merged
// segment holds only the live ones. A run all dead is dropped.
func TestMergeLeavesOutWhatLaterSegmentsKilled(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	w := newWriter(m)
	w.Policy = MergePolicy{Factor: 100, MinDocuments: 1} // no merge of its own
	for _, batch := range [][]string{{"a", "b", "c"}, {"d", "e"}, {"a", "e"}} {
		if err := w.Upsert(ctx, docs(batch...)); err != nil {
			t.Fatal(err)
		}
		if batch[0] == "a" && len(batch) == 2 {
			if err := w.Delete(ctx, []string{"b"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.mergeRun(ctx, 0, 2, false); err != nil {
		t.Fatal(err)
	}
	man := readMan(t, m)
	if len(man.Segments) != 2 {
		t.Fatalf("%d segments after a merge of two of three", len(man.Segments))
	}
	if got, _ := segmentIDs(t, m, testEmb, man.Segments[0], []string{"lib"}); !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("the merged segment holds %v; want c and d, the others replaced or deleted by the last segment", got)
	}
	wantIDs(t, newFollower(t, m, &clock{}), "a", "c", "d", "e")

	// A segment of documents all replaced since, which deletes nothing,
	// goes with nothing in its place.
	if err := w.Upsert(ctx, docs("c", "d")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.mergeRun(ctx, 0, 1, true); err != nil {
		t.Fatal(err)
	}
	if man := readMan(t, m); len(man.Segments) != 2 {
		t.Errorf("%d segments after the rewrite of a dead one; want the two after it", len(man.Segments))
	}
	wantIDs(t, newFollower(t, m, &clock{}), "a", "c", "d", "e")
}

// TestIDListsGoWithTheirSegments: every segment in the bucket has its ID
// list beside it, through publishes, merges and rewrites, and a list is
// deleted with its retired segment.
func TestIDListsGoWithTheirSegments(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	w := rewriting(m)
	w.Now = c.Now
	if err := w.Publish(ctx, docs(ids(0, 100)...)); err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for i := range 60 {
		if err := w.Upsert(ctx, []search.IndexDoc{changed(ids(i, i+1)[0], 1)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		for _, s := range readMan(t, m).Segments {
			named[s.Key] = true
		}
		c.Add(time.Minute)
	}
	segs := segmentKeys(m)
	if len(segs) >= len(named) {
		t.Fatalf("%d segments named, %d in the bucket: none was deleted", len(named), len(segs))
	}
	var lists []string
	for _, k := range m.Keys(SegmentPrefix) {
		if strings.HasSuffix(k, idsSuffix) {
			lists = append(lists, strings.TrimSuffix(k, idsSuffix))
		}
	}
	if !slices.Equal(segs, lists) {
		t.Errorf("segments %v\nhave ID lists %v", segs, lists)
	}
}

// TestSegmentsWithoutIDListsAreKept: a bucket of an earlier version has no
// ID lists: its segments are never rewritten, merges keep what they kept
// before, nothing fails, and what is written from then on has its lists.
func TestSegmentsWithoutIDListsAreKept(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	if err := rewriting(m).Publish(ctx, docs(ids(0, 100)...)); err != nil {
		t.Fatal(err)
	}
	reindex := readMan(t, m).Segments
	for _, s := range reindex {
		if err := m.Delete(ctx, idsKey(s.Key)); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	w := rewriting(m)
	w.Logger = slogTo(&logs)
	for i := range 30 { // 30 of the first segment's 50
		if err := w.Upsert(ctx, []search.IndexDoc{changed(ids(i, i+1)[0], 1)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	man := readMan(t, m)
	if man.Segments[0].Key != reindex[0].Key {
		t.Error("a segment without an ID list was rewritten")
	}
	if strings.Contains(logs.String(), "failed") || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the writer complained:\n%s", logs.String())
	}
	for _, s := range man.Segments[len(reindex):] {
		if _, err := readIDs(ctx, m, s); err != nil {
			t.Errorf("a segment written since: %v", err)
		}
	}
	wantIDs(t, newFollower(t, m, &clock{}), ids(0, 100)...)
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// TestIDListsAreChecked: an ID list of another segment, of other counts,
// unsorted, cut short, running on, with a byte flipped, or larger than
// its counts allow, is refused; a good one reads back.
func TestIDListsAreChecked(t *testing.T) {
	ref := SegmentRef{Key: SegmentPrefix + "000000000001-00000000.seg", Documents: 3, Deleted: 1}
	good := &segIDs{docs: []string{"a", "b", "c"}, deleted: []string{"z"}}
	data := encodeIDs(ref, good)
	got, err := decodeIDs(data, ref)
	if err != nil || !slices.Equal(got.docs, good.docs) || !slices.Equal(got.deleted, good.deleted) {
		t.Fatalf("a good list: %+v, %v", got, err)
	}
	resum := func(b []byte) []byte {
		b = bytes.Clone(b[:len(b)-4])
		return binary.LittleEndian.AppendUint32(b, crc32c(b))
	}
	other := ref
	other.Key = SegmentPrefix + "000000000002-00000000.seg"
	flipped := bytes.Clone(data)
	flipped[len(idsMagic)+5] ^= 1
	for name, bad := range map[string][]byte{
		"another segment's": encodeIDs(other, good),
		"other counts":      encodeIDs(ref, &segIDs{docs: []string{"a", "b"}, deleted: []string{"z", "y"}}),
		"unsorted":          encodeIDs(ref, &segIDs{docs: []string{"b", "a", "c"}, deleted: []string{"z"}}),
		"a document twice":  encodeIDs(ref, &segIDs{docs: []string{"a", "a", "c"}, deleted: []string{"z"}}),
		"cut short":         resum(data[:len(data)-6]),
		"running on":        resum(append(bytes.Clone(data[:len(data)-4]), 'x', 0, 0, 0, 0)),
		"a byte flipped":    flipped,
		"another format":    resum(append([]byte("doclib-segment-ids\x02"), data[len(idsMagic):]...)),
		"an ID of 5,000 B":  encodeIDs(ref, &segIDs{docs: []string{"a", "b", strings.Repeat("c", 5000)}, deleted: []string{"z"}}),
		"nothing":           nil,
		"only the checksum": {0, 0, 0, 0},
	} {
		if _, err := decodeIDs(bad, ref); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	// readIDs refuses an object over the bound of its counts before
	// reading it.
	ctx := context.Background()
	m := NewMemory()
	big := bytes.Repeat([]byte{0}, int(maxIDsSize(ref))+1)
	if _, err := m.Put(ctx, idsKey(ref.Key), bytes.NewReader(big), int64(len(big)), Condition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := readIDs(ctx, m, ref); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a list too large: %v", err)
	}
	if _, err := readIDs(ctx, m, other); !errors.Is(err, ErrNotFound) {
		t.Errorf("no list: %v, want ErrNotFound", err)
	}
}
