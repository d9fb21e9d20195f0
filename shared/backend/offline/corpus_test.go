package offline

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"testing"
)

var corpusTexts = []string{"reset a password in the admin console", "close the books at month end",
	"order a laptop for a new starter", "approve an invoice from a vendor", "rotate the access keys"}

// fitted is a small fitted embedder and its file.
func fitted(t testing.TB, h *Hashing, texts []string, dims int) (*Corpus, []byte) {
	t.Helper()
	c, err := FitCorpus(context.Background(), h, texts, dims)
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return c, data
}

// corpusFile writes a fitted embedder's file from its parts, as a crafted
// one would be: dims, names, then the idf and vector values.
func corpusFile(dims uint64, names []string, values ...float32) []byte {
	b := []byte(corpusMagic)
	b = binary.AppendUvarint(b, dims)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
	}
	for _, v := range values {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// TestCorpusIDIsItsContent: the ID is recomputed from what is read, never
// taken from the file, so a file changed in one value is another embedder,
// and the same fit read back is the same one, byte for byte.
func TestCorpusIDIsItsContent(t *testing.T) {
	h, err := NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, data := fitted(t, h, corpusTexts, 4)
	back, err := UnmarshalCorpus(h, data)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != c.ID() || !strings.HasPrefix(c.ID(), "corpus-v1/4/") {
		t.Fatalf("read back as %s, fitted as %s", back.ID(), c.ID())
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(again, data) {
		t.Error("a fitted embedder read and written again differs")
	}
	// One vector value nudged, still a valid file: another ID.
	nudged := bytes.Clone(data)
	at := len(nudged) - 4
	v := math.Float32frombits(binary.LittleEndian.Uint32(nudged[at:]))
	binary.LittleEndian.PutUint32(nudged[at:], math.Float32bits(v/2+0.01))
	other, err := UnmarshalCorpus(h, nudged)
	if err != nil {
		t.Fatal(err)
	}
	if other.ID() == c.ID() {
		t.Errorf("a file of other vectors reads with the fit's ID %s", c.ID())
	}
	if o, _ := fitted(t, h, corpusTexts[1:], 4); o.ID() == c.ID() {
		t.Errorf("two fits of other texts share the ID %s", c.ID())
	}
}

// TestCorpusRefusesWhatNoFitMakes: values a fit never writes are refused,
// so that no query embeds to a vector that is not finite (NaN weights made
// every search answer 500).
func TestCorpusRefusesWhatNoFitMakes(t *testing.T) {
	h, err := NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	valid := corpusFile(2, []string{"password", "laptop"}, 1, 2, 0.5, -0.5, 1, 0)
	if _, err := UnmarshalCorpus(h, valid); err != nil {
		t.Fatalf("a valid file: %v", err)
	}
	// The same file with its count of features (2) in two bytes.
	longer := append(append(append([]byte(corpusMagic), 2), 0x82, 0x00), valid[len(corpusMagic)+2:]...)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	two := []string{"password", "laptop"}
	cases := map[string][]byte{
		"a NaN weight":             corpusFile(2, two, nan, 2, 0.5, -0.5, 1, 0),
		"an infinite weight":       corpusFile(2, two, 1, inf, 0.5, -0.5, 1, 0),
		"a negative weight":        corpusFile(2, two, -1, 2, 0.5, -0.5, 1, 0),
		"a weight of 1e30":         corpusFile(2, two, 1e30, 2, 0.5, -0.5, 1, 0),
		"a NaN value":              corpusFile(2, two, 1, 2, nan, -0.5, 1, 0),
		"an infinite value":        corpusFile(2, two, 1, 2, 0.5, float32(math.Inf(-1)), 1, 0),
		"a value of 3":             corpusFile(2, two, 1, 2, 0.5, -0.5, 3, 0),
		"a name twice":             corpusFile(2, []string{"password", "password"}, 1, 2, 0.5, -0.5, 1, 0),
		"an empty name":            corpusFile(2, []string{"password", ""}, 1, 2, 0.5, -0.5, 1, 0),
		"no dimension":             corpusFile(0, nil),
		"5,000 dimensions":         corpusFile(5000, nil),
		"a byte too many":          append(corpusFile(2, two, 1, 2, 0.5, -0.5, 1, 0), 0),
		"a value short":            corpusFile(2, two, 1, 2, 0.5, -0.5, 1),
		"a count past its bytes":   corpusFile(2, []string{"password", "laptop", "x"}, 1, 2, 0.5, -0.5, 1, 0),
		"a count in a longer form": longer,
		"another version's magic":  append([]byte("doclib-corpus-v1\n"), valid[len(corpusMagic):]...),
	}
	for name, data := range cases {
		if c, err := UnmarshalCorpus(h, data); err == nil {
			t.Errorf("%s: read, embedding %q to %v", name, "password laptop", c.Vector("password laptop"))
		}
	}
}

// craftedCorpora are files of a few KB whose counts claim more than their
// bytes hold (a count as large as the file once allocated 54 times the
// file before it was refused: 456 MB for 8 MB).
func craftedCorpora() map[string][]byte {
	const size uint64 = 4 << 10
	pad := func(b []byte) []byte { return append(b, make([]byte, int(size)-len(b))...) }
	one := func(dims, n uint64) []byte {
		b := []byte(corpusMagic)
		b = binary.AppendUvarint(b, dims)
		return pad(binary.AppendUvarint(b, n))
	}
	// As many distinct features as 4 KB holds, read whole, and refused at
	// the last value: the reader's most allocation for its size.
	var names []string
	var values []float32
	for i := range 360 {
		names = append(names, string([]byte{byte('a' + i/26%26), byte('a' + i%26)}))
		values = append(values, 1, 0.5) // an idf and a value, in any order: all in bounds
	}
	values[len(values)-1] = float32(math.NaN())
	return map[string][]byte{
		"a count as large as the file":     one(1, size-64),
		"a count one past what fits":       one(1, (size-uint64(len(corpusMagic))-3)/minFeatureBytes+1),
		"4,096 dimensions, a count of 400": one(maxCorpusDimensions, 400),
		"360 features, the last value NaN": corpusFile(1, names, values...),
	}
}

// TestCraftedCorpusIsBounded: each crafted file is refused having
// allocated a small multiple of its size.
func TestCraftedCorpusIsBounded(t *testing.T) {
	h, err := NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range craftedCorpora() {
		var err error
		n := allocated(func() { _, err = UnmarshalCorpus(h, data) })
		if err == nil {
			t.Errorf("%s: read", name)
		}
		if limit := corpusAllocLimit(len(data)); n > limit {
			t.Errorf("%s: a %d-byte file allocated %d bytes (%.1f×), more than %d", name, len(data), n, float64(n)/float64(len(data)), limit)
		}
		t.Logf("%s: %d bytes, refused after allocating %d (%.1f×): %v", name, len(data), n, float64(n)/float64(len(data)), err)
	}
}

// corpusAllocLimit is what reading n bytes may allocate: the map of names
// takes about 3 times their bytes, the values once; the race detector's
// builds move more to the heap.
func corpusAllocLimit(n int) uint64 { return 8*uint64(n) + 16<<10 }

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before) // TotalAlloc only grows: no GC needed
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzUnmarshalCorpus: no input makes the reader panic or allocate more
// than a small multiple of its size; what it reads is the file it would
// write, and embeds every text to a finite vector of unit or zero length.
func FuzzUnmarshalCorpus(f *testing.F) {
	h, err := NewHashing(0, nil)
	if err != nil {
		f.Fatal(err)
	}
	_, data := fitted(f, h, corpusTexts, 4)
	f.Add(data)
	f.Add(corpusFile(2, []string{"password", "~3"}, 1, 2, 0.5, -0.5, 1, 0))
	for _, c := range craftedCorpora() {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c *Corpus
		var err error
		n := allocated(func() { c, err = UnmarshalCorpus(h, data) })
		if limit := corpusAllocLimit(len(data)); n > limit {
			t.Fatalf("a %d-byte input allocated %d bytes, more than %d", len(data), n, limit)
		}
		if err != nil {
			return
		}
		if again, _ := c.MarshalBinary(); !bytes.Equal(again, data) {
			t.Fatalf("read as an embedder whose file is other bytes")
		}
		for _, q := range append(corpusTexts, "password", "sign in to the vpn", "") {
			var norm float64
			for _, x := range c.Vector(q) {
				norm += float64(x) * float64(x)
			}
			if norm != 0 && math.Abs(norm-1) > 1e-3 {
				t.Fatalf("%q embeds to a vector of squared length %v", q, norm)
			}
		}
	})
}
