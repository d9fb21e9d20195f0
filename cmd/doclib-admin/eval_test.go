package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tinyBEIR is shared/relevance's hand-made collection; its BM25 figures are
// computed by hand in shared/relevance's tests.
const tinyBEIR = "../../shared/relevance/testdata/tiny"

func TestEvalTable(t *testing.T) {
	code, out, errs := admin(t, "eval", tinyBEIR)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if errs != "" { // not a terminal: no progress
		t.Errorf("stderr: %s", errs)
	}
	for _, w := range []string{"corpus-", "COLLECTION", "nDCG@10 doclib", "WIN/LOSS/TIE", "SIGN TEST p", "FALLBACK", "LEXICAL", "SEMANTIC"} {
		if !strings.Contains(out, w) {
			t.Errorf("the table lacks %q:\n%s", w, out)
		}
	}
	// The row: tiny, 5 documents, 3 judged queries, none cut, BM25's nDCG@10.
	var row []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "tiny" {
			row = f
			break
		}
	}
	if len(row) < 6 || row[1] != "5" || row[2] != "3" || row[3] != "0" || row[5] != "0.687" {
		t.Errorf("row %q", row)
	}
	if strings.Contains(out, "per query") {
		t.Error("per-query lines without --per-query")
	}

	code, out, _ = admin(t, "eval", "--per-query", tinyBEIR)
	if code != 0 || !strings.Contains(out, "tiny, per query") || !strings.Contains(out, "dog fish") {
		t.Errorf("--per-query: %d\n%s", code, out)
	}
}

func TestEvalJSON(t *testing.T) {
	code, out, errs := admin(t, "eval", "--json", "--per-query", tinyBEIR)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var got struct {
		Collections []struct {
			Collection string
			Documents  int
			Queries    int
			BM25       struct{ NDCG10, Recall10, MRR10 float64 }
			Wins       int
			Losses     int
			Ties       int
			SignTestP  float64
			Signals    []struct {
				Signal        string
				Queries, Hits float64
			}
			Timing   struct{ WallSeconds float64 }
			PerQuery []struct {
				ID     string
				Answer struct{ Ranked []string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Collections) != 1 {
		t.Fatalf("%d collections", len(got.Collections))
	}
	c := got.Collections[0]
	ideal := 2 + 1/math.Log2(3)
	want := (2/ideal + (2/math.Log2(3)+0.5)/ideal + 1/math.Log2(3)) / 3
	if c.Collection != "tiny" || c.Documents != 5 || c.Queries != 3 || math.Abs(c.BM25.NDCG10-want) > 1e-9 {
		t.Errorf("%+v", c)
	}
	if c.Wins+c.Losses+c.Ties != 3 || len(c.Signals) != 5 || c.Timing.WallSeconds <= 0 || len(c.PerQuery) != 3 || len(c.PerQuery[0].Answer.Ranked) == 0 {
		t.Errorf("%+v", c)
	}
}

// TestEvalInSegments: --segments writes the index in segments and reads them
// by range, says what it read, and ranks as the in-memory engine does.
func TestEvalInSegments(t *testing.T) {
	code, want, errs := admin(t, "eval", "--json", "--per-query", tinyBEIR)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	code, out, errs := admin(t, "eval", "--json", "--per-query", "--segments", "2", "--cache-mb", "1", tinyBEIR)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	type report struct {
		Collections []struct {
			Ranged   *struct{ Segments, Opened, Reads int }
			PerQuery []struct{ Answer struct{ Ranked []string } }
		}
	}
	var a, b report
	if err := json.Unmarshal([]byte(want), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	g := b.Collections[0].Ranged
	if a.Collections[0].Ranged != nil || g == nil || g.Segments != 3 || g.Opened != 3 || g.Reads == 0 {
		t.Fatalf("ranged %+v in memory, %+v in 3 segments of 5 documents", a.Collections[0].Ranged, g)
	}
	for i, q := range a.Collections[0].PerQuery {
		if got := b.Collections[0].PerQuery[i].Answer.Ranked; !slices.Equal(got, q.Answer.Ranked) {
			t.Errorf("query %d: %v in segments, %v in memory", i, got, q.Answer.Ranked)
		}
	}
	code, text, _ := admin(t, "eval", "--segments", "2", tinyBEIR)
	if code != 0 || !strings.Contains(text, "tiny: read by range: 3 of 3 segments opened by range") {
		t.Errorf("exit %d, the table does not say what was read by range:\n%s", code, text)
	}
}

func TestEvalProgressOnATerminal(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"eval", tinyBEIR}, func(string) string { return "" }, &out, &errb, true)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"tiny: indexing 5 documents…", "tiny: 3 queries…", "tiny: nDCG@10"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, errb.String())
		}
	}
}

func TestEvalErrors(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "README.md")
	if err := os.WriteFile(file, []byte("not a collection"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval"}, exitUsage, "give one or more BEIR folders"},
		{[]string{"eval", empty}, exitError, "no corpus.jsonl in this folder"},
		{[]string{"eval", filepath.Join(empty, "nope")}, exitError, "no such folder"},
		{[]string{"eval", file}, exitUsage, "no folder among the arguments"},
		{[]string{"eval", "--embedder", "nope", tinyBEIR}, exitUsage, "the embedder is one of"},
		{[]string{"eval", "--embedder", "openai", tinyBEIR}, exitUsage, "needs a URL and a model"},
		{[]string{"eval", "--search-weights", "lexical=x", tinyBEIR}, exitUsage, "search weights"},
		{[]string{"eval", "--bogus", tinyBEIR}, exitUsage, "unknown flag"},
		{[]string{"eval", tinyBEIR, tinyBEIR}, exitUsage, "same name"},
		{[]string{"eval", "--cache-mb", "2", tinyBEIR}, exitUsage, "--cache-mb only with it"},
		{[]string{"eval", "--segments", "-1", tinyBEIR}, exitUsage, "give --segments a count"},
	}
	for _, c := range cases {
		code, _, errs := admin(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, errs)
		}
	}
	// A file among folders (a glob's README) is skipped, with a note.
	code, out, errs := admin(t, "eval", file, tinyBEIR)
	if code != 0 || !strings.Contains(errs, "Skipping "+file) || !strings.Contains(out, "tiny") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

func TestEvalHelp(t *testing.T) {
	code, out, _ := admin(t, "eval", "--help")
	for _, w := range []string{"doclib-admin eval ../shared/relevance/*", "nDCG@10", "sign test", "--semantic-threshold", "--embedder", "--json", "--per-query"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("help (exit %d) lacks %q", code, w)
		}
	}
	if strings.Contains(out, "--table") && !strings.Contains(out, "Global Flags") {
		t.Error("eval lists --table as its own flag")
	}
}
