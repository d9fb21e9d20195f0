package localsearch

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/vellum/levenshtein"

	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/search"
)

// analyzer analyses queries, whatever segments they read.
var analyzer = sync.OnceValue(analysis.New)

// levenshteinBuilder makes the automata of near matches (up to 2 edits).
var levenshteinBuilder = sync.OnceValue(func() *levenshtein.LevenshteinAutomatonBuilder {
	b, err := levenshtein.NewLevenshteinAutomatonBuilder(2, false)
	if err != nil {
		panic(fmt.Sprintf("localsearch: levenshtein: %v", err)) // fixed arguments: cannot fail
	}
	return b
})

// segment is an index as one of several: which of its documents are dead
// (replaced or deleted by a later segment), and the number and field lengths
// of its live documents per library, the term statistics a query sums.
type segment struct {
	x       *Index
	dead    []uint64   // a bit per ordinal; nil when none is
	stats   []libStats // per library number
	live    int
	deleted []string // the documents this segment deletes from older ones
	// deadCount counts, per term and library, the dead documents that
	// hold the term, once a query has read their words: of a segment
	// opened by range, a term's live documents are counted from it and
	// the hot part, without the term's postings (view.dfCounted).
	deadCount atomic.Pointer[map[uint64]int32]
}

type libStats struct{ n, title, body float64 }

func newSegment(x *Index, dead []uint64) *segment {
	sg := &segment{x: x, dead: dead, stats: make([]libStats, len(x.libIDs)), live: len(x.docs)}
	for li, id := range x.libIDs {
		sp := x.libs[id]
		sg.stats[li] = libStats{float64(sp.end - sp.start), x.libTitle[li], x.libBody[li]}
	}
	if dead != nil {
		for o := range uint32(len(x.docs)) {
			if sg.isDead(o) {
				sg.kill(o)
			}
		}
	}
	return sg
}

func (sg *segment) isDead(i uint32) bool {
	return sg.dead != nil && sg.dead[i>>6]&(1<<(i&63)) != 0
}

// kill takes ordinal o out of the live documents' statistics.
func (sg *segment) kill(o uint32) {
	ls := &sg.stats[sg.x.docLib[o]]
	ls.n--
	ls.title -= float64(sg.x.titleLen[o])
	ls.body -= float64(sg.x.bodyLen[o])
	sg.live--
}

// ordinal is the ordinal of document id, if the index holds it.
func (x *Index) ordinal(id string) (uint32, bool) {
	i := sort.Search(len(x.byID), func(i int) bool { return x.docs[x.byID[i]].ID >= id })
	if i < len(x.byID) && x.docs[x.byID[i]].ID == id {
		return x.byID[i], true
	}
	return 0, false
}

// without returns the segment with the documents of ids (those it holds and
// are live) dead; sg itself is unchanged. It returns sg when none is. An ID
// given twice (a segment that deletes one of its own documents, or the same
// one twice) kills its document once: a second kill would count it out of
// the live documents' statistics again.
func (sg *segment) without(ids func(yield func(string) bool)) *segment {
	var out *segment
	for id := range ids {
		o, ok := sg.x.ordinal(id)
		if !ok || sg.isDead(o) || out != nil && out.isDead(o) {
			continue
		}
		if out == nil {
			out = &segment{x: sg.x, stats: slices.Clone(sg.stats), live: sg.live, deleted: sg.deleted}
			if sg.dead != nil {
				out.dead = slices.Clone(sg.dead)
			} else {
				out.dead = make([]uint64, (len(sg.x.docs)+63)/64)
			}
		}
		out.dead[o>>6] |= 1 << (o & 63)
		out.kill(o)
	}
	if out == nil {
		return sg
	}
	return out
}

// Segments is an index made of immutable segments, oldest first, as the
// embedded tier reads it from object storage. A document of a segment
// replaces the one of the same ID in older segments, and a segment's
// deletions remove documents of older ones. A search over it ranks exactly
// as one over a single index of its live documents: the same term
// statistics, the same near matches, the same order of ties.
//
// A Segments is immutable and safe for concurrent queries: With makes another.
type Segments struct {
	embedder search.Embedder
	segs     []*segment
}

var _ search.Retriever = (*Segments)(nil)

// NewSegments returns an index of no segment, for queries embedded by e.
func NewSegments(e search.Embedder) *Segments { return &Segments{embedder: e} }

// With returns the segments with x added as the newest: its documents
// replace those of the same IDs in the older segments, and the documents
// deleted are removed from them. Neither s nor x is changed: x may be in
// several Segments at once. x must have been built with the embedder of s.
func (s *Segments) With(x *Index, deleted []string) (*Segments, error) {
	if x.embedderID != s.embedder.ID() || x.dims != s.embedder.Dimensions() {
		return nil, fmt.Errorf("localsearch: a segment of embedder %s (%d dimensions) among segments of %s (%d dimensions)",
			x.embedderID, x.dims, s.embedder.ID(), s.embedder.Dimensions())
	}
	gone := func(yield func(string) bool) {
		for i := range x.docs {
			if !yield(x.docs[i].ID) {
				return
			}
		}
		for _, id := range deleted {
			if !yield(id) {
				return
			}
		}
	}
	out := &Segments{embedder: s.embedder, segs: make([]*segment, 0, len(s.segs)+1)}
	for _, sg := range s.segs {
		out.segs = append(out.segs, sg.without(gone))
	}
	// A segment is kept when all its documents are dead, or it has none: its
	// deletions still apply to the older ones, until a merge takes it in.
	out.segs = append(out.segs, &segment{x: x, stats: x.whole.stats, live: x.whole.live, deleted: slices.Clone(deleted)})
	return out, nil
}

// Replace returns the segments with [from, to) replaced by x, which deletes
// deleted: what Merge(from, to) returned. Neither s nor x is changed.
func (s *Segments) Replace(from, to int, x *Index, deleted []string) (*Segments, error) {
	if from < 0 || to > len(s.segs) || from > to {
		return nil, fmt.Errorf("localsearch: replace segments %d to %d of %d", from, to, len(s.segs))
	}
	if x.embedderID != s.embedder.ID() || x.dims != s.embedder.Dimensions() {
		return nil, fmt.Errorf("localsearch: a segment of embedder %s (%d dimensions) among segments of %s (%d dimensions)",
			x.embedderID, x.dims, s.embedder.ID(), s.embedder.Dimensions())
	}
	segs := slices.Concat(s.segs[:from], []*segment{{x: x, stats: x.whole.stats, live: x.whole.live, deleted: slices.Clone(deleted)}}, s.segs[to:])
	return &Segments{embedder: s.embedder, segs: segs}, nil
}

// Len is the number of live documents.
func (s *Segments) Len() int {
	n := 0
	for _, sg := range s.segs {
		n += sg.live
	}
	return n
}

// Count is the number of segments.
func (s *Segments) Count() int { return len(s.segs) }

// Embedder is the embedder of the queries.
func (s *Segments) Embedder() search.Embedder { return s.embedder }

// Candidates implements search.Retriever.
func (s *Segments) Candidates(ctx context.Context, q *search.Query, add func(search.Candidate)) error {
	return candidates(ctx, s.segs, s.embedder.Dimensions(), q, add)
}

// PrepareLater implements search.LaterPreparer.
func (s *Segments) PrepareLater(ctx context.Context, page []search.Candidate) error {
	return prepareLater(ctx, page)
}

// MostActive implements search.Retriever.
func (s *Segments) MostActive(ctx context.Context, q *search.Query, f search.Filter, offset, limit int) ([]search.Candidate, int, error) {
	return mostActive(ctx, s.segs, s.embedder.Dimensions(), q, f, offset, limit)
}
