package localsearch_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/relevance"
	"github.com/doclib/doclib/shared/search"
)

// relevanceDir is where the public test collections are: DOCLIB_RELEVANCE_DIR,
// or the reference folder beside the checkout. Tests that need them skip when
// they are absent (a clean clone has only the demo data).
// loadCollection loads the BEIR collection in dir, and its data set.
func loadCollection(t testing.TB, dir string) (*relevance.Collection, *doclib.DataSet) {
	t.Helper()
	c, err := relevance.LoadBEIR(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := c.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

func relevanceDir() string {
	if d := os.Getenv("DOCLIB_RELEVANCE_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "..", "shared", "relevance")
}

// TestRandomLettersGetTheFallback is the property of docs/api.md: a query of
// words that appear nowhere in the visible documents, exactly or nearly, and
// that the embedder cannot relate to them, matches nothing. 1,000 queries of
// random letters (1 to 3 words of 4 to 12 letters) on the demo data and on each
// public collection present: every one whose words are not within the allowed
// edits of a word of the corpus (checked here independently of the engine)
// gets the fallback.
func TestRandomLettersGetTheFallback(t *testing.T) {
	sets := map[string]func(t *testing.T) *doclib.DataSet{
		"demo": func(t *testing.T) *doclib.DataSet { d, _, _ := demoIndex(t); return d },
	}
	for _, name := range []string{"cacm", "cisi", "med", "npl"} {
		dir := filepath.Join(relevanceDir(), name)
		sets[name] = func(t *testing.T) *doclib.DataSet {
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("the %s collection is not at %s (set DOCLIB_RELEVANCE_DIR)", name, dir)
			}
			_, d := loadCollection(t, dir)
			return d
		}
	}
	for name, load := range sets {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "demo" {
				t.Skip("short mode: the demo data only")
			}
			d := load(t)
			e, err := offline.NewHashing(0, nil)
			if err != nil {
				t.Fatal(err)
			}
			x, err := localsearch.Build(context.Background(), d, e, localsearch.Options{Fit: true})
			if err != nil {
				t.Fatal(err)
			}
			rules := search.DefaultRules(x.EmbedderID())
			s := searcher(x, rules)
			var libs []string
			for _, l := range d.Libraries {
				libs = append(libs, l.ID)
			}
			near := newNearOracle(d, &rules)
			rng := rand.New(rand.NewPCG(13, 7))
			unrelated := 0
			for range 1000 {
				q := search.RandomLetters(rng, nil)
				if near.relates(q) {
					continue // a word of the corpus, or within its edits: it may match
				}
				unrelated++
				res, err := s.Search(context.Background(), search.Request{Text: q, Libraries: libs, Limit: 5})
				if err != nil {
					t.Fatal(err)
				}
				if !res.LowConfidence || res.MatchedTotal != 0 {
					hit := search.Hit{}
					if len(res.Hits) > 0 {
						hit = res.Hits[0]
					}
					t.Fatalf("%q matched %d documents (first %s, signals %v, similarity %.3f); random letters must get the fallback",
						q, res.MatchedTotal, hit.DocumentID, hit.Signals, hit.SemanticSimilarity)
				}
				for _, h := range res.Hits {
					if len(h.Signals) != 1 || h.Signals[0] != search.SignalFallback {
						t.Fatalf("%q: a fallback hit with signals %v", q, h.Signals)
					}
				}
			}
			if unrelated < 900 {
				t.Fatalf("only %d of 1000 random queries relate to nothing: the oracle is too wide to test anything", unrelated)
			}
			t.Logf("%d of 1000 random queries relate to no word of the corpus; all got the fallback", unrelated)
		})
	}
}

// nearOracle tells whether a word is within the fuzzy signal's edits of a term
// of the corpus, by deletion neighbourhoods (two strings within k edits share a
// string reached by at most k deletions from each): a superset of Levenshtein
// within k, computed without the engine's automata.
type nearOracle struct {
	a       *analysis.Analyzer
	rules   *search.Rules
	deletes map[string]bool
}

func newNearOracle(d *doclib.DataSet, r *search.Rules) *nearOracle {
	o := &nearOracle{a: analysis.New(), rules: r, deletes: map[string]bool{}}
	add := func(s string) {
		o.a.Each(s, func(t analysis.Token) {
			for _, v := range deletions(t.Term, 2) {
				o.deletes[v] = true
			}
		})
	}
	for _, doc := range d.Documents {
		add(doc.Title)
		for _, s := range doclib.ContentStrings(doc.Content) {
			add(s)
		}
		for _, s := range search.Labels(doc) {
			add(s)
		}
	}
	return o
}

func (o *nearOracle) relates(q string) bool {
	for _, term := range o.a.Terms(q) {
		for _, v := range deletions(term, max(o.rules.MaxEdits(len([]rune(term))), 0)) {
			if o.deletes[v] {
				return true
			}
		}
	}
	return false
}

// deletions returns s and every string made by deleting up to k of its runes.
func deletions(s string, k int) []string {
	out := []string{s}
	frontier := []string{s}
	for range k {
		var next []string
		for _, w := range frontier {
			r := []rune(w)
			for i := range r {
				next = append(next, string(r[:i])+string(r[i+1:]))
			}
		}
		out = append(out, next...)
		frontier = next
	}
	return out
}
