package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestScoreIsBoundedAndIgnoresEvidenceBelowThresholds(t *testing.T) {
	r := DefaultRules("hash-v1/256")
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		e := Evidence{LexicalHit: rng.IntN(2) == 0, Word: rng.Float64()*1.2 - 0.1, FuzzyHit: rng.IntN(2) == 0,
			Share: rng.Float64(), Semantic: rng.Float64()*2 - 1, Recordings: rng.Float64()}
		if s := r.Score(e); s < 0 || s > 1 {
			t.Fatalf("score %f outside [0, 1] for %+v", s, e)
		}
		if r.Matches(e) != (len(r.Signals(e)) > 0) {
			t.Fatalf("Matches and Signals disagree for %+v", e)
		}
	}
	// Below its threshold a similarity adds nothing, however close it comes.
	lex := Evidence{LexicalHit: true, Word: 0.3}
	near := lex
	near.Semantic = r.SemanticThreshold - 0.001
	if r.Score(lex) != r.Score(near) {
		t.Error("a semantic similarity below the threshold changed the score")
	}
	// More evidence never lowers a score.
	more := lex
	more.Semantic = 0.9
	if r.Score(more) <= r.Score(lex) {
		t.Error("a fired semantic signal did not raise the score")
	}
	if r.Score(Evidence{LexicalHit: true, Word: 0.5}) <= r.Score(Evidence{FuzzyHit: true, Word: 0.5}) {
		t.Error("a near miss as strong as a word match outranks it")
	}
	// Within a signal, stronger evidence ranks higher: rarer or more matched
	// words give a larger Word.
	if r.Score(Evidence{FuzzyHit: true, Word: 0.6}) <= r.Score(Evidence{FuzzyHit: true, Word: 0.2}) {
		t.Error("stronger word evidence did not raise the score")
	}
}

func TestRulesValidate(t *testing.T) {
	r := DefaultRules("x")
	r.Weights.Semantic = 0.9
	if err := r.Validate(); err == nil {
		t.Error("weights summing above 1 accepted")
	}
	r = DefaultRules("x")
	r.SemanticThreshold = 0
	if err := r.Validate(); err == nil {
		t.Error("a threshold of 0 accepted")
	}
}

func TestMaxEdits(t *testing.T) {
	r := DefaultRules("x") // similarity 0.8
	for n, want := range map[int]int{1: 0, 4: 0, 5: 1, 9: 1, 10: 2, 30: 2} {
		if got := r.MaxEdits(n); got != want {
			t.Errorf("MaxEdits(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestEvaluateDropsWhatABackendShouldNotReturn(t *testing.T) {
	r := DefaultRules("x")
	in, out := &Doc{ID: "doc_1", LibraryID: "lib_in"}, &Doc{ID: "doc_2", LibraryID: "lib_out"}
	q := &Query{Libraries: []string{"lib_in"}, Limit: 10, Rules: &r}
	m := Evaluate([]Candidate{
		{Doc: in, Evidence: Evidence{LexicalHit: true}},
		{Doc: out, Evidence: Evidence{LexicalHit: true}},                    // outside scope
		{Doc: &Doc{ID: "doc_3", LibraryID: "lib_in"}, Evidence: Evidence{}}, // nothing fired
	}, q)
	if m.MatchedTotal != 1 || len(m.Hits) != 1 || m.Hits[0].DocumentID != "doc_1" || len(m.Facets.Libraries) != 1 {
		t.Errorf("got %+v", m)
	}
}

type countingEmbedder struct {
	calls atomic.Int32
}

func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{3, 4}
	}
	return out, nil
}
func (c *countingEmbedder) Dimensions() int { return 2 }
func (c *countingEmbedder) ID() string      { return "count" }

func TestCachedEmbedder(t *testing.T) {
	e := &countingEmbedder{}
	c := Cached(e, 2)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.EmbedQuery(context.Background(), "reset password")
			if err != nil || v[0] != 0.6 || v[1] != 0.8 {
				t.Errorf("vector %v, %v; want the normalised (0.6, 0.8)", v, err)
			}
		}()
	}
	wg.Wait()
	if n := e.calls.Load(); n != 1 {
		t.Errorf("%d embedding calls for one query asked 20 times", n)
	}
	c.EmbedQuery(context.Background(), "b")
	c.EmbedQuery(context.Background(), "c") // evicts "reset password"
	c.EmbedQuery(context.Background(), "reset password")
	if n := e.calls.Load(); n != 4 {
		t.Errorf("%d calls; the cache holds 2 texts", n)
	}
}

// stallingEmbedder waits for its context, as a throttled provider's client
// does between retries, and counts the calls.
type stallingEmbedder struct{ countingEmbedder }

func (s *stallingEmbedder) Embed(ctx context.Context, _ []string) ([][]float32, error) {
	s.calls.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

// failingEmbedder fails at once, as a provider that is down does.
type failingEmbedder struct{ countingEmbedder }

func (f *failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	f.calls.Add(1)
	return nil, fmt.Errorf("openai: connection refused: %w", ErrEmbedder)
}

// wordsBackend matches one document on words, and records each query.
type wordsBackend struct{ queries []*Query }

func (b *wordsBackend) Match(_ context.Context, q *Query) (*Matches, error) {
	b.queries = append(b.queries, q)
	return &Matches{MatchedTotal: 1, Total: 1, Hits: []Hit{{DocumentID: "doc_1", Signals: []string{SignalLexical}, Score: 0.5}}}, nil
}

func (b *wordsBackend) MostActive(context.Context, *Query, Filter) ([]Hit, int, error) {
	return nil, 0, nil
}

// TestLateMeaningAnswersFromWords: a query whose embedding fails, or passes
// its budget, is answered from the word signals with a zero vector and
// NoMeaning, and says why; after three in a row the embedder is not asked
// for ten seconds, then asked again. Before, such a search waited up to
// the whole budget (25 s at p99 behind a busy model) and then answered 503.
func TestLateMeaningAnswersFromWords(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	stall := &stallingEmbedder{}
	b := &wordsBackend{}
	s := &Searcher{Backend: b, Embedder: Cached(stall, 0), Rules: DefaultRules("count"), EmbedBudget: 20 * time.Millisecond, Now: clock}
	for i := range 3 {
		res, err := s.Search(context.Background(), Request{Text: fmt.Sprintf("reset password %d", i), Limit: 10})
		if err != nil || res.MeaningUnavailable == nil || res.Total != 1 {
			t.Fatalf("search %d with a stalled embedder: %+v, %v; want the words' answer saying the meaning was unavailable", i, res, err)
		}
		q := b.queries[len(b.queries)-1]
		if !q.NoMeaning || len(q.Vector) != 2 || q.Vector[0] != 0 || q.Vector[1] != 0 {
			t.Errorf("search %d: the backend got NoMeaning %v and vector %v; want true and zeros", i, q.NoMeaning, q.Vector)
		}
	}
	if n := stall.calls.Load(); n != 3 {
		t.Fatalf("%d embedding calls for 3 searches", n)
	}
	// Three late in a row: the gate is shut, and the embedder not asked.
	res, err := s.Search(context.Background(), Request{Text: "reset password 4", Limit: 10})
	if err != nil || !errors.Is(res.MeaningUnavailable, ErrMeaningSkipped) || stall.calls.Load() != 3 {
		t.Fatalf("a fourth search: %+v, %v, %d calls; want words without asking the embedder", res, err, stall.calls.Load())
	}
	// Ten seconds on, it is asked again; an answer opens the gate.
	now = now.Add(gateCooldown)
	s.Embedder = Cached(&countingEmbedder{}, 0)
	res, err = s.Search(context.Background(), Request{Text: "reset password 5", Limit: 10})
	if err != nil || res.MeaningUnavailable != nil || b.queries[len(b.queries)-1].NoMeaning {
		t.Fatalf("after the cool-down, with the embedder back: %+v, %v; want the meaning match", res, err)
	}
	// A provider that fails at once: words at once.
	fail := &failingEmbedder{}
	s = &Searcher{Backend: b, Embedder: Cached(fail, 0), Rules: DefaultRules("count"), Now: clock}
	if res, err = s.Search(context.Background(), Request{Text: "reset password", Limit: 10}); err != nil || !errors.Is(res.MeaningUnavailable, ErrEmbedder) {
		t.Fatalf("a provider that is down: %+v, %v; want words, saying the provider failed", res, err)
	}
	// The request's own end is not the embedder's: it is an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s = &Searcher{Backend: b, Embedder: Cached(&stallingEmbedder{}, 0), Rules: DefaultRules("count"), Now: clock}
	if _, err = s.Search(ctx, Request{Text: "reset password", Limit: 10}); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled request: %v, want context.Canceled", err)
	}
}

// TestTopKKeepsTheFirstK: the page selection agrees with a full sort, ties
// included, for every k.
func TestTopKKeepsTheFirstK(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rank := func(a, b [2]int) int {
		if a[0] != b[0] {
			return b[0] - a[0]
		}
		return a[1] - b[1]
	}
	for n := range 40 {
		xs := make([][2]int, n)
		for i := range xs {
			xs[i] = [2]int{rng.IntN(5), i}
		}
		want := slices.Clone(xs)
		slices.SortFunc(want, rank)
		for k := 0; k <= n+1; k++ {
			h := topK[[2]int]{k: k, rank: rank}
			for _, x := range xs {
				h.push(x)
			}
			got := h.xs
			slices.SortFunc(got, rank)
			if !slices.Equal(got, want[:min(k, n)]) {
				t.Fatalf("n %d k %d: %v, want %v", n, k, got, want[:min(k, n)])
			}
		}
	}
}

// TestFacetsByNumberEqualFacetsByName: documents interned in a label table,
// in another table or in none are counted alike.
func TestFacetsByNumberEqualFacetsByName(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pick := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if rng.IntN(2) == 0 {
				out = append(out, n)
			}
		}
		return out
	}
	r := DefaultRules("x")
	q := &Query{Libraries: []string{"lib_a", "lib_b"}, Offset: 3, Limit: 5, Rules: &r}
	var plain, mixed []Candidate
	t1, t2 := NewLabelTable(), NewLabelTable()
	for i := range 200 {
		d := Doc{ID: fmt.Sprintf("doc_%03d", i), LibraryID: []string{"lib_a", "lib_b", "lib_c"}[rng.IntN(3)],
			Category: []string{"hr", "it", ""}[rng.IntN(3)], Tags: pick("access", "onboarding", "it"),
			Applications: pick("Okta", "Slack")}
		e := Evidence{LexicalHit: rng.IntN(3) > 0, Word: rng.Float64()}
		plain = append(plain, Candidate{Doc: &d, Evidence: e})
		c := d
		switch i % 3 {
		case 0:
			t1.Intern(&c)
		case 1:
			t2.Intern(&c)
		}
		mixed = append(mixed, Candidate{Doc: &c, Evidence: e})
	}
	want, got := Evaluate(plain, q), Evaluate(mixed, q)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("interned: %+v\nby name: %+v", got, want)
	}
	if len(want.Facets.Tags) != 3 || want.MatchedTotal == 0 || len(want.Hits) != 5 {
		t.Errorf("the case tests little: %+v", want)
	}
}

// laterTable is a SemanticLater over a table, counting its calls.
type laterTable struct {
	cos   []float64
	calls int
}

func (l *laterTable) Semantic(ref uint32) float64 { l.calls++; return l.cos[ref] }

// TestLaterSemanticIsAskedForTheHitsOnly: a candidate whose Semantic is an
// estimate (Later set) reports the exact figure when it is a hit, and only
// the hits' are computed; its signals and score are those of the evidence
// it was ranked on.
func TestLaterSemanticIsAskedForTheHitsOnly(t *testing.T) {
	r := DefaultRules("x")
	later := &laterTable{}
	var cands []Candidate
	for i := range 50 {
		later.cos = append(later.cos, 0.01*float64(i))
		cands = append(cands, Candidate{Doc: &Doc{ID: fmt.Sprintf("doc_%02d", i), LibraryID: "lib"},
			Evidence: Evidence{FuzzyHit: true, Word: float64(i) / 50, Semantic: -0.5}, Later: later, Ref: uint32(i)})
	}
	// One the engine scored exactly keeps its figure.
	cands[45].Later, cands[45].Semantic = nil, 0.1
	q := &Query{Libraries: []string{"lib"}, Limit: 5, Offset: 2, Rules: &r}
	m := Evaluate(cands, q)
	if later.calls != 5-1 {
		t.Errorf("%d exact figures computed; want 4 (the page's, less the one known)", later.calls)
	}
	want := []string{"doc_47", "doc_46", "doc_45", "doc_44", "doc_43"}
	for i, h := range m.Hits {
		if h.DocumentID != want[i] {
			t.Fatalf("hit %d is %s; want %s", i, h.DocumentID, want[i])
		}
		var n int
		fmt.Sscanf(h.DocumentID, "doc_%d", &n)
		exact := later.cos[n]
		if n == 45 {
			exact = 0.1
		}
		if h.SemanticSimilarity != exact {
			t.Errorf("%s: semanticSimilarity %v; want the exact %v", h.DocumentID, h.SemanticSimilarity, exact)
		}
		if slices.Contains(h.Signals, SignalSemantic) || h.Score != r.Score(Evidence{FuzzyHit: true, Word: float64(n) / 50}) {
			t.Errorf("%s: signals %v, score %v; want those of its fuzzy evidence alone", h.DocumentID, h.Signals, h.Score)
		}
	}
}
