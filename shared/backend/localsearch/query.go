package localsearch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/doclib/doclib/shared/search"
)

var _ search.Retriever = (*Index)(nil)

// scratch is one query's working memory over one segment, reused across
// queries. Entries are valid only when their stamp equals gen, so nothing is
// cleared between queries.
type scratch struct {
	gen uint32

	// cos is per ordinal, written for every visible document: the int8
	// cosine when exact == gen, else the Hamming estimate (quant.go).
	cos   []float32
	exact []uint32

	// The word evidence of the documents that hold a query term, exactly or
	// nearly (wStamp == gen): listed in touched.
	wStamp  []uint32
	wLast   []uint16  // the last query term (1-based) a document was credited for
	wExact  []uint16  // how many query terms it holds as written
	wShare  []float32 // the query term weight it holds
	wScore  []float32 // its BM25F for the query's terms
	wExp    []float32 // its BM25F for the feedback terms
	touched []uint32

	recStamp []uint32
	rec      []float32 // per recording
	recTodo  []uint32  // the recordings to score for this query

	// Of a segment opened by range: the blocks of its cold part the query
	// holds (nil where it holds none), the documents and recordings whose
	// int8 cosine waits for their codes, and whether a step found a block
	// it needed missing.
	blocks    []*block
	laterDocs []uint32
	laterRecs []uint32
	missing   bool
}

func (x *Index) getScratch() *scratch {
	if s, ok := x.scratch.Get().(*scratch); ok {
		s.gen++
		if s.gen == 0 { // wrapped: stale stamps could collide
			clear(s.wStamp)
			clear(s.recStamp)
			clear(s.exact)
			s.gen = 1
		}
		s.touched = s.touched[:0]
		s.laterDocs, s.laterRecs, s.missing = s.laterDocs[:0], s.laterRecs[:0], false
		return s
	}
	n, r := len(x.docs), x.recQ.len()
	s := &scratch{gen: 1, cos: make([]float32, n), exact: make([]uint32, n), wStamp: make([]uint32, n), wLast: make([]uint16, n),
		wExact: make([]uint16, n), wShare: make([]float32, n), wScore: make([]float32, n), wExp: make([]float32, n),
		recStamp: make([]uint32, r), rec: make([]float32, r)}
	if x.cold != nil {
		s.blocks = make([]*block, len(x.cold.blocks))
	}
	return s
}

// visibleSpans returns the ordinal ranges of the visible libraries, in order.
func (x *Index) visibleSpans(libraries []string) []span {
	out := make([]span, 0, len(libraries))
	for _, id := range libraries {
		if sp, ok := x.libs[id]; ok && sp.end > sp.start {
			out = append(out, sp)
		}
	}
	slices.SortFunc(out, func(a, b span) int { return int(a.start) - int(b.start) })
	return out
}

// part is one segment as a query reads it: its visible ranges and the
// query's working memory over it.
type part struct {
	*segment
	spans []span
	s     *scratch
}

// view is a query's reading of a set of segments, oldest first. Every step of
// a query reads the visible, live documents of every part, and term
// statistics are theirs: a search over several segments ranks as one over a
// single index of the same live documents would.
//
// Of the segments opened by range, a step first asks for the blocks it
// needs (need...), then reads them at once (fetch), then computes: a query
// makes at most four rounds of reads (docs/search.md).
type view struct {
	parts  []part
	needs  map[*coldPart][]uint32 // the blocks the next fetch reads
	caches []*Cache
	near   map[string][]near // neighbours found, by term and edits
}

func newView(segs []*segment, libraries []string) *view {
	v := &view{parts: make([]part, len(segs))}
	for i, sg := range segs {
		s := sg.x.getScratch()
		v.parts[i] = part{segment: sg, spans: sg.x.visibleSpans(libraries), s: s}
		if c := sg.x.cold; c != nil {
			for k := range c.blocks {
				s.blocks[k] = c.blocks[k].Load()
			}
			if !slices.Contains(v.caches, c.cache) {
				v.caches = append(v.caches, c.cache)
				c.cache.begin()
			}
		}
	}
	return v
}

func (v *view) release() {
	for _, p := range v.parts {
		clear(p.s.blocks)
		p.x.scratch.Put(p.s)
	}
	for _, c := range v.caches {
		c.end()
	}
}

// Candidates implements search.Retriever.
func (x *Index) Candidates(ctx context.Context, q *search.Query, add func(search.Candidate)) error {
	return candidates(ctx, []*segment{x.whole}, x.dims, q, add)
}

func candidates(ctx context.Context, segs []*segment, dims int, q *search.Query, add func(search.Candidate)) error {
	if len(q.Vector) != dims {
		return errDims
	}
	v := newView(segs, q.Libraries)
	defer v.release()

	terms := analyzer().DistinctTerms(q.Text)
	pr := rotationFor(dims).probe(q.Vector)
	// The first round: the postings of the query's terms (and of their
	// near matches, where the visible documents may lack a term), the
	// codes of the vectors the screen passes, and what feedback needs to
	// count the dead documents' terms.
	v.planWords(terms, q.Rules)
	v.cosines(pr, float32(q.Rules.SemanticThreshold))
	if !q.NoRecordings {
		v.recordings(pr, float32(q.Rules.RecordingsThreshold))
	}
	v.needLater()
	if f := q.Rules.Feedback; f.Docs > 0 && f.Terms > 0 && f.QueryWeight < 1 {
		v.needDeadWords()
	}
	if err := v.fetch(ctx); err != nil {
		return err
	}
	v.finishCosines(pr)
	w, err := v.words(ctx, terms, q.Rules)
	if err != nil {
		return err
	}
	if err := errors.Join(ctx.Err(), v.err()); err != nil {
		return err
	}

	v.evidence(q, w, pr, uint16(len(terms)), add)
	return nil
}

// evidence hands add, in the order of the parts and their ordinals, every
// visible, live document the rules match, with its evidence. Above
// parallelFrom visible documents, pieces of them are weighed on every core
// while add takes the pieces done, in order.
func (v *view) evidence(q *search.Query, w *wordResult, pr *probe, nTerms uint16, add func(search.Candidate)) {
	lists, owners, total := v.visible()
	later := make(map[*part]*laterCosine, len(v.parts))
	for i := range v.parts {
		later[&v.parts[i]] = &laterCosine{pr: pr, x: v.parts[i].x}
	}
	handOver := func(buf *[]search.Candidate) {
		for _, c := range *buf {
			add(c)
		}
		clear(*buf) // holds nothing of the query once back in the pool
		*buf = (*buf)[:0]
		candidateBufs.Put(buf)
	}
	workers := workersFor(total)
	if workers == 1 {
		for k, sp := range lists {
			buf := candidateBufs.Get().(*[]search.Candidate)
			*buf = owners[k].weigh(sp, q, w, nTerms, later[owners[k]], *buf)
			handOver(buf)
		}
		return
	}
	pieces := cut(lists, pieceSize(total, workers))
	found := make([]*[]search.Candidate, len(pieces))
	done := make([]chan struct{}, len(pieces))
	for i := range done {
		done[i] = make(chan struct{})
	}
	all := make(chan struct{})
	go func() {
		defer close(all)
		each(len(pieces), workers, func(i int) {
			defer close(done[i])
			p := owners[pieces[i].list]
			buf := candidateBufs.Get().(*[]search.Candidate)
			*buf = p.weigh(pieces[i].span, q, w, nTerms, later[p], *buf)
			found[i] = buf
		})
	}()
	defer func() { <-all }() // should add panic, the scratch is not released under the workers
	for i := range pieces {
		<-done[i]
		handOver(found[i])
	}
}

// candidateBufs are the buffers of the candidates of a piece of a view.
var candidateBufs = sync.Pool{New: func() any { return new([]search.Candidate) }}

// weigh appends to out, in order, the documents of sp in the part that are
// candidates: live, and matched by the rules on their evidence.
func (p *part) weigh(sp span, q *search.Query, w *wordResult, nTerms uint16, later *laterCosine, out []search.Candidate) []search.Candidate {
	s := p.s
	for i := sp.start; i < sp.end; i++ {
		if p.isDead(i) {
			continue
		}
		var e search.Evidence
		e.Semantic = float64(s.cos[i])
		if s.wStamp[i] == s.gen {
			e.Share = float64(s.wShare[i]) / w.weight
			e.LexicalHit = nTerms > 0 && s.wExact[i] == nTerms
			e.FuzzyHit = !e.LexicalHit && e.Share >= q.Rules.FuzzyShare-1e-9
			if e.LexicalHit || e.FuzzyHit {
				e.Word = w.strength(s, i)
			}
		}
		if !q.NoRecordings {
			e.Recordings = float64(p.bestRecording(i))
		}
		if q.Rules.Matches(e) {
			c := search.Candidate{Doc: &p.x.docs[i], Evidence: e}
			if s.exact[i] != s.gen { // matched on other evidence: its cosine, if reported
				c.Later, c.Ref = later, i
			}
			out = append(out, c)
		}
	}
	return out
}

// laterCosine is the int8 cosine of a probe with the vectors of one segment,
// for the candidates left with an estimate (search.Candidate.Later). Of a
// segment opened by range, the codes are read first (PrepareLater).
type laterCosine struct {
	pr  *probe
	x   *Index
	cos map[uint32]float32 // of a segment opened by range, read by PrepareLater
}

func (l *laterCosine) Semantic(ref uint32) float64 {
	if l.x.cold == nil {
		return float64(l.pr.cosine(&l.x.docQ, nil, int(ref)))
	}
	if c, ok := l.cos[ref]; ok {
		return float64(c)
	}
	// Not prepared (search.Local prepares every page it reports): read
	// the codes now.
	cos, err := laterCosines(context.Background(), l.pr, map[*Index][]uint32{l.x: {ref}})
	if err != nil {
		panic("localsearch: a candidate's cosine was asked for without PrepareLater, and its codes cannot be read: " + err.Error())
	}
	return float64(cos[l.x][ref])
}

// postings returns the postings of term inside sp.
func (x *Index) postings(term uint32, sp span) []posting {
	p := x.post[x.postOff[term]:x.postOff[term+1]]
	lo := sort.Search(len(p), func(i int) bool { return p[i].doc >= sp.start })
	hi := lo + sort.Search(len(p)-lo, func(i int) bool { return p[lo+i].doc >= sp.end })
	return p[lo:hi]
}

// wordStats are the term statistics of the visible documents: their number
// and average field lengths.
type wordStats struct {
	n, avgTitle, avgBody float64
}

func (v *view) wordStats() wordStats {
	var st wordStats
	var titleSum, bodySum float64
	for _, p := range v.parts {
		for _, sp := range p.spans {
			ls := p.stats[p.x.docLib[sp.start]]
			st.n += ls.n
			titleSum += ls.title
			bodySum += ls.body
		}
	}
	st.avgTitle, st.avgBody = max(titleSum/max(st.n, 1), 1), max(bodySum/max(st.n, 1), 1)
	return st
}

// idf is BM25's inverse document frequency among the visible documents.
func (st wordStats) idf(df int) float64 {
	return math.Log(1 + (st.n-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25 is the saturated, length-normalised BM25F term frequency of a posting.
func (x *Index) bm25(st wordStats, p posting) float64 {
	tf := titleWeight*float64(p.title)/(1-bm25b+bm25b*float64(x.titleLen[p.doc])/st.avgTitle) +
		float64(p.body)/(1-bm25b+bm25b*float64(x.bodyLen[p.doc])/st.avgBody)
	return tf * (k1 + 1) / (tf + k1)
}

// wordResult is what words found for a query as a whole.
type wordResult struct {
	// weight is the query's term weight: the sum of its terms' idf.
	weight float64
	// scale and expScale turn a document's BM25F for the query's terms and for
	// the feedback terms into its share of the expanded query; max is the most
	// a document could score.
	scale, expScale, max float64
}

// strength is document i's word evidence in [0, 1].
func (w *wordResult) strength(s *scratch, i uint32) float64 {
	if w.max <= 0 {
		return 0
	}
	return (w.scale*float64(s.wScore[i]) + w.expScale*float64(s.wExp[i])) / w.max
}

// near is a vocabulary term within a query term's allowed edits, and how
// similar it is (1 - edits/length).
type near struct {
	term string
	sim  float64
}

// words credits each visible document, per query term, with the term as
// written or, when no visible document holds it (most likely a typo), with its
// nearest neighbours within the allowed edits: the share of the query's term
// weight it holds (each term weighing its idf, a near match its similarity
// times that) and its BM25F. Then, with feedback on, it expands the query with
// the words of the best matches (RM3) and scores the documents it credited for
// those too. Term statistics are those of the visible documents only.
func (v *view) words(ctx context.Context, terms []string, rules *search.Rules) (*wordResult, error) {
	w := &wordResult{scale: 1}
	st := v.wordStats()
	if st.n == 0 || len(terms) == 0 {
		return w, nil
	}
	var score float64 // the most a document could score for the query's terms
	var credits []credit
	for ti, term := range terms {
		n := utf8.RuneCountInString(term)
		var matches []near
		weight := st.idf(0)
		// A term that the visible documents hold as written is taken as meant:
		// only a term they lack is widened to its neighbours. Otherwise every
		// short word would also match its look-alikes ("hire", "here", "fire").
		if df := v.df(term); df > 0 {
			matches = append(matches, near{term, 1})
			weight = st.idf(df)
		}
		if edits := rules.MaxEdits(n); len(matches) == 0 && edits > 0 {
			matches = v.neighbours(term, edits, n)
			for _, m := range matches { // read already, unless planWords was sure of the term
				v.needPostings(m.term)
			}
			if err := v.fetch(ctx); err != nil {
				return nil, err
			}
		}
		w.weight += weight
		score += weight * (k1 + 1)
		for _, m := range matches {
			df := v.df(m.term)
			if df == 0 {
				continue
			}
			credits = append(credits, credit{term: m.term, ti: uint16(ti + 1), sim: m.sim, idf: st.idf(df), share: float32(m.sim * weight)})
		}
	}
	// Every part credits its documents for the matches, in the terms'
	// order: each document's sums are added up in the same order, whatever
	// core its part is on.
	v.eachPart(func(_ int, p *part) { p.credit(credits, st) })
	w.max = score
	if f := rules.Feedback; f.Docs > 0 && f.Terms > 0 && f.QueryWeight < 1 {
		if err := v.feedback(ctx, w, st, rules, len(terms)); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// termPostings yields the postings of term in each visible range of the
// part, in order.
func (p *part) termPostings(term string) iter.Seq[[]posting] {
	return func(yield func([]posting) bool) {
		id, ok := p.x.termID(term)
		if !ok {
			return
		}
		for _, sp := range p.spans {
			if !yield(p.postings(id, sp)) {
				return
			}
		}
	}
}

// credit is a match of a query term: the documents that hold it are
// credited with share of the query's term weight and with its BM25F, times
// sim.
type credit struct {
	term  string
	ti    uint16 // the query term, from 1
	sim   float64
	idf   float64
	share float32
}

// credit credits the part's visible, live documents for the matches, in
// order: a document is credited once per query term, for the first of its
// matches it holds (the nearest).
func (p *part) credit(credits []credit, st wordStats) {
	s := p.s
	for _, c := range credits {
		for list := range p.termPostings(c.term) {
			for _, ps := range list {
				d := ps.doc
				if p.isDead(d) {
					continue
				}
				if s.wStamp[d] != s.gen {
					s.wStamp[d], s.wLast[d], s.wExact[d], s.wShare[d], s.wScore[d], s.wExp[d] = s.gen, 0, 0, 0, 0, 0
					s.touched = append(s.touched, d)
				}
				if s.wLast[d] == c.ti {
					continue // credited for this term already, by a nearer match
				}
				s.wLast[d] = c.ti
				if c.sim == 1 {
					s.wExact[d]++
				}
				s.wShare[d] += c.share
				s.wScore[d] += float32(c.sim * c.idf * p.x.bm25(st, ps))
			}
		}
	}
}

// neighbours are the vocabulary terms of every part within edits of term (of
// n letters), nearest first, then in the vocabulary's order.
func (v *view) neighbours(term string, edits, n int) []near {
	key := fmt.Sprintf("%d\x00%s", edits, term)
	if m, ok := v.near[key]; ok {
		return m
	}
	if v.near == nil {
		v.near = map[string][]near{}
	}
	m := v.findNeighbours(term, edits, n)
	v.near[key] = m
	return m
}

func (v *view) findNeighbours(term string, edits, n int) []near {
	dfa, err := levenshteinBuilder().BuildDfa(term, uint8(edits))
	if err != nil {
		return nil
	}
	var out []near
	for _, p := range v.parts {
		it, err := p.x.vocab.Search(dfa, nil, nil)
		for err == nil {
			key, _ := it.Current()
			// The automaton also reports matches past the edits it was
			// built for (up to the builder's 2): keep only those within.
			if ok, d := dfa.MatchAndDistance(string(key)); ok && d > 0 && int(d) <= edits {
				out = append(out, near{string(key), 1 - float64(d)/float64(max(n, 1))})
			}
			err = it.Next()
		}
	}
	if len(v.parts) > 1 { // each part's terms come in order: merge them, once each
		slices.SortFunc(out, func(a, b near) int { return strings.Compare(a.term, b.term) })
		out = slices.CompactFunc(out, func(a, b near) bool { return a.term == b.term })
	}
	// Nearest first, so that a document's first credit for a term is its best.
	slices.SortStableFunc(out, func(a, b near) int { return cmp.Compare(b.sim, a.sim) })
	return out
}

// ref is a document of a view: its part and ordinal.
type ref struct {
	part int
	doc  uint32
}

// before orders documents as a single index numbers them: by library, then ID.
func (v *view) before(a, b ref) bool {
	if a.part == b.part {
		return a.doc < b.doc
	}
	da, db := &v.parts[a.part].x.docs[a.doc], &v.parts[b.part].x.docs[b.doc]
	if c := strings.Compare(da.LibraryID, db.LibraryID); c != 0 {
		return c < 0
	}
	return da.ID < db.ID
}

// feedback expands the query with the words of its best word matches (RM3,
// Lavrenko and Croft 2001, with terms weighted by idf as well): each of the
// Feedback.Docs best documents that the word signals match gives its words in
// proportion to how much of it they make up and to how well it matched; the
// Feedback.Terms heaviest (times their idf) become more query words, worth
// 1 - QueryWeight of the expanded query. Only documents the query's own words
// reached are scored for them: feedback strengthens evidence, it finds nothing
// by itself.
func (v *view) feedback(ctx context.Context, w *wordResult, st wordStats, rules *search.Rules, nTerms int) error {
	f := rules.Feedback
	// The best matches: a bounded selection, best score first, then in the
	// index's order.
	score := func(r ref) float32 { return v.parts[r.part].s.wScore[r.doc] }
	better := func(a, b ref) bool {
		sa, sb := score(a), score(b)
		return sa > sb || (sa == sb && v.before(a, b))
	}
	// Each part's best, on every core, then the best of them: the same
	// list, as the order is total.
	tops := make([][]ref, len(v.parts))
	v.eachPart(func(pi int, p *part) {
		s, top := p.s, make([]ref, 0, f.Docs)
		for _, d := range s.touched {
			share := float64(s.wShare[d]) / w.weight
			if s.wExact[d] != uint16(nTerms) && share < rules.FuzzyShare-1e-9 {
				continue // no word signal fires for it
			}
			top = keep(top, ref{pi, d}, f.Docs, better)
		}
		tops[pi] = top
	})
	top := make([]ref, 0, f.Docs)
	for _, t := range tops {
		for _, r := range t {
			top = keep(top, r, f.Docs, better)
		}
	}
	if len(top) == 0 {
		return nil
	}
	// The second round: the best matches' words.
	for _, r := range top {
		if p := &v.parts[r.part]; p.x.cold != nil {
			v.needWords(p, r.doc, false)
		}
	}
	if err := v.fetch(ctx); err != nil {
		return err
	}
	// P(d) ∝ exp(score), P(t|d) = tf / length.
	best := float64(score(top[0]))
	var z float64
	for _, r := range top {
		z += math.Exp(float64(score(r)) - best)
	}
	rel := map[string]float64{}
	for _, r := range top {
		p := &v.parts[r.part]
		pd := math.Exp(float64(score(r))-best) / z
		entries := p.words(r.doc)
		var length float64
		for _, e := range entries {
			length += float64(e.tf)
		}
		for _, e := range entries {
			rel[p.x.termName[e.term]] += pd * float64(e.tf) / length
		}
	}
	type weighted struct {
		term string
		w    float64
		idf  float64
	}
	cands := make([]weighted, 0, len(rel))
	for t, r := range rel {
		df := v.dfCounted(t)
		if df == 0 {
			continue
		}
		idf := st.idf(df)
		cands = append(cands, weighted{t, r * idf, idf})
	}
	slices.SortFunc(cands, func(a, b weighted) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return strings.Compare(a.term, b.term)
	})
	cands = cands[:min(f.Terms, len(cands))]
	var sum float64
	for _, c := range cands {
		sum += c.w
	}
	if sum == 0 {
		return nil
	}
	// The third round: the chosen words' postings.
	for _, c := range cands {
		v.needPostings(c.term)
	}
	if err := v.fetch(ctx); err != nil {
		return err
	}
	w.scale = f.QueryWeight / float64(nTerms)
	w.expScale = 1
	w.max *= w.scale
	exps := make([]credit, len(cands))
	for i, c := range cands {
		qw := (1 - f.QueryWeight) * c.w / sum
		w.max += qw * c.idf * (k1 + 1)
		exps[i] = credit{term: c.term, sim: qw, idf: c.idf}
	}
	v.eachPart(func(_ int, p *part) { p.expand(exps, st) })
	return nil
}

// keep puts r in top, the n best so far, best first, if it is among them.
func keep(top []ref, r ref, n int, better func(a, b ref) bool) []ref {
	if len(top) == n && !better(r, top[len(top)-1]) {
		return top
	}
	if len(top) < n {
		top = append(top, r)
	} else {
		top[len(top)-1] = r
	}
	for j := len(top) - 1; j > 0 && better(top[j], top[j-1]); j-- {
		top[j], top[j-1] = top[j-1], top[j]
	}
	return top
}

// expand scores the part's documents that the query's words credited for
// the feedback terms, in order, each weighing sim (its share of the
// expanded query).
func (p *part) expand(exps []credit, st wordStats) {
	s := p.s
	for _, c := range exps {
		for list := range p.termPostings(c.term) {
			for _, ps := range list {
				if s.wStamp[ps.doc] == s.gen { // only live documents are stamped
					s.wExp[ps.doc] += float32(c.sim * c.idf * p.x.bm25(st, ps))
				}
			}
		}
	}
}

// df is the number of visible, live documents holding a term, from its
// postings.
func (v *view) df(term string) int {
	n := 0
	for _, p := range v.parts {
		n += p.df(term)
	}
	return n
}

func (p *part) df(term string) int {
	id, ok := p.x.termID(term)
	if !ok {
		return 0
	}
	n := 0
	for _, sp := range p.spans {
		ps := p.postings(id, sp)
		if p.dead == nil {
			n += len(ps)
			continue
		}
		for _, q := range ps {
			if !p.isDead(q.doc) {
				n++
			}
		}
	}
	return n
}

// cosines writes the cosine of the probe with every visible document of each
// part into its scratch: exactly (int8) for those that could reach the
// threshold limit, estimated for the others (probe.screened). Of a part
// opened by range, the documents whose codes it does not hold yet are
// listed (laterDocs), their estimate kept until finishCosines. Above
// parallelFrom visible documents, pieces of them are screened on every
// core.
func (v *view) cosines(pr *probe, limit float32) {
	lists, owners, total := v.visible()
	workers := workersFor(total)
	pieces := cut(lists, pieceSize(total, workers))
	later := make([][]uint32, len(pieces))
	each(len(pieces), workers, func(i int) {
		pc := pieces[i]
		later[i] = owners[pc.list].cosRange(pr, limit, pc.start, pc.end, nil)
	})
	for i, pc := range pieces { // in order: as one goroutine lists them
		s := owners[pc.list].s
		s.laterDocs = append(s.laterDocs, later[i]...)
	}
}

// cosRange screens documents [start, end) of the part, and returns later
// with the ordinals whose codes the query does not hold appended.
func (p *part) cosRange(pr *probe, limit float32, start, end uint32, later []uint32) []uint32 {
	s, vecs := p.s, &p.x.docQ
	if p.x.cold == nil {
		for i := start; i < end; i++ {
			cos, exact := pr.screened(vecs, int(i), limit)
			s.cos[i] = cos
			if exact {
				s.exact[i] = s.gen
			}
		}
		return later
	}
	c := p.x.cold
	held := func(k uint32) *block { return s.blocks[k] }
	lastUsed := ^uint32(0)
	for i := start; i < end; i++ {
		est, pass := pr.passes(vecs, int(i), limit)
		if !pass {
			s.cos[i] = est
			continue
		}
		code, ok := p.x.docCode(held, i)
		if !ok {
			s.cos[i] = est
			later = append(later, i)
			continue
		}
		if k := uint32(c.docCodeAt(i) / c.lay.block); k != lastUsed {
			c.used[k].Store(true) // for the cache's hand
			lastUsed = k
		}
		s.cos[i] = pr.cosine(vecs, code, int(i))
		s.exact[i] = s.gen
	}
	return later
}

// recordings computes the cosine of the probe with every readable recording
// behind a visible document of each part, each once (exactly if it could
// reach the threshold limit): the distinct recordings of each part are
// listed first, then scored, on every core when there are many. Of a part
// opened by range, those whose codes it does not hold are listed
// (laterRecs) for finishCosines.
func (v *view) recordings(pr *probe, limit float32) {
	lists := make([]span, len(v.parts))
	total := 0
	for i := range v.parts {
		n := v.parts[i].listRecordings()
		lists[i] = span{0, uint32(n)}
		total += n
	}
	workers := workersFor(total)
	pieces := cut(lists, pieceSize(total, workers))
	later := make([][]uint32, len(pieces))
	each(len(pieces), workers, func(i int) {
		pc := pieces[i]
		p := &v.parts[pc.list]
		later[i] = p.scoreRecordings(pr, limit, p.s.recTodo[pc.start:pc.end])
	})
	for i, pc := range pieces { // in order: as one goroutine lists them
		s := v.parts[pc.list].s
		s.laterRecs = append(s.laterRecs, later[i]...)
	}
}

// listRecordings lists the distinct readable recordings behind the part's
// visible documents (recTodo), and returns how many.
func (p *part) listRecordings() int {
	x, s := p.x, p.s
	todo := s.recTodo[:0]
	for _, sp := range p.spans {
		for _, r := range x.libRecs[x.docLib[sp.start]] {
			if s.recStamp[r] != s.gen {
				s.recStamp[r] = s.gen
				todo = append(todo, r)
			}
		}
	}
	s.recTodo = todo
	return len(todo)
}

// scoreRecordings scores recordings rs of the part, and returns those whose
// codes it does not hold.
func (p *part) scoreRecordings(pr *probe, limit float32, rs []uint32) (later []uint32) {
	x, s := p.x, p.s
	if x.cold == nil {
		for _, r := range rs {
			s.rec[r], _ = pr.screened(&x.recQ, int(r), limit)
		}
		return nil
	}
	held := func(k uint32) *block { return s.blocks[k] }
	for _, r := range rs {
		est, pass := pr.passes(&x.recQ, int(r), limit)
		s.rec[r] = est
		if !pass {
			continue
		}
		if code, ok := x.recCode(held, r); ok {
			s.rec[r] = pr.cosine(&x.recQ, code, int(r))
		} else {
			later = append(later, r)
		}
	}
	return later
}

// bestRecording is the best cosine of the readable recordings behind document i.
func (p *part) bestRecording(i uint32) float32 {
	best := float32(0)
	for _, r := range p.x.docRecs[p.x.docRecOff[i]:p.x.docRecOff[i+1]] {
		if p.s.recStamp[r] == p.s.gen {
			best = max(best, p.s.rec[r])
		}
	}
	return best
}

// MostActive implements search.Retriever.
func (x *Index) MostActive(ctx context.Context, q *search.Query, f search.Filter, offset, limit int) ([]search.Candidate, int, error) {
	return mostActive(ctx, []*segment{x.whole}, x.dims, q, f, offset, limit)
}

// mostActive pages through the visible, live documents of segs that pass f,
// most active first: each segment lists its documents in that order, and the
// lists are merged.
func mostActive(ctx context.Context, segs []*segment, dims int, q *search.Query, f search.Filter, offset, limit int) ([]search.Candidate, int, error) {
	if len(q.Vector) != dims {
		return nil, 0, errDims
	}
	type cursor struct {
		sg      *segment
		visible []bool
		next    int
	}
	cur := make([]cursor, 0, len(segs))
	for _, sg := range segs {
		c := cursor{sg: sg, visible: make([]bool, len(sg.x.libIDs))}
		for _, id := range q.Libraries {
			if sp, ok := sg.x.libs[id]; ok && sp.end > sp.start {
				c.visible[sg.x.docLib[sp.start]] = true
			}
		}
		cur = append(cur, c)
	}
	// skip moves a cursor to its next document that counts.
	skip := func(c *cursor) {
		x := c.sg.x
		for ; c.next < len(x.activity); c.next++ {
			o := x.activity[c.next]
			if c.visible[x.docLib[o]] && !c.sg.isDead(o) && f.Pass(&x.docs[o]) {
				return
			}
		}
	}
	for i := range cur {
		skip(&cur[i])
	}
	doc := func(c *cursor) *search.Doc { return &c.sg.x.docs[c.sg.x.activity[c.next]] }
	type hit struct {
		x *Index
		o uint32
	}
	var page []hit
	total := 0
	for {
		best := -1
		for i := range cur {
			c := &cur[i]
			if c.next == len(c.sg.x.activity) {
				continue
			}
			if best < 0 || search.MoreActive(doc(c), doc(&cur[best])) < 0 {
				best = i
			}
		}
		if best < 0 {
			break
		}
		c := &cur[best]
		if total >= offset && len(page) < limit {
			page = append(page, hit{c.sg.x, c.sg.x.activity[c.next]})
		}
		total++
		c.next++
		skip(c)
	}
	out := make([]search.Candidate, len(page))
	pr := rotationFor(dims).probe(q.Vector)
	// The page's codes, of the segments opened by range: one round.
	refs := map[*Index][]uint32{}
	for _, h := range page {
		if h.x.cold != nil {
			refs[h.x] = append(refs[h.x], h.o)
		}
	}
	var cos map[*Index]map[uint32]float32
	if len(refs) > 0 {
		defer busy(refs)()
		var err error
		if cos, err = laterCosines(ctx, pr, refs); err != nil {
			return nil, 0, err
		}
	}
	for i, h := range page {
		var c float32
		if h.x.cold != nil {
			c = cos[h.x][h.o]
		} else {
			c = pr.cosine(&h.x.docQ, nil, int(h.o))
		}
		out[i] = search.Candidate{Doc: &h.x.docs[h.o], Evidence: search.Evidence{Semantic: float64(c)}}
	}
	return out, total, ctx.Err()
}
