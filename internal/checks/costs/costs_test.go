package costs

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated blocks of README.md and docs/costs.md")

// block is a generated part of a Markdown file, between two HTML comments.
type block struct {
	file, name string
	want       func() string
}

var blocks = []block{
	{"README.md", "table", func() string { return READMETable(Prices, Assumed) }},
	{"docs/costs.md", "prices", func() string { return PricesTable(Prices) }},
	{"docs/costs.md", "breakdown", func() string { return Breakdown(Prices, Assumed) }},
}

// TestPublishedFiguresMatchInputs recomputes every table the README and
// docs/costs.md publish and fails when one differs from what its prices and
// assumptions give: change an input, then run go test ./internal/checks/costs
// -update and read the diff.
func TestPublishedFiguresMatchInputs(t *testing.T) {
	for _, b := range blocks {
		path := filepath.Join("..", "..", "..", b.file)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		begin, end := "<!-- costs:"+b.name+" -->\n", "<!-- /costs:"+b.name+" -->"
		i, j := strings.Index(text, begin), strings.Index(text, end)
		if i < 0 || j < i {
			t.Errorf("%s: no block %q (want %q ... %q)", b.file, b.name, begin, end)
			continue
		}
		got, want := text[i+len(begin):j], b.want()
		if got == want {
			continue
		}
		if *update {
			text = text[:i+len(begin)] + want + text[j:]
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: block %q is not what the inputs give (go test ./internal/checks/costs -update rewrites it); want:\n%s", b.file, b.name, want)
	}
}

// TestEstimates pins a few lines by hand, so that a wrong formula cannot
// pass by regenerating the tables.
func TestEstimates(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if got < want-0.005 || got > want+0.005 {
			t.Errorf("%s = %.4f, want %.4f", what, got, want)
		}
	}
	// 2 × 0.178 × 730 + 200 × 0.122 + 6 + 2.40 + 0.45
	near("standard at rest", AtRestDomain(Prices, Assumed, Domains[1]).Total(), 259.88+24.40+6+2.40+0.45)
	// 3 × 0.356 × 730 + 3 × 0.135 × 730 + 600 × 0.122 + 6 + 2.40 + 0.45
	near("large at rest", AtRestDomain(Prices, Assumed, Domains[2]).Total(), 779.64+295.65+73.20+8.85)
	// 6 + 1.70 + 0.45 + 1.2 × 36 MB × 0.023 per GB
	near("embedded at rest", AtRestEmbedded(Prices, Assumed).Total(), 6+1.70+0.45+1.2*0.036*0.023)
	// 0.2 + 0.02 s × 1 GB × 1M × 0.0000133334 = 0.4667, cold 1% × 0.3 s = 0.04
	near("read Lambda", lambda(Prices, Assumed, Assumed.Read, "x").Total(), 0.2+0.266668+0.0400002)
	// A cold start at 10,000 documents: the manifest, 1 hot part, 36 MB in
	// 9 ranges of 4 MB (the prefetch's), 29 GETs of the first search (as
	// measured); 1% of a million searches, $0.0004 per 1,000 GETs.
	if got := ColdStartGETs(Assumed); got != 40 {
		t.Errorf("GETs of a cold start at 10,000 documents: %g, want 40", got)
	}
	near("cold starts' GETs", coldStartGETs(Prices, Assumed).USD, 0.01*1e6*40*0.0000004)
	// At 1,000,000 documents: 1 + 40 + 908 ranges (3,631 / 4) + 29.
	near("cold starts' GETs at a million", ColdStartGETsAtSize(Prices, Assumed, 3631, 40).Total(), 0.01*1e6*978*0.0000004)
	// A warm instance GETs a new segment's hot part and then the rest.
	near("warm instances' GETs of new segments", PerMillionChangesEmbedded(Prices, Assumed)[2].USD, 20000*2*2*0.0000004)
}
