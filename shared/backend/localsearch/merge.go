package localsearch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/doclib/doclib/shared/search"
)

// Merge returns one index of the live documents of segments [from, to) of s
// (oldest first, as Count counts them), and the documents it must delete
// from the older segments: what a merge writes in their place. The merged
// segment deletes what the segments it replaces deleted; with no older
// segment (from 0), nothing. A document of theirs that is dead needs no
// deletion: what killed it (a deletion in the run, or a later segment) kills
// the older segments' copies too.
//
// It reads the segments' built structures, not their text: postings,
// lengths, vectors and vocabulary are copied and renumbered, and the index
// is the one FromDocs would build from the same documents.
func (s *Segments) Merge(ctx context.Context, from, to int) (*Index, []string, error) {
	if from < 0 || to > len(s.segs) || from > to {
		return nil, nil, fmt.Errorf("localsearch: merge segments %d to %d of %d", from, to, len(s.segs))
	}
	return mergeRun(ctx, s.segs[from:to], s.embedder, from > 0)
}

// MergeTail is Merge of every segment of s, when s holds the newest
// segments of an index and older ones exist (older): the run a merge policy
// picked, read without the segments before it. Older segments cannot change
// which documents of the run are live, so the merge is the same.
func (s *Segments) MergeTail(ctx context.Context, older bool) (*Index, []string, error) {
	return mergeRun(ctx, s.segs, s.embedder, older)
}

func mergeRun(ctx context.Context, segs []*segment, e search.Embedder, older bool) (*Index, []string, error) {
	x, err := merge(ctx, segs, e)
	if err != nil || !older {
		return x, nil, err
	}
	var deleted []string
	for _, sg := range segs {
		deleted = append(deleted, sg.deleted...)
	}
	slices.Sort(deleted)
	deleted = slices.Compact(deleted)
	// What the merged segment holds replaces the older segments' anyway.
	deleted = slices.DeleteFunc(deleted, func(id string) bool { _, ok := x.ordinal(id); return ok })
	return x, deleted, nil
}

func merge(ctx context.Context, segs []*segment, e search.Embedder) (*Index, error) {
	for _, sg := range segs {
		if sg.x.cold != nil {
			return nil, errors.New("localsearch: a merge reads segments whole, not opened by range")
		}
	}
	x := &Index{embedder: e, embedderID: e.ID(), dims: e.Dimensions(), libs: map[string]span{}}
	dims := x.dims

	// The live documents, numbered library by library, then by ID.
	type src struct {
		sg *segment
		o  uint32
	}
	var docs []src
	for _, sg := range segs {
		for o := range uint32(len(sg.x.docs)) {
			if !sg.isDead(o) {
				docs = append(docs, src{sg, o})
			}
		}
	}
	slices.SortFunc(docs, func(a, b src) int {
		da, db := &a.sg.x.docs[a.o], &b.sg.x.docs[b.o]
		if c := strings.Compare(da.LibraryID, db.LibraryID); c != 0 {
			return c
		}
		return strings.Compare(da.ID, db.ID)
	})
	n := len(docs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.docs = make([]search.Doc, n)
	x.docLib = make([]uint16, n)
	x.titleLen = make([]uint16, n)
	x.bodyLen = make([]uint16, n)
	x.rot = rotationFor(dims)
	padded := x.rot.padded
	x.docQ = newQuantized(n, padded)
	labels := search.NewLabelTable()
	// newOrd maps a segment's ordinals to the merged ones (MaxUint32: dead).
	newOrd := map[*segment][]uint32{}
	for _, sg := range segs {
		m := make([]uint32, len(sg.x.docs))
		for i := range m {
			m[i] = math.MaxUint32
		}
		newOrd[sg] = m
	}
	for i, d := range docs {
		doc := &d.sg.x.docs[d.o]
		if i == 0 || doc.LibraryID != x.libIDs[len(x.libIDs)-1] {
			if len(x.libIDs) == math.MaxUint16 {
				return nil, fmt.Errorf("localsearch: more than %d libraries; at most %d", math.MaxUint16, math.MaxUint16)
			}
			if i > 0 {
				prev := x.libIDs[len(x.libIDs)-1]
				x.libs[prev] = span{x.libs[prev].start, uint32(i)}
			}
			x.libIDs = append(x.libIDs, doc.LibraryID)
			x.libs[doc.LibraryID] = span{uint32(i), uint32(i)}
		}
		x.docLib[i] = uint16(len(x.libIDs) - 1)
		x.docs[i] = *doc
		labels.Intern(&x.docs[i])
		x.titleLen[i], x.bodyLen[i] = d.sg.x.titleLen[d.o], d.sg.x.bodyLen[d.o]
		x.docQ.copyFrom(i, &d.sg.x.docQ, int(d.o), padded)
		newOrd[d.sg][d.o] = uint32(i)
	}
	if len(x.libIDs) > 0 {
		last := x.libIDs[len(x.libIDs)-1]
		x.libs[last] = span{x.libs[last].start, uint32(n)}
	}
	x.libTitle = make([]float64, len(x.libIDs))
	x.libBody = make([]float64, len(x.libIDs))
	for i := range n {
		x.libTitle[x.docLib[i]] += float64(x.titleLen[i])
		x.libBody[x.docLib[i]] += float64(x.bodyLen[i])
	}

	// Recordings: each distinct one once, with the vector of the first
	// document behind it in the merged order (as build keeps), numbered by ID.
	type rec struct {
		id string
		sx *Index
		r  uint32
	}
	recIdx := map[string]int{}
	var recs []rec
	perDoc := make([][]int, n)
	for i, d := range docs {
		sx := d.sg.x
		for _, r := range sx.docRecs[sx.docRecOff[d.o]:sx.docRecOff[d.o+1]] {
			id := sx.recIDs[r]
			k, ok := recIdx[id]
			if !ok {
				k = len(recs)
				recIdx[id] = k
				recs = append(recs, rec{id, sx, r})
			}
			perDoc[i] = append(perDoc[i], k)
		}
	}
	byID := make([]int, len(recs))
	for k := range byID {
		byID[k] = k
	}
	slices.SortFunc(byID, func(a, b int) int { return strings.Compare(recs[a].id, recs[b].id) })
	rank := make([]uint32, len(recs))
	x.recIDs = make([]string, len(recs))
	x.recQ = newQuantized(len(recs), padded)
	for r, k := range byID {
		rank[k] = uint32(r)
		x.recIDs[r] = recs[k].id
		x.recQ.copyFrom(r, &recs[k].sx.recQ, int(recs[k].r), padded)
	}
	x.setRecordings(func(i int) []uint32 {
		rs := make([]uint32, len(perDoc[i]))
		for j, k := range perDoc[i] {
			rs[j] = rank[k]
		}
		return rs
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// The vocabulary: the terms that a live document holds, sorted.
	var vocab []string
	for _, sg := range segs {
		for id, t := range sg.x.termName {
			for _, p := range sg.x.post[sg.x.postOff[id]:sg.x.postOff[id+1]] {
				if !sg.isDead(p.doc) {
					vocab = append(vocab, t)
					break
				}
			}
		}
	}
	slices.Sort(vocab)
	vocab = slices.Compact(vocab)
	// Postings, term by term, each list in the merged order.
	x.postOff = make([]uint32, 1, len(vocab)+1)
	for id, t := range vocab {
		if id%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		start := len(x.post)
		for _, sg := range segs {
			old, ok := sg.x.termID(t)
			if !ok {
				continue
			}
			m := newOrd[sg]
			for _, p := range sg.x.post[sg.x.postOff[old]:sg.x.postOff[old+1]] {
				if o := m[p.doc]; o != math.MaxUint32 {
					x.post = append(x.post, posting{doc: o, title: p.title, body: p.body})
				}
			}
		}
		l := x.post[start:]
		slices.SortFunc(l, func(a, b posting) int { return int(a.doc) - int(b.doc) })
		x.postOff = append(x.postOff, uint32(len(x.post)))
	}
	// The forward index, with the terms renumbered.
	x.fwdOff = make([]uint32, 1, n+1)
	for _, d := range docs {
		sx := d.sg.x
		for _, tc := range sx.fwd[sx.fwdOff[d.o]:sx.fwdOff[d.o+1]] {
			id, _ := slices.BinarySearch(vocab, sx.termName[tc.term])
			x.fwd = append(x.fwd, termCount{term: uint32(id), tf: tc.tf})
		}
		x.fwdOff = append(x.fwdOff, uint32(len(x.fwd)))
	}
	x.setTermLibs()
	if err := x.setVocabulary(vocab); err != nil {
		return nil, err
	}
	x.setOrders()
	return x, nil
}
