package relevance

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

// Engine is doclib as doclib-server runs it by default over one data set: the
// in-memory store, ledger and the embedded search engine, without rate limits.
type Engine struct {
	Handler http.Handler
	// EmbedderID names the embedder of the index and of the queries.
	EmbedderID string
	// Rules are the search rules in force, and Calibration what the index
	// measured of its embedder (nil when it measured nothing).
	Rules       search.Rules
	Calibration *search.Calibration

	follower *snapshot.Follower // with Options.Segments
}

// ranged is what the engine's index read by range, nil when it was not
// written in segments.
func (e *Engine) ranged() *Ranged {
	if e.follower == nil {
		return nil
	}
	st, cs := e.follower.Current(), e.follower.Cache.Stats()
	return &Ranged{Segments: st.Segments, Opened: st.Opened, Reads: cs.Reads, Bytes: cs.Bytes, Dropped: cs.Dropped}
}

// NewHandler returns the read API's handler over d, built as doclib-server
// builds it with --store memory --search embedded --no-rate-limits and the
// given embedder and rules settings (zero rules: the embedder's defaults).
func NewHandler(ctx context.Context, d *doclib.DataSet, emb search.Embedder, rules settings.Rules) (http.Handler, error) {
	e, err := NewEngine(ctx, d, emb, rules, nil)
	if err != nil {
		return nil, err
	}
	return e.Handler, nil
}

// NewEngine is NewHandler that also says which embedder and rules it runs, and
// reports the embedding's progress (progress may be nil).
func NewEngine(ctx context.Context, d *doclib.DataSet, emb search.Embedder, rules settings.Rules, progress func(done, total int)) (*Engine, error) {
	return newEngine(ctx, d, emb, rules, progress, Options{})
}

func newEngine(ctx context.Context, d *doclib.DataSet, emb search.Embedder, rules settings.Rules, progress func(done, total int), opts Options) (*Engine, error) {
	var searcher *search.Searcher
	var follower *snapshot.Follower
	var err error
	if opts.Segments > 0 {
		searcher, follower, err = segmentedSearcher(ctx, d, emb, rules, progress, opts)
	} else {
		searcher, err = localsearch.Searcher(ctx, d, emb, rules, progress) // as doclib-server's --search embedded
	}
	if err != nil {
		return nil, err
	}
	// An evaluation measures the model's vectors, not how fast it answers:
	// a query waits for its embedding as long as the request lasts, rather
	// than be answered from words past the server's budget.
	searcher.EmbedBudget = -1
	// As cmd/doclib-server's run, for --store memory and --no-rate-limits.
	store, ledger := memory.New(d), memory.NewLedger(d.Workspaces)
	svc := service.New(store, nil, service.WithSearch(searcher, ledger))
	h := httpapi.NewServer(httpapi.Config{Service: svc})
	return &Engine{Handler: h, EmbedderID: searcher.Embedder.ID(), Rules: searcher.EffectiveRules(), Calibration: searcher.Calibration(), follower: follower}, nil
}

// Signals a search hit can carry (api.Relevance), in the order reports list them.
var Signals = []string{search.SignalLexical, search.SignalFuzzy, search.SignalSemantic,
	search.SignalSourceRecordings, search.SignalFallback}

// Answer is what doclib answered to one query.
type Answer struct {
	// Ranked are the corpus IDs of the hits, best first (at most Cutoff).
	Ranked []string `json:"ranked"`
	// Fallback is true when the answer was the fallback (lowConfidence: the
	// most active documents, carrying the fallback signal), not matches.
	Fallback bool `json:"fallback"`
	// Signals counts, per signal, the hits that carried it.
	Signals map[string]int `json:"signals"`
	// MatchedTotal is the response's matchedTotal.
	MatchedTotal int `json:"matchedTotal"`
}

// Options of Run and Evaluate.
type Options struct {
	// Workers bounds the queries sent at once (GOMAXPROCS when 0).
	Workers int
	// Progress, when set, is told how many queries are answered.
	Progress func(done, total int)
	// Segments, when above 0, has Evaluate write the index as the embedded
	// tier's writer does (a reindex's publish, its calibration with it), in
	// segments of at most Segments documents, and read it as the tier's
	// search function does: every segment opened by range, its cold parts
	// read only as queries touch them (no prefetch) and kept in a cache of
	// CacheBytes (no bound when 0). The answers should be those of the
	// in-memory index (docs/search.md, "Read by range").
	Segments   int
	CacheBytes int64
}

// segmentedSearcher is the searcher of Options.Segments.
func segmentedSearcher(ctx context.Context, d *doclib.DataSet, emb search.Embedder, rules settings.Rules, progress func(done, total int), opts Options) (*search.Searcher, *snapshot.Follower, error) {
	docs, fitted, err := localsearch.IndexDocs(ctx, d, emb, localsearch.Options{Progress: progress, Fit: true})
	if err != nil {
		return nil, nil, fmt.Errorf("build the search index: %w", err)
	}
	quiet := slog.New(slog.DiscardHandler)
	blobs := snapshot.NewMemory()
	w := snapshot.NewWriter(blobs, fitted, quiet)
	w.PublishDocuments = opts.Segments
	if err := w.Publish(ctx, docs); err != nil {
		return nil, nil, fmt.Errorf("write the index's segments: %w", err)
	}
	f := &snapshot.Follower{Blobs: blobs, Embedder: fitted, Every: 24 * time.Hour, Logger: quiet,
		ReadWholeBelow: -1, NoPrefetch: true, CacheBytes: opts.CacheBytes}
	if err := f.Load(ctx); err != nil {
		return nil, nil, err
	}
	if st := f.Current(); st.Err != nil {
		return nil, nil, st.Err
	}
	s, err := rules.Searcher(f, fitted)
	return s, f, err
}

// Ask sends one query to h as GET /search/documents?q=…&pageSize=10 with the
// key, and maps the hits back to corpus IDs.
func Ask(ctx context.Context, h http.Handler, key, q string, m Mapping) (*Answer, error) {
	target := "/search/documents?" + url.Values{"q": {q}, "pageSize": {strconv.Itoa(Cutoff)}}.Encode()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", target, rec.Code, clip(rec.Body.String()))
	}
	var res api.SearchResults
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("GET %s: the response is not search results: %w", target, err)
	}
	a := &Answer{Ranked: make([]string, 0, len(res.Documents)), Fallback: res.LowConfidence,
		Signals: map[string]int{}, MatchedTotal: res.MatchedTotal}
	for _, hit := range res.Documents {
		id, ok := m.ToCorpus[hit.ID]
		if !ok {
			return nil, fmt.Errorf("GET %s: hit %s is not a document of the collection", target, hit.ID)
		}
		a.Ranked = append(a.Ranked, id)
		for _, s := range hit.Relevance.Signals {
			a.Signals[s]++
		}
	}
	if len(a.Ranked) > Cutoff {
		return nil, fmt.Errorf("GET %s: %d hits on a page of %d", target, len(a.Ranked), Cutoff)
	}
	return a, nil
}

// Run sends every judged query of c (one with a document judged relevant) to
// the handler h with the key, scores doclib's answers and those of a BM25
// over d's documents (the data set c.Dataset made, with its mapping m), and
// reports both. Report.Index is left to the caller, who built h.
func Run(ctx context.Context, h http.Handler, key string, c *Collection, d *doclib.DataSet, m Mapping, opts Options) (*Report, error) {
	start := time.Now()
	judged := c.Judged()
	answers := make([]*Answer, len(judged))
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(workers, max(len(judged), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				a, err := Ask(ctx, h, key, judged[i].Search, m)
				if err != nil {
					cancel(fmt.Errorf("query %s: %w", judged[i].ID, err))
					continue
				}
				answers[i] = a
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(done, len(judged))
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range judged {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	searched := time.Since(start)

	start = time.Now()
	bm := NewBM25(d.Documents)
	r := &Report{Collection: c.Name, Documents: len(c.Docs), SkippedQrels: c.SkippedQrels,
		Unjudged: len(c.Queries) - len(judged), PerQuery: make([]QueryResult, 0, len(judged))}
	for i, q := range judged {
		ranked := bm.Rank(q.Search)
		ids := make([]string, 0, Cutoff)
		for _, s := range ranked[:min(Cutoff, len(ranked))] {
			ids = append(ids, m.ToCorpus[s.ID])
		}
		rel := c.Relevant(q.ID)
		r.PerQuery = append(r.PerQuery, QueryResult{ID: q.ID, Text: q.Search, Cut: q.Cut, Relevant: len(rel),
			Doclib: Score(answers[i].Ranked, rel), BM25: Score(ids, rel), Answer: *answers[i], BM25Ranked: ids,
			BM25Matched: len(ranked)})
	}
	r.Timing.Search = searched
	r.Timing.BM25 = time.Since(start)
	r.summarize()
	return r, nil
}

// Evaluate is the whole evaluation of one collection: its data set, doclib's
// handler over it built with the given embedder and rules settings, and Run.
// stage, when set, is told what starts ("indexing 1,033 documents").
func Evaluate(ctx context.Context, c *Collection, emb search.Embedder, rules settings.Rules, stage func(string),
	embedProgress func(done, total int), opts Options) (*Report, error) {
	start := time.Now()
	if stage == nil {
		stage = func(string) {}
	}
	d, m, err := c.Dataset()
	if err != nil {
		return nil, err
	}
	stage("indexing " + thousands(len(d.Documents)) + " documents")
	e, err := newEngine(ctx, d, emb, rules, embedProgress, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	indexed := time.Since(start)
	stage(thousands(len(c.Judged())) + " queries")
	r, err := Run(ctx, e.Handler, APIKey, c, d, m, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	r.Embedder = e.EmbedderID
	r.SemanticThreshold, r.RecordingsThreshold = e.Rules.SemanticThreshold, e.Rules.RecordingsThreshold
	if r.Calibration = e.Calibration; r.Calibration != nil {
		r.Chance = r.Calibration.Documents.Chance()
	}
	r.Timing.Index = indexed
	r.Ranged = e.ranged()
	r.Timing.Wall = time.Since(start)
	return r, nil
}
