package localsearch

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"unicode/utf8"

	"gonum.org/v1/gonum/blas/blas32"

	"github.com/doclib/doclib/shared/search"
)

var _ search.Retriever = (*Index)(nil)

// scratch is one query's working memory, reused across queries. Entries are
// valid only when their stamp equals gen, so nothing is cleared between queries.
type scratch struct {
	gen uint32

	cos []float32 // per ordinal, written for every visible document

	lexStamp []uint32
	lex      []float32

	fzStamp []uint32
	fzLast  []uint16 // the last query term (1-based) a document was credited for
	fzCount []uint16
	fzSum   []float32

	recStamp []uint32
	rec      []float32 // per recording
	recTodo  []uint32  // the recordings to score for this query
}

func (x *Index) getScratch() *scratch {
	if s, ok := x.scratch.Get().(*scratch); ok {
		s.gen++
		if s.gen == 0 { // wrapped: stale stamps could collide
			clear(s.lexStamp)
			clear(s.fzStamp)
			clear(s.recStamp)
			s.gen = 1
		}
		return s
	}
	n, r := len(x.docs), len(x.recVec)/x.dims
	return &scratch{gen: 1, cos: make([]float32, n), lexStamp: make([]uint32, n), lex: make([]float32, n),
		fzStamp: make([]uint32, n), fzLast: make([]uint16, n), fzCount: make([]uint16, n), fzSum: make([]float32, n),
		recStamp: make([]uint32, r), rec: make([]float32, r)}
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

// Candidates implements search.Retriever.
func (x *Index) Candidates(ctx context.Context, q *search.Query) ([]search.Candidate, error) {
	if len(q.Vector) != x.dims {
		return nil, errDims
	}
	spans := x.visibleSpans(q.Libraries)
	s := x.getScratch()
	defer x.scratch.Put(s)

	terms := dedupe(x.analyzer.Terms(q.Text))
	x.lexical(s, terms, spans)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.fuzzy(s, terms, spans, q.Rules)
	x.cosines(s, q.Vector, spans)
	if !q.NoRecordings {
		x.recordings(s, q.Vector, spans)
	}

	var out []search.Candidate
	nTerms := uint16(len(terms))
	for _, sp := range spans {
		for i := sp.start; i < sp.end; i++ {
			var e search.Evidence
			e.Semantic = float64(s.cos[i])
			if s.lexStamp[i] == s.gen {
				e.LexicalHit, e.Lexical = true, float64(s.lex[i])
			} else if s.fzStamp[i] == s.gen && s.fzCount[i] == nTerms && nTerms > 0 {
				e.FuzzyHit, e.Fuzzy = true, float64(s.fzSum[i])/float64(nTerms)
			}
			if !q.NoRecordings {
				e.Recordings = float64(x.bestRecording(s, i))
			}
			if q.Rules.Matches(e) {
				out = append(out, search.Candidate{Doc: &x.docs[i], Evidence: e})
			}
		}
	}
	return out, nil
}

func dedupe(terms []string) []string {
	out := terms[:0:0]
	for _, t := range terms {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// postings returns the postings of term inside sp.
func (x *Index) postings(term uint32, sp span) []posting {
	p := x.post[x.postOff[term]:x.postOff[term+1]]
	lo := sort.Search(len(p), func(i int) bool { return p[i].doc >= sp.start })
	hi := lo + sort.Search(len(p)-lo, func(i int) bool { return p[lo+i].doc >= sp.end })
	return p[lo:hi]
}

// lexical marks the visible documents that hold every term, with their mean
// BM25F. Term statistics (document frequency, average lengths) are those of the
// visible documents only.
func (x *Index) lexical(s *scratch, terms []string, spans []span) {
	if len(terms) == 0 {
		return
	}
	ids := make([]uint32, len(terms))
	for i, t := range terms {
		id, ok := x.terms[t]
		if !ok {
			return // a term no document has: nothing holds every term
		}
		ids[i] = id
	}
	var nVis, titleSum, bodySum float64
	for _, sp := range spans {
		nVis += float64(sp.end - sp.start)
		li := x.docLib[sp.start]
		titleSum += x.libTitle[li]
		bodySum += x.libBody[li]
	}
	if nVis == 0 {
		return
	}
	avgTitle, avgBody := max(titleSum/nVis, 1), max(bodySum/nVis, 1)
	lists := make([][]posting, len(ids))
	idf := make([]float64, len(ids))
	for _, sp := range spans {
		for i, id := range ids {
			lists[i] = x.postings(id, sp)
		}
		for i := range ids {
			idf[i] += float64(len(lists[i])) // document frequency, summed over spans first
		}
	}
	for i := range idf {
		df := idf[i]
		idf[i] = math.Log(1 + (nVis-df+0.5)/(df+0.5))
	}
	for _, sp := range spans {
		for i, id := range ids {
			lists[i] = x.postings(id, sp)
		}
		shortest := 0
		for i := range lists {
			if len(lists[i]) < len(lists[shortest]) {
				shortest = i
			}
		}
		pos := make([]int, len(lists))
	docs:
		for _, p := range lists[shortest] {
			score := 0.0
			for i, l := range lists {
				var hit posting
				if i == shortest {
					hit = p
				} else {
					j := pos[i] + sort.Search(len(l)-pos[i], func(k int) bool { return l[pos[i]+k].doc >= p.doc })
					pos[i] = j
					if j == len(l) || l[j].doc != p.doc {
						continue docs
					}
					hit = l[j]
				}
				tf := titleWeight*float64(hit.title)/(1-bm25b+bm25b*float64(x.titleLen[p.doc])/avgTitle) +
					float64(hit.body)/(1-bm25b+bm25b*float64(x.bodyLen[p.doc])/avgBody)
				score += idf[i] * tf * (k1 + 1) / (tf + k1)
			}
			s.lexStamp[p.doc] = s.gen
			s.lex[p.doc] = float32(score / float64(len(lists)))
		}
	}
}

// fuzzy credits each visible document, per query term, with the best similarity
// of its terms within the allowed edits. A document credited for every term is a
// fuzzy match (unless it is a lexical one).
func (x *Index) fuzzy(s *scratch, terms []string, spans []span, rules *search.Rules) {
	type match struct {
		id   uint32
		dist uint8
	}
	for ti, term := range terms {
		n := utf8.RuneCountInString(term)
		edits := rules.MaxEdits(n)
		// A term that the visible documents hold as written is taken as meant:
		// only a term they lack (most likely a typo) is widened to its neighbours.
		// Otherwise every short word would also match its look-alikes ("hire",
		// "here", "fire").
		if id, ok := x.terms[term]; ok && x.visibleDF(id, spans) > 0 {
			edits = 0
		}
		var matches []match
		if edits == 0 {
			if id, ok := x.terms[term]; ok {
				matches = append(matches, match{id, 0})
			}
		} else {
			dfa, err := x.lev.BuildDfa(term, uint8(edits))
			if err != nil {
				return
			}
			it, err := x.vocab.Search(dfa, nil, nil)
			for err == nil {
				key, val := it.Current()
				if ok, d := dfa.MatchAndDistance(string(key)); ok {
					matches = append(matches, match{uint32(val), d})
				}
				err = it.Next()
			}
		}
		if len(matches) == 0 {
			return // this term matches nothing: no document can match every term
		}
		// Nearest first, so that a document's first credit for a term is its best.
		slices.SortStableFunc(matches, func(a, b match) int { return int(a.dist) - int(b.dist) })
		for _, m := range matches {
			sim := float32(1 - float64(m.dist)/float64(max(n, 1)))
			for _, sp := range spans {
				for _, p := range x.postings(m.id, sp) {
					d := p.doc
					if s.fzStamp[d] != s.gen {
						if ti > 0 {
							continue // missed an earlier term: cannot match every term
						}
						s.fzStamp[d], s.fzLast[d], s.fzCount[d], s.fzSum[d] = s.gen, 0, 0, 0
					}
					if s.fzLast[d] != uint16(ti+1) && s.fzCount[d] == uint16(ti) {
						s.fzLast[d] = uint16(ti + 1)
						s.fzCount[d]++
						s.fzSum[d] += sim
					}
				}
			}
		}
	}
}

// visibleDF is the number of visible documents holding a term.
func (x *Index) visibleDF(term uint32, spans []span) int {
	n := 0
	for _, sp := range spans {
		n += len(x.postings(term, sp))
	}
	return n
}

// parallelFrom is the number of visible documents above which cosines are
// computed on every core.
const parallelFrom = 8192

// cosines writes the cosine of q with every visible document into s.cos.
func (x *Index) cosines(s *scratch, q []float32, spans []span) {
	total := 0
	for _, sp := range spans {
		total += int(sp.end - sp.start)
	}
	workers := 1
	if total >= parallelFrom {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 {
		for _, sp := range spans {
			x.dotRange(s.cos, x.docVec, q, sp.start, sp.end)
		}
		return
	}
	// Cut the visible ordinals into workers equal shares.
	var wg sync.WaitGroup
	share := (total + workers - 1) / workers
	var parts [][]span
	cur, left := []span{}, share
	for _, sp := range spans {
		for sp.start < sp.end {
			take := min(uint32(left), sp.end-sp.start)
			cur = append(cur, span{sp.start, sp.start + take})
			sp.start += take
			left -= int(take)
			if left == 0 {
				parts = append(parts, cur)
				cur, left = []span{}, share
			}
		}
	}
	if len(cur) > 0 {
		parts = append(parts, cur)
	}
	for _, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, sp := range part {
				x.dotRange(s.cos, x.docVec, q, sp.start, sp.end)
			}
		}()
	}
	wg.Wait()
}

func (x *Index) dotRange(out, vecs, q []float32, start, end uint32) {
	d := x.dims
	qv := blas32.Vector{N: d, Inc: 1, Data: q}
	for i := start; i < end; i++ {
		out[i] = blas32.Dot(qv, blas32.Vector{N: d, Inc: 1, Data: vecs[int(i)*d : int(i+1)*d]})
	}
}

// recordings computes the cosine of q with every readable recording behind a
// visible document, each once: the distinct recordings are listed first, then
// scored on every core when there are many.
func (x *Index) recordings(s *scratch, q []float32, spans []span) {
	todo := s.recTodo[:0]
	for _, sp := range spans {
		for _, r := range x.libRecs[x.docLib[sp.start]] {
			if s.recStamp[r] != s.gen {
				s.recStamp[r] = s.gen
				todo = append(todo, r)
			}
		}
	}
	s.recTodo = todo
	d := x.dims
	score := func(rs []uint32) {
		qv := blas32.Vector{N: d, Inc: 1, Data: q}
		for _, r := range rs {
			s.rec[r] = blas32.Dot(qv, blas32.Vector{N: d, Inc: 1, Data: x.recVec[int(r)*d : int(r+1)*d]})
		}
	}
	workers := 1
	if len(todo) >= parallelFrom {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 {
		score(todo)
		return
	}
	var wg sync.WaitGroup
	share := (len(todo) + workers - 1) / workers
	for start := 0; start < len(todo); start += share {
		wg.Add(1)
		go func(rs []uint32) {
			defer wg.Done()
			score(rs)
		}(todo[start:min(start+share, len(todo))])
	}
	wg.Wait()
}

// bestRecording is the best cosine of the readable recordings behind document i.
func (x *Index) bestRecording(s *scratch, i uint32) float32 {
	best := float32(0)
	for _, r := range x.docRecs[x.docRecOff[i]:x.docRecOff[i+1]] {
		if s.recStamp[r] == s.gen {
			best = max(best, s.rec[r])
		}
	}
	return best
}

// MostActive implements search.Retriever.
func (x *Index) MostActive(ctx context.Context, q *search.Query, f search.Filter, offset, limit int) ([]search.Candidate, int, error) {
	if len(q.Vector) != x.dims {
		return nil, 0, errDims
	}
	visible := make([]bool, len(x.libIDs))
	for _, id := range q.Libraries {
		if sp, ok := x.libs[id]; ok && sp.end > sp.start {
			visible[x.docLib[sp.start]] = true
		}
	}
	var page []uint32
	total := 0
	for _, o := range x.activity {
		if !visible[x.docLib[o]] || !f.Pass(&x.docs[o]) {
			continue
		}
		if total >= offset && len(page) < limit {
			page = append(page, o)
		}
		total++
	}
	out := make([]search.Candidate, len(page))
	d := x.dims
	qv := blas32.Vector{N: d, Inc: 1, Data: q.Vector}
	for i, o := range page {
		cos := blas32.Dot(qv, blas32.Vector{N: d, Inc: 1, Data: x.docVec[int(o)*d : int(o+1)*d]})
		out[i] = search.Candidate{Doc: &x.docs[o], Evidence: search.Evidence{Semantic: float64(cos)}}
	}
	return out, total, ctx.Err()
}
