package localsearch

import (
	"math"
	"math/bits"
	"runtime"
	"sync"
)

// Vectors are held quantized, in two forms made from one rotation of the
// vector (RaBitQ's and SimHash's recipe):
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
//   - sign bits: the Hamming distance h between the signs of query and
//     vector estimates their angle as π·h/padded (SimHash), with a standard
//     deviation of at most 0.5/√padded in h/padded. A query computes h for
//     every visible vector (16 popcounts at 1,024 dimensions) and the int8
//     cosine only for those whose angle could be at or within a threshold
//     (screenSigmas standard deviations) and for the documents that match
//     anyway. The others keep the estimate, below the threshold by
//     construction, so no signal fires on it.
//
// A vector costs padded + padded/8 + 4 bytes instead of 4·dims: 1,156
// instead of 4,096 at 1,024 dimensions.

// screenSigmas is how many standard deviations of the Hamming estimate a
// vector's angle may be past a threshold's and still be scored exactly.
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
// sign[i*padded/64:(i+1)*padded/64] (bit j of a word set: coordinate j < 0).
type quantized struct {
	code  []int8
	scale []float32
	sign  []uint64
}

func newQuantized(n, padded int) quantized {
	return quantized{code: make([]int8, n*padded), scale: make([]float32, n), sign: make([]uint64, n*padded/64)}
}

func (v *quantized) len() int { return len(v.scale) }

// bytes is the memory the vectors take.
func (v *quantized) bytes() int { return len(v.code) + 4*len(v.scale) + 8*len(v.sign) }

// quantizeAll rotates and quantizes n vectors (vec(i) is vector i, of
// r.dims floats), on up to workers cores (GOMAXPROCS when 0).
func (r *rotation) quantizeAll(n int, vec func(i int) []float32, workers int) quantized {
	q := newQuantized(n, r.padded)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, n/256))
	var wg sync.WaitGroup
	share := (n + workers - 1) / workers
	for start := 0; start < n; start += share {
		wg.Add(1)
		go func(start, end int) {
			defer wg.Done()
			y := make([]float32, r.padded)
			for i := start; i < end; i++ {
				r.rotate(y, vec(i))
				q.put(i, y)
			}
		}(start, min(start+share, n))
	}
	wg.Wait()
	return q
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
	v.scale[i] = src.scale[j]
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
	y    []float32 // rotated
	sign []uint64
	// est is the cosine the Hamming distance h estimates, per h.
	est []float32
}

func (r *rotation) probe(q []float32) *probe {
	p := &probe{y: make([]float32, r.padded), sign: make([]uint64, r.padded/64), est: make([]float32, r.padded+1)}
	r.rotate(p.y, q)
	signBits(p.sign, p.y)
	for h := range p.est {
		p.est[h] = float32(math.Cos(math.Pi * float64(h) / float64(r.padded)))
	}
	return p
}

// screen is the largest Hamming distance at which the angle of a vector
// could still be within screenSigmas of one whose cosine is threshold.
func (p *probe) screen(threshold float64) int {
	n := float64(len(p.y))
	if threshold <= -1 {
		return len(p.y)
	}
	at := math.Acos(min(threshold, 1))/math.Pi + screenSigmas*0.5/math.Sqrt(n)
	return min(len(p.y), int(math.Floor(at*n)))
}

// hamming is the Hamming distance between the probe's signs and vector i's.
func (p *probe) hamming(v *quantized, i int) int {
	w := len(p.sign)
	s := v.sign[i*w : (i+1)*w]
	h := 0
	for j, q := range p.sign {
		h += bits.OnesCount64(q ^ s[j])
	}
	return h
}

// cosine is the int8 cosine of the probe with vector i.
func (p *probe) cosine(v *quantized, i int) float32 {
	n := len(p.y)
	c := v.code[i*n : (i+1)*n]
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

// screened is the cosine of the probe with vector i when its Hamming
// distance is at most limit, and otherwise the estimate (then below the
// threshold limit was made for); exact says which.
func (p *probe) screened(v *quantized, i, limit int) (cos float32, exact bool) {
	if h := p.hamming(v, i); h > limit {
		return p.est[h], false
	}
	return p.cosine(v, i), true
}
