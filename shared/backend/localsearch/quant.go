package localsearch

import (
	"math"
	"math/bits"
	"runtime"
	"sync"
	"unsafe"
)

// Vectors are held quantized, in two forms made from one rotation of the
// vector (RaBitQ's recipe):
//
//   - the rotation: the vector, padded with zeros to a power of two
//     (padded), is multiplied by random signs and by the normalised
//     Walsh-Hadamard matrix, twice. The rotation is orthonormal, so a
//     query rotated the same way has the same dot product with it, and it
//     spreads a vector's length over every coordinate, so that no
//     coordinate is an outlier to quantize and every sign bit carries as
//     much as the others.
//   - int8 codes with a scale per vector: the cosine with a query is
//     scale·Σ q'ᵢ·codeᵢ, within 2.4·10⁻⁴ (rms; at most 10⁻³) of the
//     float32 one at 1,024 dimensions (docs/search.md). Every cosine a
//     response reports or a score uses is this one.
//   - sign bits, and the vector's dot product c with its own signs scaled
//     to a unit vector x̄ (c = Σ|yᵢ|/√padded): RaBitQ's estimator of the
//     cosine with a query q is ⟨q, x̄⟩/c, unbiased, with a standard
//     deviation of at most √(1/c² − 1)/√(padded − 1) (0.023 at 1,024
//     dimensions, where c is about 0.8). The query is quantized to 4 bits a
//     coordinate, so that ⟨q, x̄⟩ is popcounts over its 4 bit planes (80 at
//     1,024 dimensions); that adds a rounding error of Δ/√12 (Δ its step)
//     before the division, independent of the first (the two deviations
//     add in quadrature). A query computes the estimate for every visible
//     vector, and the int8 cosine only for those whose estimate is within
//     screenSigmas standard deviations of a threshold, or above it. The
//     others keep the estimate, below the threshold by construction, so no
//     signal fires on it; a document that matches on other evidence gets its
//     int8 cosine if it is a hit (search.Candidate.Later).
//
// A vector costs padded + padded/8 + 8 bytes instead of 4·dims: 1,160
// instead of 4,096 at 1,024 dimensions.

// screenSigmas is how many standard deviations of the estimate below a
// threshold a vector is still scored exactly.
const screenSigmas = 4

// rotationRounds is the number of sign-and-Hadamard rounds of the rotation.
const rotationRounds = 2

// paddedDims is the length of a rotated vector of dims dimensions: the
// next power of two, at least 64 (one word of signs).
func paddedDims(dims int) int {
	return max(64, 1<<bits.Len(uint(dims-1)))
}

// rotation is the rotation of vectors of dims dimensions.
type rotation struct {
	dims, padded int
	signs        [rotationRounds][]float32
}

var rotations sync.Map // dims -> *rotation

// rotationFor is the rotation of vectors of dims dimensions.
func rotationFor(dims int) *rotation {
	if r, ok := rotations.Load(dims); ok {
		return r.(*rotation)
	}
	r, _ := rotations.LoadOrStore(dims, newRotation(dims))
	return r.(*rotation)
}

func newRotation(dims int) *rotation {
	r := &rotation{dims: dims, padded: paddedDims(dims)}
	// The signs come from a fixed sequence (SplitMix64): the rotation is
	// part of the segment format, the same on every machine.
	state := uint64(0x646f636c69622d71) // "doclib-q"
	next := func() uint64 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	for k := range r.signs {
		s := make([]float32, r.padded)
		for i := 0; i < len(s); i += 64 {
			w := next()
			for j := range 64 {
				s[i+j] = 1 - 2*float32(w>>j&1)
			}
		}
		r.signs[k] = s
	}
	return r
}

// rotate writes the rotation of v (dims floats) into out (padded floats).
func (r *rotation) rotate(out, v []float32) {
	copy(out, v)
	clear(out[len(v):])
	norm := float32(1 / math.Sqrt(float64(r.padded)))
	for _, s := range r.signs {
		for i := range out {
			out[i] *= s[i]
		}
		fwht(out)
		for i := range out {
			out[i] *= norm
		}
	}
}

// fwht is the Walsh-Hadamard transform of a, in place (len(a) a power of two).
func fwht(a []float32) {
	for h := 1; h < len(a); h <<= 1 {
		for i := 0; i < len(a); i += h << 1 {
			lo, hi := a[i:i+h], a[i+h:i+2*h]
			for j := range lo {
				x, y := lo[j], hi[j]
				lo[j], hi[j] = x+y, x-y
			}
		}
	}
}

// quantized holds vectors in their quantized forms: vector i is
// code[i*padded:(i+1)*padded] times scale[i], with the signs
// sign[i*padded/64:(i+1)*padded/64] (bit j of a word set: coordinate j < 0)
// and its dot product with them, signDot[i] (c above).
type quantized struct {
	code    []int8
	scale   []float32
	signDot []float32
	sign    []uint64
}

func newQuantized(n, padded int) quantized {
	return quantized{code: make([]int8, n*padded), scale: make([]float32, n), signDot: make([]float32, n),
		sign: make([]uint64, n*padded/64)}
}

func (v *quantized) len() int { return len(v.scale) }

// bytes is the memory the vectors take.
func (v *quantized) bytes() int {
	return len(v.code) + 4*len(v.scale) + 4*len(v.signDot) + 8*len(v.sign)
}

// quantizeAll rotates and quantizes n vectors (vec(i) is vector i, of
// r.dims floats), on up to workers cores (GOMAXPROCS when 0).
func (r *rotation) quantizeAll(n int, vec func(i int) []float32, workers int) quantized {
	q := newQuantized(n, r.padded)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	inShares(n, max(1, min(workers, n/256)), func(start, end int) {
		y := make([]float32, r.padded)
		for i := start; i < end; i++ {
			r.rotate(y, vec(i))
			q.put(i, y)
		}
	})
	return q
}

// inShares calls f on [0, n) cut in workers shares, at once, and waits.
func inShares(n, workers int, f func(start, end int)) {
	var wg sync.WaitGroup
	share := (n + workers - 1) / workers
	for start := 0; start < n; start += share {
		wg.Add(1)
		go func(start, end int) {
			defer wg.Done()
			f(start, end)
		}(start, min(start+share, n))
	}
	wg.Wait()
}

// put quantizes the rotated vector y into place i.
func (v *quantized) put(i int, y []float32) {
	p := len(y)
	var m float32
	for _, f := range y {
		m = max(m, abs32(f))
	}
	code, sign := v.code[i*p:(i+1)*p], v.sign[i*p/64:(i+1)*p/64]
	clear(sign)
	var l1 float64
	for _, f := range y {
		l1 += float64(abs32(f))
	}
	v.signDot[i] = float32(l1 / math.Sqrt(float64(p)))
	if m > 0 {
		k := 127 / m
		for j, f := range y {
			code[j] = int8(math.Round(float64(f * k)))
		}
		v.scale[i] = m / 127
	}
	signBits(sign, y)
}

// copyFrom copies vector j of src into place i.
func (v *quantized) copyFrom(i int, src *quantized, j, padded int) {
	copy(v.code[i*padded:(i+1)*padded], src.code[j*padded:(j+1)*padded])
	v.scale[i], v.signDot[i] = src.scale[j], src.signDot[j]
	w := padded / 64
	copy(v.sign[i*w:(i+1)*w], src.sign[j*w:(j+1)*w])
}

func signBits(dst []uint64, y []float32) {
	for j, f := range y {
		if f < 0 {
			dst[j/64] |= 1 << (j % 64)
		}
	}
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// probe is a query vector as the quantized vectors are compared with it.
type probe struct {
	y []float32 // rotated
	// The query quantized to 4 bits a coordinate, lo + step·u: the bit
	// planes of u, and what a sum over a vector's signs needs.
	planes     [4][]uint64
	lo, step   float32
	sum        float32 // Σ of the quantized coordinates
	invSqrtP   float32
	roundError float32 // the standard deviation of ⟨q̃ − q, x̄⟩: step/√12
	invDims    float32 // 1/(padded − 1)
}

func (r *rotation) probe(q []float32) *probe {
	n := r.padded
	p := &probe{y: make([]float32, n)}
	r.rotate(p.y, q)
	lo, hi := p.y[0], p.y[0]
	for _, f := range p.y {
		lo, hi = min(lo, f), max(hi, f)
	}
	p.lo, p.step = lo, (hi-lo)/15
	for k := range p.planes {
		p.planes[k] = make([]uint64, n/64)
	}
	var sum float32
	for i, f := range p.y {
		u := uint64(0)
		if p.step > 0 {
			u = uint64(math.Round(float64((f - lo) / p.step)))
		}
		for k := range p.planes {
			p.planes[k][i/64] |= (u >> k & 1) << (i % 64)
		}
		sum += lo + p.step*float32(u)
	}
	p.sum = sum
	p.invSqrtP = float32(1 / math.Sqrt(float64(n)))
	p.roundError = p.step / float32(math.Sqrt(12))
	p.invDims = 1 / float32(n-1)
	return p
}

// estimate is the estimated cosine of the probe with vector i, and the
// variance of its error (a square root per vector is left to whoever needs
// the deviation itself).
func (p *probe) estimate(v *quantized, i int) (est, variance float32) {
	c := v.signDot[i]
	if c <= 0 { // the zero vector: its cosine is 0, exactly
		return 0, 0
	}
	w := len(p.planes[0])
	s := v.sign[i*w : (i+1)*w]
	var pop, u0, u1, u2, u3 int
	p0, p1, p2, p3 := p.planes[0][:len(s)], p.planes[1][:len(s)], p.planes[2][:len(s)], p.planes[3][:len(s)]
	for j, b := range s {
		pop += bits.OnesCount64(b)
		u0 += bits.OnesCount64(p0[j] & b)
		u1 += bits.OnesCount64(p1[j] & b)
		u2 += bits.OnesCount64(p2[j] & b)
		u3 += bits.OnesCount64(p3[j] & b)
	}
	// The quantized query's sum over the negative coordinates of the vector.
	neg := p.lo*float32(pop) + p.step*float32(u0+2*u1+4*u2+8*u3)
	est = (p.sum - 2*neg) * p.invSqrtP / c
	// The two errors are independent: their variances add.
	round := p.roundError / c
	return est, max(1/(c*c)-1, 0)*p.invDims + round*round
}

// cosine is the int8 cosine of the probe with vector i, whose codes are
// code (nil: v's own).
func (p *probe) cosine(v *quantized, code []int8, i int) float32 {
	n := len(p.y)
	c := code
	if c == nil {
		c = v.code[i*n : (i+1)*n]
	}
	y := p.y[:len(c)]
	var s0, s1, s2, s3 float32
	for j := 0; j+4 <= len(y); j += 4 {
		s0 += y[j] * float32(c[j])
		s1 += y[j+1] * float32(c[j+1])
		s2 += y[j+2] * float32(c[j+2])
		s3 += y[j+3] * float32(c[j+3])
	}
	return min(max((s0+s1+s2+s3)*v.scale[i], -1), 1)
}

// screened is the int8 cosine of the probe with vector i when its estimate
// could be at or over threshold (within screenSigmas standard deviations),
// and otherwise the estimate, then below threshold; exact says which.
func (p *probe) screened(v *quantized, i int, threshold float32) (cos float32, exact bool) {
	est, pass := p.passes(v, i, threshold)
	if !pass {
		return est, false
	}
	return p.cosine(v, nil, i), true
}

// passes is the estimated cosine of the probe with vector i, and whether
// it could be at or over threshold (within screenSigmas standard
// deviations): whether the int8 cosine is to be computed.
func (p *probe) passes(v *quantized, i int, threshold float32) (est float32, pass bool) {
	est, variance := p.estimate(v, i)
	// est + screenSigmas·σ < threshold, without a square root.
	if gap := threshold - est; gap > 0 && gap*gap > screenSigmas*screenSigmas*variance {
		return est, false
	}
	return est, true
}

// unsafe8 is b as int8s.
func unsafe8(b []byte) []int8 {
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}
