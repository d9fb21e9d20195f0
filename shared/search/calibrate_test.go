package search_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/search"
)

// floorEmbedder is a synthetic model whose cosines sit on a floor: every
// vector is a share of one common direction (all texts are alike by that
// much, as real sentence encoders are) plus the direction of its topic, the
// first word of the text when it is one of the corpus's topics, and a
// direction of its own otherwise. Two texts of different topics have a
// cosine of about floor, two of one topic about 1.
type floorEmbedder struct {
	floor  float64
	dims   int
	topics map[string]bool
}

func (e *floorEmbedder) ID() string      { return fmt.Sprintf("floor/%.2f", e.floor) }
func (e *floorEmbedder) Dimensions() int { return e.dims }

func (e *floorEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		key := t
		if w, _, _ := strings.Cut(t, " "); e.topics[w] {
			key = w
		}
		h := fnv.New64a()
		h.Write([]byte(key))
		rng := rand.New(rand.NewPCG(h.Sum64(), 1))
		v := make([]float32, e.dims)
		// dims-1 random coordinates for the topic, the last for the common
		// direction: floor = c² / (c² + 1) for unit topic parts.
		var n float64
		for j := range e.dims - 1 {
			x := rng.NormFloat64()
			v[j] = float32(x)
			n += x * x
		}
		for j := range e.dims - 1 {
			v[j] /= float32(math.Sqrt(n))
		}
		// A little of the text's own, so that one topic's texts differ.
		h.Write([]byte(t))
		own := rand.New(rand.NewPCG(h.Sum64(), 2))
		for j := range e.dims - 1 {
			v[j] += float32(0.15 * own.NormFloat64() / math.Sqrt(float64(e.dims)))
		}
		v[e.dims-1] = float32(math.Sqrt(e.floor / (1 - e.floor)))
		search.Normalize(v)
		out[i] = v
	}
	return out, nil
}

// topicCorpus is n documents in k topics, each titled and written in its
// topic's words, and the embedder's vectors of them.
func topicCorpus(t *testing.T, e *floorEmbedder, n, k int) []search.IndexDoc {
	t.Helper()
	e.topics = map[string]bool{}
	docs := make([]search.IndexDoc, n)
	texts := make([]string, n)
	for i := range docs {
		topic := fmt.Sprintf("topic%02d", i%k)
		e.topics[topic] = true
		docs[i].ID = fmt.Sprintf("doc_%04d", i)
		docs[i].Title = fmt.Sprintf("%s title %d", topic, i)
		texts[i] = fmt.Sprintf("%s body of document %d", topic, i)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		docs[i].Vector = vecs[i]
	}
	return docs
}

func cos(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestCalibrationFollowsTheFloor: whatever a model's floor of similarity
// (here 0.05, like the fitted offline embedder; 0.5, like a small sentence
// encoder; 0.8), the calibrated threshold sits above what texts of other
// topics and random letters reach and below what texts of one topic
// reach: semantic fires on a query's topic and on nothing else. A fixed
// threshold cannot: 0.55 fires on every document at a floor of 0.8.
func TestCalibrationFollowsTheFloor(t *testing.T) {
	ctx := context.Background()
	for _, floor := range []float64{0.05, 0.5, 0.8} {
		t.Run(fmt.Sprint(floor), func(t *testing.T) {
			e := &floorEmbedder{floor: floor, dims: 256}
			docs := topicCorpus(t, e, 600, 30)
			c, err := search.Calibrate(ctx, e, docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.Embedder != e.ID() || c.Documents.Queries != 400 || c.Documents.Gibberish != 256 || c.Documents.Pairs < 100_000 {
				t.Fatalf("calibration %+v: want 400 queries (100 of each length), 256 random strings and over 100,000 pairs, of %s", c, e.ID())
			}
			if c.Recordings != nil {
				t.Errorf("no recordings, and yet a recordings null: %+v", *c.Recordings)
			}
			r := search.DefaultRules(e.ID()).Calibrated(c, e.ID(), 0)
			if math.Abs(c.Documents.Chance()-floor) > 0.05 {
				t.Errorf("chance level %.3f, want about the floor %.2f", c.Documents.Chance(), floor)
			}
			th := r.SemanticThreshold
			if th <= floor || th >= 0.95 {
				t.Errorf("threshold %.3f, want between the floor %.2f and one topic's cosines (0.95+)", th, floor)
			}
			// A query of each topic fires on its topic's documents only.
			for k := range 30 {
				qv, _ := e.Embed(ctx, []string{fmt.Sprintf("topic%02d how do I", k)})
				for _, d := range docs {
					same := strings.HasPrefix(d.Title, fmt.Sprintf("topic%02d ", k))
					if fires := cos(qv[0], d.Vector) >= th; fires != same {
						t.Fatalf("query of topic %d, %s: cosine %.3f, threshold %.3f: fires %v", k, d.Title, cos(qv[0], d.Vector), th, fires)
					}
				}
			}
			// Random letters fire on nothing.
			rng := rand.New(rand.NewPCG(5, 6))
			for range 1000 {
				b := make([]byte, 4+rng.IntN(9))
				for j := range b {
					b[j] = byte('a' + rng.IntN(26))
				}
				qv, _ := e.Embed(ctx, []string{string(b)})
				for _, d := range docs {
					if cos(qv[0], d.Vector) >= th {
						t.Fatalf("random letters %q reach %.3f with %s, at or above the threshold %.3f", b, cos(qv[0], d.Vector), d.Title, th)
					}
				}
			}
			// The same corpus and embedder give the same calibration.
			again, _ := search.Calibrate(ctx, e, docs, nil)
			if !reflect.DeepEqual(again, c) {
				t.Errorf("two calibrations of one corpus differ: %+v and %+v", *c, *again)
			}
		})
	}
}

// TestCalibratedKeepsWhatWasSet: a threshold set explicitly (a flag, a
// variable) stays; a calibration of another embedder changes nothing; the
// recordings take their own null when there is one, the documents'
// otherwise.
func TestCalibratedKeepsWhatWasSet(t *testing.T) {
	docs := search.Null{Pairs: 1000, P50: 0.4, P95: 0.6, GibberishMedian: 0.3, GibberishMax: 0.4}
	recs := search.Null{Pairs: 1000, P50: 0.5, P95: 0.7, GibberishMedian: 0.3, GibberishMax: 0.4}
	c := &search.Calibration{Embedder: "m", Documents: docs}
	base := search.DefaultRules("m")
	r := base.Calibrated(c, "m", 0)
	if r.SemanticThreshold != 0.6 || r.RecordingsThreshold != 0.6 {
		t.Errorf("calibrated without recordings: %g, %g; want 0.6 for both", r.SemanticThreshold, r.RecordingsThreshold)
	}
	c.Recordings = &recs
	if r = base.Calibrated(c, "m", 0); r.RecordingsThreshold != 0.7 {
		t.Errorf("recordings threshold %g, want their own 0.7", r.RecordingsThreshold)
	}
	fixed := base
	fixed.SemanticThreshold, fixed.Fixed = 0.42, search.FixedSemantic
	if r = fixed.Calibrated(c, "m", 0); r.SemanticThreshold != 0.42 || r.RecordingsThreshold != 0.7 {
		t.Errorf("an explicit semantic threshold: %g, %g; want 0.42 kept and 0.7", r.SemanticThreshold, r.RecordingsThreshold)
	}
	if r = base.Calibrated(c, "other", 0); r != base {
		t.Errorf("a calibration of another embedder changed the rules: %+v", r)
	}
	if r = base.Calibrated(nil, "m", 0); r != base {
		t.Errorf("no calibration changed the rules: %+v", r)
	}
	// A query is held to the chance of its own length.
	byLength := search.Null{Pairs: 1000, P50: 0.4, P95: 0.6, GibberishMedian: 0.2, GibberishMax: 0.3, Lengths: []search.LengthNull{
		{Words: 4, Pairs: 100, P50: 0.3, P95: 0.45}, {Words: 12, Pairs: 100, P50: 0.4, P95: 0.55}, {Words: 0, Pairs: 100, P50: 0.5, P95: 0.7}}}
	for _, c := range []struct {
		words int
		want  float64
	}{{1, 0.45}, {4, 0.45}, {5, 0.55}, {12, 0.55}, {13, 0.7}, {200, 0.7}} {
		if got := byLength.ThresholdFor(c.words); got != c.want {
			t.Errorf("a query of %d words: threshold %g, want %g", c.words, got, c.want)
		}
	}
	lc := &search.Calibration{Embedder: "m", Documents: byLength}
	if short, long := base.Calibrated(lc, "m", 3), base.Calibrated(lc, "m", 40); short.SemanticThreshold != 0.45 || long.SemanticThreshold != 0.7 {
		t.Errorf("3 words: %g, 40 words: %g; want 0.45 and 0.7", short.SemanticThreshold, long.SemanticThreshold)
	}
	// Random letters above the chance percentile raise the threshold.
	high := search.Null{Pairs: 1000, P50: 0.3, P95: 0.5, GibberishMedian: 0.4, GibberishMax: 0.56}
	if got := high.Threshold(); math.Abs(got-0.64) > 1e-9 {
		t.Errorf("threshold %g, want 0.56 + (0.56 - 0.4) / 2 = 0.64", got)
	}
}

// TestStrengthCountsFromTheThreshold: a meaning signal adds nothing at its
// threshold and its whole weight at a cosine of 1, whatever the threshold,
// so that a model whose cosines sit high adds no more than one whose sit low.
func TestStrengthCountsFromTheThreshold(t *testing.T) {
	for _, c := range []struct{ cos, th, want float64 }{
		{0.2, 0.2, 0}, {1, 0.2, 1}, {0.6, 0.2, 0.5}, {0.1, 0.2, 0},
		{0.7, 0.6, 0.25}, {1, 0.6, 1}, {0.6, 0.6, 0}, {0.99, 1, 0},
	} {
		if got := search.Strength(c.cos, c.th); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Strength(%g, %g) = %g, want %g", c.cos, c.th, got, c.want)
		}
	}
	r := search.DefaultRules("m")
	r.SemanticThreshold, r.Weights.Semantic = 0.6, 0.3
	just := r.Score(search.Evidence{Semantic: 0.6})
	far := r.Score(search.Evidence{Semantic: 0.9})
	if just != 0 || math.Abs(far-0.3*0.75) > 1e-4 {
		t.Errorf("scores %g at the threshold and %g at 0.9; want 0 and %g", just, far, 0.3*0.75)
	}
}
