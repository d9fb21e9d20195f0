package snapshot

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/search"
)

// craft builds a snapshot object around a documents section and a vectors
// section, with a valid checksum: what a crafted object can be, since the
// checksum is read last and proves nothing before it.
func craft(t testing.TB, h Header, comp byte, docs []byte, vectorsLen uint64, vectors []byte) []byte {
	t.Helper()
	h.Format = FormatVersion
	head, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write(binary.LittleEndian.AppendUint32(nil, FormatVersion))
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(head))))
	b.Write(head)
	b.WriteByte(comp)
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(docs))))
	b.Write(docs)
	b.Write(binary.LittleEndian.AppendUint64(nil, vectorsLen))
	b.Write(vectors)
	sum := sha256.Sum256(b.Bytes())
	return append(b.Bytes(), sum[:]...)
}

func deflate(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	w.Write(raw)
	w.Close()
	return b.Bytes()
}

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before) // TotalAlloc only grows: no GC needed
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// oneDoc is a document's fields in the documents section, with n recordings
// of empty IDs.
func oneDoc(n uint64) []byte {
	b := []byte{1, 'd', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	return append(binary.AppendUvarint(b, n), make([]byte, n)...)
}

// crafted are objects of a few KB that used to allocate gigabytes or kill the
// process before their checksum was read.
func crafted(t testing.TB) map[string][]byte {
	const dims = 4
	h := Header{Embedder: testEmbedder, Dimensions: dims, Documents: 1}
	zeros := make([]byte, 16<<20)
	many := h
	many.Documents = 10_000_000
	wide := h
	wide.Dimensions = maxDimensions
	return map[string][]byte{
		// 16 MiB of zeros in about 16 KB.
		"a DEFLATE bomb": craft(t, h, compressDeflate, deflate(t, zeros), 0, nil),
		// A document that claims ten million recordings: their empty IDs
		// are ten million zero bytes, deflated.
		"ten million recordings": craft(t, h, compressDeflate, deflate(t, oneDoc(10_000_000)), 10_000_001*4*dims, nil),
		// ...and stored, with fewer, so that the inflation bound is not
		// what stops it.
		"recordings past the vectors":  craft(t, h, compressNone, oneDoc(100_000), 100_001*4*dims, make([]byte, 64)),
		"a lying document count":       craft(t, many, compressNone, oneDoc(0), 4*dims, make([]byte, 4*dims)),
		"vectors of 65,536 dimensions": craft(t, wide, compressNone, oneDoc(1000), 1001*4*maxDimensions, make([]byte, 64)),
	}
}

// TestCraftedObjectsAreBounded: each crafted object is refused as corrupt,
// having allocated a small multiple of its size, when its size is known as
// the follower knows it (the pointer's Bytes).
func TestCraftedObjectsAreBounded(t *testing.T) {
	for name, data := range crafted(t) {
		t.Run(name, func(t *testing.T) {
			var err error
			n := allocated(func() {
				_, _, err = DecodeExpect(bytes.NewReader(data), Expect{Size: int64(len(data))})
			})
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v, want ErrCorrupt", err)
			}
			// Without -race they stay within 70 times; the race detector's
			// builds move more to the heap.
			if limit := 128*uint64(len(data)) + 1<<20; n > limit {
				t.Errorf("a %d-byte object allocated %d bytes (%.0f×), more than %d", len(data), n, float64(n)/float64(len(data)), limit)
			}
			t.Logf("%d bytes: refused after allocating %d bytes (%.1f×): %v", len(data), n, float64(n)/float64(len(data)), err)
		})
	}
}

// TestEncodeStoresWhatWouldInflateTooMuch: a real snapshot whose text
// inflates past maxInflate is written uncompressed, so that the reader's
// bound never refuses what the writer wrote.
func TestEncodeStoresWhatWouldInflateTooMuch(t *testing.T) {
	docs := sampleDocs(4)
	docs[0].Body = []string{strings.Repeat("the same line, again and again\n", 10_000)}
	data := encodeT(t, Header{Embedder: testEmbedder, Dimensions: 4}, docs)
	if at := len(magic) + 8 + int(binary.LittleEndian.Uint32(data[len(magic)+4:])); data[at] != compressNone {
		t.Errorf("compression %d, want the section stored (%d)", data[at], compressNone)
	}
	_, got, err := DecodeExpect(bytes.NewReader(data), Expect{Size: int64(len(data))})
	if err != nil || len(got) != len(docs) || got[0].Body[0] != docs[0].Body[0] {
		t.Fatalf("%d documents, %v", len(got), err)
	}
}

func TestSizeIsChecked(t *testing.T) {
	data := encodeT(t, Header{Embedder: testEmbedder, Dimensions: 4}, sampleDocs(4))
	if _, _, err := DecodeExpect(bytes.NewReader(data), Expect{Size: int64(len(data))}); err != nil {
		t.Fatalf("its own size: %v", err)
	}
	for _, size := range []int64{int64(len(data)) - 1, 40} {
		if _, _, err := DecodeExpect(bytes.NewReader(data), Expect{Size: size}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("an object of %d bytes read as %d: %v, want ErrCorrupt", len(data), size, err)
		}
	}
}

// FuzzDecode: no input makes the reader panic or allocate more than a
// bounded multiple of its size. The bound is what the format allows in the
// worst case: the text inflates at most maxInflate times, and a one-byte
// string costs its 16-byte header.
func FuzzDecode(f *testing.F) {
	for _, c := range []byte{compressNone, compressDeflate} {
		compressDocs = c
		f.Add(encodeT(f, Header{Embedder: testEmbedder, Dimensions: 4, Sequence: 3}, sampleDocs(4)))
	}
	compressDocs = compressDeflate
	for _, data := range crafted(f) {
		if len(data) < 64<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Header
		var docs []search.IndexDoc
		var err error
		n := allocated(func() {
			h, docs, err = DecodeExpect(bytes.NewReader(data), Expect{Size: int64(len(data))})
		})
		switch {
		case err == nil:
			for _, d := range docs {
				if len(d.Vector) != h.Dimensions {
					t.Fatalf("document %q has a vector of %d values, its header says %d", d.ID, len(d.Vector), h.Dimensions)
				}
			}
		case !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrIncompatible):
			t.Fatalf("error %v is neither ErrCorrupt nor ErrIncompatible", err)
		}
		if limit := 400*uint64(len(data)) + 1<<20; n > limit {
			t.Fatalf("a %d-byte input allocated %d bytes, more than %d", len(data), n, limit)
		}
	})
}
