package relevance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

const tiny = "testdata/tiny"

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.12f, want %.12f", what, got, want)
	}
}

func load(t *testing.T, dir string) *Collection {
	t.Helper()
	c, err := LoadBEIR(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadBEIR(t *testing.T) {
	c := load(t, tiny)
	if c.Name != "tiny" || len(c.Docs) != 5 || len(c.Queries) != 4 {
		t.Fatalf("name %q, %d docs, %d queries", c.Name, len(c.Docs), len(c.Queries))
	}
	if c.Docs[2] != (Doc{ID: "d3", Title: "", Text: "fish bird"}) {
		t.Errorf("doc 3 = %+v", c.Docs[2])
	}
	if c.SkippedQrels != 1 { // q9 is not in queries.jsonl
		t.Errorf("skipped %d qrels, want 1", c.SkippedQrels)
	}
	if c.Qrels["q2"]["d4"] != 0 || c.Qrels["q1"]["d1"] != 2 || len(c.Qrels["q2"]) != 3 {
		t.Errorf("qrels %v", c.Qrels)
	}
	if got := c.Relevant("q2"); len(got) != 2 || got["d3"] != 2 || got["d1"] != 1 {
		t.Errorf("relevant to q2: %v", got)
	}
	if len(c.Relevant("q4")) != 0 {
		t.Error("q4 has only a grade-0 judgment")
	}
}

// writeBEIR copies the tiny collection into a new folder, with files replaced.
func writeBEIR(t *testing.T, replace map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "coll")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CorpusFile, QueriesFile, QrelsFile} {
		b, err := os.ReadFile(filepath.Join(tiny, f))
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := replace[f]; ok {
			if s == "<missing>" {
				continue
			}
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadBEIRErrors(t *testing.T) {
	header := "query-id\tcorpus-id\tscore\n"
	cases := []struct {
		name    string
		replace map[string]string
		want    []string
	}{
		{"bad JSON", map[string]string{CorpusFile: `{"_id": "d1", "title": "", "text": "a"}` + "\n" + `{"_id": "d2", "text": "b"` + "\n"},
			[]string{"corpus.jsonl line 2", "not a JSON object"}},
		{"wrong type", map[string]string{QueriesFile: `{"_id": 7, "text": "cat"}` + "\n"},
			[]string{"queries.jsonl line 1", `"_id" must be a string`}},
		{"no id", map[string]string{CorpusFile: `{"title": "x", "text": "a"}` + "\n"},
			[]string{"corpus.jsonl line 1", `"_id" is missing`}},
		{"duplicate doc", map[string]string{CorpusFile: `{"_id": "d1", "text": "a"}` + "\n\n" + `{"_id": "d1", "text": "b"}` + "\n"},
			[]string{"corpus.jsonl line 3", `"d1" is already on line 1`}},
		{"missing corpus", map[string]string{CorpusFile: "<missing>"}, []string{"no corpus.jsonl in this folder"}},
		{"missing qrels", map[string]string{QrelsFile: "<missing>"}, []string{"no qrels.tsv in this folder"}},
		{"bad header", map[string]string{QrelsFile: "q1\td1\t1\n"}, []string{"qrels.tsv line 1", `header "query-id\tcorpus-id\tscore"`}},
		{"empty qrels", map[string]string{QrelsFile: ""}, []string{"qrels.tsv line 1", "header"}},
		{"unknown doc", map[string]string{QrelsFile: header + "q1\td1\t1\nq1\td77\t1\n"}, []string{"qrels.tsv line 3", `corpus-id "d77" is not in corpus.jsonl`}},
		{"bad score", map[string]string{QrelsFile: header + "q1\td1\thigh\n"}, []string{"qrels.tsv line 2", `score "high"`}},
		{"two fields", map[string]string{QrelsFile: header + "q1 d1 1\n"}, []string{"qrels.tsv line 2", "3 fields"}},
		{"judged twice", map[string]string{QrelsFile: header + "q1\td1\t1\nq1\td1\t2\n"}, []string{"qrels.tsv line 3", "judged twice"}},
		{"no judged query", map[string]string{QrelsFile: header + "q9\td1\t1\n"}, []string{"no judgment of a query"}},
		{"short query", map[string]string{QueriesFile: `{"_id": "q1", "text": " x "}` + "\n"}, []string{"queries.jsonl line 1", "1 characters"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadBEIR(writeBEIR(t, c.replace))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := LoadBEIR(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "no such folder") {
		t.Errorf("missing folder: %v", err)
	}
}

func TestDatasetValidates(t *testing.T) {
	c := load(t, tiny)
	// A document whose text stands in for its title, longer than the limit.
	long := strings.Repeat("wordy ", 100) + "end"
	c.Docs = append(c.Docs, Doc{ID: "long", Text: long}, Doc{ID: "huge", Title: strings.Repeat("é", 700)}, Doc{ID: "empty"})
	f, m := c.File()
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Load(bytes.NewReader(raw)) // the loader of import and local mode
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Dataset(); err != nil {
		t.Fatal(err)
	}
	if len(d.Documents) != len(c.Docs) || len(d.APIKeys) != 1 || !d.APIKeys[0].AllLibraries || !d.Workspaces[0].OwnProviderKey {
		t.Fatalf("%d documents, keys %+v, workspaces %+v", len(d.Documents), d.APIKeys, d.Workspaces)
	}
	titles := map[string]string{}
	for _, doc := range d.Documents {
		titles[m.ToCorpus[doc.ID]] = doc.Title
	}
	want := map[string]string{"d1": "Cats", "d3": "fish bird", "d4": "Birds", "long": strings.Repeat("wordy ", 9) + "wordy…", "empty": "…"}
	for id, w := range want {
		if titles[id] != w {
			t.Errorf("title of %s = %q, want %q", id, titles[id], w)
		}
	}
	if n := utf8.RuneCountInString(titles["huge"]); n != 500 {
		t.Errorf("a 700-character title became %d characters", n)
	}
	if m.ToDoc["d1"] != "doc_d1" || m.ToCorpus["doc_d1"] != "d1" {
		t.Errorf("d1 maps to %q", m.ToDoc["d1"])
	}
	if id := m.ToDoc["t.5"]; !strings.HasPrefix(id, "doc_h") || m.ToCorpus[id] != "t.5" {
		t.Errorf("t.5 maps to %q", id)
	}
	// Deterministic: the same collection gives the same file.
	f2, _ := c.File()
	raw2, _ := json.Marshal(f2)
	if !bytes.Equal(raw, raw2) {
		t.Error("two calls give different data sets")
	}
}

func TestTitle(t *testing.T) {
	cases := map[[2]string]string{
		{"  A   title ", "text"}:        "A title",
		{"", "one two three"}:           "one two three",
		{"", "1 2 3 4 5 6 7 8 9 10"}:    "1 2 3 4 5 6 7 8 9 10",
		{"", "1 2 3 4 5 6 7 8 9 10 11"}: "1 2 3 4 5 6 7 8 9 10…",
		{"", " \n "}:                    "…",
	}
	for in, want := range cases {
		if got := Title(in[0], in[1]); got != want {
			t.Errorf("Title(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	// Ten words of 60 letters: 609 characters, cut at a word boundary.
	w := strings.Repeat("x", 60)
	got := Title("", strings.Repeat(w+" ", 12))
	if n := utf8.RuneCountInString(got); n > titleChars || !strings.HasSuffix(got, w+"…") || strings.Count(got, " ") != 7 {
		t.Errorf("long words: %d characters, %q", n, got)
	}
}

func TestCutQuery(t *testing.T) {
	// 120 words of 5 characters and a space: 720 characters, multi-byte ones too.
	long := strings.Repeat("éabcd ", 120)
	got, cut := CutQuery(long)
	n := utf8.RuneCountInString(got)
	if !cut || n > MaxQueryChars || n < MaxQueryChars-6 {
		t.Fatalf("cut %v to %d characters", cut, n)
	}
	if !strings.HasPrefix(long, got) || long[len(got)] != ' ' || strings.HasSuffix(got, " ") {
		t.Errorf("not cut at a word boundary: ...%q", got[len(got)-12:])
	}
	if got, cut := CutQuery("  short query  "); cut || got != "short query" {
		t.Errorf("short query: %q %v", got, cut)
	}
	exact := strings.Repeat("a", MaxQueryChars-4) + " bcd"
	if got, cut := CutQuery(exact + " "); cut || got != exact {
		t.Errorf("a query of exactly the limit was cut: %v", cut)
	}
	if got, _ := CutQuery(exact + "e"); got != strings.Repeat("a", MaxQueryChars-4) {
		t.Errorf("one past the limit in the last word: %q", got[len(got)-5:])
	}
	if got, cut := CutQuery(strings.Repeat("z", 600)); !cut || got != strings.Repeat("z", MaxQueryChars) {
		t.Errorf("one long word: %d characters", len(got))
	}

	// Through LoadBEIR, and accepted by the API.
	dir := writeBEIR(t, map[string]string{QueriesFile: `{"_id": "q1", "text": "` + long + `"}` + "\n"})
	c := load(t, dir)
	if q := c.Queries[0]; !q.Cut || q.Search != got {
		t.Errorf("query %+v", q)
	}
	d, m, err := c.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(context.Background(), d, hashing(t), settings.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), h, APIKey, c, d, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.QueriesCut != 1 || r.Queries != 1 || !r.PerQuery[0].Cut {
		t.Errorf("cut %d of %d queries", r.QueriesCut, r.Queries)
	}
}

// The tiny collection by hand. Every document also holds the category "beir"
// in its one BM25 field (as doclib indexes labels), and titles count:
//
//	d1  "Cats" + "cat dog"        cat 2, dog 1, beir 1        |d| = 4
//	d2  "Dogs" + "dog dog fish"   dog 3, fish 1, beir 1       |d| = 5
//	d3  "fish bird" (derived) + "fish bird"  fish 2, bird 2, beir 1  |d| = 5
//	d4  "Birds" + ""              bird 1, beir 1              |d| = 2
//	t.5 "Tree" + "tree tree"      tree 3, beir 1              |d| = 4
//
// N = 5, avgdl = 20/5 = 4. With k1 = 1.2, b = 0.75, K(d) = 1.2·(0.25 + 0.75·|d|/4):
// K = 1.2 for |d| = 4, 1.425 for |d| = 5, 0.75 for |d| = 2.
// idf(df=1) = ln(1 + 4.5/1.5) = ln 4; idf(df=2) = ln(1 + 3.5/2.5) = ln 2.4.
// A term's part is idf · tf·2.2 / (tf + K).
func TestBM25ByHand(t *testing.T) {
	c := load(t, tiny)
	d, m, err := c.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	bm := NewBM25(d.Documents)
	near(t, "idf(cat)", bm.IDF("cat"), math.Log(4))
	near(t, "idf(dog)", bm.IDF("dog"), math.Log(2.4))
	near(t, "idf(beir)", bm.IDF("beir"), math.Log(1+0.5/5.5))
	if bm.IDF("unicorn") != 0 {
		t.Error("idf of an unknown term")
	}
	rank := func(q string) ([]string, []float64) {
		var ids []string
		var scores []float64
		for _, s := range bm.Rank(q) {
			ids, scores = append(ids, m.ToCorpus[s.ID]), append(scores, s.Score)
		}
		return ids, scores
	}

	// q1 "cat": d1 only, ln 4 · 2·2.2/(2 + 1.2) = 1.375 ln 4.
	ids, s := rank("cat")
	if !slices.Equal(ids, []string{"d1"}) {
		t.Fatalf("cat: %v", ids)
	}
	near(t, "cat: d1", s[0], 1.375*math.Log(4))

	// q2 "dog fish":
	//   d2 = ln 2.4 · (3·2.2/(3 + 1.425) + 2.2/(1 + 1.425)) = ln 2.4 · (6.6/4.425 + 2.2/2.425)
	//   d3 = ln 2.4 · 2·2.2/(2 + 1.425) = ln 2.4 · 4.4/3.425
	//   d1 = ln 2.4 · 2.2/(1 + 1.2) = ln 2.4
	ids, s = rank("dog fish")
	if !slices.Equal(ids, []string{"d2", "d3", "d1"}) {
		t.Fatalf("dog fish: %v", ids)
	}
	near(t, "dog fish: d2", s[0], math.Log(2.4)*(6.6/4.425+2.2/2.425))
	near(t, "dog fish: d3", s[1], math.Log(2.4)*4.4/3.425)
	near(t, "dog fish: d1", s[2], math.Log(2.4))
	// A repeated query term counts once; stop words count for nothing.
	_, s2 := rank("the dog and the fish, dogs")
	near(t, "repeated terms: d2", s2[0], s[0])

	// q3 "birds": d3 = ln 2.4 · 4.4/3.425 (1.2847·ln 2.4) above d4 = ln 2.4 · 2.2/1.75 (1.2571·ln 2.4).
	ids, s = rank("birds")
	if !slices.Equal(ids, []string{"d3", "d4"}) {
		t.Fatalf("birds: %v", ids)
	}
	near(t, "birds: d3", s[0], math.Log(2.4)*4.4/3.425)
	near(t, "birds: d4", s[1], math.Log(2.4)*2.2/1.75)

	// Ties break by document ID: "beir" is in every document with tf 1;
	// d1 and t.5 (|d| = 4) tie, and doc_d1 < doc_h….
	all := bm.Rank("beir")
	if len(all) != 5 {
		t.Fatalf("beir ranks %d documents", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Score == all[i-1].Score && all[i].ID < all[i-1].ID {
			t.Errorf("tie not by ID: %v", all)
		}
	}
}

// The metrics of BM25's rankings above against the graded judgments
// (log2(2) = 1, log2(3) = 1.5849625, log2(4) = 2):
//
//	q1: relevant d1 (2), t.5 (1); ranked [d1]
//	    DCG = 2/1 = 2; ideal = 2 + 1/log2 3; nDCG = 2/(2 + 1/log2 3) = 0.76018…
//	    Recall = 1/2; MRR = 1
//	q2: relevant d3 (2), d1 (1); d4 judged 0; ranked [d2, d3, d1]
//	    DCG = 2/log2 3 + 1/2; ideal = 2 + 1/log2 3; nDCG = 0.66967…
//	    Recall = 2/2; MRR = 1/2
//	q3: relevant d4 (1); ranked [d3, d4]
//	    DCG = 1/log2 3; ideal = 1; nDCG = 0.63093…; Recall = 1; MRR = 1/2
func TestMetricsByHand(t *testing.T) {
	c := load(t, tiny)
	ideal := 2 + 1/math.Log2(3)
	cases := []struct {
		q      string
		ranked []string
		want   Scores
	}{
		{"q1", []string{"d1"}, Scores{NDCG: 2 / ideal, Recall: 0.5, MRR: 1}},
		{"q2", []string{"d2", "d3", "d1"}, Scores{NDCG: (2/math.Log2(3) + 0.5) / ideal, Recall: 1, MRR: 0.5}},
		{"q3", []string{"d3", "d4"}, Scores{NDCG: 1 / math.Log2(3), Recall: 1, MRR: 0.5}},
	}
	for _, k := range cases {
		got := Score(k.ranked, c.Relevant(k.q))
		near(t, k.q+" nDCG@10", got.NDCG, k.want.NDCG)
		near(t, k.q+" Recall@10", got.Recall, k.want.Recall)
		near(t, k.q+" MRR@10", got.MRR, k.want.MRR)
	}
	// Only the first 10 count: a relevant document at rank 11 is no hit.
	ranked := []string{"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "d4"}
	if got := Score(ranked, c.Relevant("q3")); got != (Scores{}) {
		t.Errorf("rank 11: %+v", got)
	}

	// The sign test, two-sided: 2·P(X ≤ min) for X ~ Binomial(wins+losses, 1/2).
	near(t, "sign 5-0", SignTest(5, 0), 2.0/32)
	near(t, "sign 1-9", SignTest(1, 9), 2*11.0/1024)
	near(t, "sign 3-3", SignTest(3, 3), 1)
	near(t, "sign 0-0", SignTest(0, 0), 1)
	near(t, "sign 10-90", SignTest(10, 90), 2*binomTail(100, 10))
}

// binomTail is P(X ≤ k), X ~ Binomial(n, 1/2), by exact integer sums in float.
func binomTail(n, k int) float64 {
	c, sum := 1.0, 0.0
	for i := 0; i <= k; i++ {
		sum += c
		c = c * float64(n-i) / float64(i+1)
	}
	return sum / math.Pow(2, float64(n))
}

func TestRunThroughTheHandler(t *testing.T) {
	ctx := context.Background()
	c := load(t, tiny)
	d, m, err := c.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(ctx, d, hashing(t), settings.Rules{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var progress []int
	r, err := Run(ctx, e.Handler, APIKey, c, d, m, Options{Workers: 1, Progress: func(done, total int) { progress = append(progress, done) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Collection != "tiny" || r.Documents != 5 || r.Queries != 3 || r.Unjudged != 1 || r.SkippedQrels != 1 || r.QueriesCut != 0 {
		t.Fatalf("report %+v", r)
	}
	if !slices.Equal(progress, []int{1, 2, 3}) {
		t.Errorf("progress %v", progress)
	}
	// BM25's side is the hand-computed one.
	ideal := 2 + 1/math.Log2(3)
	near(t, "BM25 nDCG@10", r.BM25.NDCG, (2/ideal+(2/math.Log2(3)+0.5)/ideal+1/math.Log2(3))/3)
	near(t, "BM25 Recall@10", r.BM25.Recall, (0.5+1+1)/3)
	near(t, "BM25 MRR@10", r.BM25.MRR, (1+0.5+0.5)/3)
	if r.Wins+r.Losses+r.Ties != 3 || r.SignTestP <= 0 || r.SignTestP > 1 {
		t.Errorf("wins %d losses %d ties %d p %v", r.Wins, r.Losses, r.Ties, r.SignTestP)
	}

	known := map[string]bool{}
	for _, doc := range c.Docs {
		known[doc.ID] = true
	}
	hits := 0
	for _, q := range r.PerQuery {
		a := q.Answer
		if len(a.Ranked) == 0 || len(a.Ranked) > Cutoff {
			t.Errorf("%s: %d hits", q.ID, len(a.Ranked))
		}
		for _, id := range a.Ranked {
			if !known[id] {
				t.Errorf("%s: hit %q is not a corpus ID", q.ID, id)
			}
		}
		carried := 0
		for _, n := range a.Signals {
			carried += n
		}
		if carried < len(a.Ranked) { // every hit carries at least one signal
			t.Errorf("%s: %d signals on %d hits", q.ID, carried, len(a.Ranked))
		}
		if a.MatchedTotal < 1 || a.Fallback {
			t.Errorf("%s: matched %d, fallback %v", q.ID, a.MatchedTotal, a.Fallback)
		}
		hits += len(a.Ranked)
		// Recomputed from the answer, doclib's metrics are the report's.
		if got := Score(a.Ranked, c.Relevant(q.ID)); got != q.Doclib {
			t.Errorf("%s: %+v, report says %+v", q.ID, got, q.Doclib)
		}
	}
	// "cat" is a word of d1 only: the word match finds it, and on top.
	q1 := r.PerQuery[0]
	if q1.ID != "q1" || q1.Answer.Signals["lexical"] != 1 || q1.Answer.Ranked[0] != "d1" {
		t.Errorf("q1: %+v", q1.Answer)
	}
	lex := r.Signals[slices.IndexFunc(r.Signals, func(s SignalShare) bool { return s.Signal == "lexical" })]
	if lex.Queries != 1 { // every query's words are in the corpus as written or stemmed
		t.Errorf("lexical fired in %v of queries", lex.Queries)
	}
	if lex.Hits <= 0 || lex.Hits > 1 {
		t.Errorf("lexical on %v of hits", lex.Hits)
	}

	// A query about nothing in the corpus gets the fallback.
	a, err := Ask(ctx, e.Handler, APIKey, "qzxv wkjh", m)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Fallback || len(a.Ranked) != 5 || a.Signals["fallback"] != 5 || a.MatchedTotal != 0 {
		t.Errorf("fallback answer %+v", a)
	}
	// A wrong key is an error that says so.
	if _, err := Ask(ctx, e.Handler, "dlk_wrong_key_000000", "cat", m); err == nil || !strings.Contains(err.Error(), "status 401") {
		t.Errorf("wrong key: %v", err)
	}

	var text, js bytes.Buffer
	r.Embedder = e.EmbedderID
	if err := WriteText(&text, []*Report{r}, true); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"tiny", "nDCG@10 doclib", "LEXICAL", "tiny, per query", "dog fish"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text report lacks %q:\n%s", w, text.String())
		}
	}
	if err := WriteJSON(&js, []*Report{r}, false); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Collections []map[string]any `json:"collections"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Collections) != 1 || back.Collections[0]["perQuery"] != nil {
		t.Errorf("JSON: %v %s", err, js.String())
	}
}

func TestEvaluate(t *testing.T) {
	c := load(t, tiny)
	var stages []string
	r, err := Evaluate(context.Background(), c, hashing(t), settings.Rules{}, func(s string) { stages = append(stages, s) }, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stages, []string{"indexing 5 documents", "3 queries"}) || r.Embedder == "" || r.Timing.Wall <= 0 {
		t.Errorf("stages %q, embedder %q, wall %v", stages, r.Embedder, r.Timing.Wall)
	}
	if _, err := Evaluate(context.Background(), c, hashing(t), settings.Rules{Weights: "meaning=0.3"}, nil, nil, Options{}); err == nil {
		t.Error("an unknown search weight was accepted")
	}
}

// hashing is the offline embedder, doclib-server's default.
func hashing(t testing.TB) search.Embedder {
	t.Helper()
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSegmentsRankAsTheIndexInMemory: an index written in segments and read
// by range, as the embedded tier's search function reads it, through a cache
// too small to hold it, answers every query of a collection exactly as the
// in-memory index does (ranking, signals, totals), and its queries did read
// its cold parts by range.
func TestSegmentsRankAsTheIndexInMemory(t *testing.T) {
	ctx := context.Background()
	c := synthetic(600, 60)
	want, err := Evaluate(ctx, c, hashing(t), settings.Rules{}, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Ranged != nil {
		t.Errorf("the in-memory index reports reads by range: %+v", want.Ranged)
	}
	got, err := Evaluate(ctx, c, hashing(t), settings.Rules{}, nil, nil, Options{Segments: 70, CacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	g := got.Ranged
	if g == nil || g.Segments != 9 || g.Opened != g.Segments || g.Reads == 0 || g.Bytes == 0 || g.Dropped == 0 {
		t.Fatalf("read by range: %+v, want 9 segments all opened by range, reads made and blocks dropped", g)
	}
	if len(got.PerQuery) != len(want.PerQuery) || len(want.PerQuery) < 50 {
		t.Fatalf("%d queries answered, %d in memory", len(got.PerQuery), len(want.PerQuery))
	}
	for i, w := range want.PerQuery {
		a, b := w.Answer, got.PerQuery[i].Answer
		if !slices.Equal(a.Ranked, b.Ranked) || a.MatchedTotal != b.MatchedTotal || a.Fallback != b.Fallback || !maps.Equal(a.Signals, b.Signals) {
			t.Errorf("query %s: in segments %v (%d matched, %v), in memory %v (%d matched, %v)",
				w.ID, b.Ranked, b.MatchedTotal, b.Signals, a.Ranked, a.MatchedTotal, a.Signals)
		}
	}
	if got.Doclib != want.Doclib {
		t.Errorf("nDCG@10 etc. %+v in segments, %+v in memory", got.Doclib, want.Doclib)
	}
	t.Logf("%d queries alike; %+v", len(want.PerQuery), *g)
}

// synthetic is a collection of docs documents of words drawn from a
// vocabulary by a Zipf law, and queries of three to five words of one
// document each, judged relevant to it.
func synthetic(docs, queries int) *Collection {
	rng := rand.New(rand.NewPCG(39, 37))
	vocab := make([]string, 800)
	for i := range vocab {
		w := make([]byte, 4+rng.IntN(6))
		for j := range w {
			w[j] = "etaoinshrdlucmfwypvbgk"[rng.IntN(22)]
		}
		vocab[i] = string(w)
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(4, 39)), 1.1, 2, uint64(len(vocab)-1))
	words := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = vocab[zipf.Uint64()]
		}
		return out
	}
	c := &Collection{Name: "synthetic", Qrels: map[string]map[string]int{}}
	for i := range docs {
		c.Docs = append(c.Docs, Doc{ID: fmt.Sprintf("d%d", i), Title: strings.Join(words(4), " "), Text: strings.Join(words(40+rng.IntN(80)), " ")})
	}
	for i := range queries {
		d := c.Docs[rng.IntN(docs)]
		ws := strings.Fields(d.Text)
		q := make([]string, 3+rng.IntN(3))
		for j := range q {
			q[j] = ws[rng.IntN(len(ws))]
		}
		id := fmt.Sprintf("q%d", i)
		c.Queries = append(c.Queries, Query{ID: id, Text: strings.Join(q, " "), Search: strings.Join(q, " ")})
		c.Qrels[id] = map[string]int{d.ID: 1}
	}
	return c
}
