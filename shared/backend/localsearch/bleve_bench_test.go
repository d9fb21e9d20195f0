package localsearch

import (
	"context"
	"encoding/json"

	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// The lexical path side by side with a plain bleve index of the same corpus
// and queries: bleve's default engine (scorch) with BM25 and its English
// analyzer, over each document's title and content; an AND match query for the
// 10 best. Ours matches every query term too, with BM25F, but scores every match
// (the matched set's size and facets need them all), not only the top 10.

type lexBench struct {
	x     *Index
	bleve bleve.Index
	spans []span
	build struct{ ours, bleve time.Duration }
}

var (
	lexMu      sync.Mutex
	lexBenches = map[int]*lexBench{}
)

func lexSetup(b *testing.B, docs int) *lexBench {
	b.Helper()
	lexMu.Lock()
	defer lexMu.Unlock()
	if lb := lexBenches[docs]; lb != nil {
		return lb
	}
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: docs}))
	if err != nil {
		b.Fatal(err)
	}
	lb := &lexBench{}
	start := time.Now()
	// Only the lexical part of our build is comparable: a tiny embedder keeps the
	// vector work out of the figure.
	e, _ := offline.NewHashing(16, nil)
	if lb.x, err = Build(context.Background(), d, e, Options{}); err != nil {
		b.Fatal(err)
	}
	lb.build.ours = time.Since(start)
	lb.spans = lb.x.visibleSpans([]string{"lib_finance", "lib_it", "lib_sales"})

	m := bleve.NewIndexMapping()
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = index.BM25Scoring
	start = time.Now()
	dir := b.TempDir()
	if lb.bleve, err = bleve.NewUsing(dir+"/idx", m, scorch.Name, scorch.Name, nil); err != nil {
		b.Fatal(err)
	}
	batch := lb.bleve.NewBatch()
	for _, doc := range d.Documents {
		if doc.WorkspaceID != "ws_acme" {
			continue
		}
		body := strings.Join(append(doclib.ContentStrings(doc.Content), search.Labels(doc)...), "\n")
		if err := batch.Index(doc.ID, map[string]string{"title": doc.Title, "body": body}); err != nil {
			b.Fatal(err)
		}
		if batch.Size() == 1000 {
			if err := lb.bleve.Batch(batch); err != nil {
				b.Fatal(err)
			}
			batch = lb.bleve.NewBatch()
		}
	}
	if err := lb.bleve.Batch(batch); err != nil {
		b.Fatal(err)
	}
	lb.build.bleve = time.Since(start)
	lexBenches[docs] = lb
	return lb
}

func lexQueries(b *testing.B) []string {
	b.Helper()
	raw, err := os.ReadFile("../../search/testdata/relevance.json")
	if err != nil {
		b.Fatal(err)
	}
	var f struct {
		Queries []struct{ Query, Kind string } `json:"queries"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		b.Fatal(err)
	}
	var out []string
	for _, q := range f.Queries {
		if q.Kind == "exact" || q.Kind == "application" || q.Kind == "question" {
			out = append(out, q.Query)
		}
	}
	return out
}

func benchLexical(b *testing.B, docs int, ours bool) {
	lb := lexSetup(b, docs)
	qs := lexQueries(b)
	matched := 0
	b.ResetTimer()
	i := 0
	for b.Loop() {
		q := qs[i%len(qs)]
		i++
		if ours {
			s := lb.x.getScratch()
			terms := analyzer().DistinctTerms(q)
			rules := search.DefaultRules("hash-")
			rules.Feedback.Docs = 0 // the word match alone, as bleve's
			v := &view{parts: []part{{segment: lb.x.whole, spans: lb.spans, s: s}}}
			if _, err := v.words(context.Background(), terms, &rules); err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, o := range s.touched {
				if s.wExact[o] == uint16(len(terms)) {
					n++
				}
			}
			matched += n
			lb.x.scratch.Put(s)
			continue
		}
		mq := bleve.NewMatchQuery(q)
		mq.SetOperator(1) // AND
		res, err := lb.bleve.Search(bleve.NewSearchRequestOptions(mq, 10, 0, false))
		if err != nil {
			b.Fatal(err)
		}
		matched += int(res.Total)
	}
	b.ReportMetric(float64(matched)/float64(i), "matches/query")
	if ours {
		b.ReportMetric(lb.build.ours.Seconds(), "s-build")
	} else {
		b.ReportMetric(lb.build.bleve.Seconds(), "s-build")
	}
}

func BenchmarkLexical10kOurs(b *testing.B)   { benchLexical(b, 10_000, true) }
func BenchmarkLexical10kBleve(b *testing.B)  { benchLexical(b, 10_000, false) }
func BenchmarkLexical100kOurs(b *testing.B)  { benchLexical(b, 100_000, true) }
func BenchmarkLexical100kBleve(b *testing.B) { benchLexical(b, 100_000, false) }
