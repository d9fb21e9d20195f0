package localsearch

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
