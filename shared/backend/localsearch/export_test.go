package localsearch

import (
	"encoding/binary"
	"hash/crc32"
)

// Semantic returns the cosine of query vector q with every document of x, in
// the index's order of IDs (ByID), as a query over x holds them with the
// semantic threshold threshold: the int8 cosine of the documents within the
// screen, the Hamming estimate of the others; exact says which.
func (x *Index) Semantic(q []float32, threshold float64) (ids []string, cos []float32, exact []bool) {
	pr := rotationFor(x.dims).probe(q)
	for i := range x.docs {
		c, ok := pr.screened(&x.docQ, i, float32(threshold))
		ids = append(ids, x.docs[i].ID)
		cos = append(cos, c)
		exact = append(exact, ok)
	}
	return ids, cos, exact
}

// StopOnly lists, per document ID, the terms it holds only as a stop word,
// as a segment file stores them.
func (x *Index) StopOnly() map[string][]string {
	off, stops := x.stopOnly()
	out := map[string][]string{}
	for d := range x.docs {
		for _, t := range stops[off[d]:off[d+1]] {
			out[x.docs[d].ID] = append(out[x.docs[d].ID], x.termName[t])
		}
	}
	return out
}

// FixSegmentBlocks writes, in the hot part of b (a segment file of format
// 3), the CRCs of its cold part's blocks as they are, as a crafted file
// that passes them would, and returns the hot part's size; 0 when b is not
// such a file.
func FixSegmentBlocks(b []byte) int64 {
	if len(b) < segmentHeader3 || string(b[:16]) != segmentMagic || binary.LittleEndian.Uint32(b[16:]) < 3 {
		return 0
	}
	dims := binary.LittleEndian.Uint32(b[20:])
	if dims == 0 || dims > maxSegmentDims {
		return 0
	}
	var c counts
	for i, v := range c.list() {
		*v = binary.LittleEndian.Uint64(b[24+8*i:])
	}
	lay, ok := layout3(uint64(dims), c, binary.LittleEndian.Uint32(b[16:]) >= 4)
	if !ok || lay.hot+lay.cold+4 != uint64(len(b)) {
		return 0
	}
	sums := b[lay.hot-4*lay.blocks : lay.hot]
	for k := range lay.blocks {
		block := b[lay.hot+k*lay.block : lay.hot+min((k+1)*lay.block, lay.cold)]
		binary.LittleEndian.PutUint32(sums[4*k:], crc32.Checksum(block, castagnoli))
	}
	return int64(lay.hot)
}

// Section is a part of a segment file: its name and bytes [From, To).
type Section struct {
	Name     string
	From, To int64
}

// SegmentSections lists the sections of b's first bytes, a segment file of
// format 3 (at least its hot part): the hot part's, then the cold part's
// (postings, words, stops, codes of the documents and of the recordings),
// where they lie in the file. The strings section is cut by what they are.
func SegmentSections(b []byte) []Section {
	if len(b) < segmentHeader3 || string(b[:16]) != segmentMagic || binary.LittleEndian.Uint32(b[16:]) < 3 {
		return nil
	}
	format := binary.LittleEndian.Uint32(b[16:])
	if format > SegmentFormat {
		return nil
	}
	dims := binary.LittleEndian.Uint32(b[20:])
	var c counts
	for i, v := range c.list() {
		*v = binary.LittleEndian.Uint64(b[24+8*i:])
	}
	lay, ok := layout3(uint64(dims), c, format >= 4)
	if !ok || uint64(len(b)) < lay.hot {
		return nil
	}
	p := uint64(paddedDims(int(dims)))
	var out []Section
	at := int64(0)
	add := func(name string, n uint64) {
		out = append(out, Section{name, at, at + int64(n)})
		at += int64(n)
	}
	add("header", segmentHeader3)
	add("embedder", pad8(c.embBytes))
	// The strings, by what they are: their lengths follow them.
	lensAt := uint64(at) + pad8(c.strBytes)
	nLens := 3*c.docs + c.tags + c.apps + c.recs + c.terms + c.dels
	kinds := []struct {
		name string
		n    uint64
	}{{"strings: document IDs, libraries, categories", 3 * c.docs}, {"strings: tags", c.tags}, {"strings: applications", c.apps},
		{"strings: recording IDs", c.recs}, {"strings: terms", c.terms}, {"strings: deleted IDs", c.dels}}
	i := uint64(0)
	used := uint64(0)
	for _, k := range kinds {
		var n uint64
		for range k.n {
			n += uint64(binary.LittleEndian.Uint32(b[lensAt+4*i:]))
			i++
		}
		add(k.name, n)
		used += n
	}
	add("strings: padding", pad8(c.strBytes)-used)
	add("string lengths", pad8(4*nLens))
	add("tag, application and recording counts", 3*pad8(4*c.docs))
	add("last seen", 8*c.docs)
	add("title and content lengths", 2*pad8(2*c.docs))
	add("documents' scales and sign dots", 2*pad8(4*c.docs))
	add("documents' sign bits", c.docs*p/8)
	add("recordings' scales and sign dots", 2*pad8(4*c.recs))
	add("recordings' sign bits", c.recs*p/8)
	add("links", pad8(4*(c.docs+1))+pad8(4*c.links))
	add("postings' offsets", pad8(4*(c.terms+1)))
	add("term libraries", pad8(4*(c.terms+1))+8*c.termLibs)
	add("words' and stops' offsets", 2*pad8(4*(c.docs+1)))
	add("orders", 2*pad8(4*c.docs))
	if format >= 4 {
		add("slots", pad8(4*c.docs)+pad8(4*c.recs))
	}
	add("block CRCs", pad8(4*lay.blocks))
	if uint64(at) != lay.hot {
		panic("SegmentSections: the hot sections do not add up")
	}
	h := int64(lay.hot)
	out = append(out,
		Section{"cold: postings", h + int64(lay.post), h + int64(lay.fwd)},
		Section{"cold: words", h + int64(lay.fwd), h + int64(lay.stops)},
		Section{"cold: stops", h + int64(lay.stops), h + int64(lay.docs)},
		Section{"cold: document codes", h + int64(lay.docs), h + int64(lay.recs)},
		Section{"cold: recording codes", h + int64(lay.recs), h + int64(lay.cold)})
	return out
}

// SetClusterSize sets how many vectors a cluster of codes holds (order.go),
// until the function it returns is called.
func SetClusterSize(n int) func() {
	old := clusterSize
	clusterSize = n
	return func() { clusterSize = old }
}

// SetParallelFrom sets the work above which a query's steps run on every
// core, and returns what restores it. Not for tests that run in parallel.
func SetParallelFrom(n int) (restore func()) {
	old := parallelFrom
	parallelFrom = n
	return func() { parallelFrom = old }
}
