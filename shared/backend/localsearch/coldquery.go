package localsearch

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/doclib/doclib/shared/search"
)

// What a query does of the segments opened by range (cold.go): each step
// asks for the blocks it needs (need...), they are read in one round
// (fetch), then it computes as over a segment in memory.

// errMissing is a step that computed without a block it needed: a fault
// of this package, not of the reads.
var errMissing = errors.New("localsearch: a query step lacked a block it had not read")

// fetch reads the blocks the steps asked for since the last fetch, in one
// round of parallel reads.
func (v *view) fetch(ctx context.Context) error {
	if len(v.needs) == 0 {
		return nil
	}
	needs := v.needs
	v.needs = nil
	held := map[*coldPart][]*block{}
	for _, p := range v.parts {
		if c := p.x.cold; c != nil {
			held[c] = p.s.blocks
		}
	}
	return fetch(ctx, needs, queryReads, false, func(c *coldPart, k uint32, b *block) { held[c][k] = b })
}

// err is errMissing if a step found a block missing.
func (v *view) err() error {
	for _, p := range v.parts {
		if p.s.missing {
			return errMissing
		}
	}
	return nil
}

// needRange asks the next fetch for the blocks of bytes [off, off+n) of
// p's cold part that the query does not hold.
func (v *view) needRange(p *part, off, n uint64) {
	c := p.x.cold
	if n == 0 {
		return
	}
	first, last := c.blocksOf(off, n)
	for k := first; k <= last; k++ {
		if p.s.blocks[k] != nil {
			c.used[k].Store(true)
			continue
		}
		if v.needs == nil {
			v.needs = map[*coldPart][]uint32{}
		}
		v.needs[c] = append(v.needs[c], k)
	}
}

// needPostings asks for the postings of term, in the visible libraries of
// every part opened by range.
func (v *view) needPostings(term string) {
	for i := range v.parts {
		p := &v.parts[i]
		c := p.x.cold
		if c == nil {
			continue
		}
		id, ok := p.x.termID(term)
		if !ok {
			continue
		}
		for _, sp := range p.spans {
			a, b := p.x.libPostings(id, p.x.docLib[sp.start])
			v.needRange(p, c.lay.post+8*uint64(a), 8*uint64(b-a))
		}
	}
}

// libPostings is where the postings of term id in library lib lie, among
// all the postings: [a, b).
func (x *Index) libPostings(id uint32, lib uint16) (a, b uint32) {
	es := x.termLib[x.termLibOff[id]:x.termLibOff[id+1]]
	j := sort.Search(len(es), func(j int) bool { return es[j].lib >= uint32(lib) })
	if j == len(es) || es[j].lib != uint32(lib) {
		return 0, 0
	}
	end := x.postOff[id+1] - x.postOff[id]
	if j+1 < len(es) {
		end = es[j+1].start
	}
	return x.postOff[id] + es[j].start, x.postOff[id] + end
}

// postings returns the postings of term inside sp, a library's span.
func (p *part) postings(term uint32, sp span) []posting {
	c := p.x.cold
	if c == nil {
		return p.x.postings(term, sp)
	}
	a, b := p.x.libPostings(term, p.x.docLib[sp.start])
	ps, ok := coldArray[posting](c, p.s.blocks, c.lay.post, uint64(a), uint64(b-a))
	if !ok {
		p.s.missing = true
	}
	return ps
}

// words returns document d's words (the forward index).
func (p *part) words(d uint32) []termCount {
	c := p.x.cold
	if c == nil {
		return p.x.fwd[p.x.fwdOff[d]:p.x.fwdOff[d+1]]
	}
	ws, ok := coldArray[termCount](c, p.s.blocks, c.lay.fwd, uint64(p.x.fwdOff[d]), uint64(p.x.fwdOff[d+1]-p.x.fwdOff[d]))
	if !ok {
		p.s.missing = true
	}
	return ws
}

// needWords asks for document d's words, and its stop-word terms when
// stops.
func (v *view) needWords(p *part, d uint32, stops bool) {
	c, x := p.x.cold, p.x
	v.needRange(p, c.lay.fwd+8*uint64(x.fwdOff[d]), 8*uint64(x.fwdOff[d+1]-x.fwdOff[d]))
	if stops {
		v.needRange(p, c.lay.stops+4*uint64(c.stopOff[d]), 4*uint64(c.stopOff[d+1]-c.stopOff[d]))
	}
}

// laterCosines reads, in one round, the codes of the documents refs of
// segments opened by range, and returns their int8 cosines with pr.
func laterCosines(ctx context.Context, pr *probe, refs map[*Index][]uint32) (map[*Index]map[uint32]float32, error) {
	var mu sync.Mutex
	held := map[*coldPart]map[uint32]*block{}
	needs := map[*coldPart][]uint32{}
	for x, rs := range refs {
		c := x.cold
		held[c] = map[uint32]*block{}
		for _, r := range rs {
			k, _ := c.blocksOf(c.docCodeAt(r), uint64(x.rot.padded))
			needs[c] = append(needs[c], k)
		}
	}
	if err := fetch(ctx, needs, queryReads, false, func(c *coldPart, k uint32, b *block) {
		mu.Lock()
		held[c][k] = b
		mu.Unlock()
	}); err != nil {
		return nil, err
	}
	out := map[*Index]map[uint32]float32{}
	for x, rs := range refs {
		out[x] = make(map[uint32]float32, len(rs))
		for _, r := range rs {
			code, ok := x.docCode(func(k uint32) *block { return held[x.cold][k] }, r)
			if !ok {
				return nil, errMissing
			}
			out[x][r] = pr.cosine(&x.docQ, code, int(r))
		}
	}
	return out, nil
}

// busy marks a query in progress on the caches of the segments of refs,
// until the function it returns is called: the prefetch waits meanwhile.
func busy[T any](refs map[*Index]T) func() {
	var caches []*Cache
	for x := range refs {
		if c := x.cold.cache; !slices.Contains(caches, c) {
			caches = append(caches, c)
			c.begin()
		}
	}
	return func() {
		for _, c := range caches {
			c.end()
		}
	}
}

// docCode is the int8 codes of document i of a segment opened by range,
// from the blocks block gives.
func (x *Index) docCode(block func(uint32) *block, i uint32) ([]int8, bool) {
	return x.code(block, x.cold.docCodeAt(i))
}

// recCode is docCode of recording r.
func (x *Index) recCode(block func(uint32) *block, r uint32) ([]int8, bool) {
	return x.code(block, x.cold.recCodeAt(r))
}

// code is the codes at off in the cold part.
func (x *Index) code(block func(uint32) *block, off uint64) ([]int8, bool) {
	c, p := x.cold, uint64(x.rot.padded)
	k := uint32(off / c.lay.block)
	b := block(k)
	if b == nil {
		return nil, false
	}
	in := off - uint64(k)*c.lay.block
	return unsafe8(b.b[in : in+p]), true
}

// PrepareLater implements search.LaterPreparer: of the segments opened by
// range, it reads the codes of the page's candidates whose cosine was left
// for later, in one round.
func (x *Index) PrepareLater(ctx context.Context, page []search.Candidate) error {
	return prepareLater(ctx, page)
}

func prepareLater(ctx context.Context, page []search.Candidate) error {
	byIndex := map[*laterCosine][]uint32{}
	refs := map[*Index][]uint32{}
	var pr *probe
	for _, c := range page {
		if l, ok := c.Later.(*laterCosine); ok && l.x.cold != nil {
			if _, done := l.cos[c.Ref]; !done {
				byIndex[l] = append(byIndex[l], c.Ref)
				refs[l.x] = append(refs[l.x], c.Ref)
				pr = l.pr // one query's: one probe
			}
		}
	}
	if len(byIndex) == 0 {
		return nil
	}
	defer busy(refs)()
	cos, err := laterCosines(ctx, pr, refs)
	if err != nil {
		return err
	}
	for l, rs := range byIndex {
		if l.cos == nil {
			l.cos = map[uint32]float32{}
		}
		for _, r := range rs {
			l.cos[r] = cos[l.x][r]
		}
	}
	return nil
}

// planWords asks for the postings words will read: of each query term
// that a part holds, and of its near matches unless the visible documents
// surely hold the term as written (then words takes it as meant). Whether
// they do is known from the hot part: a part whose visible libraries hold
// the term in more documents than they have dead ones holds it in a live
// one.
func (v *view) planWords(terms []string, rules *search.Rules) {
	if !v.lazy() || v.wordStats().n == 0 {
		return // words reads nothing
	}
	for _, term := range terms {
		v.needPostings(term)
		if v.surelyHeld(term) {
			continue
		}
		n := utf8.RuneCountInString(term)
		if edits := rules.MaxEdits(n); edits > 0 {
			for _, m := range v.neighbours(term, edits, n) {
				v.needPostings(m.term)
			}
		}
	}
}

// lazy says whether a part was opened by range.
func (v *view) lazy() bool {
	for _, p := range v.parts {
		if p.x.cold != nil {
			return true
		}
	}
	return false
}

// surelyHeld says whether a live, visible document holds term, as far as
// the hot parts tell.
func (v *view) surelyHeld(term string) bool {
	for _, p := range v.parts {
		id, ok := p.x.termID(term)
		if !ok {
			continue
		}
		var holders, dead float64
		for _, sp := range p.spans {
			a, b := p.x.libPostings(id, p.x.docLib[sp.start])
			holders += float64(b - a)
			dead += float64(sp.end-sp.start) - p.stats[p.x.docLib[sp.start]].n
		}
		if holders > dead {
			return true
		}
	}
	return false
}

// dfCounted is df, without the postings of a part opened by range: its
// visible libraries' count of the term's documents (the hot part's), less
// the dead ones that hold it (from their words and stop-word terms,
// needDeadWords). The two are the same number.
func (v *view) dfCounted(term string) int {
	n := 0
	for i := range v.parts {
		p := &v.parts[i]
		if p.x.cold == nil {
			n += p.df(term)
			continue
		}
		id, ok := p.x.termID(term)
		if !ok {
			continue
		}
		dead := p.deadTerms()
		for _, sp := range p.spans {
			lib := p.x.docLib[sp.start]
			a, b := p.x.libPostings(id, lib)
			n += int(b-a) - int(dead[uint64(id)<<16|uint64(lib)])
		}
	}
	return n
}

// needDeadWords asks for the words and stop-word terms of the dead
// documents of each part opened by range whose count of them (deadTerms)
// is not made yet.
func (v *view) needDeadWords() {
	for i := range v.parts {
		p := &v.parts[i]
		if p.x.cold == nil || p.dead == nil || p.deadCount.Load() != nil {
			continue
		}
		for o := range uint32(len(p.x.docs)) {
			if p.isDead(o) {
				v.needWords(p, o, true)
			}
		}
	}
}

// deadTerms counts, per term and library, the dead documents of the part
// that hold the term; the query holds their words (needDeadWords).
func (p *part) deadTerms() map[uint64]int32 {
	if p.dead == nil {
		return nil
	}
	if m := p.deadCount.Load(); m != nil {
		return *m
	}
	c, x := p.x.cold, p.x
	m := map[uint64]int32{}
	for o := range uint32(len(x.docs)) {
		if !p.isDead(o) {
			continue
		}
		lib := uint64(x.docLib[o])
		for _, tc := range p.words(o) {
			m[uint64(tc.term)<<16|lib]++
		}
		stops, ok := coldArray[uint32](c, p.s.blocks, c.lay.stops, uint64(c.stopOff[o]), uint64(c.stopOff[o+1]-c.stopOff[o]))
		if !ok {
			p.s.missing = true
		}
		for _, t := range stops {
			m[uint64(t)<<16|lib]++
		}
	}
	if !p.s.missing {
		p.deadCount.Store(&m)
	}
	return m
}

// needLater asks for the codes of the documents and recordings the screen
// passed whose blocks the query does not hold.
func (v *view) needLater() {
	for i := range v.parts {
		p := &v.parts[i]
		c := p.x.cold
		if c == nil {
			continue
		}
		padded := uint64(p.x.rot.padded)
		for _, o := range p.s.laterDocs {
			v.needRange(p, c.docCodeAt(o), padded)
		}
		for _, r := range p.s.laterRecs {
			v.needRange(p, c.recCodeAt(r), padded)
		}
	}
}

// finishCosines computes the int8 cosines the screen left for their codes.
func (v *view) finishCosines(pr *probe) {
	for i := range v.parts {
		p := &v.parts[i]
		if p.x.cold == nil {
			continue
		}
		s := p.s
		held := func(k uint32) *block { return s.blocks[k] }
		for _, o := range s.laterDocs {
			code, ok := p.x.docCode(held, o)
			if !ok {
				s.missing = true
				continue
			}
			s.cos[o] = pr.cosine(&p.x.docQ, code, int(o))
			s.exact[o] = s.gen
		}
		for _, r := range s.laterRecs {
			code, ok := p.x.recCode(held, r)
			if !ok {
				s.missing = true
				continue
			}
			s.rec[r] = pr.cosine(&p.x.recQ, code, int(r))
		}
	}
}
