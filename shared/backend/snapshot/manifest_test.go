package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFileIsReadOnlyAsTheManifestNamesIt: a file a manifest names is read
// only when its size and digest are the ones named, the size checked before
// a byte is read; a reference no writer writes is refused.
func TestFileIsReadOnlyAsTheManifestNamesIt(t *testing.T) {
	ctx := context.Background()
	dir, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const key = "snapshots/embedder.bin"
	for name, b := range map[string]Blobs{"memory": NewMemory(), "directory": dir} {
		t.Run(name, func(t *testing.T) {
			data := bytes.Repeat([]byte("fitted embedder "), 64)
			ref, err := PutFile(ctx, b, key, data)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ReadFile(ctx, b, ref); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes, %v", len(got), err)
			}
			put := func(d []byte) {
				t.Helper()
				if _, err := b.Put(ctx, key, bytes.NewReader(d), int64(len(d)), Condition{}); err != nil {
					t.Fatal(err)
				}
			}
			for what, d := range map[string][]byte{
				"a byte changed":  append(bytes.Clone(data[:len(data)-1]), '!'),
				"a byte more":     append(bytes.Clone(data), ' '),
				"a byte less":     data[:len(data)-1],
				"no byte at all!": {},
			} {
				put(d)
				if _, err := ReadFile(ctx, b, ref); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: %v, want ErrCorrupt", what, err)
				}
			}
			put(data)
			// A reference that claims more than the object holds allocates
			// nothing for it: the size is checked first.
			big := ref
			big.Bytes = maxFile
			var got error
			if n := allocated(func() { _, got = ReadFile(ctx, b, big) }); !errors.Is(got, ErrCorrupt) || n > 64<<10 {
				t.Errorf("a reference of %d bytes to %d: %v, after allocating %d bytes", big.Bytes, len(data), got, n)
			}
			for what, r := range map[string]FileRef{
				"over the bound":       {Key: key, Bytes: maxFile + 1, SHA256: ref.SHA256},
				"empty":                {Key: key, Bytes: 0, SHA256: ref.SHA256},
				"a segment":            {Key: SegmentPrefix + "x.seg", Bytes: ref.Bytes, SHA256: ref.SHA256},
				"the manifest":         {Key: ManifestKey, Bytes: ref.Bytes, SHA256: ref.SHA256},
				"outside snapshots/":   {Key: "embedder.bin", Bytes: ref.Bytes, SHA256: ref.SHA256},
				"no digest":            {Key: key, Bytes: ref.Bytes},
				"a digest in capitals": {Key: key, Bytes: ref.Bytes, SHA256: strings.ToUpper(ref.SHA256)},
			} {
				if _, err := ReadFile(ctx, b, r); !errors.Is(err, ErrCorrupt) {
					t.Errorf("a reference %s: %v, want ErrCorrupt", what, err)
				}
				m := Manifest{Format: ManifestFormat, SegmentFormat: 2, EmbedderFile: &r}
				if err := m.check(); !errors.Is(err, ErrCorrupt) {
					t.Errorf("a manifest naming a file %s: %v, want ErrCorrupt", what, err)
				}
			}
		})
	}
}

// TestManifestsNameTheEmbedderFile: a writer given the embedder's file
// names it in every manifest it publishes, and a manifest written before
// the field existed reads without it.
func TestManifestsNameTheEmbedderFile(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	ref, err := PutFile(ctx, m, "snapshots/embedder.bin", []byte("the embedder"))
	if err != nil {
		t.Fatal(err)
	}
	w := newWriter(m)
	w.EmbedderFile = &ref
	w.Policy = MergePolicy{Factor: 2, MinDocuments: 1, CacheDocuments: 1}
	check := func(when string) {
		t.Helper()
		got, _, err := ReadManifest(ctx, m, "")
		if err != nil || got.EmbedderFile == nil || *got.EmbedderFile != ref {
			t.Errorf("%s: the manifest names %+v (%v), want %+v", when, got.EmbedderFile, err, ref)
		}
	}
	if err := w.Publish(ctx, docs("a")); err != nil {
		t.Fatal(err)
	}
	check("after a publish")
	for _, id := range []string{"b", "c"} {
		if err := w.Upsert(ctx, docs(id)); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check("after commits and merges")
	old := `{"format":1,"sequence":3,"embedder":"e","dimensions":4,"segment_format":2,"documents":1,` +
		`"segments":[{"key":"snapshots/segments/000000000001-00000000.seg","bytes":10,"crc32c":"0a0b0c0d","documents":1,"deleted":0}],` +
		`"written_at":"2026-01-02T03:04:05Z"}`
	got, err := decodeManifest([]byte(old))
	if err != nil || got.EmbedderFile != nil || len(got.Segments) != 1 || got.Sequence != 3 {
		t.Errorf("a manifest of before: %+v, %v", got, err)
	}
}

// TestPointerNamesSizeAndDigest: the single snapshot of earlier versions is
// read only through a pointer that names its size and digest, as every
// writer wrote it.
func TestPointerNamesSizeAndDigest(t *testing.T) {
	ctx := context.Background()
	for _, p := range []Pointer{
		{Key: SnapshotKey, Version: "v1", Bytes: 100},
		{Key: SnapshotKey, Version: "v1", Checksum: checksumPrefix + strings.Repeat("0", 64)},
		{Key: SnapshotKey, Version: "v1", Bytes: 100, Checksum: "md5:" + strings.Repeat("0", 32)},
	} {
		m := NewMemory()
		if _, err := writePointer(ctx, m, p, ""); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadPointer(ctx, m, ""); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a pointer of %d bytes and checksum %q: %v, want ErrCorrupt", p.Bytes, p.Checksum, err)
		}
	}
}

// craftedManifests are manifests of a few KB whose lists cost far more
// than their bytes once decoded: json.Unmarshal grew a list by a 56-byte
// entry for each "{}," or "1," (4 KB allocated 57 times its size).
func craftedManifests() map[string][]byte {
	const size = 4 << 10
	list := func(field, entry string) []byte {
		head := `{"format":1,"segment_format":2,"` + field + `":[`
		n := (size - len(head)) / (len(entry) + 1)
		return []byte(head + strings.Repeat(entry+",", n-1) + entry + `]}`)
	}
	return map[string][]byte{
		"empty segments":        list("segments", "{}"),
		"empty retired":         list("retired", "{}"),
		"numbers as segments":   list("segments", "1"),
		"nulls as segments":     list("segments", "null"),
		"keys and nothing else": list("segments", `{"key":"snapshots/segments/"}`),
		"a deep unknown field":  []byte(`{"x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`),
		"escapes in a source":   []byte(`{"source":"` + strings.Repeat(`\u0041`, 680) + `"}`),
		// Each byte of invalid UTF-8 decodes to three, and a refusal that
		// quoted the key whole copied them again (found by FuzzManifest).
		"invalid UTF-8 in a key": []byte(`{"format":1,"segment_format":2,"segments":[{"key":"snapshots/segments/` + strings.Repeat("\xf8", 16000) + `"}]}`),
		"a long key, escaped":    []byte(`{"format":1,"segment_format":2,"segments":[{"key":"snapshots/segments/` + strings.Repeat(`\ud800`, 3000) + `"}]}`),
	}
}

// manifestAllocLimit is what decoding n bytes of manifest may allocate.
func manifestAllocLimit(n int) uint64 { return 16*uint64(n) + 32<<10 }

// TestCraftedManifestsAreBounded: each crafted manifest is refused having
// allocated a small multiple of its size.
func TestCraftedManifestsAreBounded(t *testing.T) {
	for name, data := range craftedManifests() {
		var err error
		n := allocated(func() { _, err = decodeManifest(data) })
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrIncompatible) {
			t.Errorf("%s: %v, want it refused", name, err)
		}
		if limit := manifestAllocLimit(len(data)); n > limit {
			t.Errorf("%s: a %d-byte manifest allocated %d bytes (%.1f×), more than %d", name, len(data), n, float64(n)/float64(len(data)), limit)
		}
		t.Logf("%s: %d bytes, refused after allocating %d (%.1f×): %.120v", name, len(data), n, float64(n)/float64(len(data)), err)
	}
}

// FuzzManifest: no input makes the manifest's reader panic, fail with an
// error other than ErrCorrupt or ErrIncompatible, or allocate more than a
// small multiple of its size; a manifest it accepts is one it would write.
func FuzzManifest(f *testing.F) {
	ctx := context.Background()
	m := NewMemory()
	ref, err := PutFile(ctx, m, "snapshots/embedder.bin", []byte("the embedder"))
	if err != nil {
		f.Fatal(err)
	}
	w := newWriter(m)
	w.EmbedderFile, w.Source = &ref, "sha256:source"
	w.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	w.RetireAfter = time.Hour
	if err := w.Publish(ctx, docs("a", "b")); err != nil {
		f.Fatal(err)
	}
	if err := w.Publish(ctx, docs("c")); err != nil { // the first segment retired
		f.Fatal(err)
	}
	body, _, err := m.Get(ctx, ManifestKey, GetOptions{})
	if err != nil {
		f.Fatal(err)
	}
	var seed bytes.Buffer
	seed.ReadFrom(body)
	f.Add(seed.Bytes())
	for _, data := range craftedManifests() {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Manifest
		var err error
		n := allocated(func() { got, err = decodeManifest(data) })
		if limit := manifestAllocLimit(len(data)); n > limit {
			t.Fatalf("a %d-byte manifest allocated %d bytes, more than %d", len(data), n, limit)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrIncompatible) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrIncompatible", err)
			}
			return
		}
		again, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeManifest(again)
		if err != nil {
			t.Fatalf("a manifest read, written again, is refused: %v", err)
		}
		if twice, _ := json.Marshal(back); !bytes.Equal(twice, again) {
			t.Fatalf("a manifest read and written twice changes:\n%s\n%s", again, twice)
		}
	})
}
