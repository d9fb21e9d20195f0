package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/backend/embedcache"
	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/relevance"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
	"github.com/doclib/doclib/shared/wiring"
)

// evalCmd measures search on public IR test collections (shared/relevance).
// It runs doclib in this process, as doclib-server does by default: it needs
// no table and no AWS.
func (a *app) evalCmd() *cobra.Command {
	var emb settings.Embedder
	var rules settings.Rules
	var asJSON, perQuery bool
	var cacheDir string
	var segments, cacheMB int
	cmd := &cobra.Command{
		Use:   "eval [flags] DIR...",
		Short: "Measure search relevance on BEIR test collections against a textbook BM25",
		Long: `eval measures doclib's search on public IR test collections in the BEIR
layout: each DIR holds corpus.jsonl ({"_id","title","text"} per line),
queries.jsonl ({"_id","text"}) and qrels.tsv (query-id, corpus-id, score, with
a header line). It needs no table, no AWS and no network (unless the embedder
is a remote one).

Each collection becomes a data set of one library, one document per corpus line
(a missing title becomes the text's first ten words), served in this process by
the same handler as doclib-server over its in-memory store and embedded engine,
without rate limits. Every query with a relevant judgment is sent as
GET /search/documents?q=...&pageSize=10; a query over 512 characters, the API's
limit, is cut at a word boundary (CUT counts them). A textbook BM25 (k1 1.2,
b 0.75) over the same text (title, content and labels) and the same analysis
(folding, stop words, stems) ranks the same cut queries in the same run.

With --segments N, the index is instead written as the embedded tier's
writer writes it (a reindex: segments of at most N documents, calibrated)
and read as its search function reads it: every segment opened by range,
the rest read as queries touch it, kept in a cache of --cache-mb. Its
figures should equal the in-memory engine's; a difference is a defect.

What the figures mean:
  nDCG@10      the gain (the judged grade) of the first 10 results, discounted
               by log2(rank+1), over that of the best possible order; 0 to 1
  R@10         relevant documents in the first 10 / all relevant documents
  MRR@10       1 / rank of the first relevant result (0 if not in the first 10)
  RATIO        doclib's nDCG@10 / BM25's: below 1, the baseline ranks better
  WIN/LOSS/TIE queries where doclib's nDCG@10 is above, below, equal to BM25's
  SIGN TEST p  two-sided paired sign test on wins against losses (ties left
               out): the chance of so uneven a split if neither were better
  FALLBACK     queries answered with the fallback (lowConfidence: the most
               active documents, not matches)
  LEXICAL ...  per signal, the share of queries where it fired in the top 10 /
               the share of top-10 hits carrying it
  MATCHED      mean matchedTotal (doclib's matched set); BM25 MATCHED, the
               documents BM25 scores above 0 (any query term present)

Figures are means over queries. Use them to compare versions or settings of
search in general, never to tune for these queries.

A model's vectors (--embedder openai or bedrock) are kept in --embed-cache,
one file per model, so that a rerun over the same texts embeds nothing again;
the terminal says how many texts came from it. One eval at a time should use
a folder. The offline embedder computes its vectors in this process and is
never cached.`,
		Example: `  doclib-admin eval ../shared/relevance/*
  doclib-admin eval --per-query ../shared/relevance/med
  doclib-admin eval --json ../shared/relevance/* | jq '.collections[] | {collection, ndcgRatio}'
  doclib-admin eval --semantic-threshold 0.25 ../shared/relevance/cisi
  doclib-admin eval --embedder openai --embed-url http://localhost:11434/v1 --embed-model nomic-embed-text ../shared/relevance/med
  doclib-admin eval --embedder openai --embed-url http://127.0.0.1:8099/v1 --embed-model use-lite ../shared/relevance/med`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("give one or more BEIR folders, e.g. doclib-admin eval ../shared/relevance/*")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, dirs []string) error {
			ctx := cmd.Context()
			if err := emb.Validate(); err != nil {
				return usageError{err}
			}
			if _, err := rules.Build(emb.Kind); err != nil { // the overrides' own checks, before any work
				return usageError{err}
			}
			if segments < 0 || cacheMB < 0 || cacheMB > 0 && segments == 0 {
				return usageError{fmt.Errorf("--segments %d, --cache-mb %d: give --segments a count of documents above 0, and --cache-mb only with it", segments, cacheMB)}
			}
			// Every folder is read first, so that a bad one stops the command
			// before minutes of indexing.
			var cols []*relevance.Collection
			seen := map[string]string{}
			for _, dir := range dirs {
				// A glob such as ../shared/relevance/* also names the README
				// beside the folders: files are skipped, with a note.
				if st, err := os.Stat(dir); err == nil && st.Mode().IsRegular() {
					fmt.Fprintf(a.stderr, "Skipping %s: a file, not a BEIR folder.\n", dir)
					continue
				}
				c, err := relevance.LoadBEIR(dir)
				if err != nil {
					return err
				}
				if prev, ok := seen[c.Name]; ok {
					return usageError{fmt.Errorf("%s and %s have the same name %q; give each collection once", prev, dir, c.Name)}
				}
				seen[c.Name] = dir
				cols = append(cols, c)
			}
			if len(cols) == 0 {
				return usageError{fmt.Errorf("%s: no folder among the arguments; give BEIR folders (holding %s, %s and %s)",
					strings.Join(dirs, " "), relevance.CorpusFile, relevance.QueriesFile, relevance.QrelsFile)}
			}
			embedder, err := wiring.Embedder(ctx, emb)
			if err != nil {
				return err
			}
			var cache *embedcache.Cache
			if cacheDir != "" && emb.Kind != "" && emb.Kind != "hash" {
				if cache, err = embedcache.Open(cacheDir, embedder); err != nil {
					return err
				}
				defer cache.Close()
				embedder = cache.Embedder()
			}
			var reports []*relevance.Report
			for _, c := range cols {
				stage := func(string) {}
				var embedding func(done, total int)
				p := a.newProgress()
				if a.tty {
					stage = func(s string) { fmt.Fprintf(a.stderr, "%s: %s…\n", c.Name, s) }
					var mu sync.Mutex // a model's answers come on several goroutines
					embedding = func(done, total int) {
						mu.Lock()
						defer mu.Unlock()
						if total > 0 && done <= total { // past it: the calibration's and the queries' texts
							p.show(c.Name+": embedding", done, total)
						}
					}
				}
				build := embedder
				if _, fits := embedder.(search.Fitter); !fits {
					// A model: the bar moves with each of its answers,
					// not once per call of 256 texts.
					m := embedcall.NewMeter(embedder, embedding)
					m.Report(0, len(c.Docs))
					build, embedding = m, m.Report
				}
				var before embedcache.Stats
				if cache != nil {
					before = cache.Stats()
				}
				r, err := relevance.Evaluate(ctx, c, build, rules, stage, embedding, relevance.Options{Segments: segments, CacheBytes: int64(cacheMB) << 20})
				p.finish()
				if err != nil {
					return err
				}
				if cache != nil {
					s := cache.Stats()
					hits, misses := s.Hits-before.Hits, s.Misses-before.Misses
					fmt.Fprintf(a.stderr, "%s: %d of %d texts from the vector cache, %d embedded (%s)\n",
						c.Name, hits, hits+misses, misses, cache.Path())
				}
				if a.tty {
					fmt.Fprintf(a.stderr, "%s: nDCG@10 %.3f (BM25 %.3f) in %s\n", c.Name, r.Doclib.NDCG, r.BM25.NDCG,
						strings.TrimSpace(fmt.Sprintf("%.1fs", r.Timing.Wall.Seconds())))
				}
				reports = append(reports, r)
			}
			if asJSON {
				return relevance.WriteJSON(a.stdout, reports, perQuery)
			}
			return relevance.WriteText(a.stdout, reports, perQuery)
		},
	}
	emb.Flags(cmd.Flags(), a.getenv)
	rules.Flags(cmd.Flags(), a.getenv)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	defaultCache := ""
	if dir, err := os.UserCacheDir(); err == nil {
		defaultCache = filepath.Join(dir, "doclib", "vectors")
	}
	cmd.Flags().StringVar(&cacheDir, "embed-cache", defaultCache, "`DIR` to keep a model's vectors in, so that a rerun embeds nothing again; '' keeps none (the offline embedder's are never kept)")
	cmd.Flags().IntVar(&segments, "segments", 0, "write the index in segments of at most `N` documents and read them by range, as the embedded tier's search function does (0: the in-memory engine)")
	cmd.Flags().IntVar(&cacheMB, "cache-mb", 0, "with --segments, keep at most `MB` of what queries read of the segments (0: no bound)")
	cmd.Flags().BoolVar(&perQuery, "per-query", false, "also print each query's nDCG@10 for doclib and BM25 (and, with --json, its rankings)")
	return cmd
}
