package localsearch_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/search"
)

// fitDims is the offline embedder fitted to vectors of dims dimensions.
type fitDims struct {
	*offline.Hashing
	dims int
}

func (f fitDims) Fit(ctx context.Context, texts []string) (search.Embedder, error) {
	return offline.FitCorpus(ctx, f.Hashing, texts, f.dims)
}

// TestQuantizedRecall measures the vectors' quantization (quant.go) on the
// BEIR collections in the folders of relevanceDir(), when
// DOCLIB_QUANT_RECALL is set: per judged query, the share of the ten documents of highest
// float32 cosine that are among the ten of highest cosine as a query holds
// them (int8 within the screen, the Hamming estimate outside it), with the
// offline embedder fitted to 128 and to 1,024 dimensions. docs/search.md
// reports the figures.
func TestQuantizedRecall(t *testing.T) {
	if os.Getenv("DOCLIB_QUANT_RECALL") == "" {
		t.Skip("set DOCLIB_QUANT_RECALL=1 to measure (about 7 minutes here)")
	}
	root := relevanceDir()
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "corpus.jsonl"))
	if len(dirs) == 0 {
		t.Fatalf("no BEIR collection under %s", root)
	}
	ctx := context.Background()
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		c, d := loadCollection(t, dir)
		for _, dims := range []int{offline.CorpusDimensions, 1024} {
			docs, e, err := localsearch.IndexDocs(ctx, d, fitDims{h, dims}, localsearch.Options{Fit: true})
			if err != nil {
				t.Fatal(err)
			}
			x, err := localsearch.FromDocs(ctx, docs, e, localsearch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			threshold := search.DefaultRules(e.ID()).SemanticThreshold
			vecs := map[string][]float32{}
			for _, doc := range docs {
				vecs[doc.ID] = doc.Vector
			}
			var recall, exactShare, worst float64
			queries := c.Judged()
			for _, q := range queries {
				qv, err := e.Embed(ctx, []string{q.Search})
				if err != nil {
					t.Fatal(err)
				}
				ids, held, exact := x.Semantic(qv[0], threshold)
				float := make([]float64, len(ids))
				for i, id := range ids {
					for j, f := range vecs[id] {
						float[i] += float64(f) * float64(qv[0][j])
					}
					if exact[i] {
						exactShare++
						worst = max(worst, abs(float[i]-float64(held[i])))
					}
				}
				top := func(score func(i int) float64) []int {
					order := make([]int, len(ids))
					for i := range order {
						order[i] = i
					}
					slices.SortStableFunc(order, func(a, b int) int {
						if sa, sb := score(a), score(b); sa != sb {
							if sa > sb {
								return -1
							}
							return 1
						}
						return 0
					})
					return order[:min(10, len(order))]
				}
				want := top(func(i int) float64 { return float[i] })
				got := top(func(i int) float64 { return float64(held[i]) })
				hits := 0
				for _, i := range want {
					if slices.Contains(got, i) {
						hits++
					}
				}
				recall += float64(hits) / float64(len(want))
			}
			n := float64(len(queries))
			t.Logf("%-10s %5d docs %4d queries %4d dims (threshold %.2f): recall@10 %.3f, scored in int8 %.1f%%, worst int8 error %.4f",
				filepath.Base(dir), len(docs), len(queries), dims, threshold, recall/n, 100*exactShare/n/float64(len(docs)), worst)
			if recall/n < 0.95 {
				t.Errorf("%s, %d dimensions: recall@10 %.3f; want at least 0.95", filepath.Base(dir), dims, recall/n)
			}
		}
	}
}

func abs(f float64) float64 { return max(f, -f) }

// TestHitsReportTheInt8Cosine: whether a hit's cosine was computed in the
// scan or left an estimate and computed for the page (search.Candidate.Later),
// every hit reports the int8 cosine of its document, and the fallback's
// most active documents too.
func TestHitsReportTheInt8Cosine(t *testing.T) {
	ctx := context.Background()
	d, err := dataset.Validate(demo.Generate(demo.Options{Documents: 2000}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := offline.NewHashing(1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := localsearch.FromDocs(ctx, indexDocs(t, d, h), h, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var libs []string
	for _, l := range d.Libraries {
		libs = append(libs, l.ID)
	}
	rules := search.DefaultRules(h.ID())
	estimated := 0
	for _, text := range []string{"reset password", "close the month", "laptop", "invoice approval", "zzqx vvkj"} {
		qv, err := h.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		q := &search.Query{Text: text, Vector: qv[0], Libraries: libs, Rules: &rules, Limit: 2000}
		ids, cos, _ := x.Semantic(qv[0], -2) // every one in int8
		want := map[string]float64{}
		for i, id := range ids {
			want[id] = float64(cos[i])
		}
		if err := x.Candidates(ctx, q, func(c search.Candidate) {
			if c.Later != nil {
				estimated++
			}
		}); err != nil {
			t.Fatal(err)
		}
		m, err := (search.Local{Retriever: x}).Match(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		hits, _, err := (search.Local{Retriever: x}).MostActive(ctx, q, search.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, hit := range append(m.Hits, hits...) {
			if hit.SemanticSimilarity != want[hit.DocumentID] {
				t.Errorf("%q: %s reports %v; its int8 cosine is %v", text, hit.DocumentID, hit.SemanticSimilarity, want[hit.DocumentID])
			}
		}
	}
	if estimated == 0 {
		t.Error("no candidate was left an estimate: the test does not reach Later")
	}
}
