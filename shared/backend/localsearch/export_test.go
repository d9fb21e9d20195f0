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
	if len(b) < segmentHeader3 || string(b[:16]) != segmentMagic || binary.LittleEndian.Uint32(b[16:]) != 3 {
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
	lay, ok := layout3(uint64(dims), c)
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
