// Package demo builds doclib's demo data set and larger synthetic data sets for
// benchmarks. Everything is generated from a seed, so the same options always give
// the same data set, byte for byte once encoded; demo.json is the demo set
// (Options{}) written out by cmd/doclib-datagen. The text it draws from (titles,
// steps, questions, names) is corpus.json; this file is only the generator.
package demo

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/data/dataset"
)

// DemoDocuments is the size of the demo data set, used when Options.Documents is 0.
const DemoDocuments = 200

// MinDocuments is the smallest data set Generate builds: one document per library.
const MinDocuments = 7

// pcgStream is the second PCG word; the seed is the first. Changing it changes
// every generated data set, demo.json included.
const pcgStream = 0x646f636c6962 // "doclib"

// Options says what to generate.
type Options struct {
	// Documents is the number of documents; 0 means the demo size (200), and
	// values below MinDocuments are raised to it. Above 200 the documents are
	// spread as for benchmarks, with lib_it taking about 40%.
	Documents int
	// Seed picks the random variation; 0 means 1, the demo's seed, just as
	// Documents 0 means the demo's size, so Options{} is the demo set.
	Seed uint64
}

// Generate builds a data set that passes dataset.Validate. The same options give
// the same data set. Documents built from the same procedure share their content
// slices, so treat the result as read-only.
func Generate(opt Options) *dataset.File {
	n := opt.Documents
	if n == 0 {
		n = DemoDocuments
	}
	n = max(n, MinDocuments)
	seed := opt.Seed
	if seed == 0 {
		seed = 1
	}
	g := &gen{
		rng:  rand.New(rand.NewPCG(seed, pcgStream)),
		file: &dataset.File{},
	}
	g.fixed()
	g.documents(n)
	g.edges(n * 5 / 2)
	g.recordings()
	return g.file
}

// gen holds the state of one generation run. Every random draw goes through rng
// in a fixed order, and nothing iterates a map, so runs are reproducible.
type gen struct {
	rng  *rand.Rand
	file *dataset.File

	// Per document, in file order.
	meta []docMeta
	// Per library (index into libSpecs): global document indices, in order, and
	// the same split per procedure.
	libDocs  [][]int
	procDocs [][][]int
}

type docMeta struct {
	lib, proc, variant  int
	firstSeen, lastSeen int64 // Unix seconds, for recordings
	// core marks a document of a library's busy core (large sets only): recorded
	// more than the others and linked densely to each other.
	core bool
}

// Time window of the generated activity: all of it in 2025 and 2026.
var (
	epoch    = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC).Unix()
	firstDoc = time.Date(2025, 1, 20, 8, 0, 0, 0, time.UTC).Unix()
	lastDoc  = time.Date(2026, 9, 30, 18, 0, 0, 0, time.UTC).Unix()
	horizon  = time.Date(2026, 11, 15, 18, 0, 0, 0, time.UTC).Unix()
)

const (
	hour = int64(3600)
	day  = 24 * hour
)

func stamp(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// between returns a uniformly drawn second in [lo, hi].
func (g *gen) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + g.rng.Int64N(hi-lo+1)
}

// fixed adds the workspaces, devices, keys and libraries, which are the same
// whatever the size.
func (g *gen) fixed() {
	f := g.file
	f.Workspaces = append(f.Workspaces, workspaceSpecs...)
	f.Devices = append(f.Devices, deviceSpecs...)
	for _, k := range keySpecs {
		f.APIKeys = append(f.APIKeys, dataset.APIKey{ID: k.ID, WorkspaceID: k.WorkspaceID, DeviceID: k.DeviceID,
			Secret: k.Secret, Libraries: append([]string(nil), k.Libraries...), RecordingDetails: k.RecordingDetails,
			ExpiresAt: k.ExpiresAt})
	}
	for i, l := range libSpecs {
		created := epoch + int64(i)*day
		f.Libraries = append(f.Libraries, dataset.Library{ID: l.ID, WorkspaceID: l.Workspace, Name: l.Name,
			Slug: l.Slug, PreviousSlugs: append([]string(nil), l.PreviousSlugs...), Description: l.Description,
			CreatedAt: stamp(created), UpdatedAt: stamp(created), Schema: schemas[l.Version]})
	}
}

var schemas = map[int]dataset.Schema{
	1: {Version: 1, Sections: []dataset.Section{
		{Key: "summary", Title: "Summary", Type: "text"},
		{Key: "steps", Title: "Steps", Type: "steps"},
	}},
	2: {Version: 2, Sections: []dataset.Section{
		{Key: "summary", Title: "Summary", Type: "text"},
		{Key: "prerequisites", Title: "Before you start", Type: "list"},
		{Key: "steps", Title: "Steps", Type: "steps"},
		{Key: "troubleshooting", Title: "Troubleshooting", Type: "list"},
	}},
}

// split divides n documents between the libraries: exactly the demo numbers for
// the demo size, the demo proportions below it and the benchmark proportions above
// it, at least one document per library (n >= MinDocuments).
func split(n int) []int {
	weights := make([]int, len(libSpecs))
	total := 0
	for i, l := range libSpecs {
		weights[i] = l.DemoDocuments
		if n > DemoDocuments {
			weights[i] = l.LargeWeight
		}
		total += weights[i]
	}
	counts := make([]int, len(weights))
	rems := make([]int, len(weights))
	used := 0
	for i, w := range weights {
		counts[i] = n * w / total
		rems[i] = n * w % total
		used += counts[i]
	}
	// Largest remainder; ties go to the earlier library.
	for used < n {
		best := 0
		for i := range rems {
			if rems[i] > rems[best] {
				best = i
			}
		}
		counts[best]++
		rems[best] = -1
		used++
	}
	// Lift empty libraries by taking from the largest.
	for i := range counts {
		for counts[i] == 0 {
			big := 0
			for j := range counts {
				if counts[j] > counts[big] {
					big = j
				}
			}
			counts[big]--
			counts[i]++
		}
	}
	return counts
}

func width(n int) int { return max(3, len(strconv.Itoa(n))) }

// documents builds n documents. Within a library, document k is a procedure
// (k mod the number of procedures) in one of its variants; once the variants are
// used up, the library's sites and then a running number keep titles distinct.
func (g *gen) documents(n int) {
	counts := split(n)
	g.libDocs = make([][]int, len(libSpecs))
	g.procDocs = make([][][]int, len(libSpecs))
	g.file.Documents = make([]dataset.Document, 0, n)
	g.meta = make([]docMeta, 0, n)
	for li := range libSpecs {
		l := &libSpecs[li]
		short := strings.TrimPrefix(l.ID, "lib_")
		w := width(counts[li])
		slugs := make(map[string]bool, counts[li])
		g.procDocs[li] = make([][]int, len(l.Procs))
		var prevUpdated, libUpdated int64
		for k := range counts[li] {
			pi := k % len(l.Procs)
			p := &l.Procs[pi]
			j := k / len(l.Procs)
			vi := j % len(p.Variants)
			v := &p.Variants[vi]
			r := j / len(p.Variants)

			title, summary := p.Title, p.Summary
			if v.Label != "" {
				title += " — " + v.Label
			}
			if v.Note != "" {
				summary += " " + v.Note
			}
			if r > 0 {
				site := l.Sites[(r-1)%len(l.Sites)]
				title += " (" + site + ")"
				summary += " " + fmt.Sprintf(l.SiteSentence, site)
				if round := (r - 1) / len(l.Sites); round > 0 {
					title += " #" + strconv.Itoa(round+1)
				}
			}
			slug := slugify(title)
			for s, i := slug, 2; slugs[slug]; i++ {
				slug = s + "-" + strconv.Itoa(i)
			}
			slugs[slug] = true

			created := g.between(firstDoc, lastDoc)
			updated := min(created+g.rng.Int64N(120*day), horizon)
			if k%15 == 14 {
				// A tie on updatedAt with the previous document, so that ordering by
				// activity has to fall back on the ID.
				updated = prevUpdated
				created = min(created, updated)
			}
			prevUpdated = updated
			libUpdated = max(libUpdated, updated)
			firstSeen := max(created-g.rng.Int64N(21*day), epoch)
			lastSeen := min(g.between(firstSeen, updated+10*day), horizon)

			tags := appendUnique(append(make([]string, 0, 4), p.Tags...), v.Tag, 4)
			apps := appendUnique(append(make([]string, 0, 3), p.Apps...), v.App, 3)
			content := map[string]any{"summary": summary, "steps": p.stepsAny[vi]}
			if l.Version == 2 {
				content["prerequisites"] = p.beforeAny
				content["troubleshooting"] = p.fixesAny
			}
			idx := len(g.file.Documents)
			g.file.Documents = append(g.file.Documents, dataset.Document{
				ID: fmt.Sprintf("doc_%s_%0*d", short, w, k+1), LibraryID: l.ID, Slug: slug, Title: title,
				Category: p.Category, Tags: tags, Applications: apps, DeviceCount: 1 + g.rng.IntN(12),
				FirstSeen: stamp(firstSeen), LastSeen: stamp(lastSeen), CreatedAt: stamp(created),
				UpdatedAt: stamp(updated), Content: content,
			})
			g.meta = append(g.meta, docMeta{lib: li, proc: pi, variant: vi, firstSeen: firstSeen, lastSeen: lastSeen})
			g.libDocs[li] = append(g.libDocs[li], idx)
			g.procDocs[li][pi] = append(g.procDocs[li][pi], idx)
		}
		if libUpdated > 0 {
			g.file.Libraries[li].UpdatedAt = stamp(libUpdated)
		}
	}
}

// appendUnique appends s unless it is empty, present, or the list is full.
func appendUnique(list []string, s string, limit int) []string {
	if s == "" || len(list) >= limit {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// slugify turns a title into lowercase words joined by single hyphens.
func slugify(title string) string {
	var b strings.Builder
	b.Grow(len(title))
	hyphen := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		case r == '\'' || r == '’':
			// "user's" -> "users"
		case r == '&':
			if b.Len() > 0 {
				b.WriteString("-and")
			}
			hyphen = true
		default:
			hyphen = true
		}
	}
	return b.String()
}

// Edge labels and types.
const (
	oftenNext     = "often next"
	alternativeTo = "alternative to"
	edgeData      = "data"
	edgeSemantic  = "semantic"
)

type edgeKey struct {
	s, t  int32
	label string
}

type edgeGen struct {
	*gen
	seen          map[edgeKey]struct{}
	data, semantc int // running counts, which decide the support pattern
}

// add appends an edge unless it would be a self-loop or a duplicate. Every sixth
// data edge has support 1 or 2 (a low-confidence link); semantic edges take
// support 0, 1-2 or 3+ in turn, so that low support on a semantic edge, which is
// not low confidence, is present too.
func (e *edgeGen) add(s, t int, label, typ string, strong bool) bool {
	if s == t {
		return false
	}
	k := edgeKey{int32(s), int32(t), label}
	if _, dup := e.seen[k]; dup {
		return false
	}
	e.seen[k] = struct{}{}
	var support int
	if typ == edgeData {
		switch {
		case e.data%6 == 5:
			support = 1 + e.rng.IntN(2)
		case strong:
			support = 3 + e.rng.IntN(38)
		default:
			support = 3 + e.rng.IntN(12)
		}
		e.data++
	} else {
		switch e.semantc % 3 {
		case 1:
			support = 1 + e.rng.IntN(2)
		case 2:
			support = 3 + e.rng.IntN(6)
		}
		e.semantc++
	}
	docs := e.file.Documents
	e.file.Edges = append(e.file.Edges, dataset.Edge{SourceDocumentID: docs[s].ID, TargetDocumentID: docs[t].ID,
		Label: label, EdgeType: typ, RecordingCount: support + e.rng.IntN(support/3+2), Support: support})
	return true
}

// edges builds about total edges: most inside libraries (chains of "often next",
// procedure flows, alternatives between variants, then a random mix), and a share
// across the libraries of ws_acme.
func (g *gen) edges(total int) {
	e := &edgeGen{gen: g, seen: make(map[edgeKey]struct{}, total)}
	g.file.Edges = make([]dataset.Edge, 0, total)
	cross := min(max(20, total/20), total/4)
	counts := make([]int, len(libSpecs))
	for i := range counts {
		counts[i] = len(g.libDocs[i])
	}
	budgets := apportion(total-cross, counts)
	for li := range libSpecs {
		if len(g.file.Documents) > DemoDocuments {
			budgets[li] -= e.core(li, budgets[li]/3)
		}
		e.library(li, budgets[li])
	}
	e.crossLibrary(cross)
}

// apportion splits total in proportion to weights (largest remainder).
func apportion(total int, weights []int) []int {
	sum := 0
	for _, w := range weights {
		sum += w
	}
	out := make([]int, len(weights))
	if sum == 0 {
		return out
	}
	rems := make([]int, len(weights))
	used := 0
	for i, w := range weights {
		out[i] = total * w / sum
		rems[i] = total * w % sum
		used += out[i]
	}
	for used < total {
		best := 0
		for i := range rems {
			if rems[i] > rems[best] {
				best = i
			}
		}
		out[best]++
		rems[best] = -1
		used++
	}
	return out
}

// coreShare is the part of a large library that forms its busy core: the
// procedures people run most, which lead to each other. At 100,000 documents the
// core of lib_it is 2,000 documents, exactly the graph's document cap, with about
// 6,000 edges between them, more than its edge cap.
const coreShare = 20

// core picks a library's busy core (never its first four documents, whose
// recordings are fixed cases) and links it with up to three edges per member,
// within budget. It returns the edges added.
func (e *edgeGen) core(li, budget int) int {
	docs := e.libDocs[li]
	k := len(docs) / coreShare
	if k < 2 || len(docs) <= 4 {
		return 0
	}
	perm := e.rng.Perm(len(docs) - 4)
	core := make([]int, k)
	for i := range core {
		core[i] = docs[4+perm[i]]
		e.meta[core[i]].core = true
	}
	target := min(budget, 3*k)
	added := 0
	for attempts := 0; added < target && attempts < 20*target; attempts++ {
		label, typ := mix(e.rng.IntN(10))
		if e.add(core[e.rng.IntN(k)], core[e.rng.IntN(k)], label, typ, true) {
			added++
		}
	}
	return added
}

func (e *edgeGen) library(li, budget int) {
	docs := e.libDocs[li]
	n := len(docs)
	if n < 2 || budget == 0 {
		return
	}
	l := &libSpecs[li]
	added := 0
	add := func(s, t int, label, typ string, strong bool) {
		if e.add(s, t, label, typ, strong) {
			added++
		}
	}

	// Chains of 4 to 6 documents in a shuffled order, each step "often next" with
	// good support; the library's first document heads the first chain, so a
	// depth-3 walk from it reaches three more documents.
	order := e.rng.Perm(n)
	for i, o := range order {
		if o == 0 {
			order[0], order[i] = order[i], order[0]
			break
		}
	}
	limit := budget * 40 / 100
	for start, first := 0, true; start < n-1 && added < limit; first = false {
		length := 4 + e.rng.IntN(3)
		if first {
			length = 4
		}
		end := min(start+length, n)
		for i := start; i+1 < end && added < limit; i++ {
			add(docs[order[i]], docs[order[i+1]], oftenNext, edgeData, true)
		}
		start = end
	}

	// Procedure flows: what people usually do next, by procedure.
	limit = added + budget*25/100
	for _, o := range e.rng.Perm(n) {
		if added >= limit {
			break
		}
		src := docs[o]
		for _, next := range l.Procs[e.meta[src].proc].nextLocal {
			if targets := e.procDocs[li][next]; len(targets) > 0 && added < limit {
				add(src, targets[e.rng.IntN(len(targets))], oftenNext, edgeData, true)
			}
		}
	}

	// Alternatives: another variant of the same procedure, or failing that another
	// document of the library.
	limit = added + budget*20/100
	for _, o := range e.rng.Perm(n) {
		if added >= limit {
			break
		}
		src := docs[o]
		peers := e.procDocs[li][e.meta[src].proc]
		if len(peers) < 2 {
			peers = docs
		}
		add(src, peers[e.rng.IntN(len(peers))], alternativeTo, edgeSemantic, false)
	}

	// The rest: a mix of every type and label between random documents.
	for attempts := 0; added < budget && attempts < 50*budget; attempts++ {
		s, t := docs[e.rng.IntN(n)], docs[e.rng.IntN(n)]
		label, typ := mix(e.rng.IntN(10))
		add(s, t, label, typ, false)
	}
}

// mix picks a label and type for a random edge: 3 in 10 data "often next", 3 in
// 10 semantic "often next", 3 in 10 data "alternative to", 1 in 10 semantic
// "alternative to".
func mix(r int) (label, typ string) {
	switch {
	case r < 3:
		return oftenNext, edgeData
	case r < 6:
		return oftenNext, edgeSemantic
	case r < 9:
		return alternativeTo, edgeData
	}
	return alternativeTo, edgeSemantic
}

// crossLibrary links the libraries of ws_acme: first along the procedure flows
// that cross libraries (an offboarding leads to final pay), then at random.
func (e *edgeGen) crossLibrary(budget int) {
	type link struct{ fromLib, fromProc, toLib, toProc int }
	var links []link
	var acme []int
	for li := range libSpecs {
		if libSpecs[li].Workspace != "ws_acme" || len(e.libDocs[li]) == 0 {
			continue
		}
		acme = append(acme, li)
		for pi := range libSpecs[li].Procs {
			for _, to := range libSpecs[li].Procs[pi].nextRemote {
				if len(e.procDocs[to[0]][to[1]]) > 0 && len(e.procDocs[li][pi]) > 0 {
					links = append(links, link{li, pi, to[0], to[1]})
				}
			}
		}
	}
	if len(acme) < 2 {
		return
	}
	added := 0
	for attempt := 0; added < budget && attempt < 50*budget; attempt++ {
		var s, t int
		label, typ := oftenNext, edgeData
		if attempt < 3*budget/4 && len(links) > 0 {
			k := links[attempt%len(links)]
			from, to := e.procDocs[k.fromLib][k.fromProc], e.procDocs[k.toLib][k.toProc]
			s, t = from[e.rng.IntN(len(from))], to[e.rng.IntN(len(to))]
			if attempt%4 == 3 {
				typ = edgeSemantic
			}
		} else {
			a := e.rng.IntN(len(acme))
			b := (a + 1 + e.rng.IntN(len(acme)-1)) % len(acme)
			da, db := e.libDocs[acme[a]], e.libDocs[acme[b]]
			s, t = da[e.rng.IntN(len(da))], db[e.rng.IntN(len(db))]
			label, typ = mix(e.rng.IntN(10))
		}
		if e.add(s, t, label, typ, false) {
			added++
		}
	}
}

// recordings builds about 1.5 recordings per document. In every library the first
// four documents have fixed mixes: the first has two shared recordings and one
// private one (one shared recording also lists the second document), the second
// only shared ones, the third only private ones, the fourth none.
func (g *gen) recordings() {
	g.file.Recordings = make([]dataset.Recording, 0, len(g.file.Documents)*3/2+16)
	for li := range libSpecs {
		l := &libSpecs[li]
		docs := g.libDocs[li]
		short := strings.TrimPrefix(l.ID, "lib_")
		w := max(4, len(strconv.Itoa(3*len(docs))))
		seq := 0
		for i, d := range docs {
			type plan struct {
				shared bool
				second int // index in docs of a second document, or -1
			}
			var plans []plan
			switch i {
			case 0:
				second := -1
				if len(docs) > 1 {
					second = 1
				}
				plans = []plan{{true, second}, {true, -1}, {false, -1}}
			case 1:
				plans = []plan{{true, -1}}
			case 2:
				plans = []plan{{false, -1}, {false, -1}}
			case 3:
			default:
				if g.meta[d].core {
					for range 5 {
						plans = append(plans, plan{shared: g.rng.IntN(100) < 55, second: -1})
					}
					break
				}
				if g.rng.IntN(100) < 12 {
					break
				}
				for range []int{1, 1, 1, 2, 2, 3}[g.rng.IntN(6)] {
					p := plan{shared: g.rng.IntN(100) < 55, second: -1}
					if g.rng.IntN(100) < 6 && i+1 < len(docs) {
						p.second = i + 1
					}
					plans = append(plans, p)
				}
			}
			for _, p := range plans {
				seq++
				id := fmt.Sprintf("rec_%s_%0*d", short, w, seq)
				ids := []string{g.file.Documents[d].ID}
				if p.second >= 0 {
					ids = append(ids, g.file.Documents[docs[p.second]].ID)
				}
				g.file.Recordings = append(g.file.Recordings, g.recording(id, d, ids, p.shared, i < 4))
			}
		}
	}
}

func (g *gen) recording(id string, doc int, docIDs []string, shared, fixedCase bool) dataset.Recording {
	m := g.meta[doc]
	l := &libSpecs[m.lib]
	p := &l.Procs[m.proc]
	status := "processed"
	switch r := g.rng.IntN(100); {
	case fixedCase:
	case r >= 94:
		status = "failed"
	case r >= 88:
		status = "processing"
	}
	at := g.between(m.firstSeen, m.lastSeen)
	pool := len(p.QA) + len(l.QA)
	nq := 1 + g.rng.IntN(min(4, pool))
	start := g.rng.IntN(pool)
	qs := make([]dataset.Question, nq)
	quesPrefix := "ques_" + strings.TrimPrefix(id, "rec_") + "_"
	for j := range qs {
		var q qa
		if k := (start + j) % pool; k < len(p.QA) {
			q = p.QA[k]
		} else {
			q = l.QA[k-len(p.QA)]
		}
		qs[j] = dataset.Question{ID: quesPrefix + strconv.Itoa(j+1), Question: q.Q, Response: q.A, SequenceOrder: j + 1}
	}
	ns := 3 + g.rng.IntN(len(p.Trail)-2)
	return dataset.Recording{
		ID: id, DocumentIDs: docIDs,
		Title:  p.Title + ", recorded " + time.Unix(at, 0).UTC().Format("Mon 2 Jan 2006 15:04"),
		Status: status, Shared: shared, ClientCreatedAt: stamp(at),
		Questions: qs, Steps: p.Trail[:ns:ns],
	}
}
