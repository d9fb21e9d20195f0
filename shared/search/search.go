package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	doclib "github.com/doclib/doclib/shared"
)

// Filter narrows the matched set: docs/api.md's libraryId, category, tag and
// application. An empty field does not filter.
type Filter struct {
	LibraryID   string
	Category    string
	Tag         string
	Application string
}

// Empty reports whether f filters nothing.
func (f Filter) Empty() bool { return f == Filter{} }

// Pass reports whether d passes f.
func (f Filter) Pass(d *Doc) bool {
	return (f.LibraryID == "" || d.LibraryID == f.LibraryID) &&
		(f.Category == "" || d.Category == f.Category) &&
		(f.Tag == "" || slices.Contains(d.Tags, f.Tag)) &&
		(f.Application == "" || slices.Contains(d.Applications, f.Application))
}

// Doc is what search needs of a document to filter, break down and order it.
type Doc struct {
	ID             string
	LibraryID      string
	Category       string
	Tags           []string
	Applications   []string
	RecordingCount int
	LastSeen       time.Time

	// The labels above as numbered by a LabelTable's Intern, if any.
	labels   *LabelTable
	labelIDs []uint32
}

// MoreActive is doclib.CompareActivity for search's documents.
func MoreActive(a, b *Doc) int { return doclib.CompareActivity(a.activity(), b.activity()) }

func (d *Doc) activity() doclib.Activity {
	return doclib.Activity{RecordingCount: d.RecordingCount, LastSeen: d.LastSeen, ID: d.ID}
}

// Query is one search as a backend sees it: validated, embedded, inside scope.
type Query struct {
	// Text is the query as the user typed it, trimmed.
	Text string
	// Vector is the query's embedding, unit length.
	Vector []float32
	// Libraries are the IDs of every library the key can see: the visible set.
	// Nothing outside them may be read, counted or ranked.
	Libraries []string
	Filter    Filter
	Offset    int
	Limit     int
	Rules     *Rules
	// NoRecordings: no recording may match or score (Request.NoRecordings).
	NoRecordings bool
	// NoMeaning: the query has no embedding (the embedder failed or was
	// late), so neither meaning signal may match or score; Vector is zero.
	NoMeaning bool
}

// Candidate is a document with the evidence a backend found for it.
type Candidate struct {
	Doc *Doc
	Evidence
	// Later, when set, has the exact Semantic of the candidate numbered Ref:
	// the backend left Semantic an estimate it knows to be below the semantic
	// threshold, so that it neither matches nor scores, and computing the
	// exact figure for every candidate would cost more than the page's
	// hits need. The evaluation asks for it for the hits it reports.
	Later SemanticLater
	Ref   uint32
}

// SemanticLater computes a candidate's exact semantic similarity on demand.
type SemanticLater interface {
	Semantic(ref uint32) float64
}

// LaterPreparer is a Retriever whose SemanticLater needs what it reads
// first (the embedded engine's segments read by range): Local.Match gives
// it the candidates of the page, all at once, before their similarities
// are asked for, and fails the search if it fails.
type LaterPreparer interface {
	PrepareLater(ctx context.Context, page []Candidate) error
}

// Facet is one entry of a facet: a label (for libraries, the library ID) and the
// number of matched documents that carry it, the domain's label count.
type Facet = doclib.Label

// Facets break down the matched set.
type Facets struct {
	Categories   []Facet
	Tags         []Facet
	Applications []Facet
	Libraries    []Facet // Name is the library ID
}

// Hit is a ranked result.
type Hit struct {
	DocumentID         string
	LibraryID          string
	Signals            []string
	Score              float64
	SemanticSimilarity float64
}

// Matches are a backend's answer to a query.
type Matches struct {
	// MatchedTotal is the size of the matched set: the union of the signals over
	// the visible documents, before the filters.
	MatchedTotal int
	// Facets break the matched set down.
	Facets Facets
	// Total is the number of matched documents that pass the filters.
	Total int
	// Hits is the requested page of those, best first.
	Hits []Hit
}

// Backend finds documents. The embedded engine (through Local) and OpenSearch
// implement it; both must give the same answers under the rules of this package,
// which the backend-neutral suite checks.
type Backend interface {
	// Match returns the matched set of q inside q.Libraries, ranked by Rules.Score
	// then document ID, with its facets, the filtered total and the page
	// q.Offset, q.Limit of the filtered list.
	Match(ctx context.Context, q *Query) (*Matches, error)
	// MostActive returns the page q.Offset, q.Limit of the visible documents that
	// pass f, most active first (MoreActive), and how many pass. Hits carry the
	// fallback signal, a score of 0 and their semantic similarity to q.Vector.
	MostActive(ctx context.Context, q *Query, f Filter) ([]Hit, int, error)
}

// Retriever is what an in-process engine provides: the candidates of a query and
// the visible documents in order of activity. Local turns it into a Backend by
// applying the rules here.
type Retriever interface {
	// Candidates calls add with every document inside q.Libraries for which a
	// signal fires under q.Rules, with its evidence, in any order. Nothing is
	// collected in between: a search that matches most of a large index costs
	// what the page, the counts and the facets need, not a list of it all.
	Candidates(ctx context.Context, q *Query, add func(Candidate)) error
	// MostActive returns the page offset, limit of the documents inside
	// q.Libraries that pass f, most active first, with their evidence (only
	// Semantic is needed), and how many pass.
	MostActive(ctx context.Context, q *Query, f Filter, offset, limit int) ([]Candidate, int, error)
}

// Local is the Backend of an in-process Retriever, and the calibration of
// its index when one was measured (Calibrated).
type Local struct {
	Retriever Retriever
	Cal       *Calibration
}

// Calibrated is a Backend that knows the calibration of the index it serves
// (Calibrate): the searcher takes its thresholds and chance levels from it,
// unless they were set explicitly. It may change as the index does.
type Calibrated interface {
	Calibration() *Calibration
}

// Calibration implements Calibrated.
func (l Local) Calibration() *Calibration { return l.Cal }

// Preparer is a Backend that checks its index before a search (and learns
// its calibration then): the searcher prepares it before it settles the
// rules, so that the first search after a start already has them.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// Match implements Backend.
func (l Local) Match(ctx context.Context, q *Query) (*Matches, error) {
	ev := NewEvaluation(q)
	if err := l.Retriever.Candidates(ctx, q, ev.Add); err != nil {
		return nil, err
	}
	if p, ok := l.Retriever.(LaterPreparer); ok {
		if err := p.PrepareLater(ctx, ev.Page()); err != nil {
			return nil, err
		}
	}
	return ev.Matches(), nil
}

// MostActive implements Backend.
func (l Local) MostActive(ctx context.Context, q *Query, f Filter) ([]Hit, int, error) {
	cands, total, err := l.Retriever.MostActive(ctx, q, f, q.Offset, q.Limit)
	if err != nil {
		return nil, 0, err
	}
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = Hit{DocumentID: c.Doc.ID, LibraryID: c.Doc.LibraryID, Signals: []string{SignalFallback},
			SemanticSimilarity: c.Semantic}
	}
	return hits, total, nil
}

// Evaluate applies the rules to a list of candidates (see Evaluation).
func Evaluate(cands []Candidate, q *Query) *Matches {
	ev := NewEvaluation(q)
	for _, c := range cands {
		ev.Add(c)
	}
	return ev.Matches()
}

// Evaluation applies the rules to a backend's candidates as they come: the
// union of the signals is the matched set (candidates where nothing fires are
// dropped), the facets break it down, the filters give the total, and the page
// comes from the filtered list ranked by score, then document ID. It keeps
// only the documents that can still be on the page: the best offset+limit so
// far, in a bounded heap.
type Evaluation struct {
	q       *Query
	visible map[string]bool
	lastLib string // the library of the last candidate, and whether it is visible:
	lastVis bool   // a backend lists a library's documents together
	facets  facetCounter
	matched int
	total   int
	page    topK[scored]
}

type scored struct {
	c     Candidate
	score float64
}

// rank orders scored documents best first: score, then document ID.
func rank(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return strings.Compare(a.c.Doc.ID, b.c.Doc.ID)
}

// NewEvaluation starts the evaluation of q.
func NewEvaluation(q *Query) *Evaluation {
	ev := &Evaluation{q: q, visible: make(map[string]bool, len(q.Libraries))}
	for _, id := range q.Libraries {
		ev.visible[id] = true
	}
	// Only the first offset+limit documents are ever shown; never add the
	// two, which can overflow.
	k := q.Limit
	if q.Offset > 0 {
		if k += q.Offset; k < q.Offset {
			k = math.MaxInt
		}
	}
	ev.page = topK[scored]{k: k, rank: rank}
	return ev
}

// Add takes one candidate.
func (ev *Evaluation) Add(c Candidate) {
	if c.Doc.LibraryID != ev.lastLib || ev.lastLib == "" {
		ev.lastLib, ev.lastVis = c.Doc.LibraryID, ev.visible[c.Doc.LibraryID]
	}
	if ev.q.NoMeaning {
		// No embedding: whatever a backend made of the zero vector, the
		// meaning signals neither match nor score.
		c.Semantic, c.Recordings = 0, 0
	}
	if !ev.lastVis || !ev.q.Rules.Matches(c.Evidence) {
		return // a backend that over-returns must not widen the scope or the set
	}
	ev.matched++
	ev.facets.add(c.Doc)
	if ev.q.Filter.Pass(c.Doc) {
		ev.total++
		ev.page.push(scored{c, ev.q.Rules.Score(c.Evidence)})
	}
}

// Page is the candidates of the page Matches reports, best first, once
// every candidate is added.
func (ev *Evaluation) Page() []Candidate {
	kept := ev.page.xs
	slices.SortFunc(kept, rank)
	out := make([]Candidate, 0, len(kept))
	for _, s := range kept[min(max(ev.q.Offset, 0), len(kept)):] {
		out = append(out, s.c)
	}
	return out
}

// Matches is the outcome.
func (ev *Evaluation) Matches() *Matches {
	kept := ev.page.xs
	slices.SortFunc(kept, rank)
	start := min(max(ev.q.Offset, 0), len(kept))
	m := &Matches{MatchedTotal: ev.matched, Facets: ev.facets.facets(), Total: ev.total, Hits: []Hit{}}
	for _, s := range kept[start:] {
		// The signals are those the score was made of.
		h := Hit{DocumentID: s.c.Doc.ID, LibraryID: s.c.Doc.LibraryID,
			Signals: ev.q.Rules.Signals(s.c.Evidence), Score: s.score, SemanticSimilarity: s.c.Semantic}
		if s.c.Later != nil {
			h.SemanticSimilarity = s.c.Later.Semantic(s.c.Ref)
		}
		m.Hits = append(m.Hits, h)
	}
	return m
}

// topK keeps the k first of what it is given in the order of rank, in any
// order: a bounded heap whose root is the last of them. O(n log k).
type topK[T any] struct {
	k    int
	rank func(a, b T) int
	xs   []T
}

func (h *topK[T]) push(x T) {
	switch {
	case h.k <= 0:
	case len(h.xs) < h.k:
		h.xs = append(h.xs, x)
		for i := len(h.xs) - 1; i > 0; {
			parent := (i - 1) / 2
			if h.rank(h.xs[i], h.xs[parent]) <= 0 {
				return
			}
			h.xs[i], h.xs[parent] = h.xs[parent], h.xs[i]
			i = parent
		}
	case h.rank(x, h.xs[0]) < 0:
		h.xs[0] = x
		h.down(0)
	}
}

func (h *topK[T]) down(i int) {
	n := len(h.xs)
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < n && h.rank(h.xs[l], h.xs[worst]) > 0 {
			worst = l
		}
		if r < n && h.rank(h.xs[r], h.xs[worst]) > 0 {
			worst = r
		}
		if worst == i {
			return
		}
		h.xs[i], h.xs[worst] = h.xs[worst], h.xs[i]
		i = worst
	}
}

// SortFacets orders a facet most frequent first, then by name.
func SortFacets(m map[string]int) []Facet {
	out := make([]Facet, 0, len(m))
	for name, n := range m {
		out = append(out, Facet{Name: name, DocumentCount: n})
	}
	slices.SortFunc(out, func(a, b Facet) int {
		if c := cmp.Compare(b.DocumentCount, a.DocumentCount); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Searcher runs searches: it embeds the query, asks the backend for the matched
// set and, when nothing passes, for the low-confidence fallback.
type Searcher struct {
	Backend  Backend
	Embedder *CachedEmbedder
	Rules    Rules
	// EmbedBudget bounds the query's embedding call: past it, or when the
	// embedder fails, the search answers from the word signals alone
	// (Response.MeaningUnavailable), rather than spend the request waiting
	// on a busy or throttled provider. 0 is DefaultEmbedBudget; below 0,
	// only the request's own deadline bounds the call.
	EmbedBudget time.Duration
	// Now is the clock of the meaning gate (time.Now when nil).
	Now func() time.Time

	gate meaningGate
}

// DefaultEmbedBudget is how long a search waits for its query's embedding:
// a query embeds in well under a second on a healthy provider, Bedrock
// included; past it the words answer (docs/search.md, "When the meaning is
// late").
const DefaultEmbedBudget = 1500 * time.Millisecond

// The meaning gate: after gateFailures failed or late query embeddings in
// a row, searches answer from words without asking the embedder for
// gateCooldown, then ask again. A provider that hangs would otherwise make
// every search wait the whole budget.
const (
	gateFailures = 3
	gateCooldown = 10 * time.Second
)

// meaningGate counts the query embeddings that failed in a row.
type meaningGate struct {
	mu       sync.Mutex
	failures int
	until    time.Time // searches skip the embedder until then
}

func (g *meaningGate) open(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failures < gateFailures || !now.Before(g.until)
}

func (g *meaningGate) report(ok bool, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok {
		g.failures = 0
		return
	}
	if g.failures++; g.failures >= gateFailures {
		g.until = now.Add(gateCooldown)
	}
}

func (s *Searcher) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// queryVector embeds a query within the budget. When the embedder fails or
// is late, or the gate is shut, it returns a zero vector and why: the search
// then runs on words. Only the request's own end is an error.
func (s *Searcher) queryVector(ctx context.Context, text string) ([]float32, error, error) {
	if !s.gate.open(s.now()) {
		return make([]float32, s.Embedder.Dimensions()), ErrMeaningSkipped, nil
	}
	ectx, budget := ctx, s.EmbedBudget
	if budget == 0 {
		budget = DefaultEmbedBudget
	}
	if budget > 0 {
		var cancel context.CancelFunc
		ectx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	vec, err := s.Embedder.EmbedQuery(ectx, text)
	if err == nil {
		s.gate.report(true, s.now())
		return vec, nil, nil
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("search: embed query: %w", err)
	}
	if errors.Is(ectx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("the query's embedding took longer than its %v budget: %w", budget, err)
	}
	s.gate.report(false, s.now())
	return make([]float32, s.Embedder.Dimensions()), fmt.Errorf("search: embed query: %w", err), nil
}

// ErrMeaningSkipped is why a search ran on words without asking the
// embedder: it failed or was late for several searches in a row, and the
// gate is shut for a while.
var ErrMeaningSkipped = errors.New("search: the embedder failed or was late for the last searches; words only for a few seconds")

// Request is a validated search inside a key's scope.
type Request struct {
	Text      string
	Libraries []string
	Filter    Filter
	Offset    int
	Limit     int
	// NoRecordings keeps recordings out of the search: the key's workspace is
	// on the Individual plan, where no recording is readable. Indexes leave
	// them out too, but an index catches up with a plan change later, and
	// privacy must not wait for it.
	NoRecordings bool
}

// Response is a search's outcome before documents are attached.
type Response struct {
	Matches
	LowConfidence bool
	// Guidance are hints on rewording or narrowing, only with LowConfidence.
	Guidance []string
	// MeaningUnavailable, when set, is why the meaning signals did not run:
	// the query's embedding failed or was late, and the answer is the word
	// signals' alone.
	MeaningUnavailable error
}

// Search runs one search.
func (s *Searcher) Search(ctx context.Context, r Request) (*Response, error) {
	vec, late, err := s.queryVector(ctx, r.Text)
	if err != nil {
		return nil, err
	}
	if p, ok := s.Backend.(Preparer); ok {
		if err := p.Prepare(ctx); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	rules := s.RulesFor(r.Text)
	q := &Query{Text: r.Text, Vector: vec, Libraries: r.Libraries, Filter: r.Filter, Offset: r.Offset, Limit: r.Limit, Rules: &rules,
		NoRecordings: r.NoRecordings, NoMeaning: late != nil}
	m, err := s.Backend.Match(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("search: match: %w", err)
	}
	if m.Total > 0 {
		return &Response{Matches: *m, MeaningUnavailable: late}, nil
	}
	// Nothing passes: the most active visible documents that pass the filters,
	// or, when none does, every visible document.
	hits, total, err := s.Backend.MostActive(ctx, q, r.Filter)
	if err != nil {
		return nil, fmt.Errorf("search: fallback: %w", err)
	}
	dropped := false
	if total == 0 && !r.Filter.Empty() {
		dropped = true
		if hits, total, err = s.Backend.MostActive(ctx, q, Filter{}); err != nil {
			return nil, fmt.Errorf("search: fallback without filters: %w", err)
		}
	}
	resp := &Response{Matches: Matches{MatchedTotal: m.MatchedTotal, Facets: m.Facets, Total: total, Hits: hits},
		LowConfidence: true, Guidance: guidance(r, m.MatchedTotal, dropped), MeaningUnavailable: late}
	if late != nil {
		resp.Guidance = append(resp.Guidance, "The meaning match was unavailable for this search, so only the word match ran: search again in a moment to match by meaning too.")
	}
	return resp, nil
}

// EffectiveRules are the rules searches run with now, for a query of any
// length: Rules, with the thresholds of the backend's calibration
// (Calibrated) where they were not set explicitly.
func (s *Searcher) EffectiveRules() Rules {
	return s.Rules.Calibrated(s.Calibration(), s.Embedder.ID(), 0)
}

// RulesFor are the rules a search for text runs with: as EffectiveRules,
// with the thresholds of queries of its length.
func (s *Searcher) RulesFor(text string) Rules {
	return s.Rules.Calibrated(s.Calibration(), s.Embedder.ID(), max(len(strings.Fields(text)), 1))
}

// Calibration is the backend's calibration (Calibrated), nil when it has
// none.
func (s *Searcher) Calibration() *Calibration {
	if cb, ok := s.Backend.(Calibrated); ok {
		return cb.Calibration()
	}
	return nil
}

// guidance explains a fallback and says what to try next: what matched, whether
// the filters held, what the list is, and how to do better.
func guidance(r Request, matched int, dropped bool) []string {
	filters := describeFilter(r.Filter)
	them := doclib.Plural(filterCount(r.Filter), "that filter", "those filters")
	var what string
	if matched == 0 {
		what = fmt.Sprintf("No document matched %q by its words, a close spelling or its meaning.", r.Text)
	} else {
		what = fmt.Sprintf("%d %s matched %q, but none with %s.", matched, doclib.Plural(matched, "document", "documents"), r.Text, filters)
	}
	switch {
	case dropped:
		what += fmt.Sprintf(" No document you can see passes %s, so these are the most active documents you can see, without %s: suggestions, not answers.", filters, them)
	case filters != "":
		what += fmt.Sprintf(" These are the most active documents that pass %s: suggestions, not answers.", them)
	default:
		what += " These are the most active documents you can see: suggestions, not answers."
	}
	out := []string{what}
	if matched > 0 {
		out = append(out, "Remove a filter, or choose a value from the facets of this response: they break down the documents that matched.")
	} else {
		out = append(out, "Check the spelling, or use fewer words: the word match needs every word of the query in the document.")
		out = append(out, "Name the task and the application as a procedure would, for example \"reset password okta\" or \"approve invoice netsuite\".")
		if r.Filter.LibraryID != "" {
			out = append(out, "Leave out libraryId to search every library you can see.")
		}
	}
	return out
}

func describeFilter(f Filter) string {
	var parts []string
	for _, p := range []struct{ name, v string }{{"libraryId", f.LibraryID}, {"category", f.Category}, {"tag", f.Tag}, {"application", f.Application}} {
		if p.v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", p.name, p.v))
		}
	}
	return strings.Join(parts, " and ")
}

func filterCount(f Filter) int {
	n := 0
	for _, v := range []string{f.LibraryID, f.Category, f.Tag, f.Application} {
		if v != "" {
			n++
		}
	}
	return n
}
