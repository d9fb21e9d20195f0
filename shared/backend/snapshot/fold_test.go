package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/search"
)

// segmentBytes is the file of a segment of docs that deletes deleted.
func segmentBytes(t testing.TB, docs []search.IndexDoc, deleted []string) []byte {
	t.Helper()
	x, err := localsearch.FromDocs(context.Background(), docs, testEmb, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, _, err := localsearch.WriteSegment(&b, x, deleted); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzFold: three segments read from arbitrary bytes (their checksums made
// valid, so that the fuzzer reaches what is behind them), the ones that
// read folded oldest first as a follower folds a manifest's segments. No
// input makes the fold panic or allocate more than a bounded multiple of
// the bytes (a segment's reader allows 32 times; FuzzReadSegment); the fold
// lists each live document once, and answers as the one index its merge
// makes.
func FuzzFold(f *testing.F) {
	older := append(docs("a", "b", "c"), search.IndexDoc{Doc: search.Doc{ID: "e", LibraryID: "lib_2"}, Title: "other", Vector: vec(dims, 3)})
	f.Add(segmentBytes(f, older, nil), segmentBytes(f, docs("b", "d"), []string{"a"}), segmentBytes(f, nil, []string{"d", "zz"}))
	f.Add(segmentBytes(f, docs("a"), nil), segmentBytes(f, docs("a"), []string{"a"}), segmentBytes(f, docs("a", "b"), nil))
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	ctx := context.Background()
	rules := search.DefaultRules(testEmb.ID())
	q := &search.Query{Text: "title of b", Vector: vec(dims, 1), Libraries: []string{"lib", "lib_2"}, Limit: 100, Rules: &rules}
	list := func(r search.Retriever) ([]string, int, error) {
		hits, total, err := r.MostActive(ctx, q, search.Filter{}, 0, 10_000)
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.Doc.ID
		}
		return ids, total, err
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		size := len(a) + len(b) + len(c)
		var segs []*segment
		var held int
		var folded *localsearch.Segments
		var err error
		n := allocated(func() {
			for _, data := range [][]byte{a, b, c} {
				data = bytes.Clone(data)
				if len(data) >= 4 {
					binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], castagnoli))
				}
				x, deleted, err := localsearch.ReadSegment(bytes.NewReader(data), int64(len(data)), testEmb)
				if err != nil {
					continue // refused: the follower keeps its last good index
				}
				segs = append(segs, &segment{x: x, deleted: deleted})
				held += x.Stats().Documents
			}
			folded, err = fold(testEmb, segs)
		})
		if limit := 40*uint64(size) + 4<<20; n > limit {
			t.Fatalf("%d bytes of segments allocated %d reading and folding them, more than %d", size, n, limit)
		}
		if err != nil {
			t.Fatalf("segments of this embedder that read do not fold: %v", err)
		}
		if folded.Len() > held {
			t.Fatalf("%d live documents of %d held", folded.Len(), held)
		}
		ids, total, err := list(folded)
		if err != nil {
			t.Fatal(err)
		}
		if total != len(ids) || len(ids) > folded.Len() {
			t.Fatalf("%d documents listed, total %d, %d live", len(ids), total, folded.Len())
		}
		if sorted := slices.Sorted(slices.Values(ids)); len(slices.Compact(sorted)) != len(ids) {
			t.Fatalf("a document is listed twice: %v", ids)
		}
		if err := folded.Candidates(ctx, q, func(search.Candidate) {}); err != nil {
			t.Fatal(err)
		}
		merged, _, err := folded.Merge(ctx, 0, folded.Count())
		if err != nil {
			return // a crafted segment may hold what a merge refuses to write
		}
		if want, _, err := list(merged); err != nil || !slices.Equal(ids, want) {
			t.Fatalf("the fold lists %v, the index it merges to %v (%v)", ids, want, err)
		}
	})
}
