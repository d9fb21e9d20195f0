package offline

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/search"
)

// Corpus is the offline embedder fitted to a corpus: latent semantic analysis
// (LSA) of the corpus's own word co-occurrence. Each text becomes the weights of
// its features, which are the stems of its words (stop words left out) and the
// thesaurus concepts it names, each weighted (1 + ln count) × idf, the idf
// learned from the corpus, so that rare words weigh more than common ones. A
// truncated singular value decomposition of the corpus's document-feature
// matrix gives every feature a vector of Dimensions; a text's vector is the
// weighted sum of its features' vectors. Two texts that share no word still
// come close when their words keep the same company in the corpus.
//
// A feature the corpus never saw weighs nothing: random letters and words
// foreign to the corpus embed to the zero vector, and relate to nothing.
type Corpus struct {
	h        *Hashing
	id       string
	dims     int
	features map[string]int32 // feature -> row of vecs
	idf      []float32
	vecs     []float32 // row-major, dims per feature
}

var (
	_ search.Fitter   = (*Hashing)(nil)
	_ search.Embedder = (*Corpus)(nil)
)

// CorpusDimensions is the size of a fitted embedder's vectors. It is measured
// on the public test collections (docs/search.md): fewer dimensions generalise
// further from the words written; more come close to the word match itself.
const CorpusDimensions = 128

// Fit implements search.Fitter: it fits the offline embedder to texts, which are
// the documents of the corpus.
func (h *Hashing) Fit(ctx context.Context, texts []string) (search.Embedder, error) {
	return FitCorpus(ctx, h, texts, CorpusDimensions)
}

// FitCorpus learns the features of texts and their vectors of dims dimensions.
// It is deterministic: the same texts give the same embedder and ID.
func FitCorpus(ctx context.Context, h *Hashing, texts []string, dims int) (*Corpus, error) {
	if dims < 1 {
		return nil, fmt.Errorf("embed: %d dimensions; a fitted embedder takes at least 1", dims)
	}
	c := &Corpus{h: h, dims: dims, features: map[string]int32{}}
	// Count the features of each text and their document frequencies.
	type entry struct {
		f int32
		w float64
	}
	rows := make([][]entry, len(texts))
	var df []int
	for i, t := range texts {
		counts := h.features(t)
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a stable feature numbering: the same texts, the same embedder
		for _, k := range keys {
			f, ok := c.features[k]
			if !ok {
				f = int32(len(df))
				c.features[k] = f
				df = append(df, 0)
			}
			df[f]++
			rows[i] = append(rows[i], entry{f, counts[k]})
		}
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	n := float64(len(texts))
	c.idf = make([]float32, len(df))
	for f, d := range df {
		c.idf[f] = float32(math.Log(1 + (n-float64(d)+0.5)/(float64(d)+0.5)))
	}
	// Weight and normalise the rows: the document-feature matrix A.
	for _, r := range rows {
		var norm float64
		for j := range r {
			r[j].w = (1 + math.Log(r[j].w)) * float64(c.idf[r[j].f])
			norm += r[j].w * r[j].w
		}
		norm = math.Sqrt(norm)
		for j := range r {
			r[j].w /= norm
		}
	}
	nF := len(df)
	rank := min(dims, nF, len(texts))
	c.vecs = make([]float32, nF*dims)
	if rank > 0 {
		// Randomised SVD (Halko, Martinsson and Tropp 2011): a random sketch of
		// A's range, two power iterations, then the SVD of the small projection.
		k := min(rank+10, nF, len(texts))
		mulA := func(m *mat.Dense) *mat.Dense { // A (docs × features) · m (features × k)
			out := mat.NewDense(len(texts), k, nil)
			for i, r := range rows {
				o := out.RawRowView(i)
				for _, e := range r {
					floats64Axpy(e.w, m.RawRowView(int(e.f)), o)
				}
			}
			return out
		}
		mulAT := func(y *mat.Dense) *mat.Dense { // Aᵀ (features × docs) · y (docs × k)
			out := mat.NewDense(nF, k, nil)
			for i, r := range rows {
				yr := y.RawRowView(i)
				for _, e := range r {
					floats64Axpy(e.w, yr, out.RawRowView(int(e.f)))
				}
			}
			return out
		}
		rng := rand.New(rand.NewPCG(1, 2))
		g := mat.NewDense(nF, k, nil)
		for i := range nF {
			row := g.RawRowView(i)
			for j := range row {
				row[j] = rng.NormFloat64()
			}
		}
		y, err := orthonormal(mulA(g))
		if err != nil {
			return nil, err
		}
		for range 2 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			z, err := orthonormal(mulAT(y))
			if err != nil {
				return nil, err
			}
			if y, err = orthonormal(mulA(z)); err != nil {
				return nil, err
			}
		}
		var svd mat.SVD
		if !svd.Factorize(mulAT(y), mat.SVDThin) { // (Yᵀ A)ᵀ = U Σ Vᵀ: U holds the features' vectors
			return nil, errors.New("embed: the corpus's decomposition did not converge")
		}
		var u mat.Dense
		svd.UTo(&u)
		for f := range nF {
			for j := range rank {
				c.vecs[f*dims+j] = float32(u.At(f, j))
			}
		}
	}
	// The ID names the features and vectors (the digest of its file): an
	// index built with one fitted embedder is never searched with another,
	// and a reader recomputes it from what it reads.
	c.id = corpusID(dims, c.digest())
	return c, nil
}

// orthonormal returns an orthonormal basis of y's columns (CholeskyQR, twice
// for accuracy).
func orthonormal(y *mat.Dense) (*mat.Dense, error) {
	for range 2 {
		var g mat.SymDense
		g.SymOuterK(1, y.T())
		var ch mat.Cholesky
		if !ch.Factorize(&g) {
			// Fewer independent columns than asked: the corpus is smaller than
			// the sketch. A tiny ridge keeps the basis defined.
			_, k := g.Dims()
			for i := range k {
				g.SetSym(i, i, g.At(i, i)+1e-9)
			}
			if !ch.Factorize(&g) {
				return nil, errors.New("embed: the corpus's decomposition is singular")
			}
		}
		var r, ri mat.TriDense
		ch.UTo(&r)
		if err := ri.InverseTri(&r); err != nil {
			return nil, fmt.Errorf("embed: the corpus's decomposition: %w", err)
		}
		var q mat.Dense
		q.Mul(y, &ri)
		y = &q
	}
	return y, nil
}

func floats64Axpy(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}

// features returns the features of a text with their counts: the stems of its
// words (stop words left out) and, prefixed with "~", the thesaurus concepts it
// names.
func (h *Hashing) features(text string) map[string]float64 {
	toks := h.analyzer.Tokens(text)
	out := make(map[string]float64, len(toks))
	for _, t := range toks {
		if !t.Stop {
			out[t.Term]++
		}
	}
	h.eachConcept(toks, func(g int) { out["~"+strconv.Itoa(g)]++ })
	return out
}

// eachConcept calls f with the group of each thesaurus phrase in toks, longest
// phrase first, over all words (stop words too).
func (h *Hashing) eachConcept(toks []analysis.Token, f func(group int)) {
	var parts []string
	for i := 0; i < len(toks); {
		if !h.first[toks[i].Term] { // no phrase starts here: most words
			i++
			continue
		}
		n := min(h.maxWords, len(toks)-i)
		for ; n > 0; n-- {
			parts = parts[:0]
			for k := range n {
				parts = append(parts, toks[i+k].Term)
			}
			if g, ok := h.concepts[strings.Join(parts, " ")]; ok {
				f(g)
				break
			}
		}
		i += max(n, 1)
	}
}

// ID implements search.Embedder.
func (c *Corpus) ID() string { return c.id }

// Dimensions implements search.Embedder.
func (c *Corpus) Dimensions() int { return c.dims }

// Embed implements search.Embedder. It never fails.
func (c *Corpus) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = c.Vector(t)
	}
	return out, nil
}

// Vector embeds one text: the zero vector when it holds no feature of the corpus.
func (c *Corpus) Vector(text string) []float32 {
	v := make([]float64, c.dims)
	counts := c.h.features(text)
	// Summed in a fixed order: the same text, the same bits.
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		n := counts[k]
		f, ok := c.features[k]
		if !ok {
			continue
		}
		w := (1 + math.Log(n)) * float64(c.idf[f])
		for j, x := range c.vecs[int(f)*c.dims : int(f+1)*c.dims] {
			v[j] += w * float64(x)
		}
	}
	out := make([]float32, c.dims)
	for j, x := range v {
		out[j] = float32(x)
	}
	search.Normalize(out)
	return out
}

// A fitted embedder is written (MarshalBinary) as:
//
//	magic     "doclib-corpus-v2\n"
//	dims      uvarint, 1 to maxCorpusDimensions
//	features  uvarint count n, then each feature's name (uvarint length,
//	          then its bytes; not empty, no two alike), in row order
//	idf       n little-endian float32s, each in [0, maxIDF]
//	vectors   n × dims little-endian float32s, each in [-1, 1]
//
// Every integer is written in its shortest form, so one embedder has one
// file. The file holds no ID: the ID is the SHA-256 of everything after the
// magic (corpusID), recomputed by the reader, so that no file can claim the
// ID of another fit. Version 1 wrote the ID, which the reader trusted.
const corpusMagic = "doclib-corpus-v2\n"

// Bounds of what UnmarshalCorpus takes: a value outside them cannot come from
// a fit, and would make vectors that are not finite.
const (
	maxCorpusDimensions = 4096
	// maxIDF is above any idf a fit computes: ln(1 + (n − 0.5)/1.5) for a
	// feature of one document among n stays under 64 for every n a float64
	// holds below 10^27.
	maxIDF = 64
	// maxCoordinate bounds a feature's vector's values: each is a coordinate
	// of a column of an orthonormal matrix, so at most 1 in size, with a
	// margin for rounding.
	maxCoordinate = 1 + 1e-4
	// minFeatureBytes is the fewest bytes a feature takes in the file with
	// one dimension: a length byte, a byte of name, its idf and one value.
	minFeatureBytes = 2 + 4 + 4
)

// corpusID names a fitted embedder by the digest of its file's body (what
// writeBody writes).
func corpusID(dims int, sum []byte) string {
	return fmt.Sprintf("corpus-v1/%d/%x", dims, sum[:8])
}

// MarshalBinary writes the fitted embedder: its dimensions, features, idf
// and vectors, so that a restart reads it rather than fitting again
// (doclib-server --index-dir). The Hashing it was fitted from (its analyzer
// and thesaurus) is not written: UnmarshalCorpus takes it.
func (c *Corpus) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(corpusMagic) + 20 + len(c.features)*16 + 4*(len(c.idf)+len(c.vecs)))
	b.WriteString(corpusMagic)
	if err := c.writeBody(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// digest is the SHA-256 of what writeBody writes, without holding it.
func (c *Corpus) digest() []byte {
	h := sha256.New()
	c.writeBody(h) // a hash never fails a write
	return h.Sum(nil)
}

// writeBody writes everything of the file after the magic.
func (c *Corpus) writeBody(w io.Writer) error {
	names := make([]string, len(c.features))
	for name, row := range c.features {
		names[row] = name
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var scratch [binary.MaxVarintLen64]byte
	uvarint := func(v uint64) { bw.Write(binary.AppendUvarint(scratch[:0], v)) }
	uvarint(uint64(c.dims))
	uvarint(uint64(len(names)))
	for _, n := range names {
		uvarint(uint64(len(n)))
		bw.WriteString(n)
	}
	for _, fs := range [][]float32{c.idf, c.vecs} {
		for _, f := range fs {
			bw.Write(binary.LittleEndian.AppendUint32(scratch[:0], math.Float32bits(f)))
		}
	}
	return bw.Flush()
}

// UnmarshalCorpus reads what MarshalBinary wrote, over h (the embedder it
// was fitted from), and names it by its content. It refuses data cut short,
// of another format, with counts its bytes cannot hold (before anything is
// allocated for them), or with values a fit never makes: not finite, out of
// bounds, a name empty or twice. So a crafted file allocates a small
// multiple of its size (FuzzUnmarshalCorpus) and embeds every text to a
// finite vector.
func UnmarshalCorpus(h *Hashing, data []byte) (*Corpus, error) {
	bad := func(format string, args ...any) (*Corpus, error) {
		return nil, fmt.Errorf("embed: not a fitted embedder written by this version: "+format, args...)
	}
	if !bytes.HasPrefix(data, []byte(corpusMagic)) {
		return bad("no %q at its start", strings.TrimSpace(corpusMagic))
	}
	body := data[len(corpusMagic):]
	rest := body
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(rest)
		// The shortest form only: one file per embedder.
		if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
			return 0, false
		}
		rest = rest[n:]
		return v, true
	}
	dims, ok := uvarint()
	if !ok || dims < 1 || dims > maxCorpusDimensions {
		return bad("%d dimensions", dims)
	}
	n, ok := uvarint()
	if per := minFeatureBytes + 4*(dims-1); !ok || n > uint64(len(rest))/per || n > math.MaxInt32 {
		return bad("%d features, more than its %d bytes hold", n, len(data))
	}
	c := &Corpus{h: h, dims: int(dims), features: make(map[string]int32, n)}
	for row := range n {
		l, ok := uvarint()
		if !ok || l == 0 || l > uint64(len(rest)) {
			return bad("the name of feature %d is cut short or empty", row)
		}
		name := string(rest[:l])
		rest = rest[l:]
		if _, twice := c.features[name]; twice {
			return bad("feature %q is named twice", name)
		}
		c.features[name] = int32(row)
	}
	if uint64(len(rest)) != 4*n*(1+dims) {
		return bad("%d bytes of weights and vectors, where %d features of %d dimensions take %d", len(rest), n, dims, 4*n*(1+dims))
	}
	floats := func(k uint64, limit float64, what string) ([]float32, error) {
		out := make([]float32, k)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
			if !(math.Abs(float64(out[i])) <= limit) { // NaN too
				return nil, fmt.Errorf("embed: not a fitted embedder written by this version: %s %d is %v, outside [-%v, %v]", what, i, out[i], limit, limit)
			}
		}
		rest = rest[4*k:]
		return out, nil
	}
	var err error
	if c.idf, err = floats(n, maxIDF, "the weight of feature"); err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(c.idf, func(f float32) bool { return f < 0 }); i >= 0 {
		return bad("the weight of feature %d is %v, below 0", i, c.idf[i])
	}
	if c.vecs, err = floats(n*dims, maxCoordinate, "value"); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	c.id = corpusID(c.dims, sum[:])
	return c, nil
}
