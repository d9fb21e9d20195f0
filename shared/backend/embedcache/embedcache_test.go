package embedcache_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/doclib/doclib/shared/backend/embedcache"
	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/search"
)

// fake is an embedder whose vector of a text is made from its hash, and
// which records what it was asked to embed.
type fake struct {
	id   string
	dims int
	err  error

	mu    sync.Mutex
	calls [][]string
}

var _ search.Embedder = (*fake)(nil)

func (f *fake) ID() string      { return f.id }
func (f *fake) Dimensions() int { return f.dims }
func (f *fake) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, slices.Clone(texts))
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = vector(t, f.dims)
	}
	return out, nil
}

// sent is every text the fake was asked for, in order.
func (f *fake) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []string
	for _, c := range f.calls {
		all = append(all, c...)
	}
	return all
}

func vector(t string, dims int) []float32 {
	h := sha256.Sum256([]byte(t))
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(h[i%len(h)]) - 127.5
	}
	search.Normalize(v)
	return v
}

func open(t testing.TB, dir string, e search.Embedder) *embedcache.Cache {
	t.Helper()
	c, err := embedcache.Open(dir, e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func embed(t testing.TB, c *embedcache.Cache, texts ...string) [][]float32 {
	t.Helper()
	vs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		want := make([]float32, c.Dimensions())
		if texts[i] != "" {
			want = vector(texts[i], c.Dimensions())
		}
		if !slices.Equal(v, want) {
			t.Fatalf("the vector of %q is not its own", texts[i])
		}
	}
	return vs
}

func TestHitsAndMisses(t *testing.T) {
	dir := t.TempDir()
	f := &fake{id: "fake/8", dims: 8}
	c := open(t, dir, f)
	if c.ID() != f.id || c.Dimensions() != 8 || c.Unwrap() != search.Embedder(f) {
		t.Fatalf("ID %q, Dimensions %d: want the inner embedder's", c.ID(), c.Dimensions())
	}
	vs := embed(t, c, "a", "b", "a", "")
	if got := f.sent(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("sent %q, want each non-empty text once", got)
	}
	vs[0][0] = 42 // a caller's change is its own: the other "a" is a copy
	if vs[2][0] == 42 {
		t.Error("two places in the answer share one slice")
	}
	embed(t, c, "b", "c", "a")
	if got := f.sent(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("sent %q, want only c the second time", got)
	}
	if s := c.Stats(); s.Hits != 2 || s.Misses != 3 {
		t.Errorf("stats %+v, want 2 hits and 3 misses", s)
	}
	if filepath.Dir(c.Path()) != dir || !strings.HasPrefix(filepath.Base(c.Path()), "fake_8-") {
		t.Errorf("path %s", c.Path())
	}
}

// TestASecondRunEmbedsNothing: what one run stored, from several goroutines
// as the engine embeds, the next run serves whole, bit for bit.
func TestASecondRunEmbedsNothing(t *testing.T) {
	dir := t.TempDir()
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = fmt.Sprintf("abstract number %d", i)
	}
	run := func(f *fake) {
		c, err := embedcache.Open(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got := make([][]float32, len(texts))
		var wg sync.WaitGroup
		for start := 0; start < len(texts); start += 64 {
			wg.Go(func() {
				end := min(start+64, len(texts))
				vs, err := c.Embed(context.Background(), texts[start:end])
				if err != nil {
					t.Error(err)
					return
				}
				copy(got[start:end], vs)
			})
		}
		wg.Wait()
		for i, v := range got {
			if !slices.Equal(v, vector(texts[i], 32)) {
				t.Fatalf("the vector of %q is not its own", texts[i])
			}
		}
	}
	first := &fake{id: "openai/m", dims: 32}
	run(first)
	if n := len(first.sent()); n != len(texts) {
		t.Fatalf("the first run sent %d texts, want %d", n, len(texts))
	}
	second := &fake{id: "openai/m", dims: 32}
	run(second)
	if len(second.calls) != 0 {
		t.Fatalf("the second run called the embedder %d times, want 0", len(second.calls))
	}
	c := open(t, dir, &fake{id: "openai/m", dims: 32})
	if s := c.Stats(); s.Records != int64(len(texts)) || s.Dropped != 0 || s.TornBytes != 0 {
		t.Errorf("stats %+v, want %d records", s, len(texts))
	}
}

// recordSize is the size of one record of d dimensions: a SHA-256, the
// float32s and a CRC-32C.
func recordSize(d int) int64 { return int64(32 + 4*d + 4) }

func TestATornTailIsCutOff(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir, &fake{id: "m", dims: 8})
	embed(t, c, "a", "b")
	c.Close()
	size := fileSize(t, c.Path())
	// A run killed in the middle of a record.
	appendTo(t, c.Path(), bytes.Repeat([]byte{7}, 10))

	f := &fake{id: "m", dims: 8}
	c = open(t, dir, f)
	if s := c.Stats(); s.Records != 2 || s.TornBytes != 10 || s.Dropped != 0 {
		t.Errorf("stats %+v, want 2 records and 10 torn bytes", s)
	}
	if got := fileSize(t, c.Path()); got != size {
		t.Errorf("size %d after Open, want %d: the torn tail cut off", got, size)
	}
	embed(t, c, "a", "b", "c")
	c.Close()
	// The record after the cut is where a reader looks for it.
	f = &fake{id: "m", dims: 8}
	c = open(t, dir, f)
	embed(t, c, "a", "b", "c")
	if len(f.calls) != 0 || c.Stats().Records != 3 {
		t.Errorf("after a cut and a write: calls %q, stats %+v", f.calls, c.Stats())
	}
}

func TestACorruptRecordIsNeverServed(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir, &fake{id: "m", dims: 8})
	embed(t, c, "a", "b", "c")
	c.Close()
	// One bit of b's vector flipped: its checksum fails.
	flip(t, c.Path(), fileSize(t, c.Path())-recordSize(8)-recordSize(8)/2)

	f := &fake{id: "m", dims: 8}
	c = open(t, dir, f)
	if s := c.Stats(); s.Records != 2 || s.Dropped != 1 {
		t.Errorf("stats %+v, want 2 records and 1 dropped", s)
	}
	embed(t, c, "a", "b", "c") // checks b's vector is b's
	if got := f.sent(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("sent %q, want b alone embedded again", got)
	}

	// A record corrupted while the file is open is not served either.
	flip(t, c.Path(), fileSize(t, c.Path())-recordSize(8)/2) // b's new record
	embed(t, c, "b")
	if got := f.sent(); !slices.Equal(got, []string{"b", "b"}) {
		t.Errorf("sent %q, want b embedded again", got)
	}
}

func TestAnotherEmbeddersVectorsAreNeverServed(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, &fake{id: "openai/a", dims: 8})
	embed(t, a, "x", "y")
	a.Close()

	// Another ID in the same folder: a file of its own, nothing served.
	f := &fake{id: "openai/b", dims: 8}
	b := open(t, dir, f)
	embed(t, b, "x", "y")
	if got := f.sent(); !slices.Equal(got, []string{"x", "y"}) || b.Path() == a.Path() {
		t.Errorf("sent %q (paths %s, %s): another embedder's vectors were served", got, a.Path(), b.Path())
	}
	b.Close()

	// Another embedder's file in its place, or the same ID with other
	// dimensions: refused, named, and left as it was.
	other := &fake{id: "openai/b", dims: 8}
	data, err := os.ReadFile(a.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.Path(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range []search.Embedder{other, &fake{id: "openai/a", dims: 16}} {
		path := filepath.Join(dir, embedcache.FileName(e.ID()))
		before, _ := os.ReadFile(path)
		if _, err := embedcache.Open(dir, e); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Open for %s/%d over %s: %v, want an error naming the file", e.ID(), e.Dimensions(), path, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("%s changed by a refused Open", path)
		}
	}
	if len(other.calls) != 0 {
		t.Errorf("the refused embedder was called")
	}
}

func TestATornHeaderStartsAnew(t *testing.T) {
	dir := t.TempDir()
	c := open(t, dir, &fake{id: "m", dims: 8})
	c.Close()
	header, err := os.ReadFile(c.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 5, len(header) - 1} {
		if err := os.WriteFile(c.Path(), header[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		c := open(t, dir, &fake{id: "m", dims: 8})
		embed(t, c, "a")
		c.Close()
		if got := fileSize(t, c.Path()); got != int64(len(header))+recordSize(8) {
			t.Errorf("a header torn at %d: size %d after one record", n, got)
		}
	}
}

// TestFilesHaveNamesOfTheirOwn: IDs alike once made safe for a file name
// still get files of their own, of a bounded length.
func TestFilesHaveNamesOfTheirOwn(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"openai/m", "openai_m", "openai:m", "bedrock/amazon.titan-embed-text-v2:0/1024", strings.Repeat("x", 1000)} {
		name := embedcache.FileName(id)
		if prev, ok := seen[name]; ok {
			t.Errorf("%q and %q share the file %s", prev, id, name)
		}
		seen[name] = id
		if len(name) > 100 || strings.ContainsAny(name, `/\:`) {
			t.Errorf("FileName(%.20q) = %q", id, name)
		}
	}
}

func TestAnOutageIsReturnedAsItIs(t *testing.T) {
	f := &fake{id: "m", dims: 8, err: fmt.Errorf("openai: %w", search.ErrEmbedder)}
	c := open(t, t.TempDir(), f)
	if _, err := c.Embed(context.Background(), []string{"a"}); !errors.Is(err, search.ErrEmbedder) {
		t.Errorf("err %v, want search.ErrEmbedder", err)
	}
	f.err = nil
	embed(t, c, "a") // nothing was stored for it
	if c.Stats().Misses != 1 {
		t.Errorf("stats %+v", c.Stats())
	}
}

// fitter is an embedder that learns from its corpus, as the offline one.
type fitter struct {
	fake
	fitted *fake
}

func (f *fitter) Fit(context.Context, []string) (search.Embedder, error) { return f.fitted, nil }

func TestAFitterStaysAFitter(t *testing.T) {
	inner := &fitter{fake: fake{id: "corpus", dims: 8}, fitted: &fake{id: "corpus/fitted", dims: 8}}
	c := open(t, t.TempDir(), inner)
	f, ok := c.Embedder().(search.Fitter)
	if !ok {
		t.Fatal("the cache of a Fitter is not a Fitter: the engine would not fit it")
	}
	if e, err := f.Fit(context.Background(), []string{"a"}); err != nil || e != search.Embedder(inner.fitted) {
		t.Errorf("Fit = %v, %v; want the inner embedder's fit", e, err)
	}
	plain := open(t, t.TempDir(), &fake{id: "m", dims: 8})
	if _, ok := plain.Embedder().(search.Fitter); ok {
		t.Error("the cache of an embedder that does not fit claims to")
	}
}

func TestBadEmbedders(t *testing.T) {
	for _, e := range []*fake{{id: "", dims: 8}, {id: "m", dims: 0}, {id: strings.Repeat("m", 2000), dims: 8}, {id: "m", dims: 1 << 20}} {
		if _, err := embedcache.Open(t.TempDir(), e); err == nil {
			t.Errorf("Open with ID of %d bytes and %d dimensions succeeded", len(e.id), e.dims)
		}
	}
}

// FuzzOpen: whatever follows a valid header, Open accounts for every byte
// as a record, a dropped record or a torn tail, and serves only what checks.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	c, err := embedcache.Open(dir, &fake{id: "m", dims: 2})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []string{"a", "b"}); err != nil {
		f.Fatal(err)
	}
	c.Close()
	valid, err := os.ReadFile(c.Path())
	if err != nil {
		f.Fatal(err)
	}
	headerLen := len(valid) - 2*int(recordSize(2))
	f.Add(valid[headerLen:])
	f.Add(valid[headerLen : len(valid)-3])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, tail []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, embedcache.FileName("m"))
		if err := os.WriteFile(path, append(slices.Clone(valid[:headerLen]), tail...), 0o644); err != nil {
			t.Fatal(err)
		}
		inner := &fake{id: "m", dims: 2}
		c, err := embedcache.Open(dir, inner)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s := c.Stats()
		if (s.Records+s.Dropped)*recordSize(2)+s.TornBytes != int64(len(tail)) {
			t.Fatalf("stats %+v do not account for %d bytes", s, len(tail))
		}
		vs, err := c.Embed(context.Background(), []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if !slices.Equal(v, vector([]string{"a", "b"}[i], 2)) {
				t.Fatalf("served %v for %q", v, []string{"a", "b"}[i])
			}
		}
	})
}

func BenchmarkHit(b *testing.B) {
	c := open(b, b.TempDir(), &fake{id: "openai/use-lite", dims: 512})
	text := []string{"a query of a few words"}
	embed(b, c, text...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Embed(context.Background(), text); err != nil {
			b.Fatal(err)
		}
	}
	if s := c.Stats(); s.Misses != 1 || s.Hits < int64(b.N) {
		b.Fatalf("stats %+v after %d runs", s, b.N)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func flip(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 1
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

// streamer answers in requests of two texts, telling each as it comes, and
// fails the request that holds failOn.
type streamer struct {
	*fake
	failOn string
}

func (s *streamer) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return s.EmbedEach(ctx, texts, func([]int, [][]float32) {})
}

func (s *streamer) EmbedEach(ctx context.Context, texts []string, each embedcall.Each) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for start := 0; start < len(texts); start += 2 {
		pos := []int{start}
		if start+1 < len(texts) {
			pos = append(pos, start+1)
		}
		part := make([]string, len(pos))
		for k, i := range pos {
			part[k] = texts[i]
		}
		if slices.Contains(part, s.failOn) {
			return nil, errors.New("the server went away")
		}
		vs, err := s.fake.Embed(ctx, part)
		if err != nil {
			return nil, err
		}
		for k, i := range pos {
			out[i] = vs[k]
		}
		each(pos, vs)
	}
	return out, nil
}

// TestACallCutShortKeepsWhatItGot: over an embedder that tells each
// request's vectors as they come (embedcall.Streamer), a call that fails
// half-way has stored what came before the failure, and told it; the next
// call sends only the rest. This is an index build interrupted and started
// again.
func TestACallCutShortKeepsWhatItGot(t *testing.T) {
	dir := t.TempDir()
	in := []string{"a", "b", "c", "d", "e", "f", "a"}
	s := &streamer{fake: &fake{id: "model", dims: 4}, failOn: "e"}
	c := open(t, dir, s)
	var told []int
	_, err := c.EmbedEach(context.Background(), in, func(pos []int, vs [][]float32) {
		for k, i := range pos {
			if !slices.Equal(vs[k], vector(in[i], 4)) {
				t.Errorf("told the wrong vector for %q", in[i])
			}
			told = append(told, i)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "the server went away") {
		t.Fatalf("error %v, want the failure", err)
	}
	slices.Sort(told)
	if !slices.Equal(told, []int{0, 1, 2, 3, 6}) { // a (twice), b, c, d: the first two requests
		t.Errorf("told %v before the failure, want 0 1 2 3 6", told)
	}
	c.Close()

	s2 := &streamer{fake: &fake{id: "model", dims: 4}}
	c2 := open(t, dir, s2)
	got, err := c2.EmbedEach(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range in {
		if !slices.Equal(got[i], vector(text, 4)) {
			t.Errorf("vector %d (%q) is not the text's", i, text)
		}
	}
	if sent := s2.sent(); !slices.Equal(sent, []string{"e", "f"}) {
		t.Errorf("the second call sent %v, want only e and f", sent)
	}
}
