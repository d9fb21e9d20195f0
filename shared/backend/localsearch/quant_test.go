package localsearch

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randomUnit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		f := rng.NormFloat64()
		v[i] = float32(f)
		sum += f * f
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(sum))
	}
	return v
}

// towards returns a unit vector whose cosine with the unit vector a is c.
func towards(rng *rand.Rand, a []float32, c float64) []float32 {
	b := randomUnit(rng, len(a))
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	var n float64
	for i := range b { // b minus its part along a, normalised
		b[i] -= float32(d) * a[i]
		n += float64(b[i]) * float64(b[i])
	}
	out := make([]float32, len(a))
	s := math.Sqrt(1 - c*c)
	for i := range out {
		out[i] = float32(c*float64(a[i]) + s*float64(b[i])/math.Sqrt(n))
	}
	return out
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestEstimateError: the sign estimate's error is within the standard
// deviation it states (its rms below the mean stated one, and no error past
// five of them), and about 0.023 at 1,024 dimensions.
func TestEstimateError(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for dims, want := range map[int]float64{128: 0.08, 1024: 0.03} {
		r := rotationFor(dims)
		const n = 4000
		q := randomUnit(rng, dims)
		vs := make([][]float32, n)
		for i := range vs {
			vs[i] = towards(rng, q, rng.Float64()*2-1)
		}
		x := r.quantizeAll(n, func(i int) []float32 { return vs[i] }, 0)
		pr := r.probe(q)
		var sq, stated float64
		for i, v := range vs {
			est, variance := pr.estimate(&x, i)
			sigma := math.Sqrt(float64(variance))
			err := float64(est) - dot(q, v)
			sq += err * err
			stated += sigma
			if math.Abs(err) > 5*sigma {
				t.Errorf("%d dimensions: an estimate off by %.3f, %.1f of its stated deviations", dims, err, math.Abs(err)/sigma)
			}
		}
		rms, mean := math.Sqrt(sq/n), stated/n
		t.Logf("%d dimensions: estimate error rms %.4f, stated deviation %.4f on average", dims, rms, mean)
		if rms > mean || mean > want {
			t.Errorf("%d dimensions: rms %.4f, stated %.4f; want the rms below the stated, and the stated below %v", dims, rms, mean, want)
		}
	}
}

func TestPaddedDims(t *testing.T) {
	for dims, want := range map[int]int{1: 64, 16: 64, 64: 64, 65: 128, 128: 128, 384: 512, 1024: 1024, 1536: 2048} {
		if got := paddedDims(dims); got != want {
			t.Errorf("paddedDims(%d) = %d; want %d", dims, got, want)
		}
	}
}

// TestRotationKeepsDotProducts: the rotation is orthonormal, so a query
// rotated with a vector keeps their cosine, whatever the dimensions.
func TestRotationKeepsDotProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{16, 100, 128, 384, 1024} {
		r := newRotation(dims)
		ya, yb := make([]float32, r.padded), make([]float32, r.padded)
		for range 50 {
			a, b := randomUnit(rng, dims), randomUnit(rng, dims)
			r.rotate(ya, a)
			r.rotate(yb, b)
			if got, want := dot(ya, yb), dot(a, b); math.Abs(got-want) > 1e-5 {
				t.Fatalf("%d dimensions: rotated dot %v, was %v", dims, got, want)
			}
			if n := dot(ya, ya); math.Abs(n-1) > 1e-5 {
				t.Fatalf("%d dimensions: a rotated unit vector has length² %v", dims, n)
			}
		}
	}
}

// TestInt8Cosines: the int8 cosine is within the bound docs/search.md gives
// (3·10⁻⁴ at 1,024 dimensions; wider at fewer, where each code carries more
// of the length) of the float one.
func TestInt8Cosines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for dims, bound := range map[int]float64{128: 4e-3, 256: 3e-3, 1024: 1.5e-3} {
		r := rotationFor(dims)
		const n = 2000
		vs := make([][]float32, n)
		q := randomUnit(rng, dims)
		for i := range vs {
			vs[i] = towards(rng, q, rng.Float64()*2-1)
		}
		x := r.quantizeAll(len(vs), func(i int) []float32 { return vs[i] }, 0)
		pr := r.probe(q)
		var sq, worst float64
		for i, v := range vs {
			err := math.Abs(float64(pr.cosine(&x, nil, i)) - dot(q, v))
			sq += err * err
			worst = max(worst, err)
		}
		rms := math.Sqrt(sq / n)
		t.Logf("%d dimensions: int8 cosine error rms %.2g, worst %.2g", dims, rms, worst)
		if worst > bound {
			t.Errorf("%d dimensions: int8 cosine off by %v; want at most %v", dims, worst, bound)
		}
	}
}

// TestScreenKeepsWhatCouldMatch: a vector whose cosine reaches the threshold
// is scored exactly (the screen's miss rate at four standard deviations is
// about 3·10⁻⁵, none in these 40,000 draws), and one left out keeps an
// estimate below the threshold, so no signal fires on it.
func TestScreenKeepsWhatCouldMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dims := range []int{128, 1024} {
		r := rotationFor(dims)
		for _, threshold := range []float64{0.2, 0.45, 0.55, 0.6} {
			q := randomUnit(rng, dims)
			const n = 5000
			vs := make([][]float32, n)
			cos := make([]float64, n)
			for i := range vs {
				cos[i] = threshold + (rng.Float64()*2-1)*0.3
				vs[i] = towards(rng, q, min(cos[i], 1))
			}
			x := r.quantizeAll(len(vs), func(i int) []float32 { return vs[i] }, 0)
			pr := r.probe(q)
			skipped := 0
			for i := range vs {
				got, exact := pr.screened(&x, i, float32(threshold))
				switch {
				case !exact && cos[i] >= threshold:
					t.Errorf("%d dimensions, threshold %v: a vector of cosine %.3f is left out (estimate %.3f)", dims, threshold, cos[i], got)
				case !exact && float64(got) >= threshold:
					t.Errorf("%d dimensions, threshold %v: an estimate %.3f at or over the threshold", dims, threshold, got)
				case !exact:
					skipped++
				}
			}
			t.Logf("%d dimensions, threshold %v: %d of %d vectors within ±0.3 left to their estimate", dims, threshold, skipped, n)
			if dims == 1024 && skipped == 0 {
				t.Errorf("%d dimensions, threshold %v: the screen left nothing out", dims, threshold)
			}
		}
	}
}
