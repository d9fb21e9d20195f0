package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

const testEmbedder = "test-embedder/4"

func vec(dims int, seed float32) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = seed + float32(i)/8
	}
	return v
}

// sampleDocs are documents with and without recordings, with unicode text,
// empty fields and a zero LastSeen.
func sampleDocs(dims int) []search.IndexDoc {
	return []search.IndexDoc{
		{
			Doc: search.Doc{ID: "doc_1", LibraryID: "lib_a", Category: "security", Tags: []string{"urgent", "vpn"},
				Applications: []string{"NetSuite"}, RecordingCount: 2, LastSeen: time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)},
			WorkspaceID: "ws_1", Title: "Réinitialiser le VPN — 手順 🔐",
			Body: []string{"Étape 1: ouvrir", "", "шаг 3"}, Labels: []string{"security", "urgent", "vpn", "NetSuite"},
			Vector:     vec(dims, 1),
			Recordings: []search.RecordingVector{{ID: "rec_1", Vector: vec(dims, -2)}, {ID: "rec_2", Vector: vec(dims, 3.5)}},
		},
		{
			Doc:    search.Doc{ID: "doc_2", LibraryID: "lib_b"},
			Vector: vec(dims, 0),
		},
		{
			Doc: search.Doc{ID: "doc_3", LibraryID: "lib_a", Category: "", Tags: []string{""}, RecordingCount: -1,
				LastSeen: time.Unix(-5, 3).UTC()},
			Title: "\x00nul\xff", Body: []string{strings.Repeat("long ", 100)},
			Vector: vec(dims, 9), Recordings: []search.RecordingVector{{ID: "", Vector: vec(dims, 7)}},
		},
	}
}

func encodeT(t testing.TB, h Header, docs []search.IndexDoc) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, h, docs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []byte{compressNone, compressDeflate} {
		t.Run(fmt.Sprint("compression ", c), func(t *testing.T) {
			defer func(old byte) { compressDocs = old }(compressDocs)
			compressDocs = c
			docs := sampleDocs(4)
			at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			data := encodeT(t, Header{Embedder: testEmbedder, Dimensions: 4, Sequence: 7, WrittenAt: at}, docs)
			h, got, err := Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			want := Header{Format: FormatVersion, Embedder: testEmbedder, Dimensions: 4, Sequence: 7, Documents: 3, WrittenAt: at}
			if !reflect.DeepEqual(h, want) {
				t.Errorf("header %+v, want %+v", h, want)
			}
			if !reflect.DeepEqual(got, docs) {
				t.Errorf("documents differ:\n got %+v\nwant %+v", got, docs)
			}
		})
	}
}

func TestRoundTripEmpty(t *testing.T) {
	data := encodeT(t, Header{Embedder: testEmbedder, Dimensions: 4}, nil)
	h, got, err := Decode(bytes.NewReader(data))
	if err != nil || len(got) != 0 || h.Documents != 0 {
		t.Fatalf("got %+v, %d documents, %v", h, len(got), err)
	}
}

func TestEncodeRefusesWrongVectors(t *testing.T) {
	docs := sampleDocs(4)
	docs[0].Recordings[1].Vector = vec(3, 0)
	if err := Encode(new(bytes.Buffer), Header{Embedder: testEmbedder, Dimensions: 4}, docs); err == nil || !strings.Contains(err.Error(), "rec_2") {
		t.Errorf("a short recording vector: %v", err)
	}
	docs = sampleDocs(4)
	docs[1].Vector = nil
	if err := Encode(new(bytes.Buffer), Header{Embedder: testEmbedder, Dimensions: 4}, docs); err == nil {
		t.Error("a missing vector was encoded")
	}
}

func TestDecodeRefusesTruncation(t *testing.T) {
	data := encodeT(t, Header{Embedder: testEmbedder, Dimensions: 4}, sampleDocs(4))
	for n := range len(data) {
		_, docs, err := Decode(bytes.NewReader(data[:n]))
		if !errors.Is(err, ErrCorrupt) || docs != nil {
			t.Fatalf("truncated to %d of %d bytes: %d documents, %v", n, len(data), len(docs), err)
		}
	}
	_, _, err := Decode(bytes.NewReader(append(data[:len(data):len(data)], 0)))
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("a byte after the checksum: %v", err)
	}
}

func TestDecodeRefusesFlippedBytes(t *testing.T) {
	for _, c := range []byte{compressNone, compressDeflate} {
		defer func(old byte) { compressDocs = old }(compressDocs)
		compressDocs = c
		data := encodeT(t, Header{Embedder: testEmbedder, Dimensions: 4}, sampleDocs(4))
		for i := range data {
			for _, bit := range []byte{0x01, 0x80} {
				bad := bytes.Clone(data)
				bad[i] ^= bit
				_, docs, err := Decode(bytes.NewReader(bad))
				if err == nil || docs != nil {
					t.Fatalf("compression %d, byte %d of %d flipped: %d documents, %v", c, i, len(data), len(docs), err)
				}
			}
		}
	}
}

func TestDecodeRefusesUnknownFormat(t *testing.T) {
	data := encodeT(t, Header{Embedder: testEmbedder, Dimensions: 4}, sampleDocs(4))
	binary.LittleEndian.PutUint32(data[len(magic):], FormatVersion+1)
	_, _, err := Decode(bytes.NewReader(data))
	if !errors.Is(err, ErrIncompatible) {
		t.Fatalf("format %d: %v", FormatVersion+1, err)
	}
	for _, want := range []string{"format 2", "reads format 1", "reindex", "deploy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestDecodeExpect(t *testing.T) {
	var b bytes.Buffer
	sum, err := encode(&b, Header{Embedder: testEmbedder, Dimensions: 4}, sampleDocs(4))
	if err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	if _, _, err := DecodeExpect(bytes.NewReader(data), Expect{Embedder: testEmbedder, Dimensions: 4, Checksum: sum}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []Expect{{Embedder: "other/4", Dimensions: 4}, {Embedder: testEmbedder, Dimensions: 8}} {
		// Refused from the header alone: the rest may be missing.
		_, _, err := DecodeExpect(bytes.NewReader(data[:200]), want)
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "reindex") {
			t.Errorf("expecting %+v: %v", want, err)
		}
	}
	_, _, err = DecodeExpect(bytes.NewReader(data), Expect{Checksum: strings.Repeat("0", 64)})
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("another checksum: %v", err)
	}
}

// benchDocs are n documents of the demo set's text (repeated under new IDs),
// with dims-dimension vectors, a third of them with a recording.
func benchDocs(b *testing.B, n, dims int) []search.IndexDoc {
	ds, err := demo.Load()
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randVec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64()) / 32
		}
		return v
	}
	docs := make([]search.IndexDoc, n)
	for i := range docs {
		src := ds.Documents[i%len(ds.Documents)]
		d := search.NewIndexDoc(src, randVec(), nil, nil)
		d.ID = fmt.Sprintf("%s_%d", src.ID, i)
		if i%3 == 0 {
			d.Recordings = []search.RecordingVector{{ID: fmt.Sprintf("rec_%d", i), Vector: randVec()}}
		}
		docs[i] = d
	}
	return docs
}

func benchmarkFormat(b *testing.B, compression byte, decode bool) {
	defer func(old byte) { compressDocs = old }(compressDocs)
	compressDocs = compression
	docs := benchDocs(b, 10_000, 1024)
	h := Header{Embedder: "bench/1024", Dimensions: 1024}
	var buf bytes.Buffer
	if err := Encode(&buf, h, docs); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if decode {
			if _, _, err := Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		} else {
			buf.Reset()
			if err := Encode(&buf, h, docs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(data))/1e6, "MB")
}

// BenchmarkEncode and BenchmarkDecode measure 10,000 documents with 1024
// dimensions: run with -bench 'Encode|Decode' -benchtime 3x.
func BenchmarkEncode(b *testing.B) {
	b.Run("deflate", func(b *testing.B) { benchmarkFormat(b, compressDeflate, false) })
	b.Run("none", func(b *testing.B) { benchmarkFormat(b, compressNone, false) })
}

func BenchmarkDecode(b *testing.B) {
	b.Run("deflate", func(b *testing.B) { benchmarkFormat(b, compressDeflate, true) })
	b.Run("none", func(b *testing.B) { benchmarkFormat(b, compressNone, true) })
}
