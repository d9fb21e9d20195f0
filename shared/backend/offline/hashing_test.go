package offline

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/data/demo"
)

func cos(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashingIsDeterministicAndUnitLength(t *testing.T) {
	h, err := NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.ID() != "hash-v1/256" || h.Dimensions() != 256 {
		t.Fatalf("ID %s, %d dimensions", h.ID(), h.Dimensions())
	}
	vs, _ := h.Embed(context.Background(), []string{"Reset a user's password", "Reset a user's password", ""})
	if !slices.Equal(vs[0], vs[1]) {
		t.Error("the same text gave two vectors")
	}
	var norm float64
	for _, x := range vs[0] {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("norm² %f, want 1", norm)
	}
	for _, x := range vs[2] {
		if x != 0 {
			t.Fatal("an empty text must give a zero vector")
		}
	}
	other, _ := NewHashing(0, analysis.New())
	if !slices.Equal(other.Vector("Approve an invoice"), h.Vector("Approve an invoice")) {
		t.Error("two embedders of the same size disagree")
	}
}

// TestHashingNeighbours: what the offline embedder is documented to capture.
func TestHashingNeighbours(t *testing.T) {
	h, _ := NewHashing(0, nil)
	base := h.Vector("reset a user's password in Okta")
	cases := []struct {
		name, near, far string
	}{
		{"word forms", "resetting users' passwords in okta", "approve a vendor invoice"},
		{"misspelling", "reset a usr's pasword in okta", "approve a vendor invoice"},
		{"word order", "reset a user's password in Okta", "password user reset okta in a"},
	}
	for _, c := range cases {
		if n, f := cos(base, h.Vector(c.near)), cos(base, h.Vector(c.far)); n <= f {
			t.Errorf("%s: near %.3f <= far %.3f", c.name, n, f)
		}
	}
	// Listed synonyms share a concept; an unlisted paraphrase does not.
	signIn, logIn, approve := h.Vector("cannot sign in"), h.Vector("cannot log in"), h.Vector("cannot approve")
	if cos(signIn, logIn) <= cos(signIn, approve) {
		t.Errorf("sign in ~ log in %.3f, ~ approve %.3f", cos(signIn, logIn), cos(signIn, approve))
	}
	supplier, vendor := h.Vector("pay the supplier"), h.Vector("pay the vendor")
	if c := cos(supplier, vendor); c < 0.5 {
		t.Errorf("supplier ~ vendor %.3f, want at least 0.5", c)
	}
}

// TestHashingChanceSimilarity: texts that share no word are near 0 apart from a
// tail (shared letters, listed synonyms, hash collisions); measured on the demo
// set's titles, 17,731 pairs: median 0.001, 99th percentile 0.187.
func TestHashingChanceSimilarity(t *testing.T) {
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := NewHashing(0, nil)
	type titled struct {
		v     []float32
		terms map[string]bool
	}
	var ts []titled
	for _, doc := range d.Documents {
		terms := map[string]bool{}
		for _, tok := range h.analyzer.Tokens(doc.Title) {
			if !tok.Stop {
				terms[tok.Term] = true
			}
		}
		ts = append(ts, titled{h.Vector(doc.Title), terms})
	}
	var cs []float64
	for i := range ts {
	pairs:
		for j := i + 1; j < len(ts); j++ {
			for term := range ts[i].terms {
				if ts[j].terms[term] {
					continue pairs
				}
			}
			cs = append(cs, cos(ts[i].v, ts[j].v))
		}
	}
	slices.Sort(cs)
	p50, p99 := cs[len(cs)/2], cs[len(cs)*99/100]
	if len(cs) < 10000 || math.Abs(p50) > 0.02 || p99 > 0.25 {
		t.Errorf("%d unrelated pairs: median %.3f, 99th percentile %.3f; want near 0 and below 0.25", len(cs), p50, p99)
	}
}

func TestThesaurusGroupsAreDisjoint(t *testing.T) {
	h, _ := NewHashing(0, nil)
	seen := map[string]int{}
	for g, group := range thesaurus {
		for _, phrase := range group {
			key := strings.Join(h.stems(phrase), " ")
			if key == "" {
				t.Errorf("group %d: %q has no words", g, phrase)
			}
			if other, ok := seen[key]; ok && other != g {
				t.Errorf("%q (%s) is in groups %d and %d", phrase, key, other, g)
			}
			seen[key] = g
		}
	}
}

func TestHashingSizes(t *testing.T) {
	for _, n := range []int{8, 5000} {
		if _, err := NewHashing(n, nil); err == nil {
			t.Errorf("%d dimensions accepted", n)
		}
	}
	h, err := NewHashing(64, nil)
	if err != nil || len(h.Vector("x y")) != 64 {
		t.Fatalf("64 dimensions: %v", err)
	}
}

// BenchmarkVectorQuery: embedding a typical query with the offline embedder.
func BenchmarkVectorQuery(b *testing.B) {
	h, _ := NewHashing(0, nil)
	h.Vector("how do I reset a user's password in okta") // warm the stem cache
	b.ReportAllocs()
	for b.Loop() {
		h.Vector("how do I reset a user's password in okta")
	}
}

// TestCorpusRoundTrip: a fitted embedder written and read back embeds as
// the original, and bytes cut short are refused.
func TestCorpusRoundTrip(t *testing.T) {
	h, err := NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"reset a password in the admin console", "close the books at month end",
		"order a laptop for a new starter", "approve an invoice from a vendor", "rotate the access keys"}
	c, err := FitCorpus(context.Background(), h, texts, 4)
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalCorpus(h, data)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != c.ID() || back.Dimensions() != c.Dimensions() {
		t.Fatalf("read back %s/%d, wrote %s/%d", back.ID(), back.Dimensions(), c.ID(), c.Dimensions())
	}
	for _, q := range append(texts, "password", "a laptop for the vendor") {
		a, _ := c.Embed(context.Background(), []string{q})
		b, _ := back.Embed(context.Background(), []string{q})
		// Equal up to the last bits: a text's features are summed in a
		// map's order.
		if len(a[0]) != len(b[0]) || cos(a[0], b[0]) < 1-1e-6 && !(isZero(a[0]) && isZero(b[0])) {
			t.Fatalf("%q embeds to %v, read back %v", q, a[0], b[0])
		}
	}
	for _, cut := range []int{0, 10, len(data) / 2, len(data) - 1} {
		if _, err := UnmarshalCorpus(h, data[:cut]); err == nil {
			t.Errorf("cut to %d of %d bytes: read", cut, len(data))
		}
	}
}

func isZero(v []float32) bool { return !slices.ContainsFunc(v, func(f float32) bool { return f != 0 }) }
