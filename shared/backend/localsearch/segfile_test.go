package localsearch_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/internal/suites/embedtest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

func segmentBytes(t testing.TB, x *localsearch.Index, deleted []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, sum, err := localsearch.WriteSegment(&buf, x, deleted)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteSegment says %d bytes, wrote %d", n, buf.Len())
	}
	if got := crc32.Checksum(buf.Bytes()[:buf.Len()-4], crc32.MakeTable(crc32.Castagnoli)); got != sum {
		t.Fatalf("WriteSegment says CRC %08x, the bytes sum to %08x", sum, got)
	}
	return buf.Bytes()
}

func readSegment(b []byte, e search.Embedder) (*localsearch.Index, []string, error) {
	return localsearch.ReadSegment(bytes.NewReader(b), int64(len(b)), e)
}

// TestSegmentFileRoundTrip writes the segments of a random history to files
// and reads them back: the segments read answer as one index of the live
// documents, a segment read and written again is the same bytes, and the
// merge of every segment is the same bytes as the index FromDocs builds of
// the live documents.
func TestSegmentFileRoundTrip(t *testing.T) {
	defer localsearch.SetClusterSize(16)() // codes in slots of their own
	ctx := context.Background()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 800}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &memoEmbedder{Embedder: h, m: map[string][]float32{}}
	docs := indexDocs(t, d, e)
	rng := rand.New(rand.NewPCG(2, 7))
	hist := newHistory(rng, docs, 5)
	read := localsearch.NewSegments(e)
	for _, b := range hist.batches {
		x, err := localsearch.FromDocs(ctx, b.docs, e, localsearch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		file := segmentBytes(t, x, b.deleted)
		y, deleted, err := readSegment(file, e)
		if err != nil {
			t.Fatal(err)
		}
		if len(deleted) != len(b.deleted) {
			t.Fatalf("%d deletions written, %d read", len(b.deleted), len(deleted))
		}
		if again := segmentBytes(t, y, deleted); !bytes.Equal(again, file) {
			t.Fatal("a segment read and written again differs")
		}
		if read, err = read.With(y, deleted); err != nil {
			t.Fatal(err)
		}
	}
	one, err := localsearch.FromDocs(ctx, hist.final, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compareRetrievers(t, d, e, one, read, rng)
	merged, deleted, err := read.Merge(ctx, 0, read.Count())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(segmentBytes(t, merged, deleted), segmentBytes(t, one, nil)) {
		t.Fatal("the merge of every segment is not the index of the live documents")
	}
}

// TestSegmentFileRefuses reads segments that are cut short, corrupt, of
// another embedder or of another format: each is refused with the error
// that says which.
func TestSegmentFileRefuses(t *testing.T) {
	docs := smallDocs()
	e := embedtest.Named{Name: "fixed-16", Dims: 16}
	x, err := localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	file := segmentBytes(t, x, []string{"doc_gone"})
	if _, _, err := readSegment(file, e); err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 10, 100, len(file) / 2, len(file) - 1} {
		if _, _, err := readSegment(file[:cut], e); !errors.Is(err, localsearch.ErrSegment) {
			t.Errorf("cut to %d bytes: %v, want ErrSegment", cut, err)
		}
		// The same bytes, claimed whole: the counts do not add up.
		if _, _, err := localsearch.ReadSegment(bytes.NewReader(file[:cut]), int64(len(file)), e); !errors.Is(err, localsearch.ErrSegment) {
			t.Errorf("cut to %d bytes of %d said: %v, want ErrSegment", cut, len(file), err)
		}
	}
	for _, at := range []int{200, len(file) / 2, len(file) - 10, len(file) - 1} {
		bad := bytes.Clone(file)
		bad[at] ^= 0x40
		if _, _, err := readSegment(bad, e); !errors.Is(err, localsearch.ErrSegment) {
			t.Errorf("byte %d flipped: %v, want ErrSegment", at, err)
		}
	}
	if _, _, err := readSegment(file, embedtest.Named{Name: "other-16", Dims: 16}); !errors.Is(err, localsearch.ErrSegmentIncompatible) {
		t.Errorf("another embedder: %v, want ErrSegmentIncompatible", err)
	}
	future := bytes.Clone(file)
	binary.LittleEndian.PutUint32(future[16:], localsearch.SegmentFormat+1)
	if _, _, err := readSegment(future, e); !errors.Is(err, localsearch.ErrSegmentIncompatible) {
		t.Errorf("another format: %v, want ErrSegmentIncompatible", err)
	}
}

// FuzzReadSegment reads arbitrary bytes, with a valid checksum (and, of
// format 3, valid CRCs of its cold part's blocks), as a segment, whole and
// opened by range with its cold part read as queries need it: it must
// never panic, and never allocate more than 32 times the bytes (and a
// fixed 1 MiB: buffers, the vocabulary's builder) (segments are read with
// their size known, so every count is checked against it first).
func FuzzReadSegment(f *testing.F) {
	e := embedtest.Named{Name: "fixed-16", Dims: 16}
	x, err := localsearch.FromDocs(context.Background(), smallDocs(), e, localsearch.Options{})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, _, err := localsearch.WriteSegment(&buf, x, []string{"doc_gone"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:100])
	empty, err := localsearch.FromDocs(context.Background(), nil, e, localsearch.Options{})
	if err != nil {
		f.Fatal(err)
	}
	buf.Reset()
	if _, _, err := localsearch.WriteSegment(&buf, empty, []string{"doc_a", "doc_b"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	// What every process makes once (the automata's builder, the rotation)
	// is made before anything is measured.
	warm := &search.Query{Text: "reset pasword laptop", Vector: make([]float32, 16), Libraries: []string{"lib_1", "lib_2"}, Limit: 10}
	wr := search.DefaultRules(e.ID())
	warm.Rules = &wr
	if err := x.Candidates(context.Background(), warm, func(search.Candidate) {}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// A crafted object passes the checksums: sum the mutated bytes, so
		// that the fuzzer reaches the checks behind them.
		hot := localsearch.FixSegmentBlocks(b)
		if len(b) >= 4 {
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		x, _, err := readSegment(b, e)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(32*len(b)+1<<20) {
			t.Fatalf("%d bytes allocated %d", len(b), alloc)
		}
		// A segment read must be searchable without a panic.
		q := &search.Query{Text: "reset pasword laptop", Vector: make([]float32, 16), Libraries: []string{"lib_1", "lib_2"}, Limit: 10}
		r := search.DefaultRules(e.ID())
		q.Rules = &r
		if err == nil {
			_ = x.Candidates(context.Background(), q, func(search.Candidate) {})
			_, _, _ = x.MostActive(context.Background(), q, search.Filter{}, 0, 10)
		}
		if hot == 0 {
			return
		}
		// Opened by range, its blocks read as the queries need them.
		runtime.ReadMemStats(&before)
		y, _, err := localsearch.OpenSegment(b[:hot], int64(len(b)), e, &source{data: b}, localsearch.NewCache(0))
		if err == nil {
			var page []search.Candidate
			_ = y.Candidates(context.Background(), q, func(c search.Candidate) { page = append(page, c) })
			_ = y.PrepareLater(context.Background(), page)
			_, _, _ = y.MostActive(context.Background(), q, search.Filter{}, 0, 10)
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(32*len(b)+1<<20) {
			t.Fatalf("%d bytes, opened by range and searched, allocated %d", len(b), alloc)
		}
	})
}

// TestCraftedSegmentCountsAreBounded gives a small segment of each format,
// checksum and all, counts of billions (and block sizes that are not one):
// each is refused before anything is allocated for it.
func TestCraftedSegmentCountsAreBounded(t *testing.T) {
	e := embedtest.Named{Name: "fixed-16", Dims: 16}
	x, err := localsearch.FromDocs(context.Background(), smallDocs(), e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	craftCounts(t, segmentBytes(t, x, nil), e)
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"testdata/segment-v1.seg", "testdata/segment-v2.seg", "testdata/segment-v3.seg"} {
		old, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		craftCounts(t, old, h)
	}
}

func craftCounts(t *testing.T, file []byte, e search.Embedder) {
	t.Helper()
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	format := binary.LittleEndian.Uint32(file[16:])
	n := 11
	if format >= 3 {
		n = 14
	}
	for i := range n {
		values := []uint64{1 << 30, 1<<40 - 1, 1 << 62, 1<<64 - 1}
		if i == 13 { // the block size
			values = append(values, 0, 1, 4095, 3<<12, 64<<10+1)
		}
		for _, v := range values {
			bad := bytes.Clone(file)
			binary.LittleEndian.PutUint64(bad[24+8*i:], v)
			binary.LittleEndian.PutUint32(bad[len(bad)-4:], crc32.Checksum(bad[:len(bad)-4], castagnoli))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := readSegment(bad, e)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, localsearch.ErrSegment) {
				t.Errorf("format %d, count %d set to %d: %v, want ErrSegment", format, i, v, err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
				t.Errorf("format %d, count %d set to %d: %d bytes allocated", format, i, v, alloc)
			}
		}
	}
}

// TestReadsEarlierFormats: segments of format 1 (float32 vectors, written
// by the version before quantization), 2 (quantized, in one part, written
// before the hot and cold parts) and 3 (hot and cold parts, the codes in
// the documents' order, in blocks of 4 KiB): testdata/segment-v1.seg,
// segment-v2.seg and segment-v3.seg hold the first 20 documents of the
// demo generator, embedded by the offline hashing embedder, and delete
// doc_gone. Each is read, format 1's vectors quantized as they are read:
// the index is the one FromDocs builds today from the same documents, byte
// for byte when written again; format 3's, opened by range, answers as
// the index read whole.
func TestReadsEarlierFormats(t *testing.T) {
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 20}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := localsearch.FromDocs(context.Background(), indexDocs(t, d, h), h, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for format, name := range []string{1: "testdata/segment-v1.seg", 2: "testdata/segment-v2.seg", 3: "testdata/segment-v3.seg"} {
		if name == "" {
			continue
		}
		file, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if v := binary.LittleEndian.Uint32(file[16:]); v != uint32(format) {
			t.Fatalf("%s is of format %d", name, v)
		}
		x, deleted, err := readSegment(file, h)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(deleted, []string{"doc_gone"}) {
			t.Fatalf("format %d: deleted %q; want doc_gone", format, deleted)
		}
		if !bytes.Equal(segmentBytes(t, x, deleted), segmentBytes(t, want, deleted)) {
			t.Fatalf("the format %d segment, read and written again, differs from the index FromDocs builds", format)
		}
		// A flipped bit in its vectors is caught by the checksum.
		bad := slices.Clone(file)
		bad[len(bad)/2] ^= 1
		if _, _, err := readSegment(bad, h); !errors.Is(err, localsearch.ErrSegment) {
			t.Fatalf("a corrupt format %d segment: %v; want ErrSegment", format, err)
		}
		if format == 3 {
			sections := localsearch.SegmentSections(file)
			hot := sections[len(sections)-6].To // the last of the hot part's
			y, _, err := localsearch.OpenSegment(slices.Clone(file[:hot]), int64(len(file)), h, &source{data: file}, localsearch.NewCache(1))
			if err != nil {
				t.Fatal(err)
			}
			rules := search.DefaultRules(h.ID())
			for _, text := range []string{"reset password", "expense report", "quarterly close", ""} {
				var got, want []search.Hit
				for i, r := range []search.Retriever{x, y} {
					s := &search.Searcher{Backend: search.Local{Retriever: r}, Embedder: search.Cached(h, 0), Rules: rules}
					res, err := s.Search(context.Background(), search.Request{Text: text, Libraries: libraries(d), Limit: 10})
					if err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						want = res.Hits
					} else {
						got = res.Hits
					}
				}
				if len(want) == 0 || !reflect.DeepEqual(got, want) {
					t.Errorf("format 3, %q: opened by range, %v; read whole, %v", text, got, want)
				}
			}
		}
	}
}

// libraries are the IDs of d's libraries.
func libraries(d *doclib.DataSet) []string {
	var out []string
	for _, l := range d.Libraries {
		out = append(out, l.ID)
	}
	return out
}

// TestStopOnlyTerms: a segment lists, per document, the terms it holds
// only as a stop word, which its words (stop words left out) lack: "have"
// for a document that has the word "have", not for one that also has
// "haves", whose stem is "have".
func TestStopOnlyTerms(t *testing.T) {
	e := embedtest.Named{Name: "fixed-16", Dims: 16}
	v := make([]float32, 16)
	v[0] = 1
	docs := []search.IndexDoc{
		{Doc: search.Doc{ID: "doc_1", LibraryID: "lib"}, Title: "We have a plan", Vector: v},
		{Doc: search.Doc{ID: "doc_2", LibraryID: "lib"}, Title: "The haves and the have nots", Vector: v},
		{Doc: search.Doc{ID: "doc_3", LibraryID: "lib"}, Title: "Budget plan", Vector: v},
	}
	x, err := localsearch.FromDocs(context.Background(), docs, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := x.StopOnly()
	want := map[string][]string{"doc_1": {"a", "have", "we"}, "doc_2": {"and", "the"}} // "not" is nots' stem
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stop-only terms %v, want %v", got, want)
	}
	// Read back, a segment holds the same.
	y, _, err := readSegment(segmentBytes(t, x, nil), e)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(y.StopOnly(), want) {
		t.Fatalf("read back: %v", y.StopOnly())
	}
}

// TestColdBlocksAreChecked writes a segment in small blocks and changes
// one byte of each block of its cold part, with the file's CRC made valid
// again: the reader refuses each for the block's own CRC, which the hot
// part lists.
func TestColdBlocksAreChecked(t *testing.T) {
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 60}))
	if err != nil {
		t.Fatal(err)
	}
	e, err := offline.NewHashing(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := localsearch.FromDocs(context.Background(), indexDocs(t, d, e), e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	info, err := localsearch.WriteSegmentBlocks(&buf, x, nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	if got := crc32.Checksum(file[:info.HotBytes], crc32.MakeTable(crc32.Castagnoli)); got != info.HotCRC {
		t.Fatalf("the hot part sums to %08x, WriteSegmentBlocks says %08x", got, info.HotCRC)
	}
	cold := int64(len(file)) - 4 - info.HotBytes
	if cold < 3*4096 {
		t.Fatalf("a cold part of %d bytes: too few blocks to test", cold)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for at := info.HotBytes + 100; at < int64(len(file))-4; at += 4096 {
		bad := bytes.Clone(file)
		bad[at] ^= 0x10
		binary.LittleEndian.PutUint32(bad[len(bad)-4:], crc32.Checksum(bad[:len(bad)-4], castagnoli))
		if _, _, err := readSegment(bad, e); !errors.Is(err, localsearch.ErrSegment) || !strings.Contains(err.Error(), "block") {
			t.Errorf("byte %d of the cold part changed: %v; want a block's CRC refused", at-info.HotBytes, err)
		}
	}
}
