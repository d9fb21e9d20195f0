package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/doclib/doclib/shared/data/dataset"
)

// BigOptions shape the big-answers data set.
type BigOptions struct {
	// Documents in the big library; 0 means 160.
	Documents int
	// ContentBytes is about how large each document's content is as compact
	// JSON; 0 means 290,000, just under the format's 300,000-byte limit.
	ContentBytes int
	// Links is how many documents each document links to ("often next");
	// 0 means 31, which brings the graph to 4,960 edges, just under its cap.
	Links int
}

// BigLibrary is the big-answers set's library: in the demo's Acme
// workspace, seen by the demo's full-scope keys.
const BigLibrary = "lib_big"

// BigAnswers is the demo data set with one more library, BigLibrary, made for
// answers of every size the spec allows (issue 24): documents whose content
// is near the format's limit, the longest titles and the most tags and
// applications the format allows, drawn from small shared pools (a library's
// label lists are bounded), and a graph so dense that a traversal of depth
// 3 reaches every document. With the defaults a page of 100 documents is
// about 30 MB of JSON, a depth-3 traversal about 55 MB and the graph about
// 7 MB: each over what a buffered Lambda answer may carry (6 MB). The text
// comes from the demo corpus's sentences, so it compresses as prose does.
// The same options give the same data set.
func BigAnswers(opt BigOptions) *dataset.File {
	n := opt.Documents
	if n <= 0 {
		n = 160
	}
	size := opt.ContentBytes
	if size <= 0 {
		size = 290_000
	}
	links := opt.Links
	if links <= 0 {
		links = 31
	}
	links = min(links, n-1)
	f := Generate(Options{})
	rng := rand.New(rand.NewPCG(24, pcgStream))
	var sentences []string
	for _, l := range libSpecs {
		for _, p := range l.Procs {
			sentences = append(sentences, p.Summary)
			sentences = append(sentences, p.Steps...)
			sentences = append(sentences, p.Fixes...)
		}
	}
	pick := func() string { return sentences[rng.IntN(len(sentences))] }
	// Titles of about the format's 500 characters; labels of about its 100.
	long := func(prefix string, limit int) string {
		var b strings.Builder
		b.WriteString(prefix)
		for b.Len() < limit {
			b.WriteString(" ")
			b.WriteString(pick())
		}
		return strings.TrimSpace(b.String()[:limit]) // the corpus is ASCII
	}
	pool := func(prefix string, k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = long(fmt.Sprintf("%s %02d", prefix, i), 100)
		}
		return out
	}
	categories, tags, apps := pool("category", 6), pool("tag", 60), pool("application", 60)
	created := epoch + 60*day
	f.Libraries = append(f.Libraries, dataset.Library{ID: BigLibrary, WorkspaceID: "ws_acme", Name: "Big answers",
		Slug: "big-answers", Description: "Documents near every size limit, linked densely: answers of any size.",
		CreatedAt: stamp(created), UpdatedAt: stamp(created), Schema: schemas[2]})
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("doc_big_%03d", i+1)
		// Content: four sections, filled in turn until about size bytes.
		summary, before, steps, fixes := []string{}, []string{}, []string{}, []string{}
		total := 0
		for total < size-600 {
			s := pick()
			total += len(s) + 3
			switch rng.IntN(4) {
			case 0:
				summary = append(summary, s)
			case 1:
				before = append(before, s)
			case 2:
				steps = append(steps, s)
			default:
				fixes = append(fixes, s)
			}
		}
		seen := created + int64(i)*hour
		f.Documents = append(f.Documents, dataset.Document{ID: ids[i], LibraryID: BigLibrary,
			Slug: fmt.Sprintf("big-%03d", i+1), Title: long(fmt.Sprintf("%03d", i+1), 500),
			Category: categories[i%len(categories)], Tags: sample(rng, tags, 50), Applications: sample(rng, apps, 50),
			DeviceCount: 1 + i%7, FirstSeen: stamp(seen), LastSeen: stamp(seen + day), CreatedAt: stamp(seen), UpdatedAt: stamp(seen + 2*day),
			Content: map[string]any{"summary": strings.Join(summary, " "), "prerequisites": toAny(before),
				"steps": toAny(steps), "troubleshooting": toAny(fixes)}})
	}
	// Each document links to the next links documents round the ring: with
	// the defaults every document is within three hops of every other.
	for i := range n {
		for k := 1; k <= links; k++ {
			j := (i + k) % n
			f.Edges = append(f.Edges, dataset.Edge{SourceDocumentID: ids[i], TargetDocumentID: ids[j],
				Label: "often next", EdgeType: "data", RecordingCount: 1 + (i+k)%9, Support: 1 + (i*k)%11})
		}
	}
	return f
}

// sample draws k distinct values of pool in pool's order.
func sample(rng *rand.Rand, pool []string, k int) []string {
	idx := rng.Perm(len(pool))[:min(k, len(pool))]
	keep := make([]bool, len(pool))
	for _, i := range idx {
		keep[i] = true
	}
	out := make([]string, 0, k)
	for i, v := range pool {
		if keep[i] {
			out = append(out, v)
		}
	}
	return out
}
