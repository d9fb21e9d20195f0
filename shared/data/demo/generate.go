// Package demo builds doclib's demo data set and larger synthetic data sets for
// benchmarks. Everything is generated from a seed, so the same options always give
// the same data set, byte for byte once encoded; demo.json is the demo set
// (Options{}) written out by cmd/doclib-datagen.
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
	for _, w := range workspaceSpecs {
		f.Workspaces = append(f.Workspaces, w)
	}
	for _, d := range deviceSpecs {
		f.Devices = append(f.Devices, d)
	}
	for _, k := range keySpecs {
		f.APIKeys = append(f.APIKeys, dataset.APIKey{ID: k.ID, WorkspaceID: k.WorkspaceID, DeviceID: k.DeviceID,
			Secret: k.Secret, Libraries: append([]string(nil), k.Libraries...), RecordingDetails: k.RecordingDetails,
			ExpiresAt: k.ExpiresAt})
	}
	for i, l := range libSpecs {
		created := epoch + int64(i)*day
		f.Libraries = append(f.Libraries, dataset.Library{ID: l.id, WorkspaceID: l.workspace, Name: l.name,
			Slug: l.slug, PreviousSlugs: append([]string(nil), l.previousSlugs...), Description: l.description,
			CreatedAt: stamp(created), UpdatedAt: stamp(created), Schema: schemas[l.version]})
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
		weights[i] = l.demoDocuments
		if n > DemoDocuments {
			weights[i] = l.largeWeight
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
		short := strings.TrimPrefix(l.id, "lib_")
		w := width(counts[li])
		slugs := make(map[string]bool, counts[li])
		g.procDocs[li] = make([][]int, len(l.procs))
		var prevUpdated, libUpdated int64
		for k := range counts[li] {
			pi := k % len(l.procs)
			p := &l.procs[pi]
			j := k / len(l.procs)
			vi := j % len(p.variants)
			v := &p.variants[vi]
			r := j / len(p.variants)

			title, summary := p.title, p.summary
			if v.label != "" {
				title += " — " + v.label
			}
			if v.note != "" {
				summary += " " + v.note
			}
			if r > 0 {
				site := l.sites[(r-1)%len(l.sites)]
				title += " (" + site + ")"
				summary += " " + fmt.Sprintf(l.siteSentence, site)
				if round := (r - 1) / len(l.sites); round > 0 {
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

			tags := appendUnique(append(make([]string, 0, 4), p.tags...), v.tag, 4)
			apps := appendUnique(append(make([]string, 0, 3), p.apps...), v.app, 3)
			content := map[string]any{"summary": summary, "steps": p.stepsAny[vi]}
			if l.version == 2 {
				content["prerequisites"] = p.beforeAny
				content["troubleshooting"] = p.fixesAny
			}
			idx := len(g.file.Documents)
			g.file.Documents = append(g.file.Documents, dataset.Document{
				ID: fmt.Sprintf("doc_%s_%0*d", short, w, k+1), LibraryID: l.id, Slug: slug, Title: title,
				Category: p.category, Tags: tags, Applications: apps, DeviceCount: 1 + g.rng.IntN(12),
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
		for _, next := range l.procs[e.meta[src].proc].nextLocal {
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
		if libSpecs[li].workspace != "ws_acme" || len(e.libDocs[li]) == 0 {
			continue
		}
		acme = append(acme, li)
		for pi := range libSpecs[li].procs {
			for _, to := range libSpecs[li].procs[pi].nextRemote {
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
		short := strings.TrimPrefix(l.id, "lib_")
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
	p := &l.procs[m.proc]
	status := "processed"
	switch r := g.rng.IntN(100); {
	case fixedCase:
	case r >= 94:
		status = "failed"
	case r >= 88:
		status = "processing"
	}
	at := g.between(m.firstSeen, m.lastSeen)
	pool := len(p.qa) + len(l.qa)
	nq := 1 + g.rng.IntN(min(4, pool))
	start := g.rng.IntN(pool)
	qs := make([]dataset.Question, nq)
	quesPrefix := "ques_" + strings.TrimPrefix(id, "rec_") + "_"
	for j := range qs {
		var q qa
		if k := (start + j) % pool; k < len(p.qa) {
			q = p.qa[k]
		} else {
			q = l.qa[k-len(p.qa)]
		}
		qs[j] = dataset.Question{ID: quesPrefix + strconv.Itoa(j+1), Question: q.q, Response: q.a, SequenceOrder: j + 1}
	}
	ns := 3 + g.rng.IntN(len(p.trail)-2)
	return dataset.Recording{
		ID: id, DocumentIDs: docIDs,
		Title:  p.title + ", recorded " + time.Unix(at, 0).UTC().Format("Mon 2 Jan 2006 15:04"),
		Status: status, Shared: shared, ClientCreatedAt: stamp(at),
		Questions: qs, Steps: p.trail[:ns:ns],
	}
}

// The fixed part of every data set: workspaces, devices and keys.

var workspaceSpecs = []dataset.Workspace{
	{ID: "ws_acme", Name: "Acme Corp", Plan: "team", AICredit: 1000, Subscription: "active"},
	{ID: "ws_solo", Name: "Solo Studio", Plan: "individual", AICredit: 100, Subscription: "active"},
	{ID: "ws_nocredit", Name: "Northwind Traders", Plan: "team", AICredit: 0, Subscription: "active"},
	{ID: "ws_byok", Name: "Bring-Your-Own-Key Labs", Plan: "enterprise", AICredit: 0, OwnProviderKey: true, Subscription: "active"},
	{ID: "ws_suspended", Name: "Paused Ltd", Plan: "team", AICredit: 500, Subscription: "suspended"},
}

var deviceSpecs = []dataset.Device{
	{ID: "dev_acme_laptop", WorkspaceID: "ws_acme", Status: "active"},
	{ID: "dev_acme_desktop", WorkspaceID: "ws_acme", Status: "active"},
	{ID: "dev_acme_old", WorkspaceID: "ws_acme", Status: "removed"},
	{ID: "dev_acme_archived", WorkspaceID: "ws_acme", Status: "archived"},
	{ID: "dev_solo_macbook", WorkspaceID: "ws_solo", Status: "active"},
	{ID: "dev_northwind_laptop", WorkspaceID: "ws_nocredit", Status: "active"},
	{ID: "dev_byok_laptop", WorkspaceID: "ws_byok", Status: "active"},
	{ID: "dev_paused_laptop", WorkspaceID: "ws_suspended", Status: "active"},
}

// keySpecs is the one list of demo keys; Keys (demo.go) is derived from it.
var keySpecs = []struct {
	Key
	ID, DeviceID     string
	Libraries        []string
	RecordingDetails bool
	ExpiresAt        string
}{
	{Key: Key{"full", "dlk_demo_full_scope", "ws_acme", "Every library of Acme Corp, recording details, active device, no expiry: every endpoint answers."},
		ID: "key_full", DeviceID: "dev_acme_laptop", Libraries: []string{"*"}, RecordingDetails: true},
	{Key: Key{"one-library", "dlk_demo_one_library", "ws_acme", "Only lib_finance: the IT and Sales libraries answer 404, and traversals stop at the library's edge."},
		ID: "key_one_library", DeviceID: "dev_acme_laptop", Libraries: []string{"lib_finance"}, RecordingDetails: true},
	{Key: Key{"no-recordings", "dlk_demo_no_recordings", "ws_acme", "Every Acme library but no recording details: source recordings answer 403 forbidden."},
		ID: "key_no_recordings", DeviceID: "dev_acme_laptop", Libraries: []string{"*"}},
	{Key: Key{"expired", "dlk_demo_expired_key", "ws_acme", "Expired on 2025-06-30: every request answers 401 api_key_expired."},
		ID: "key_expired", DeviceID: "dev_acme_laptop", Libraries: []string{"*"}, RecordingDetails: true, ExpiresAt: "2025-06-30T00:00:00Z"},
	{Key: Key{"removed-device", "dlk_demo_removed_device", "ws_acme", "Created on a device that was removed: 401 api_key_device_removed."},
		ID: "key_removed_device", DeviceID: "dev_acme_old", Libraries: []string{"*"}, RecordingDetails: true},
	{Key: Key{"archived-device", "dlk_demo_archived_device", "ws_acme", "Created on a device that was archived: 401 api_key_device_removed."},
		ID: "key_archived_device", DeviceID: "dev_acme_archived", Libraries: []string{"*"}, RecordingDetails: true},
	{Key: Key{"individual-plan", "dlk_demo_individual_plan", "ws_solo", "Individual plan: recordings exist, some marked shared, but none can be read."},
		ID: "key_individual_plan", DeviceID: "dev_solo_macbook", Libraries: []string{"*"}, RecordingDetails: true},
	{Key: Key{"no-ai-credit", "dlk_demo_no_ai_credit", "ws_nocredit", "No AI credit left: search answers 402 insufficient_ai_credit; everything else works."},
		ID: "key_no_ai_credit", DeviceID: "dev_northwind_laptop", Libraries: []string{"*"}, RecordingDetails: true},
	{Key: Key{"own-provider", "dlk_demo_own_provider", "ws_byok", "No AI credit but its own provider key: search is not metered and works."},
		ID: "key_own_provider", DeviceID: "dev_byok_laptop", Libraries: []string{"*"}, RecordingDetails: true},
	{Key: Key{"suspended", "dlk_demo_suspended", "ws_suspended", "Suspended subscription: search answers 402 subscription_suspended; everything else works."},
		ID: "key_suspended", DeviceID: "dev_paused_laptop", Libraries: []string{"*"}, RecordingDetails: true},
}

// The libraries and the procedures their documents are written from.

type libSpec struct {
	id, workspace, name, slug string
	previousSlugs             []string
	description               string
	version                   int // template version, a key of schemas
	demoDocuments             int // documents in the demo set
	largeWeight               int // share of documents, in percent, above the demo size
	// sites name the offices, entities or territories that vary titles once a
	// procedure's variants are used up; siteSentence adds one to the summary.
	sites        []string
	siteSentence string
	qa           []qa // questions that fit any procedure of the library
	procs        []proc
}

// proc is one base procedure. Its documents are its variants.
type proc struct {
	key, title, category string
	tags, apps           []string
	summary              string
	before, steps, fixes []string // before and fixes are used by version 2 templates
	qa                   []qa
	trail                []string // a recording's step timeline
	variants             []variant
	// next lists the procedures often done next: "key" in the same library,
	// "lib_x:key" in another library of the same workspace.
	next []string

	// Built by init.
	stepsAny            [][]any // per variant
	beforeAny, fixesAny []any
	nextLocal           []int
	nextRemote          [][2]int // library, procedure
}

// variant is one scenario of a procedure: a title suffix, a sentence for the
// summary, an extra step (before the last one), application and tag. The plain
// procedure is always the first variant; init adds it.
type variant struct{ label, note, step, app, tag string }

type qa struct{ q, a string }

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// init completes the procedures and checks the tables, so that a mistake in them
// fails every test rather than producing a data set the validator refuses.
func init() {
	index := map[string][2]int{}
	for li := range libSpecs {
		for pi := range libSpecs[li].procs {
			p := &libSpecs[li].procs[pi]
			index[libSpecs[li].id+":"+p.key] = [2]int{li, pi}
		}
	}
	for li := range libSpecs {
		l := &libSpecs[li]
		if _, ok := schemas[l.version]; !ok || len(l.sites) == 0 || len(l.procs) == 0 {
			panic("demo: library " + l.id + " is incomplete")
		}
		for pi := range l.procs {
			p := &l.procs[pi]
			where := l.id + ":" + p.key
			p.variants = append([]variant{{}}, p.variants...)
			labels := map[string]bool{}
			for _, v := range p.variants {
				n := len(p.steps)
				if v.step != "" {
					n++
				}
				if n < 4 || n > 10 || labels[v.label] {
					panic("demo: " + where + ": variant " + strconv.Quote(v.label) + " has a duplicate label or a step count outside 4-10")
				}
				labels[v.label] = true
				steps := p.steps
				if v.step != "" {
					steps = append(append(append([]string(nil), p.steps[:len(p.steps)-1]...), v.step), p.steps[len(p.steps)-1])
				}
				p.stepsAny = append(p.stepsAny, toAny(steps))
			}
			if l.version == 2 && (len(p.before) == 0 || len(p.fixes) == 0) {
				panic("demo: " + where + " needs prerequisites and troubleshooting for a version 2 template")
			}
			if len(p.tags) < 1 || len(p.tags) > 4 || len(p.apps) < 1 || len(p.apps) > 3 ||
				len(p.trail) < 3 || len(p.trail) > 8 || len(p.qa) == 0 || p.summary == "" || p.category == "" {
				panic("demo: " + where + " breaks the limits on tags, applications, trail, questions or summary")
			}
			p.beforeAny, p.fixesAny = toAny(p.before), toAny(p.fixes)
			for _, next := range p.next {
				ref := next
				if !strings.Contains(ref, ":") {
					ref = l.id + ":" + ref
				}
				to, ok := index[ref]
				switch {
				case !ok:
					panic("demo: " + where + ": next " + next + " does not exist")
				case to[0] == li:
					p.nextLocal = append(p.nextLocal, to[1])
				case libSpecs[to[0]].workspace != l.workspace:
					panic("demo: " + where + ": next " + next + " is in another workspace")
				default:
					p.nextRemote = append(p.nextRemote, to)
				}
			}
		}
	}
}

var libSpecs = []libSpec{
	{
		id: "lib_it", workspace: "ws_acme", name: "IT Operations", slug: "it-operations",
		previousSlugs: []string{"it", "helpdesk"},
		description:   "How Acme's IT team runs accounts, devices, security and the service desk, written from the team's own recorded work.",
		version:       2, demoDocuments: 60, largeWeight: 40,
		sites: []string{"London office", "New York office", "Berlin office", "Austin office", "Singapore office",
			"Toronto office", "Dublin office", "Sydney office", "Chicago office", "Paris office", "Tokyo office",
			"Denver office", "Amsterdam office", "Seattle office", "Madrid office", "Boston office"},
		siteSentence: "This copy follows how the %s does it, where the local IT desk owns the last step.",
		qa: []qa{
			{"Is this written down anywhere else?", "Only in an old Confluence page that is out of date; this document replaces it."},
			{"How often does this come up?", "A few times a week at the service desk, more during onboarding season."},
		},
		procs: []proc{
			{
				key: "okta-reset", title: "Reset a user's password in Okta", category: "Accounts & access",
				tags: []string{"access", "urgent"}, apps: []string{"Okta", "Jira"},
				summary: "Verify the caller's identity, then reset their Okta password and unlock the account. Most requests arrive at the service desk after a lockout, and the identity check is the step that matters most.",
				before: []string{
					"Okta Help Desk Administrator role or higher",
					"The Jira ticket for the request",
					"A callback number from Workday or the manager's confirmation of the user's identity",
				},
				steps: []string{
					"Sign in to the Okta Admin Console and go to Directory > People.",
					"Search for the user by work email and open their profile.",
					"Verify the caller: call back on the mobile number stored in Workday, or get the manager's confirmation in Slack.",
					"If the status shows Locked out, click Unlock.",
					"Click Reset Password, choose 'Send reset email to user' and confirm.",
					"If the user cannot reach their email, choose 'Reset with temporary password' and read it to them on the verified call.",
					"Make sure 'Require user to change password at next sign-in' is ticked.",
					"Write the verification method and the action in the Jira ticket and resolve it.",
				},
				fixes: []string{
					"The reset email never arrives: check Reports > System Log for a bounced email event and confirm the secondary email on the profile.",
					"The user is locked out again within minutes: a phone mail client still holds the old password; have them remove and re-add the account.",
				},
				qa: []qa{
					{"How did you verify the caller?", "Called back on the mobile number stored in Workday, not the number they called from."},
					{"Why not reset MFA as well?", "Their Okta Verify still worked; we only reset factors when the phone is lost."},
					{"Which admin role is needed?", "Help Desk Administrator covers normal users; an admin account needs a Super Admin to reset it."},
				},
				trail: []string{"Opened Okta Admin Console", "Clicked Directory > People", "Searched for the user's email",
					"Clicked Unlock", "Clicked Reset Password", "Selected Send reset email to user", "Updated the Jira ticket"},
				variants: []variant{
					{label: "contractor account", note: "Contractor accounts live in the Contractors group and expire on their end date, so check the date before resetting.",
						step: "Check Profile > Contractor end date and ask the sponsor to approve an extension if it has passed."},
					{label: "user on leave", note: "Accounts of people on leave are suspended rather than locked; reactivate only when HR confirms the return date.",
						step: "Confirm the return date in Workday before clicking Unsuspend.", app: "Workday"},
					{label: "executive account", note: "Executive resets need the IT lead's approval and are always done on a call, never by email.",
						step: "Post the finished reset in #it-approvals in Slack for the IT lead's record.", app: "Slack", tag: "vip"},
					{label: "after a phishing report", note: "When the reset follows a phishing report, every session is cleared and Security is told before the user signs in again.",
						step: "Click Clear User Sessions and revoke OAuth tokens so no stolen session survives the reset.", tag: "security"},
				},
				next: []string{"mfa-reenrol"},
			},
			{
				key: "intune-laptop", title: "Provision a Windows laptop with Microsoft Intune", category: "Devices",
				tags: []string{"onboarding", "hardware"}, apps: []string{"Microsoft Intune"},
				summary: "Register the laptop with Windows Autopilot, assign it to the new starter and let Intune install the standard apps and policies before the laptop is handed over.",
				before: []string{
					"Intune Administrator role in the Microsoft Intune admin center",
					"The hardware hash CSV, or the reseller's confirmation that the serial number is registered",
					"The starter's account already created and licensed for Microsoft 365",
				},
				steps: []string{
					"Open the Microsoft Intune admin center and go to Devices > Windows > Windows enrollment > Devices.",
					"Click Import and upload the hardware hash CSV, or find the serial number the reseller registered.",
					"Select the device, click Assign user and pick the new starter.",
					"Set the Group Tag to the team's tag, for example ACME-SALES, so the right dynamic group picks it up.",
					"Check under Enrollment Status Page that the Standard Laptop profile is assigned.",
					"Power on the laptop, join Wi-Fi and sign in with the starter's work account at the out-of-box screen.",
					"Wait until Company Portal shows every required app installed and BitLocker reports Encrypted.",
					"Record the serial number and asset tag against the user in the asset register and close the onboarding ticket.",
				},
				fixes: []string{
					"Stuck on 'Identifying': the hardware hash was never imported; check the serial under Windows enrollment > Devices and import again.",
					"Apps never finish installing: look up the app in Apps > Monitor for error 0x87D1041C and sync again from Company Portal.",
				},
				qa: []qa{
					{"Which group tag did you use?", "ACME-FIN for finance laptops; the tag decides which apps and printers are pushed."},
					{"Does the starter need to be there?", "No, we pre-provision and only hand the laptop over once BitLocker shows Encrypted."},
					{"How long did enrolment take?", "About forty minutes, most of it waiting for Microsoft 365 Apps to install."},
				},
				trail: []string{"Opened Microsoft Intune admin center", "Clicked Devices > Windows > Windows enrollment", "Clicked Import and chose the hardware hash CSV",
					"Clicked Assign user", "Set Group Tag", "Checked Enrollment Status Page", "Updated the asset register"},
				variants: []variant{
					{label: "developer workstation", note: "Developer machines get local admin through the Developers group and Docker Desktop from Company Portal.",
						step: "Check that Docker Desktop and the Developers admin policy show Succeeded in Company Portal.", app: "Docker Desktop"},
					{label: "shared kiosk", note: "Kiosk devices use the self-deploying profile with no user and a single-app lockdown policy.",
						step: "Confirm the kiosk profile shows Assigned and no user is set on the device."},
					{label: "replacement for a broken laptop", note: "The old laptop is retired in Intune first, so licences and BitLocker keys do not pile up.",
						step: "Retire the old device under Devices > All devices and note its serial in the ticket."},
					{label: "remote starter", note: "Remote starters get the laptop straight from the reseller; nobody unboxes it in the office.",
						step: "Email the starter the Okta activation link and the courier's tracking number.", app: "Okta", tag: "remote"},
				},
				next: []string{"saas-license"},
			},
			{
				key: "aws-keys", title: "Rotate AWS access keys for an IAM user", category: "Security",
				tags: []string{"security", "quarterly"}, apps: []string{"AWS IAM", "1Password"},
				summary: "Create a second access key, move every consumer to it, then deactivate and later delete the old one. The quarterly access review flags keys older than 90 days.",
				before: []string{
					"IAM permission to create, update and delete access keys for the user",
					"The list of systems that use the key, from Last used in IAM and from CloudTrail",
					"Write access to the team's 1Password vault",
				},
				steps: []string{
					"In the AWS console, open IAM > Users and select the user.",
					"On the Security credentials tab, note the age and the Last used service of the current key.",
					"Click Create access key, choose 'Application running outside AWS' and copy the new key ID and secret.",
					"Save the new key in the team's 1Password item and note today's date in it.",
					"Update every consumer, such as CI secrets and application config, to the new key and redeploy.",
					"When the old key's Last used time stops moving, choose Actions > Deactivate on it.",
					"After seven quiet days, choose Actions > Delete on the old key.",
					"Record the rotation in the access review sheet.",
				},
				fixes: []string{
					"A job fails with InvalidClientTokenId after deactivation: reactivate the old key, find the caller by its AccessKeyId in CloudTrail and update it.",
					"Create access key is greyed out: IAM allows two keys per user; delete the unused one first.",
				},
				qa: []qa{
					{"How did you find every consumer of the old key?", "Searched CloudTrail for the access key ID over 30 days: only the CI pipeline and the reporting job used it."},
					{"Why wait a week before deleting?", "Deactivation can be undone and deletion cannot, so the old key stays deactivated for seven days."},
					{"Where is the secret kept?", "Only in the team's 1Password vault; never in the ticket or in Slack."},
				},
				trail: []string{"Opened AWS console", "Clicked IAM > Users", "Opened the Security credentials tab", "Clicked Create access key",
					"Saved the key in 1Password", "Updated the CI secret", "Clicked Actions > Deactivate"},
				variants: []variant{
					{label: "CI service user", note: "The CI user's key lives in GitHub Actions secrets, which are updated first.",
						step: "Update AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the repository's GitHub Actions secrets and rerun the last workflow.", app: "GitHub Actions"},
					{label: "production account", note: "In production a second engineer watches the rotation and the change is logged in the change calendar.",
						step: "Confirm with the on-call engineer that production error rates stayed flat after the switch.", tag: "change-managed"},
					{label: "after a leaked key alert", note: "After a leak alert the old key is deactivated at once, before consumers move, and Security reviews CloudTrail.",
						step: "Ask Security to confirm CloudTrail shows no use of the leaked key after deactivation.", tag: "urgent"},
					{label: "data warehouse loader", note: "The warehouse loader reads its key from AWS Secrets Manager, so only the secret value changes.",
						step: "Put the new key in the loader's secret in AWS Secrets Manager and restart the loader.", app: "AWS Secrets Manager"},
				},
				next: []string{"tls-renew"},
			},
			{
				key: "gws-offboard", title: "Offboard an employee in Google Workspace", category: "Accounts & access",
				tags: []string{"offboarding", "security"}, apps: []string{"Google Workspace", "Okta"},
				summary: "Lock the leaver out at their last working hour, hand their Drive files and calendar to the manager, and keep the address receiving mail for 90 days.",
				before: []string{
					"Super Admin or User Management Admin role in the Google Admin console",
					"The HR offboarding ticket with the leaving date and the manager's name",
					"Okta deactivation scheduled for the same time",
				},
				steps: []string{
					"In the Google Admin console, go to Directory > Users and open the leaver's account.",
					"Click Reset password and set a random password, then click Sign out to end every session.",
					"Under Security, remove app passwords and revoke access for connected third-party apps.",
					"Open Data transfer on the user's page, choose the manager and transfer Drive and Docs and Calendar.",
					"Add a routing rule under Apps > Google Workspace > Gmail > Routing that sends new mail to the manager.",
					"Suspend the user and move the account to the Leavers organisational unit.",
					"Write the transfer and the 90-day deletion date in the offboarding ticket.",
				},
				fixes: []string{
					"Shared drive files were not transferred: shared drives belong to the organisation, so only My Drive moves.",
					"The manager cannot open some files: files owned by external accounts stay with their owners after a transfer.",
				},
				qa: []qa{
					{"When did you suspend the account?", "At 17:00 on the last day, right after HR confirmed the laptop came back."},
					{"Why not delete the user straight away?", "Deleting removes the mailbox, and legal asked us to keep mail for 90 days."},
					{"Who receives the leaver's email?", "The line manager, through the routing rule."},
				},
				trail: []string{"Opened Google Admin console", "Clicked Directory > Users", "Opened the leaver's account", "Clicked Reset password",
					"Clicked Sign out", "Opened Data transfer", "Clicked Suspend user", "Moved the user to Leavers"},
				variants: []variant{
					{label: "involuntary leaver", note: "For an involuntary exit the account is suspended during the HR meeting, coordinated with HR on a call.",
						step: "Deactivate the person's Slack account at the same moment as the Google account.", app: "Slack", tag: "urgent"},
					{label: "contractor end of engagement", note: "Contractors keep no mailbox; their Drive goes to the sponsor and the account is deleted after the transfer.",
						step: "Delete the account once Data transfer shows Completed."},
					{label: "executive departure", note: "Executive mailboxes go on a Google Vault hold before anything else changes.",
						step: "Confirm in Google Vault that the legal hold covers the executive's mail and Drive.", app: "Google Vault", tag: "compliance"},
					{label: "leaver who managed shared drives", note: "When the leaver managed shared drives, another manager is added to each before suspension.",
						step: "Add the new owner as Manager on every shared drive the leaver managed."},
				},
				next: []string{"aws-keys", "saas-license", "lib_finance:final-pay"},
			},
			{
				key: "jira-triage", title: "Triage a Jira Service Management ticket", category: "Service desk",
				tags: []string{"daily"}, apps: []string{"Jira", "Slack"},
				summary: "Read each new request in the IT queue, fix its request type, set impact and urgency, and either solve it on the spot or route it to the right group within the 30-minute response target.",
				before: []string{
					"An agent licence in the IT service project",
					"The priority matrix from the service desk handbook",
				},
				steps: []string{
					"Open Jira Service Management and go to the IT Help queue 'Unassigned - new'.",
					"Open the oldest ticket and read the description and attachments.",
					"Correct the Request type if the customer picked the wrong one, for example Access request instead of Hardware.",
					"Set Impact and Urgency; Jira works out the Priority from the matrix.",
					"Set the Component (Accounts, Devices, Network or SaaS) so the ticket routes to the right group.",
					"If it takes under ten minutes, click Assign to me and solve it now.",
					"Otherwise assign it to the group with an internal comment saying what you checked.",
					"Reply to the customer with the expected time from the SLA panel.",
				},
				fixes: []string{
					"The SLA timer never started: the ticket came by email without a request type; set one and the SLA recalculates.",
					"The customer cannot see your reply: it was an internal comment; post it again with Reply to customer.",
				},
				qa: []qa{
					{"How did you choose the priority?", "One person affected but payroll runs tomorrow, so high urgency; the matrix gave P3."},
					{"When do you page the on-call engineer?", "Only for P1: many people blocked and no workaround."},
					{"Why did you change the request type?", "A laptop fault was filed as an access request; the type decides the SLA and the queue."},
				},
				trail: []string{"Opened Jira Service Management", "Opened queue Unassigned - new", "Opened the oldest ticket", "Changed Request type",
					"Set Impact and Urgency", "Set Component", "Clicked Assign to me", "Clicked Reply to customer"},
				variants: []variant{
					{label: "P1 outage report", note: "A P1 is declared in #incidents and the on-call engineer is paged before any other triage.",
						step: "Page the on-call engineer from Opsgenie and post the ticket in #incidents.", app: "Opsgenie", tag: "urgent"},
					{label: "request sent by email", note: "Email requests arrive without a request type, so setting one always comes first.",
						step: "Add the sender as a portal customer if they are not one yet, so they can follow the ticket."},
					{label: "VIP request", note: "Requests from the executive team are flagged VIP and get a phone call rather than a portal reply.",
						step: "Call the requester and note the call in the ticket.", tag: "vip"},
					{label: "after-hours queue", note: "After hours only P1 and P2 are worked; everything else gets the next-business-day reply.",
						step: "Send the next-business-day canned response to anything below P2."},
				},
				next: []string{"okta-reset", "mfa-reenrol", "backup-restore"},
			},
			{
				key: "tls-renew", title: "Renew a TLS certificate in AWS Certificate Manager", category: "Infrastructure",
				tags: []string{"security", "compliance"}, apps: []string{"AWS Certificate Manager", "Cloudflare"},
				summary: "Replace a certificate before it expires: request it in ACM, validate it through a DNS record in Cloudflare, attach it to the load balancer and check the chain from outside.",
				before: []string{
					"Access to the AWS account that owns the load balancer",
					"Edit rights on the DNS zone in Cloudflare",
					"The expiry alert or ticket naming the domain",
				},
				steps: []string{
					"In the AWS console, open Certificate Manager in the load balancer's region and click Request.",
					"Choose 'Request a public certificate', enter the domain and alternative names, and select DNS validation.",
					"Open the new certificate and copy the CNAME name and value shown under Domains.",
					"In Cloudflare, open the zone's DNS > Records and add the CNAME with proxy status set to DNS only.",
					"Wait until ACM shows Issued, usually within ten minutes.",
					"Open EC2 > Load Balancers, edit the HTTPS:443 listener and select the new certificate.",
					"Run openssl s_client -connect host:443 -servername host and check the new expiry date.",
					"Remove the old certificate from the listener and close the expiry ticket.",
				},
				fixes: []string{
					"ACM stays at Pending validation: the CNAME is proxied through Cloudflare; switch it to DNS only.",
					"Browsers still show the old certificate: another listener or a CloudFront distribution serves the domain too.",
				},
				qa: []qa{
					{"Why DNS validation rather than email?", "ACM renews DNS-validated certificates by itself as long as the CNAME stays in place."},
					{"How much notice did the alert give?", "Thirty days; the monitor checks every endpoint daily."},
					{"Which listener did you change?", "Only HTTPS:443; port 80 just redirects."},
				},
				trail: []string{"Opened AWS Certificate Manager", "Clicked Request", "Selected DNS validation", "Copied the CNAME record",
					"Opened Cloudflare DNS > Records", "Added the CNAME record", "Edited the HTTPS:443 listener", "Ran openssl s_client"},
				variants: []variant{
					{label: "wildcard certificate", note: "A wildcard certificate covers every subdomain and is attached to both public load balancers.",
						step: "Attach the wildcard certificate to the second load balancer's listener as well."},
					{label: "CloudFront distribution", note: "Certificates for CloudFront must be requested in us-east-1, whatever the origin's region.",
						step: "Select the certificate in the CloudFront distribution's settings and wait for the deployment to finish.", app: "Amazon CloudFront"},
					{label: "customer vanity domain", note: "For a customer's vanity domain the customer adds the validation record, so the wait is on them.",
						step: "Send the customer the CNAME record through the support ticket and wait for Issued.", tag: "customer-facing"},
					{label: "internal tool", note: "Internal tools use the private CA, so the certificate is private and needs no DNS validation.",
						step: "Restart the tool's service so it loads the certificate from the private CA."},
				},
			},
			{
				key: "backup-restore", title: "Restore a deleted file from a Veeam backup", category: "Infrastructure",
				tags: []string{"backup"}, apps: []string{"Veeam Backup & Replication"},
				summary: "Find the latest restore point that still holds the file, restore it next to the current one without overwriting anything newer, and confirm with the requester.",
				before: []string{
					"Veeam Backup Operator role",
					"The file's full path and roughly when it was last seen",
				},
				steps: []string{
					"Open the Veeam Backup & Replication console and go to Home > Backups > Disk.",
					"Right-click the file server's backup job and choose Restore guest files > Microsoft Windows.",
					"Pick the restore point from just before the file was deleted and click Next.",
					"In the Backup Browser, go to the folder and find the file.",
					"Right-click the file and choose Restore > Keep, so no newer copy is overwritten.",
					"Open the restored file and check its size and date.",
					"Tell the requester where the file is and close the ticket with the restore point used.",
				},
				fixes: []string{
					"The file is in no restore point: it lived and died between two backups; check the recycle bin or OneDrive version history.",
					"Restore fails with Access denied: the Veeam service account lost rights on the share; restore to another location instead.",
				},
				qa: []qa{
					{"Which restore point did you pick?", "Tuesday night's, because the user saw the file on Wednesday morning."},
					{"Why Keep rather than Overwrite?", "Keep saves the copy with a RESTORED- prefix, so nothing newer is lost."},
					{"How far back do backups go?", "Thirty daily restore points and twelve monthly ones."},
				},
				trail: []string{"Opened Veeam Backup & Replication console", "Clicked Home > Backups > Disk", "Chose Restore guest files",
					"Selected a restore point", "Browsed to the folder", "Clicked Restore > Keep", "Opened the restored file"},
				variants: []variant{
					{label: "whole folder", note: "A folder is restored to another location first so the requester can pick what they need.",
						step: "Copy only the files the requester picked from the restore location back to the share."},
					{label: "SharePoint document library", note: "SharePoint files come from the Microsoft 365 backup job, not the file server job.",
						step: "Check the restored files in the SharePoint library's version history.", app: "Microsoft 365"},
					{label: "files encrypted by ransomware", note: "After ransomware, files are restored only from restore points Security has marked clean.",
						step: "Scan the restored files with Microsoft Defender before giving access back.", app: "Microsoft Defender", tag: "security"},
					{label: "file older than 30 days", note: "Older files come from the monthly restore points on the capacity tier, which take longer to mount.",
						step: "Warn the requester that the capacity tier can take an hour to mount."},
				},
			},
			{
				key: "slack-connect", title: "Set up a Slack Connect channel with a customer", category: "Collaboration",
				tags: []string{"customer-facing"}, apps: []string{"Slack"},
				summary: "Create a private shared channel with an external organisation, follow the ext- naming rule and invite the customer's contacts once the account owner has approved.",
				before: []string{
					"Permission to create Slack Connect channels",
					"The account owner's approval in the request ticket",
					"The customer contacts' work email addresses",
				},
				steps: []string{
					"In Slack, click + next to Channels and choose Create a channel.",
					"Name it ext-<customer>, for example ext-globex, and make it private.",
					"Open the channel settings, choose Share with external organisation and enter the customer contacts' emails.",
					"Turn off 'Allow them to invite others' so new guests come through us.",
					"Wait for the customer's admin to accept; a pending banner shows until then.",
					"Set the channel topic to the account owner's name and the support hours.",
					"Add the channel to the External channels section and log it in the ticket.",
				},
				fixes: []string{
					"The invitation expired: Slack Connect invitations last 14 days; send it again from the channel settings.",
					"The customer cannot accept: their workspace blocks Slack Connect until their admin approves our organisation.",
				},
				qa: []qa{
					{"Why make the channel private?", "External channels stay private so only the account team sees them in the list."},
					{"Who approved this channel?", "The account executive, in the ticket, as the policy asks."},
					{"How long are messages kept?", "One year in ext- channels."},
				},
				trail: []string{"Opened Slack", "Clicked + next to Channels", "Clicked Create a channel", "Typed the channel name ext-globex",
					"Clicked Share with external organisation", "Entered the customer emails", "Turned off Allow them to invite others"},
				variants: []variant{
					{label: "partner agency", note: "Agency channels use the prefix partner- and expire when the statement of work ends.",
						step: "Set a reminder to archive the channel on the statement of work's end date."},
					{label: "customer on Enterprise Grid", note: "A customer on Enterprise Grid must approve the connection at organisation level, which can take days.",
						step: "Send the customer's admin our organisation ID so they can pre-approve the connection."},
					{label: "incident bridge", note: "Incident bridges with a customer are opened by the on-call engineer and archived when the incident closes.",
						step: "Pin the status page link in the channel.", tag: "urgent"},
					{label: "after an acquisition", note: "When a customer is acquired, the old channel is renamed and the new company's contacts are invited.",
						step: "Rename the channel to the new company's name and tell the old contacts in the channel."},
				},
			},
			{
				key: "mfa-reenrol", title: "Re-enrol a lost MFA device in Okta Verify", category: "Security",
				tags: []string{"security", "access"}, apps: []string{"Okta", "Zoom"},
				summary: "When someone loses the phone that holds Okta Verify, confirm who they are on video, reset the factor and watch them enrol the new phone.",
				before: []string{
					"Help Desk Administrator role in Okta",
					"A video call with the user, camera on",
				},
				steps: []string{
					"Start a Zoom call with the user and compare them with their Workday photo.",
					"In the Okta Admin Console, open Directory > People and find the user.",
					"Choose More Actions > Reset Authenticators, select Okta Verify and confirm.",
					"Choose More Actions > Temporary access code and issue a code valid for one hour.",
					"Have the user sign in with the code and enrol Okta Verify on the new phone.",
					"Check that the Authenticators list shows the new device.",
					"Log the verification method in the ticket.",
				},
				fixes: []string{
					"The temporary access code is refused: it was used or expired; issue a new one.",
					"Enrolment loops back to the QR code: the phone's clock is wrong; set it to automatic time.",
				},
				qa: []qa{
					{"Why a video call?", "A voice is easy to fake; the policy needs a face check against the Workday photo."},
					{"What if the user has no phone at all?", "We give them a YubiKey from the IT cupboard and enrol that instead."},
					{"Was the old phone wiped?", "Yes, the user had already erased it with Find My before calling."},
				},
				trail: []string{"Joined a Zoom call with the user", "Opened Okta Admin Console", "Opened Directory > People",
					"Clicked More Actions > Reset Authenticators", "Clicked Temporary access code", "Checked the Authenticators list"},
				variants: []variant{
					{label: "YubiKey replacement", note: "A lost YubiKey is removed from the profile before a new key is enrolled in person.",
						step: "Register the new YubiKey's serial against the user in the asset register.", app: "YubiKey"},
					{label: "user travelling abroad", note: "For users abroad the call is with their manager present, and travel sign-in rules stay in place.",
						step: "Check the user's sign-in appears from the expected country in the System Log."},
					{label: "new phone, same number", note: "A new phone with the same number still needs a full reset; Okta Verify does not move between phones by itself."},
					{label: "admin account", note: "Admin accounts need a second administrator on the call and a Security sign-off.",
						step: "Get Security's sign-off in the ticket before closing it.", tag: "vip"},
				},
			},
			{
				key: "gws-newhire", title: "Create a new hire's account in Google Workspace", category: "Accounts & access",
				tags: []string{"onboarding", "access"}, apps: []string{"Google Workspace", "Okta"},
				summary: "Accounts come from the Workday hire through Okta; check the push worked, put the user in the right organisational unit and groups, and time the welcome email for day one.",
				before: []string{
					"The hire is Completed in Workday",
					"User Management Admin role in the Google Admin console",
				},
				steps: []string{
					"In Okta, open Directory > People and check the hire was imported from Workday with status Staged.",
					"Click Activate and choose not to send the activation email yet.",
					"Under Applications > Google Workspace, check the user is assigned and the push succeeded.",
					"In the Google Admin console, open Directory > Users, find the user and move them to their department's organisational unit.",
					"Add the user to the team's groups, for example finance@ and all-staff@.",
					"Schedule the activation email for 8:00 on the start date.",
					"Send the manager the new address and the first-day sign-in steps.",
				},
				fixes: []string{
					"The push failed with a username conflict: an old suspended account holds the address; rename it and push again.",
					"The user is missing from groups: dynamic groups update within 24 hours; add them by hand if the start date is sooner.",
				},
				qa: []qa{
					{"Why not send the activation email at once?", "Activation links expire after seven days, and some hires start three weeks later."},
					{"Which organisational unit did they go in?", "Sales/EMEA, so they pick up the regional Chrome policies."},
					{"Who asked for the extra groups?", "The manager, in the onboarding form."},
				},
				trail: []string{"Opened Okta Admin Console", "Opened Directory > People", "Clicked Activate", "Opened Google Admin console",
					"Moved the user to an organisational unit", "Added the user to groups"},
				variants: []variant{
					{label: "intern", note: "Intern accounts end on the internship's last day and get no access to shared drives outside their team.",
						step: "Set the account's end date to the last day of the internship in Okta."},
					{label: "rehire", note: "Rehires get their old address back; the old account is restored rather than created again.",
						step: "Restore the old account from Leavers instead of creating a new one."},
					{label: "name change before start", note: "A name change before the start date changes the address in Workday first, then in Google.",
						step: "Keep the old address as an alias so early emails still arrive."},
					{label: "start date moved", note: "When the start date moves, only the scheduled activation email moves; the account stays Staged.",
						step: "Move the scheduled activation email to the new start date."},
				},
				next: []string{"intune-laptop", "jamf-enrol", "saas-license"},
			},
			{
				key: "jamf-enrol", title: "Enrol a Mac in Jamf Pro", category: "Devices",
				tags: []string{"onboarding", "hardware"}, apps: []string{"Jamf Pro", "Apple Business Manager"},
				summary: "Assign the Mac to Jamf Pro in Apple Business Manager so it enrols on first boot, then check FileVault, the standard apps and the inventory record.",
				before: []string{
					"The Mac's serial number in Apple Business Manager",
					"Jamf Pro Site Administrator rights",
				},
				steps: []string{
					"In Apple Business Manager, open Devices, search the serial and assign it to the Jamf Pro MDM server.",
					"In Jamf Pro, open Computers > PreStage Enrollments and add the serial to the Standard Mac prestage.",
					"Start the Mac, join Wi-Fi and sign in at Remote Management with the user's Okta account.",
					"Wait for the enrolment policies to finish; the Self Service icon appears when they do.",
					"Check in Jamf Pro that FileVault 2 shows Encrypted and the recovery key is escrowed.",
					"Set the user and department on the computer record's User and Location tab.",
				},
				fixes: []string{
					"Remote Management never appears: the serial is not assigned in Apple Business Manager, or the Mac was set up before assignment; erase and start again.",
					"The FileVault key is not escrowed: the user has not logged out and in since enrolment.",
				},
				qa: []qa{
					{"Why assign in Apple Business Manager first?", "Without it the Mac enrols as a personal device and the MDM profile can be removed."},
					{"How long did the policies take?", "About twenty minutes on office Wi-Fi."},
				},
				trail: []string{"Opened Apple Business Manager", "Assigned the serial to Jamf Pro", "Opened Computers > PreStage Enrollments",
					"Added the serial to Standard Mac", "Checked FileVault 2 status", "Set User and Location"},
				variants: []variant{
					{label: "designer with Creative Cloud", note: "Designers get the Creative Cloud prestage, which adds Adobe apps and fonts.",
						step: "Check Adobe Creative Cloud signed in with the user's licence.", app: "Adobe Creative Cloud"},
					{label: "re-enrol after macOS reinstall", note: "A reinstalled Mac enrols again from the same prestage; the old computer record is deleted first."},
					{label: "loaner Mac", note: "Loaners stay assigned to IT and are wiped when they come back.",
						step: "Add the loan's return date to the computer record's notes."},
					{label: "Mac for a remote starter", note: "Remote starters' Macs are drop-shipped and enrol at home; IT joins a call for the first boot.",
						step: "Stay on the call until Self Service appears on the starter's Mac.", tag: "remote"},
				},
				next: []string{"saas-license"},
			},
			{
				key: "phishing", title: "Investigate a reported phishing email", category: "Security",
				tags: []string{"security", "urgent"}, apps: []string{"Google Workspace", "Jira"},
				summary: "Check the reported message, find everyone who received it, pull it from their inboxes and block the sender; if anyone clicked, reset their password.",
				before: []string{
					"Security Center access in the Google Admin console",
					"The report from the Report phishing button, or the forwarded message with headers",
				},
				steps: []string{
					"Open the report in the Security queue in Jira and copy the message ID and sender.",
					"In the Google Admin console, open Security > Investigation tool and search Gmail messages by message ID.",
					"Check the headers: SPF, DKIM and DMARC results, the Reply-To and the links' real targets.",
					"Select every copy of the message and choose Actions > Delete messages.",
					"Add the sender's domain to the blocked senders list under Apps > Google Workspace > Gmail > Spam.",
					"Search the Login audit log for anyone who signed in from a new location after the email arrived.",
					"Record the findings and the recipients in the Jira ticket.",
				},
				fixes: []string{
					"The Investigation tool finds no copies: the message ID was copied with angle brackets; remove them.",
					"Messages cannot be deleted: the tool needs the Gmail 'Delete messages' privilege, which only Security admins have.",
				},
				qa: []qa{
					{"How many people got it?", "Forty-two, all in the sales group, from a lookalike domain."},
					{"Did anyone click?", "Two people opened the link; we reset both passwords and cleared their sessions."},
					{"Why block the domain rather than the address?", "The attacker rotated addresses on the same domain."},
				},
				trail: []string{"Opened the Jira ticket", "Opened Security > Investigation tool", "Searched Gmail messages by message ID",
					"Checked the message headers", "Clicked Actions > Delete messages", "Added the domain to blocked senders"},
				variants: []variant{
					{label: "invoice fraud attempt", note: "Fake invoices are also reported to finance so no payment goes out to the new bank details.",
						step: "Tell accounts payable in #finance-ap to hold any payment to the bank details in the email."},
					{label: "someone entered their password", note: "When someone entered their password, their Okta sessions are cleared and the password reset at once.",
						step: "Reset the person's Okta password and clear their sessions.", app: "Okta"},
					{label: "message to the executive team", note: "Targeted messages to executives are escalated to the Security lead straight away.", tag: "vip"},
					{label: "false positive", note: "When the report is a real newsletter, the sender is allow-listed and the reporter thanked."},
				},
				next: []string{"okta-reset", "mfa-reenrol"},
			},
			{
				key: "saas-license", title: "Assign a paid SaaS licence through an Okta group", category: "Accounts & access",
				tags: []string{"access", "monthly"}, apps: []string{"Okta"},
				summary: "Paid seats are granted by adding the person to the application's licence group in Okta, after the budget owner approves, so the monthly licence review can count them.",
				before: []string{
					"The budget owner's approval in the access request",
					"Group Administrator rights for the licence groups in Okta",
				},
				steps: []string{
					"Check the request has the budget owner's approval and the cost centre.",
					"In the Okta Admin Console, open Directory > Groups and find the application's licence group.",
					"Click Assign people, add the user and save.",
					"Open the application's assignment tab and check the user now appears with the right role.",
					"Ask the user to sign in from the Okta dashboard tile and confirm the seat is active.",
					"Add the seat to the licence tracker with the cost centre and close the request.",
				},
				fixes: []string{
					"The app says no seats are free: the licence pool is full; reclaim an inactive seat from the monthly review list first.",
					"The user signs in but has the free plan: provisioning is off for the app; assign the seat in the app's admin page too.",
				},
				qa: []qa{
					{"Who approves a paid seat?", "The budget owner for the cost centre; IT only checks the approval exists."},
					{"How do you reclaim unused seats?", "The monthly review removes anyone who has not signed in for 60 days."},
				},
				trail: []string{"Opened the access request", "Opened Okta Admin Console", "Opened Directory > Groups",
					"Clicked Assign people", "Checked the application's assignments", "Updated the licence tracker"},
				variants: []variant{
					{label: "Zoom licence", note: "Licensed Zoom is needed for meetings over 40 minutes.", app: "Zoom"},
					{label: "Figma Professional seat", note: "Figma seats are billed on the next invoice, so mid-cycle requests wait for approval.", app: "Figma"},
					{label: "Salesforce licence", note: "Salesforce licences also need a profile and role set by sales operations.", app: "Salesforce",
						step: "Ask sales operations to set the user's Salesforce profile and role."},
					{label: "Adobe Acrobat Pro", note: "Acrobat Pro comes from the Adobe admin console's product profile tied to the Okta group.", app: "Adobe Acrobat"},
				},
				next: []string{"lib_finance:billcom-approve"},
			},
		},
	},
	{
		id: "lib_finance", workspace: "ws_acme", name: "Finance", slug: "finance",
		previousSlugs: []string{"accounting"},
		description:   "Close, payables, receivables, payroll, expenses and tax at Acme, as the finance team actually does them.",
		version:       1, demoDocuments: 50, largeWeight: 20,
		sites: []string{"US entity", "UK entity", "German entity", "Canadian entity", "Australian entity", "French entity",
			"Irish entity", "Singapore entity", "Dutch entity", "Japanese entity"},
		siteSentence: "Amounts and deadlines here are those of the %s.",
		qa: []qa{
			{"Is there a checklist for this?", "Yes, the close tracker in the finance shared drive lists it with its owner and due day."},
			{"Who reviews it?", "The controller reviews everything over $10,000; smaller items are spot-checked."},
		},
		procs: []proc{
			{
				key: "netsuite-close", title: "Run month-end close in NetSuite", category: "Close",
				tags: []string{"monthly", "audit"}, apps: []string{"NetSuite", "Excel"},
				summary: "Work through the Period Close Checklist in order: lock payables and receivables, revalue foreign currency, run allocations, explain the movements, then close the period. The target is working day 5.",
				steps: []string{
					"In NetSuite, go to Setup > Accounting > Manage Accounting Periods and open the Period Close Checklist for the month.",
					"Click Lock A/P and Lock A/R once payables and receivables confirm their cut-off in the close tracker.",
					"Run Revalue Open Foreign Currency Balances and review the journal it creates.",
					"Run the monthly allocation schedules from Transactions > Financial > Create Allocation Schedules.",
					"Export the trial balance to Excel and explain every movement over $10,000 or 10% against last month.",
					"Post correcting journals once the reviewer approves them.",
					"Tick Close on the checklist to close the period.",
					"Save the flux workbook in the month's close folder and tell the controller.",
				},
				qa: []qa{
					{"What movement needs an explanation?", "Anything over $10,000 or 10% against last month."},
					{"Who signs off the close?", "The controller reviews the flux workbook before the period is closed."},
					{"Why lock A/P before revaluing?", "So no new bills change foreign-currency balances after the revaluation."},
				},
				trail: []string{"Opened NetSuite", "Clicked Setup > Accounting > Manage Accounting Periods", "Opened Period Close Checklist",
					"Clicked Lock A/P", "Ran Revalue Open Foreign Currency Balances", "Exported the trial balance to Excel", "Clicked Close"},
				variants: []variant{
					{label: "quarter-end", note: "At quarter end the close adds the deferred revenue roll-forward and the board pack figures.",
						step: "Roll forward deferred revenue and send the board pack figures to the CFO.", tag: "quarterly"},
					{label: "year-end", note: "Year-end adds the auditors' adjustments and the retained earnings roll.",
						step: "Post the auditors' adjustments and check retained earnings rolled forward.", tag: "year-end"},
					{label: "consolidation", note: "Consolidation runs after every subsidiary has closed, with the consolidated exchange rates updated first.",
						step: "Run Update Consolidated Exchange Rates and check the eliminations journal."},
					{label: "reopening a closed period", note: "Reopening a period needs the controller's written approval and is logged for the auditors.",
						step: "Record the reopening and its reason in the audit log sheet."},
				},
				next: []string{"vat-return"},
			},
			{
				key: "xero-rec", title: "Reconcile a bank statement in Xero", category: "Close",
				tags: []string{"monthly", "cash"}, apps: []string{"Xero"},
				summary: "Match every line of the bank feed to a transaction in Xero, create the missing ones, and check that Xero's balance equals the bank statement.",
				steps: []string{
					"In Xero, open Accounting > Bank accounts and click Reconcile items on the account.",
					"Accept the suggested match where the amount, date and contact agree.",
					"Use Find & Match for a payment that covers several invoices and tick each invoice it paid.",
					"Use Create for bank fees and interest, coded to Bank Fees (404) or Interest Income (270).",
					"Leave lines you cannot identify and list them in the queries sheet for the account owner.",
					"Open the Bank Reconciliation report and compare its statement balance with the bank's PDF statement.",
					"Attach the PDF statement to the month's reconciliation in the close folder.",
				},
				qa: []qa{
					{"What if a payment matches nothing?", "It stays unreconciled and goes in the queries sheet; we never force a match."},
					{"Which account do bank fees go to?", "Bank Fees, 404."},
					{"Why compare with the PDF?", "The feed can miss a day; the PDF statement is what the auditors test."},
				},
				trail: []string{"Opened Xero", "Clicked Accounting > Bank accounts", "Clicked Reconcile items", "Clicked OK on suggested matches",
					"Used Find & Match", "Opened the Bank Reconciliation report"},
				variants: []variant{
					{label: "USD account", note: "The USD account is reconciled in USD; Xero handles the exchange difference at month end."},
					{label: "credit card account", note: "Card statements close on the 25th, so the reconciliation uses the statement date, not month end."},
					{label: "Stripe clearing account", note: "Stripe pays out net of fees, so each payout is split into gross sales and fees.",
						step: "Split each payout into gross sales and Stripe fees using the payout report.", app: "Stripe"},
					{label: "broken bank feed", note: "When the feed breaks, the statement is imported as a CSV instead.",
						step: "Import the CSV statement from Accounting > Bank accounts > Import a statement."},
				},
				next: []string{"netsuite-close"},
			},
			{
				key: "billcom-approve", title: "Approve a vendor invoice in Bill.com", category: "Accounts payable",
				tags: []string{"approvals", "vendors"}, apps: []string{"Bill.com", "NetSuite"},
				summary: "Check the invoice against the purchase order and receipt, fix the coding, and approve it within your limit; Bill.com then syncs it to NetSuite for payment.",
				steps: []string{
					"Open Bill.com and go to Payables > Bills > Waiting for approval.",
					"Open the bill and compare vendor, amount and due date with the attached PDF.",
					"Match it to the purchase order number and check the goods or service were received.",
					"Check the GL account and department; correct them if the coding is wrong.",
					"Check your limit: the budget owner approves up to $5,000, the controller up to $25,000, the CFO above.",
					"Click Approve, or Deny with a comment telling AP what to fix.",
					"Check the bill shows Approved and appears in NetSuite after the next sync.",
				},
				qa: []qa{
					{"Which approval limit applies?", "Anything above $5,000 needs the controller."},
					{"What if there is no receipt yet?", "Leave it waiting and ask the requester to confirm delivery in the PO."},
					{"Why did you change the department?", "The software was for sales, not marketing, so it goes to department 300."},
				},
				trail: []string{"Opened Bill.com", "Clicked Payables > Bills", "Opened Waiting for approval", "Opened the bill PDF",
					"Changed the GL account", "Clicked Approve"},
				variants: []variant{
					{label: "invoice without a purchase order", note: "Invoices without a PO need the budget owner's written confirmation attached before approval.",
						step: "Attach the budget owner's confirmation email to the bill."},
					{label: "foreign-currency invoice", note: "Foreign-currency bills are approved in the invoice currency; the USD figure is only an estimate.",
						step: "Check the currency on the bill matches the invoice before approving."},
					{label: "SaaS renewal", note: "Renewals are checked against the licence tracker so we do not pay for seats nobody uses.",
						step: "Compare the seat count with IT's licence tracker and query any difference.", tag: "renewals"},
					{label: "suspected duplicate", note: "A possible duplicate is denied with a link to the first bill rather than approved twice.",
						step: "Search Bill.com for the invoice number and amount to find the first copy."},
				},
			},
			{
				key: "gusto-payroll", title: "Run payroll in Gusto", category: "Payroll",
				tags: []string{"semi-monthly", "compliance"}, apps: []string{"Gusto"},
				summary: "Check who is on the payroll, enter hours and one-off pay, review the totals against last period and submit four business days before pay day.",
				steps: []string{
					"Open Gusto and click Run payroll on the upcoming regular pay period.",
					"Check the employee list: starters added, leavers removed, nobody on unpaid leave being paid.",
					"Enter hours for hourly staff from the timesheet export, including overtime their managers approved.",
					"Add one-off items: bonuses, commissions from the sales commission report and reimbursements.",
					"Click Continue and compare gross pay with last period; explain any change over 5%.",
					"Check the funding date and that the account holds enough for net pay and taxes.",
					"Click Submit payroll before 4 pm Pacific, four business days before pay day.",
					"Download the payroll journal report and save it in the payroll folder.",
				},
				qa: []qa{
					{"What is the submission deadline?", "4 pm Pacific, four business days before pay day, or pay is late."},
					{"Where do commissions come from?", "The sales commission report that sales operations sends on the 10th."},
					{"Why did gross pay go up?", "Three starters joined and the annual raises took effect."},
				},
				trail: []string{"Opened Gusto", "Clicked Run payroll", "Entered hours", "Added a bonus", "Clicked Continue",
					"Reviewed the payroll summary", "Clicked Submit payroll"},
				variants: []variant{
					{label: "off-cycle bonus run", note: "Off-cycle runs pay bonuses only, with supplemental tax withholding.",
						step: "Set the tax withholding to supplemental on every bonus line."},
					{label: "first payroll of the year", note: "The first run of the year resets tax limits, so totals look higher than in December."},
					{label: "commission payout", note: "Commission runs use the approved commission report, signed off by the VP of Sales.",
						step: "Match each commission line to the signed commission report.", app: "Salesforce"},
					{label: "employee in a new state", note: "An employee in a new state needs that state's tax registration before their first pay.",
						step: "Add the state tax account numbers under Company > Taxes before submitting."},
				},
			},
			{
				key: "expensify-submit", title: "Submit an expense report in Expensify", category: "Expenses",
				tags: []string{"monthly", "self-service"}, apps: []string{"Expensify"},
				summary: "Collect the month's receipts in one report, code each expense, fix policy violations and submit it for your manager's approval.",
				steps: []string{
					"Open Expensify, go to Reports and click New report > Expense report.",
					"Add receipts with SmartScan from the phone app or by dragging PDFs into the report.",
					"Check the merchant, date and amount SmartScan read, and pick the category.",
					"Tag each expense with the department and, for client costs, the customer project.",
					"Add attendees to meals, with company names for guests.",
					"Fix red violations, such as a missing receipt over $75, by adding the receipt or a comment.",
					"Click Submit; the report goes to your manager and then to finance.",
				},
				qa: []qa{
					{"When is a receipt needed?", "For anything over $75, and for every hotel night whatever the amount."},
					{"Which category for a team lunch?", "Meals - Team, with every attendee listed."},
					{"How fast is it paid?", "Approved reports are paid in the next Friday's reimbursement run."},
				},
				trail: []string{"Opened Expensify", "Clicked New report", "Uploaded receipts with SmartScan", "Chose categories",
					"Added attendees", "Clicked Submit"},
				variants: []variant{
					{label: "client travel", note: "Client travel is tagged to the customer project so it can be rebilled.",
						step: "Mark rebillable expenses as Billable."},
					{label: "conference trip", note: "Conference tickets are prepaid by finance, so only travel and meals go on the report."},
					{label: "international trip", note: "Foreign receipts are entered in their own currency; Expensify converts at the day's rate.",
						step: "Check the converted amount matches your card statement."},
					{label: "home office equipment", note: "Home office equipment is capped at $500 a year and needs the manager's pre-approval.",
						step: "Attach the manager's pre-approval to the expense."},
				},
				next: []string{"card-rec"},
			},
			{
				key: "vat-return", title: "Prepare a VAT return in Xero", category: "Tax",
				tags: []string{"quarterly", "compliance"}, apps: []string{"Xero", "Excel"},
				summary: "Review the quarter's VAT in Xero, correct wrong tax rates at source, tie the return to the VAT control account and file it to HMRC after review.",
				steps: []string{
					"In Xero, go to Accounting > Reports > VAT Return and open the draft return for the quarter.",
					"Check the period dates and that all three months' bank reconciliations are done.",
					"Open the VAT Audit Report and look for wrong tax rates, especially imports and reverse-charge services.",
					"Correct wrong rates on the source transactions; the draft updates by itself.",
					"Compare Box 1 and Box 4 with the VAT control account on the balance sheet.",
					"Export the return to Excel and send it to the finance manager for review.",
					"After approval, click Submit to HMRC and save the submission receipt.",
				},
				qa: []qa{
					{"What goes wrong most often?", "US software subscriptions coded at 20% instead of reverse charge."},
					{"When is it due?", "One month and seven days after the quarter ends."},
					{"Who reviews it?", "The finance manager, before anything goes to HMRC."},
				},
				trail: []string{"Opened Xero", "Opened Reports > VAT Return", "Opened the VAT Audit Report", "Edited a bill's tax rate",
					"Exported the return to Excel", "Clicked Submit to HMRC"},
				variants: []variant{
					{label: "first return after registration", note: "The first return can include VAT on costs from before registration, within the time limits."},
					{label: "postponed import VAT", note: "Postponed import VAT comes from the monthly statement downloaded from the customs service.",
						step: "Enter the postponed import VAT from the monthly statement in Boxes 1 and 4."},
					{label: "partial exemption", note: "With exempt income, input VAT is apportioned using the standard method.",
						step: "Apply the partial exemption percentage to residual input VAT."},
					{label: "late submission", note: "A late return still goes in as soon as possible; penalty points are tracked in the tax calendar."},
				},
			},
			{
				key: "vendor-setup", title: "Set up a new vendor in NetSuite", category: "Accounts payable",
				tags: []string{"vendors", "compliance"}, apps: []string{"NetSuite"},
				summary: "Create the vendor from a complete request, verify bank details by phone from an independent number, and have a second person approve them before the first payment.",
				steps: []string{
					"Check the request has the W-9 or W-8BEN-E, a bank letter and the budget owner's approval.",
					"In NetSuite, go to Lists > Relationships > Vendors > New.",
					"Enter the legal name exactly as on the tax form, the tax ID and 1099 eligibility.",
					"Set terms (Net 30 by default), currency and the default expense account.",
					"Verify the bank details by calling the vendor on a number from their website, never from the email.",
					"Enter the bank details on the Financial tab and save.",
					"Ask a second person to approve the bank details in the vendor approval queue.",
				},
				qa: []qa{
					{"Why call the vendor?", "Fake bank details arrive by email, so we confirm them on a number we found ourselves."},
					{"What terms do we use?", "Net 30 unless the contract says otherwise."},
					{"Who approves bank details?", "Anyone in finance except the person who entered them."},
				},
				trail: []string{"Opened the vendor request", "Opened NetSuite", "Clicked Lists > Relationships > Vendors > New",
					"Entered the tax ID", "Entered bank details on the Financial tab", "Clicked Save"},
				variants: []variant{
					{label: "foreign vendor", note: "Foreign vendors need a W-8BEN-E and are paid by wire in their own currency.",
						step: "Set the vendor's currency and add the SWIFT code to the bank details."},
					{label: "individual contractor", note: "Individual contractors are 1099-eligible and their agreement is attached to the record.",
						tag: "contractors"},
					{label: "bank details change", note: "A change of bank details is treated as a new setup: verified by phone and approved by a second person.",
						step: "Put the vendor's payments on hold until the change is approved."},
					{label: "SaaS vendor paid by card", note: "Vendors paid by company card need no bank details, only the card on file.", app: "Ramp"},
				},
				next: []string{"billcom-approve", "lib_it:saas-license"},
			},
			{
				key: "ar-invoice", title: "Create a customer invoice in NetSuite", category: "Accounts receivable",
				tags: []string{"monthly", "customer-facing"}, apps: []string{"NetSuite", "Salesforce"},
				summary: "Bill the customer exactly as the signed order form says, with their PO number and the right tax, and record the invoice number on the opportunity.",
				steps: []string{
					"Open the signed order form from the Salesforce opportunity and note the billing schedule.",
					"In NetSuite, go to Transactions > Sales > Create Invoices and select the customer.",
					"Enter the customer's PO number, the terms and the billing contact.",
					"Add the subscription items, quantities and prices exactly as on the order form.",
					"Check the tax NetSuite calculated from the ship-to address; exempt customers need a certificate on file.",
					"Save, then email the invoice from the record with the PDF attached.",
					"Log the invoice number on the Salesforce opportunity.",
				},
				qa: []qa{
					{"Where do the prices come from?", "Only from the signed order form; never from the quote, which can be out of date."},
					{"What if the PO number is missing?", "We ask the customer before sending; many of them reject invoices without it."},
					{"Which terms apply?", "Net 30, unless the order form says Net 45 or Net 60."},
				},
				trail: []string{"Opened the Salesforce opportunity", "Opened the order form", "Opened NetSuite", "Clicked Create Invoices",
					"Added subscription items", "Clicked Save", "Clicked Email"},
				variants: []variant{
					{label: "multi-year prepaid deal", note: "Multi-year prepaid deals are invoiced in full and the revenue is deferred over the term.",
						step: "Check the revenue schedule spreads the amount over the full term."},
					{label: "usage overage", note: "Overage is billed from the usage report at the rate in the order form.",
						step: "Attach the usage report to the invoice."},
					{label: "customer portal upload", note: "Some customers only accept invoices uploaded to their procurement portal.",
						step: "Upload the invoice PDF to the customer's Coupa portal and note the portal reference.", app: "Coupa"},
					{label: "credit note for a billing error", note: "A wrong invoice is never edited after sending; a credit note reverses it and a new invoice goes out.",
						step: "Apply the credit note to the wrong invoice so both close."},
				},
				next: []string{"collections"},
			},
			{
				key: "collections", title: "Chase an overdue customer invoice", category: "Accounts receivable",
				tags: []string{"cash", "customer-facing"}, apps: []string{"NetSuite", "Gmail"},
				summary: "Work the aging report from the oldest balance, send the reminder that fits the days overdue and escalate to the account owner after 45 days.",
				steps: []string{
					"In NetSuite, open Reports > Customers/Receivables > A/R Aging and sort by days overdue.",
					"Open the customer record and read the notes from earlier reminders.",
					"Send the reminder template that matches the age: friendly at 7 days, firm at 30, final at 45.",
					"Attach the invoice PDF and a statement of account to the email.",
					"Log the reminder and any promised payment date in the customer's notes.",
					"After 45 days, tell the account owner in Slack and put the account on credit hold.",
				},
				qa: []qa{
					{"When do you involve the account owner?", "At 45 days overdue, before the final notice goes out."},
					{"What does credit hold do?", "No new orders or renewals can be invoiced until the balance is paid."},
				},
				trail: []string{"Opened NetSuite", "Opened A/R Aging report", "Opened the customer record", "Opened Gmail",
					"Sent the 30-day reminder", "Added a note to the customer record"},
				variants: []variant{
					{label: "disputed invoice", note: "A disputed invoice pauses reminders until the account owner resolves the dispute.",
						step: "Mark the invoice as disputed so the reminders stop."},
					{label: "customer in a payment plan", note: "Customers on a payment plan are chased only when an instalment is missed."},
					{label: "handover to collections agency", note: "After 90 days and the CFO's approval, the debt goes to the collections agency.",
						step: "Send the agency the invoice, statement and reminder history."},
					{label: "partial payment", note: "A partial payment is applied to the oldest invoice first and the customer told what remains."},
				},
			},
			{
				key: "accrual", title: "Post an accrual journal entry in NetSuite", category: "Close",
				tags: []string{"monthly", "audit"}, apps: []string{"NetSuite", "Excel"},
				summary: "Accrue costs incurred but not yet billed, with support attached and automatic reversal on the first day of next month.",
				steps: []string{
					"List unbilled costs from open purchase orders and the budget owners' replies in the accruals workbook.",
					"In NetSuite, go to Transactions > Financial > Make Journal Entries.",
					"Set the date to the last day of the month and tick Reversal Date for the first of next month.",
					"Debit the expense accounts by department and credit Accrued Liabilities (2100).",
					"Attach the accruals workbook under Communication > Files.",
					"Submit the entry for approval and tell the reviewer.",
				},
				qa: []qa{
					{"What is the accrual threshold?", "We only accrue items over $2,500."},
					{"Why auto-reverse?", "So the real bill next month does not double-count the cost."},
				},
				trail: []string{"Opened the accruals workbook", "Opened NetSuite", "Clicked Make Journal Entries", "Set the reversal date",
					"Attached the workbook", "Clicked Submit for approval"},
				variants: []variant{
					{label: "bonus accrual", note: "The bonus accrual uses the HR forecast of payout percentage and is trued up each quarter."},
					{label: "audit fee accrual", note: "Audit fees are accrued evenly across the year from the engagement letter."},
					{label: "prepaid expense release", note: "Prepaid releases move a twelfth of the annual prepaid to expense each month.",
						step: "Check the prepaid schedule's balance matches the balance sheet."},
					{label: "legal fees accrual", note: "Legal fees are accrued from the law firms' monthly work-in-progress estimates."},
				},
				next: []string{"netsuite-close"},
			},
			{
				key: "final-pay", title: "Process final pay for a leaver in Gusto", category: "Payroll",
				tags: []string{"offboarding", "compliance"}, apps: []string{"Gusto"},
				summary: "Pay the leaver everything owed on the date the state requires, including unused paid time off where required, and stop future pay runs.",
				steps: []string{
					"Open the employee in Gusto and click Dismiss employee.",
					"Enter the last day worked and choose whether to run the final payroll now or in the next regular run.",
					"Check the state's final pay deadline; some states need payment on the last day.",
					"Add unused paid time off from the PTO balance where the state or policy requires a payout.",
					"Deduct any outstanding advance the leaver agreed to in writing.",
					"Submit the final payroll and confirm the employee no longer appears in future runs.",
				},
				qa: []qa{
					{"Is unused PTO paid out?", "In California yes, always; elsewhere it follows the handbook, which says no."},
					{"When must final pay arrive?", "On the last day for involuntary leavers in California, within 72 hours for voluntary ones without notice."},
				},
				trail: []string{"Opened Gusto", "Opened the employee profile", "Clicked Dismiss employee", "Entered the last day worked",
					"Added PTO payout", "Clicked Submit payroll"},
				variants: []variant{
					{label: "California employee", note: "California requires final pay with accrued vacation on the last day for involuntary exits."},
					{label: "leaver with commission due", note: "Commission earned before leaving is paid once the deal's invoice is paid, as the plan says.",
						step: "Add the earned commission from the signed commission statement."},
					{label: "severance agreement", note: "Severance is paid only after the signed release's revocation period ends.",
						step: "Schedule the severance payment after the revocation period."},
					{label: "contractor final invoice", note: "Contractors are not on payroll; their last invoice is paid through accounts payable instead.", app: "Bill.com"},
				},
			},
			{
				key: "card-rec", title: "Reconcile company card transactions in Ramp", category: "Expenses",
				tags: []string{"monthly"}, apps: []string{"Ramp", "NetSuite"},
				summary: "Chase missing receipts, check the coding of every card transaction and sync the month's transactions to NetSuite before the close.",
				steps: []string{
					"In Ramp, open Transactions and filter to the month with Missing receipt.",
					"Send reminders to cardholders with missing receipts, and lock cards over 14 days late.",
					"Review the GL account, department and memo of every transaction over $500.",
					"Mark personal charges as Reimbursable by employee so they are paid back.",
					"Click Sync to NetSuite for the month's approved transactions.",
					"Compare the synced total with the card statement and explain any difference.",
				},
				qa: []qa{
					{"When is a card locked?", "When a receipt is more than 14 days late."},
					{"What about personal charges?", "They are marked reimbursable and paid back through payroll deduction."},
				},
				trail: []string{"Opened Ramp", "Filtered Transactions by Missing receipt", "Sent receipt reminders", "Edited GL account",
					"Clicked Sync to NetSuite"},
				variants: []variant{
					{label: "travel-heavy month", note: "After the sales kickoff the volume doubles, so the receipt chase starts a week early."},
					{label: "lost card", note: "A lost card is frozen, a new one issued, and pending charges reviewed with the cardholder.",
						step: "Review pending charges with the cardholder and dispute anything they do not recognise."},
					{label: "subscription charges", note: "Recurring software charges are matched to the licence tracker and coded to the owner's department."},
					{label: "leaver's card", note: "A leaver's card is cancelled on the last day and every open receipt collected before final pay.",
						step: "Cancel the card and tell payroll about any unreturned receipts."},
				},
				next: []string{"netsuite-close"},
			},
		},
	},
	{
		id: "lib_sales", workspace: "ws_acme", name: "Sales Operations", slug: "sales-operations",
		description: "Quoting, pipeline hygiene, handoffs and reporting for Acme's sales team, maintained by sales operations.",
		version:     2, demoDocuments: 45, largeWeight: 18,
		sites: []string{"US East territory", "US West territory", "US Central territory", "UK and Ireland territory", "DACH territory",
			"Nordics territory", "Benelux territory", "France territory", "ANZ territory", "Japan territory", "LATAM territory", "Canada territory"},
		siteSentence: "The %s follows this with its own approval chain and currency.",
		qa: []qa{
			{"Does this change at quarter end?", "Only the deadlines: everything has to be in Salesforce by noon on the last day."},
			{"Who owns this process?", "Sales operations; questions go to #sales-ops in Slack."},
		},
		procs: []proc{
			{
				key: "cpq-quote", title: "Create a quote in Salesforce CPQ", category: "Quoting",
				tags: []string{"customer-facing"}, apps: []string{"Salesforce CPQ"},
				summary: "Build the quote from the opportunity so pricing, discounts and terms come from the price book, then generate the PDF for the customer.",
				before: []string{
					"An opportunity at stage Proposal or later with the primary contact set",
					"The customer's seat count and term",
				},
				steps: []string{
					"Open the opportunity in Salesforce and click New Quote, then tick Primary.",
					"Click Edit Lines to open the quote line editor.",
					"Click Add Products, pick the plan from the price book and click Select.",
					"Set Quantity to the seat count and Subscription Term to the number of months.",
					"Enter any Additional Disc. (%) within your limit, or leave it for approval.",
					"Click Calculate, then Save, and check the net total.",
					"Click Generate Document, choose the Standard Quote template and save it as PDF.",
					"Send the PDF from the opportunity with Email Document.",
				},
				fixes: []string{
					"A product is missing from Add Products: it is not in the opportunity's price book; change the price book before adding lines.",
					"Generate Document is greyed out: the quote is waiting for approval.",
				},
				qa: []qa{
					{"Why tick Primary?", "Only the primary quote syncs its lines back to the opportunity amount."},
					{"What discount can a rep give alone?", "Up to 10%; above that the quote goes for approval."},
					{"Which template did you use?", "Standard Quote; the multi-year template is only for terms over 12 months."},
				},
				trail: []string{"Opened the opportunity", "Clicked New Quote", "Clicked Edit Lines", "Clicked Add Products",
					"Set Quantity and Subscription Term", "Clicked Calculate", "Clicked Generate Document"},
				variants: []variant{
					{label: "multi-year deal", note: "Multi-year quotes use yearly price steps and the multi-year template.",
						step: "Check the year-by-year schedule on the generated PDF."},
					{label: "renewal", note: "Renewal quotes are created from the contract's Renewal Opportunity, never from scratch.", tag: "renewals"},
					{label: "add-on seats mid-term", note: "Add-on quotes are amendments, prorated to the contract's end date.",
						step: "Check the prorated amount matches the remaining months."},
					{label: "partner-sourced deal", note: "Partner deals use the partner price book with the reseller margin built in.", tag: "partners"},
				},
				next: []string{"discount-approval", "docusign"},
			},
			{
				key: "hubspot-dedupe", title: "Merge duplicate leads in HubSpot", category: "Data quality",
				tags: []string{"data-hygiene", "weekly"}, apps: []string{"HubSpot"},
				summary: "Work through HubSpot's duplicate suggestions each week, keep the record with the richest history as primary and merge the rest into it.",
				before: []string{
					"Super Admin or the Merge contacts permission in HubSpot",
					"The weekly data hygiene list from the #sales-ops channel",
				},
				steps: []string{
					"In HubSpot, open Contacts, click Actions > Manage duplicates.",
					"Open the first suggested pair and compare email, company and last activity.",
					"Pick as primary the record with the most activity and an owner.",
					"Click Merge; properties from the primary win, and empty ones are filled from the other record.",
					"Check the merged record's lifecycle stage and owner are still right.",
					"Click Reject for pairs that are different people with similar names.",
				},
				fixes: []string{
					"Merge is refused: one record is in an active sequence; unenrol it first.",
					"The merged record lost its owner: the primary had none; set the owner by hand.",
				},
				qa: []qa{
					{"Which record becomes primary?", "The one with more activity and an owner; its properties win in the merge."},
					{"Can a merge be undone?", "No, so we reject any pair we are unsure of."},
				},
				trail: []string{"Opened HubSpot", "Opened Contacts", "Clicked Actions > Manage duplicates", "Reviewed a duplicate pair",
					"Clicked Merge", "Clicked Reject"},
				variants: []variant{
					{label: "duplicate companies", note: "Company duplicates are merged after checking the domains, since subsidiaries share names."},
					{label: "personal and work email", note: "When the same person has a personal and a work email, the work record stays primary."},
					{label: "after a list import", note: "Right after an import the duplicate tool is run on the new records only.",
						step: "Filter duplicates to records created today before merging."},
					{label: "synced Salesforce records", note: "Records synced to Salesforce are merged in Salesforce first, so the sync does not recreate them.", app: "Salesforce"},
				},
				next: []string{"lead-routing"},
			},
			{
				key: "closed-won-handoff", title: "Hand off a closed-won deal to onboarding", category: "Handoffs",
				tags: []string{"handoff", "customer-facing"}, apps: []string{"Salesforce", "Slack"},
				summary: "When a deal closes, give customer success and finance everything they need in one go: the signed order form, the contacts, what was promised and the go-live date.",
				before: []string{
					"The opportunity at Closed Won with the signed order form attached",
					"The customer's onboarding contact",
				},
				steps: []string{
					"Check the opportunity is Closed Won and the signed order form is under Files.",
					"Fill in the Handoff section: onboarding contact, go-live date, and anything promised during the sale.",
					"Click Create Onboarding Project; Salesforce creates the project and assigns the customer success manager.",
					"Post in #new-customers in Slack with the account, the amount and a link to the opportunity.",
					"Book the kickoff call with the customer and the customer success manager.",
					"Tell finance the billing contact and PO number so the first invoice goes out.",
				},
				fixes: []string{
					"Create Onboarding Project is missing: the opportunity's record type is Renewal; renewals have no onboarding.",
					"The Slack post did not appear: the Salesforce for Slack app was removed from #new-customers; add it back.",
				},
				qa: []qa{
					{"What counts as a promise to record?", "Anything not in the standard product: custom integrations, extra training, a named contact."},
					{"Who books the kickoff?", "The account executive, with the customer success manager invited."},
				},
				trail: []string{"Opened the opportunity", "Checked Files for the order form", "Filled in the Handoff section",
					"Clicked Create Onboarding Project", "Posted in #new-customers", "Booked the kickoff call"},
				variants: []variant{
					{label: "enterprise customer", note: "Enterprise deals also get a solutions engineer on the kickoff and a security review follow-up.",
						step: "Add the solutions engineer to the onboarding project."},
					{label: "self-serve upgrade", note: "Self-serve upgrades have no kickoff; the customer gets the onboarding email sequence instead."},
					{label: "customer needing a shared Slack channel", note: "Customers who asked for a shared channel get one set up by IT before the kickoff.",
						step: "Request the Slack Connect channel from IT with the customer's contacts."},
					{label: "deal with a pilot period", note: "Pilots hand off with success criteria and a review date written into the project.",
						step: "Write the pilot's success criteria and review date into the project."},
				},
				next: []string{"lib_finance:ar-invoice", "lib_it:slack-connect"},
			},
			{
				key: "forecast", title: "Update the weekly forecast in Salesforce", category: "Pipeline",
				tags: []string{"weekly", "pipeline"}, apps: []string{"Salesforce"},
				summary: "Every Monday before noon, check each open opportunity's stage, amount and close date, and set the forecast category you would bet on.",
				before: []string{
					"Your open opportunities for the quarter",
					"Notes from last week's customer calls",
				},
				steps: []string{
					"In Salesforce, open Forecasts and pick the current quarter.",
					"Open the list of your open opportunities closing this quarter.",
					"For each deal, update Stage, Amount and Close Date to what the customer last said.",
					"Set Forecast Category to Commit, Best Case or Pipeline.",
					"Write the next step and its date in Next Step.",
					"Check your Commit total and submit it by noon Monday.",
				},
				fixes: []string{
					"A deal does not appear in the forecast: its close date is outside the quarter or its owner is wrong.",
					"The forecast total looks doubled: the deal has a product split; check the Forecast Type.",
				},
				qa: []qa{
					{"What makes a deal Commit?", "A verbal yes from the decision maker and a signature date inside the quarter."},
					{"Why update before noon Monday?", "The VP rolls up the forecast for the leadership meeting at 2 pm."},
				},
				trail: []string{"Opened Salesforce Forecasts", "Selected the current quarter", "Edited Close Date", "Changed Forecast Category",
					"Updated Next Step", "Submitted the forecast"},
				variants: []variant{
					{label: "quarter-end week", note: "In the last week of the quarter the forecast is updated daily.", tag: "quarter-end"},
					{label: "manager roll-up", note: "Managers adjust their team's number with a judgement and a written reason.",
						step: "Enter your adjustment and its reason in the manager column."},
					{label: "slipped deal", note: "A deal slipping to next quarter gets a note saying why, for the loss review."},
					{label: "new quarter", note: "On the first Monday of a quarter every close date in the past is moved or the deal closed lost."},
				},
				next: []string{"territory-report"},
			},
			{
				key: "territory-report", title: "Build a territory report in Salesforce", category: "Reporting",
				tags: []string{"quarterly"}, apps: []string{"Salesforce", "Excel"},
				summary: "Build a report of pipeline and bookings by territory for the quarterly business review, saved in the Sales Ops folder so it can be run again.",
				before: []string{
					"Report builder access in Salesforce",
					"The territory list for the year",
				},
				steps: []string{
					"In Salesforce, open Reports and click New Report.",
					"Choose the Opportunities report type and click Start Report.",
					"Group rows by Territory and then by Stage.",
					"Add filters: Close Date this fiscal quarter, and exclude Closed Lost.",
					"Add the Amount sum and a row count, and add a bar chart by territory.",
					"Save it in the Sales Ops Reports folder with the quarter in the name.",
					"Export to Excel for the business review deck.",
				},
				fixes: []string{
					"Territory is not available to group by: use the Opportunities with Territories report type.",
					"Totals differ from the forecast: the report counts amounts in the opportunity currency; convert to corporate currency.",
				},
				qa: []qa{
					{"Why exclude Closed Lost?", "The review looks at live pipeline and bookings only."},
					{"Who uses this report?", "The regional VPs in the quarterly business review."},
				},
				trail: []string{"Opened Salesforce Reports", "Clicked New Report", "Chose Opportunities", "Grouped by Territory",
					"Added a Close Date filter", "Clicked Save", "Clicked Export"},
				variants: []variant{
					{label: "win rate by territory", note: "The win rate version counts closed won against closed lost, so Closed Lost stays in.",
						step: "Add a formula column for won count divided by closed count."},
					{label: "pipeline coverage", note: "Coverage compares open pipeline with the quarter's quota per territory."},
					{label: "dashboard for leadership", note: "The leadership dashboard refreshes daily from the saved report.",
						step: "Add the report to the Sales Leadership dashboard as a component."},
					{label: "partner-sourced bookings", note: "Partner bookings are filtered by Lead Source equals Partner.", tag: "partners"},
				},
			},
			{
				key: "discount-approval", title: "Request a discount approval in Salesforce CPQ", category: "Quoting",
				tags: []string{"approvals", "customer-facing"}, apps: []string{"Salesforce CPQ", "Slack"},
				summary: "Discounts above the rep's limit go through Advanced Approvals; write the business case so the approver can decide in one read.",
				before: []string{
					"A saved quote with the discount entered",
					"The reason: competitor, budget or multi-year commitment",
				},
				steps: []string{
					"Open the quote and check the Approval Status shows Approval Required.",
					"Fill in Discount Justification with the competitor or budget reason and the customer's commitment.",
					"Click Submit for Approval.",
					"Check the approval chain shown: sales manager above 10%, VP of Sales above 20%, CFO above 30%.",
					"Post the quote link in #deal-desk in Slack for anything needed this week.",
					"When approved, regenerate the PDF; a rejected quote comes back with the approver's comment.",
				},
				fixes: []string{
					"Submit for Approval does nothing: a required field on the quote is empty; check the error banner.",
					"The approver is out of office: a delegated approver is set in their user settings; ask deal desk.",
				},
				qa: []qa{
					{"Who approves 25%?", "The VP of Sales; above 30% it goes on to the CFO."},
					{"What makes a good justification?", "The competitor's price, the customer's budget and what we get back, like a longer term."},
				},
				trail: []string{"Opened the quote", "Filled in Discount Justification", "Clicked Submit for Approval",
					"Posted in #deal-desk", "Regenerated the PDF"},
				variants: []variant{
					{label: "non-standard payment terms", note: "Net 60 or longer goes to finance as well as sales leadership.",
						step: "Add the requested terms to the justification for finance."},
					{label: "free months", note: "Free months count as discount and follow the same thresholds."},
					{label: "competitive displacement", note: "Displacement discounts need the competitor's quote attached.",
						step: "Attach the competitor's quote to the request."},
					{label: "nonprofit pricing", note: "Nonprofits get the standard 20% nonprofit discount, which needs proof of status only."},
				},
				next: []string{"docusign"},
			},
			{
				key: "lead-routing", title: "Reassign open leads when a rep leaves", category: "Pipeline",
				tags: []string{"offboarding", "pipeline"}, apps: []string{"Salesforce", "LeanData"},
				summary: "Move a departing rep's leads, contacts and open opportunities to their replacement and take them out of the routing rules so no new leads go to them.",
				before: []string{
					"The rep's last day and the replacement from the sales manager",
					"LeanData admin access",
				},
				steps: []string{
					"In LeanData, open Routing > Round Robin pools and remove the rep from every pool.",
					"In Salesforce, open Setup > Mass Transfer Records and choose Transfer Leads.",
					"Set the rep as From and the replacement as To, filter to open statuses and click Transfer.",
					"Use the Opportunities list view with the rep as owner and change owner to the replacement.",
					"Check no open tasks remain assigned to the rep.",
					"Tell the replacement which deals are near close.",
				},
				fixes: []string{
					"Leads still go to the leaver: they are also the fallback owner in a LeanData node; change it.",
					"Mass Transfer skips records: the replacement lacks access to the record type.",
				},
				qa: []qa{
					{"Who gets the leads?", "The replacement named by the manager; if none, the team's round robin."},
					{"Why remove them from LeanData first?", "So no new leads arrive while the transfer runs."},
				},
				trail: []string{"Opened LeanData", "Removed the rep from Round Robin pools", "Opened Setup > Mass Transfer Records",
					"Clicked Transfer Leads", "Changed opportunity owner"},
				variants: []variant{
					{label: "rep moving territory", note: "A rep changing territory keeps open opportunities but hands over leads."},
					{label: "rep on parental leave", note: "During parental leave leads go to the team pool and opportunities to a named cover rep."},
					{label: "territory realignment", note: "At a realignment whole accounts move, so account owners change first and leads follow."},
					{label: "SDR leaving", note: "An SDR's leads go back to the pool, and their sequences are ended.", app: "Outreach",
						step: "End the leaver's active sequences in Outreach."},
				},
				next: []string{"forecast"},
			},
			{
				key: "docusign", title: "Send a contract for signature with DocuSign", category: "Contracts",
				tags: []string{"customer-facing"}, apps: []string{"DocuSign", "Salesforce"},
				summary: "Send the approved order form from the opportunity with the signers in the right order, so the signed copy files itself back into Salesforce.",
				before: []string{
					"An approved quote and the order form PDF",
					"The customer signer's name, title and email",
				},
				steps: []string{
					"On the opportunity, click Send with DocuSign.",
					"Check the order form is attached and add the terms if the customer has no master agreement.",
					"Add recipients: the customer signer first, then our VP of Sales as countersigner.",
					"Place Signature, Date and Title fields for each signer.",
					"Write a short message with the go-live date and click Send.",
					"When the envelope completes, check the signed PDF is on the opportunity and move it to Closed Won.",
				},
				fixes: []string{
					"The customer did not get the email: check the envelope's history for a bounce and correct the address.",
					"The signed copy is missing from Salesforce: the DocuSign connect setting is off for the envelope type.",
				},
				qa: []qa{
					{"Why does the customer sign first?", "So we never have a countersigned contract the customer has not agreed."},
					{"Who countersigns?", "The VP of Sales up to $250,000, the CEO above."},
				},
				trail: []string{"Opened the opportunity", "Clicked Send with DocuSign", "Added recipients", "Placed signature fields",
					"Clicked Send", "Checked envelope status"},
				variants: []variant{
					{label: "customer's paper", note: "When the customer sends their own contract, legal reviews it before anything is signed.",
						step: "Attach legal's approval to the opportunity.", tag: "legal"},
					{label: "two customer signers", note: "Some customers need two signers; they sign in the order the customer asks."},
					{label: "renewal order form", note: "Renewals send only the renewal order form; the master agreement stays in place.", tag: "renewals"},
					{label: "voiding an envelope", note: "A wrong envelope is voided with a reason and a corrected one sent.",
						step: "Void the old envelope with the reason before sending the new one."},
				},
				next: []string{"closed-won-handoff"},
			},
			{
				key: "gong-review", title: "Review a lost deal in Gong", category: "Pipeline",
				tags: []string{"weekly", "coaching"}, apps: []string{"Gong", "Salesforce"},
				summary: "Listen back to the key calls of a lost deal, note where it turned, and record the real loss reason for the monthly win-loss review.",
				before: []string{
					"The opportunity marked Closed Lost",
					"Gong access to the account's calls",
				},
				steps: []string{
					"In Gong, open Deals and find the lost opportunity.",
					"Open the timeline and pick the discovery call, the demo and the last call.",
					"Use the Trackers for competitors and pricing to jump to those moments.",
					"Note when the customer's interest changed and what was said.",
					"Set Loss Reason and Competitor on the Salesforce opportunity to match.",
					"Share the key clip in the deal's Gong comments for the win-loss review.",
				},
				fixes: []string{
					"A call is missing: the rep recorded it outside Gong or on a personal calendar.",
					"Trackers show nothing: the call language is not English; listen through instead.",
				},
				qa: []qa{
					{"What was the real reason?", "Price came up late but the turn was the missing SSO integration in the demo."},
					{"Why correct the loss reason?", "Reps pick Price by default; the win-loss review needs the real reason."},
				},
				trail: []string{"Opened Gong", "Opened Deals", "Opened the deal timeline", "Played the demo call",
					"Used the competitors tracker", "Edited Loss Reason in Salesforce"},
				variants: []variant{
					{label: "loss to a competitor", note: "Competitive losses also update the battlecard with what the competitor offered."},
					{label: "no decision", note: "No-decision losses are checked for a missing champion or budget.", tag: "pipeline"},
					{label: "renewal churn", note: "Churned renewals are reviewed with customer success before the exit survey.", tag: "renewals"},
					{label: "won deal for comparison", note: "A won deal in the same segment is reviewed alongside to see what went differently."},
				},
				next: []string{"forecast"},
			},
			{
				key: "hubspot-import", title: "Import a trade-show lead list into HubSpot", category: "Data quality",
				tags: []string{"data-hygiene", "events"}, apps: []string{"HubSpot", "Excel"},
				summary: "Clean the badge-scan export, import it into HubSpot with the event as the source, and enrol the leads in the follow-up sequence within two days.",
				before: []string{
					"The badge-scan export from the event organiser",
					"A HubSpot static list for the event",
				},
				steps: []string{
					"Open the export in Excel, remove blank rows and split full names into First name and Last name.",
					"Delete rows without an email or with personal addresses if the event was B2B.",
					"In HubSpot, go to Contacts > Import > Start an import > File from computer.",
					"Map the columns to properties and set Lead Source to Event and the event name.",
					"Choose to add the contacts to the event's static list and finish the import.",
					"Check the import errors file and fix any rows it rejected.",
					"Enrol the list in the event follow-up sequence.",
				},
				fixes: []string{
					"Existing contacts were overwritten: the import updated existing records; map only empty properties next time.",
					"Many rows rejected: the email column holds names; check the column mapping.",
				},
				qa: []qa{
					{"Why drop personal email addresses?", "Our events are business-to-business and personal emails rarely convert."},
					{"How fast must follow-up go out?", "Within two working days of the event."},
				},
				trail: []string{"Opened the export in Excel", "Removed blank rows", "Opened HubSpot Contacts > Import",
					"Mapped columns to properties", "Clicked Finish import", "Enrolled the list in a sequence"},
				variants: []variant{
					{label: "webinar attendees", note: "Webinar lists come from Zoom and split attendees from registrants who did not attend.", app: "Zoom"},
					{label: "partner-shared list", note: "Partner lists need proof of consent before import.",
						step: "Attach the partner's consent confirmation to the list."},
					{label: "EU event with consent", note: "For EU events, only people who ticked the consent box are imported, with the consent recorded.",
						step: "Set the legal basis for processing on every imported contact.", tag: "compliance"},
					{label: "purchased list", note: "Purchased lists are imported as non-marketing contacts and never emailed without opt-in."},
				},
				next: []string{"hubspot-dedupe"},
			},
		},
	},
	{
		id: "lib_solo", workspace: "ws_solo", name: "Freelance Admin", slug: "freelance-admin",
		description: "The admin side of a one-person design studio: invoicing, bookkeeping, taxes and clients.",
		version:     1, demoDocuments: 15, largeWeight: 7,
		sites: []string{"Harbor Dental", "Bluebird Bakery", "Kestrel Architects", "Maple & Vine", "Northline Cycles",
			"Orchard Pediatrics", "Quill Publishing", "Riverstone Yoga"},
		siteSentence: "Written while working for %s, one of the studio's retainer clients.",
		qa: []qa{
			{"Do you do this every month?", "Yes, on the first Monday, before any client work."},
		},
		procs: []proc{
			{
				key: "send-invoice", title: "Send an invoice in FreshBooks", category: "Invoicing",
				tags: []string{"monthly", "clients"}, apps: []string{"FreshBooks"},
				summary: "Turn the month's tracked time and agreed fees into an invoice, check it against the proposal and send it with online card payment switched on.",
				steps: []string{
					"In FreshBooks, click Create New > Invoice and choose the client.",
					"Click Add Unbilled Time and import the month's hours for the client's project.",
					"Add fixed-fee lines from the signed proposal and any approved expenses.",
					"Check the due date is Net 15 and the invoice number follows the last one.",
					"Turn on Accept Online Payments for card and bank transfer.",
					"Click Send by Email, add a short note and send.",
				},
				qa: []qa{
					{"Why Net 15?", "Small clients pay faster with a short term, and the proposal says so."},
					{"Do you charge card fees?", "No, they are part of the rate."},
				},
				trail: []string{"Opened FreshBooks", "Clicked Create New > Invoice", "Clicked Add Unbilled Time", "Added fixed-fee lines",
					"Turned on Accept Online Payments", "Clicked Send by Email"},
				variants: []variant{
					{label: "deposit invoice", note: "New projects start with a 50% deposit invoice before any work.",
						step: "Mark the invoice as a deposit so the final invoice deducts it."},
					{label: "retainer client", note: "Retainer clients get the same fixed invoice every month, set up as recurring.",
						step: "Set the invoice to recur monthly on the first."},
				},
				next: []string{"quarterly-tax"},
			},
			{
				key: "log-time", title: "Log billable time in Toggl Track", category: "Invoicing",
				tags: []string{"weekly"}, apps: []string{"Toggl Track"},
				summary: "Keep every hour against a client project with a short description, and tidy the week on Friday so invoices need no detective work.",
				steps: []string{
					"Start the Toggl Track timer with the client's project selected before starting work.",
					"Write what you did in the description, for example 'Homepage wireframes round 2'.",
					"Stop the timer at breaks and switches between clients.",
					"On Friday, open Reports > Detailed for the week and fix entries without a project.",
					"Mark non-billable entries, such as admin and sales calls, as non-billable.",
				},
				qa: []qa{
					{"Do you round time?", "To the nearest 15 minutes on the invoice, never in Toggl itself."},
					{"Is admin time billed?", "No, it is tracked to see where the week went but marked non-billable."},
				},
				trail: []string{"Opened Toggl Track", "Selected a project", "Started the timer", "Stopped the timer", "Opened Reports > Detailed"},
				variants: []variant{
					{label: "fixed-fee project", note: "Fixed-fee projects are still tracked, to check whether the fee was right."},
					{label: "time logged after the fact", note: "Forgotten time is added from the calendar on the same day, never from memory days later.",
						step: "Add missing entries from your calendar the same evening."},
				},
				next: []string{"send-invoice"},
			},
			{
				key: "record-expense", title: "Record a business expense in FreshBooks", category: "Bookkeeping",
				tags: []string{"tax"}, apps: []string{"FreshBooks"},
				summary: "Capture the receipt the day you spend, categorise it for Schedule C and mark client costs as billable so they end up on the next invoice.",
				steps: []string{
					"In the FreshBooks app, tap Expenses > New and photograph the receipt.",
					"Check the merchant, date and amount that were read from the receipt.",
					"Pick the category, for example Software or Office Supplies.",
					"If a client should pay it, assign the client and tick Billable.",
					"Save, and bin the paper receipt once the photo is readable.",
				},
				qa: []qa{
					{"Which category for fonts?", "Software, since they are licences."},
					{"Do you keep paper receipts?", "No, a readable photo is enough for the IRS."},
				},
				trail: []string{"Opened FreshBooks app", "Tapped Expenses > New", "Photographed the receipt", "Chose a category", "Tapped Save"},
				variants: []variant{
					{label: "mileage", note: "Mileage is logged with the trip's purpose and miles, at the IRS standard rate.",
						step: "Enter the miles and the purpose of the trip."},
					{label: "home office share", note: "The home office share is recorded once a year from rent and utilities."},
				},
				next: []string{"quarterly-tax"},
			},
			{
				key: "quarterly-tax", title: "Pay quarterly estimated tax", category: "Bookkeeping",
				tags: []string{"quarterly", "tax"}, apps: []string{"IRS Direct Pay", "Excel"},
				summary: "Work out the quarter's estimated payment from the profit so far and pay it through IRS Direct Pay before the deadline.",
				steps: []string{
					"Export the year-to-date Profit and Loss from FreshBooks into the tax workbook.",
					"Let the workbook apply the self-employment tax and income tax rates to the quarter's profit.",
					"Compare with the safe harbor amount, a quarter of last year's tax, and pay the higher one.",
					"In IRS Direct Pay, choose Estimated Tax, Form 1040-ES and the tax year.",
					"Enter the amount and bank details, submit and save the confirmation number.",
					"Log the payment in the workbook's payments tab.",
				},
				qa: []qa{
					{"What is the safe harbor?", "Paying at least last year's total tax in four parts avoids the underpayment penalty."},
					{"When are the deadlines?", "April 15, June 15, September 15 and January 15."},
				},
				trail: []string{"Exported Profit and Loss", "Opened the tax workbook", "Opened IRS Direct Pay", "Selected Estimated Tax",
					"Submitted the payment", "Saved the confirmation number"},
				variants: []variant{
					{label: "state estimated tax", note: "The state payment uses the state's own portal and rates.",
						step: "Pay the state's share through its online portal."},
					{label: "big-project quarter", note: "In a quarter with a large project, the payment is based on actual profit, not the safe harbor."},
				},
			},
			{
				key: "client-onboard", title: "Onboard a new client with a signed contract", category: "Clients",
				tags: []string{"onboarding", "clients"}, apps: []string{"Dropbox Sign", "Google Drive"},
				summary: "Send the contract for e-signature, set up the client's folder and project, and book the kickoff once the deposit is paid.",
				steps: []string{
					"Fill in the contract template with the scope, fee and dates from the proposal.",
					"Send it with Dropbox Sign, with the client as signer and yourself as the second signer.",
					"Create a client folder in Google Drive from the Client Template folder.",
					"Create the client and project in FreshBooks and Toggl Track.",
					"Send the deposit invoice and book the kickoff once it is paid.",
				},
				qa: []qa{
					{"Do you start before the deposit?", "Never; the kickoff is only booked once it arrives."},
					{"What is in the client template?", "Folders for brief, drafts, final files and invoices."},
				},
				trail: []string{"Opened the contract template", "Opened Dropbox Sign", "Sent the contract", "Created a Google Drive folder",
					"Created the client in FreshBooks"},
				variants: []variant{
					{label: "returning client", note: "Returning clients sign a short statement of work under the existing contract."},
					{label: "agency subcontract", note: "Agency work uses the agency's contract, checked for IP and payment terms.",
						step: "Check the agency contract's IP clause and payment terms before signing."},
				},
				next: []string{"log-time"},
			},
		},
	},
	{
		id: "lib_northwind", workspace: "ws_nocredit", name: "Warehouse Operations", slug: "warehouse",
		description: "Receiving, inventory and shipping at Northwind Traders' warehouses, recorded on the floor scanners.",
		version:     1, demoDocuments: 10, largeWeight: 5,
		sites:        []string{"Reno warehouse", "Memphis warehouse", "Allentown warehouse", "Dallas warehouse", "Ontario warehouse", "Atlanta warehouse"},
		siteSentence: "Bin names and dock numbers are those of the %s.",
		qa: []qa{
			{"Which scanner did you use?", "A Zebra TC52 running RF-SMART, signed in with your own login."},
		},
		procs: []proc{
			{
				key: "receive-po", title: "Receive a purchase order at the dock", category: "Receiving",
				tags: []string{"daily"}, apps: []string{"NetSuite", "RF-SMART"},
				summary: "Check the delivery against the purchase order, scan each item into the receiving location and report shortages or damage the same day.",
				steps: []string{
					"On the scanner, open RF-SMART > Receiving > PO Receive and scan the PO barcode on the packing slip.",
					"Count the cartons against the carrier's bill of lading before signing it.",
					"Scan each item and enter the quantity received.",
					"Set aside damaged items and photograph them.",
					"Put received stock in the RECEIVING bin and submit the receipt.",
					"Email purchasing any shortage or damage with the photos.",
				},
				qa: []qa{
					{"What if the count is short?", "Sign the bill of lading with the shortage noted, never clean."},
					{"Where does received stock go?", "The RECEIVING bin until put-away."},
				},
				trail: []string{"Opened RF-SMART", "Selected PO Receive", "Scanned the PO barcode", "Scanned items", "Submitted the receipt"},
				variants: []variant{
					{label: "partial delivery", note: "A partial delivery is received as is and the PO stays open for the rest."},
					{label: "over-shipment", note: "Extra units over 5% are refused or held until purchasing approves them.",
						step: "Hold the extra units in the QUARANTINE bin until purchasing replies."},
				},
				next: []string{"cycle-count"},
			},
			{
				key: "cycle-count", title: "Run a cycle count for a bin location", category: "Inventory",
				tags: []string{"weekly", "audit"}, apps: []string{"NetSuite", "RF-SMART"},
				summary: "Count the bins NetSuite schedules each week, blind, and send any variance over the threshold for a recount before it posts.",
				steps: []string{
					"In NetSuite, open the week's Inventory Count and release it to the scanners.",
					"On the scanner, open RF-SMART > Inventory > Cycle Count and scan the bin label.",
					"Scan every item in the bin and enter the counted quantity without looking at the system quantity.",
					"Submit the bin; variances over 2% or $200 go to recount.",
					"Recount flagged bins with a second person.",
					"Approve the count in NetSuite to post the adjustments.",
				},
				qa: []qa{
					{"Why count blind?", "If you see the expected number you tend to find it."},
					{"What triggers a recount?", "A variance over 2% or $200 in the bin."},
				},
				trail: []string{"Opened Inventory Count in NetSuite", "Opened RF-SMART Cycle Count", "Scanned the bin label",
					"Entered counted quantities", "Submitted the bin", "Approved the count"},
				variants: []variant{
					{label: "high-value cage", note: "The high-value cage is counted weekly by two people together."},
					{label: "year-end stocktake", note: "At year end every bin is counted and shipping stops for the day.", tag: "year-end"},
				},
			},
			{
				key: "pick-pack-ship", title: "Pick, pack and ship an order with ShipStation", category: "Shipping",
				tags: []string{"daily", "customer-facing"}, apps: []string{"ShipStation", "NetSuite"},
				summary: "Pick the order by scanning each item, pack it in the right box, and buy the label in ShipStation so tracking goes back to the customer.",
				steps: []string{
					"In ShipStation, open Awaiting Shipment and print the pick list for the wave.",
					"Pick each line by scanning the bin and the item.",
					"Choose the smallest box that fits and add void fill.",
					"Weigh the parcel and enter the weight and dimensions in ShipStation.",
					"Click Create Label with the cheapest service that meets the promised date.",
					"Stick the label on, and the order moves to Shipped with tracking sent to the customer.",
				},
				qa: []qa{
					{"Which service do you pick?", "The cheapest one that arrives by the promised date."},
					{"Why scan the bin as well?", "It catches picks from the wrong bin with look-alike items."},
				},
				trail: []string{"Opened ShipStation", "Printed the pick list", "Scanned bin and item", "Entered the weight",
					"Clicked Create Label"},
				variants: []variant{
					{label: "international order", note: "International parcels need a customs declaration with HS codes.",
						step: "Fill in the customs declaration with HS codes and values."},
					{label: "freight pallet", note: "Orders over 150 lb ship as LTL freight booked with the carrier, not a parcel label."},
				},
			},
			{
				key: "process-return", title: "Process a customer return", category: "Receiving",
				tags: []string{"customer-facing"}, apps: []string{"NetSuite", "Zendesk"},
				summary: "Receive the returned item against its return authorisation, grade its condition and tell customer service so the refund or replacement goes out.",
				steps: []string{
					"Scan the RMA number on the return label to find the return authorisation in NetSuite.",
					"Open the parcel and check the items match the RMA.",
					"Grade each item: A restock, B refurbish, C scrap.",
					"Receive A items into the RETURNS bin and the rest into QUARANTINE.",
					"Add a note with the grade to the customer's Zendesk ticket so the refund can be issued.",
				},
				qa: []qa{
					{"What makes an item grade A?", "Unopened or unused with all packaging."},
					{"Who issues the refund?", "Customer service, once our note is on the ticket."},
				},
				trail: []string{"Scanned the RMA number", "Opened the return authorisation", "Graded the items", "Received into RETURNS",
					"Updated the Zendesk ticket"},
				variants: []variant{
					{label: "return without an RMA", note: "Parcels without an RMA are held for three days while customer service finds the order.",
						step: "Log the parcel in the unknown returns sheet with a photo."},
					{label: "warranty claim", note: "Warranty returns go to the supplier's RMA process, not back into stock."},
				},
				next: []string{"cycle-count"},
			},
		},
	},
	{
		id: "lib_byok", workspace: "ws_byok", name: "Research Operations", slug: "research-ops",
		description: "Participant recruitment, incentives and study data handling for the user research team.",
		version:     1, demoDocuments: 10, largeWeight: 5,
		sites:        []string{"checkout usability study", "onboarding diary study", "pricing interviews", "mobile app benchmark", "accessibility audit", "admin console study"},
		siteSentence: "Recorded during the %s.",
		qa: []qa{
			{"Does this involve personal data?", "Yes, so it follows the research data policy: only what we need, deleted on schedule."},
		},
		procs: []proc{
			{
				key: "recruit", title: "Recruit study participants in User Interviews", category: "Participants",
				tags: []string{"recruiting"}, apps: []string{"User Interviews", "Calendly"},
				summary: "Write a screener that finds the right people, launch the project and approve qualified applicants into interview slots.",
				steps: []string{
					"In User Interviews, click New Project and choose Remote and the session length.",
					"Write the screener: three to five questions, with disqualifying answers marked.",
					"Set the number of participants, the incentive and the target audience.",
					"Connect the Calendly event for session times and launch the project.",
					"Review applicants daily and approve those who qualify.",
					"Check each approved participant booked a slot.",
				},
				qa: []qa{
					{"How many do you recruit?", "Six per segment, plus one spare for no-shows."},
					{"What makes a good screener?", "Questions about behaviour, not opinions, with the right answer hidden among others."},
				},
				trail: []string{"Opened User Interviews", "Clicked New Project", "Wrote the screener", "Connected Calendly",
					"Clicked Launch", "Approved applicants"},
				variants: []variant{
					{label: "recruiting our own customers", note: "Customer recruits come from the product's user list and need the account manager's OK.",
						step: "Ask each account manager to approve contact with their customers."},
					{label: "B2B decision makers", note: "Decision makers need a higher incentive and a LinkedIn check."},
				},
				next: []string{"study-setup"},
			},
			{
				key: "incentive", title: "Send participant incentives with Tremendous", category: "Participants",
				tags: []string{"payments"}, apps: []string{"Tremendous"},
				summary: "Pay each participant within two working days of their session, using the amount promised in the screener.",
				steps: []string{
					"Export the list of completed sessions with names, emails and amounts.",
					"In Tremendous, click Send rewards > Bulk upload and upload the CSV.",
					"Choose the campaign for the study so participants can pick their reward.",
					"Check the total against the study budget and click Send.",
					"Mark each participant as paid in the study tracker.",
				},
				qa: []qa{
					{"How fast are they paid?", "Within two working days of the session."},
					{"What if someone did not show?", "No-shows are not paid; late cancellations with notice get half."},
				},
				trail: []string{"Exported completed sessions", "Opened Tremendous", "Clicked Send rewards > Bulk upload",
					"Chose the campaign", "Clicked Send"},
				variants: []variant{
					{label: "international participants", note: "Participants abroad get rewards in their own currency from the global catalogue."},
					{label: "customer participants", note: "Customers cannot take cash; they get a charity donation in their name.",
						step: "Switch the reward to the charity donation option."},
				},
				next: []string{"archive"},
			},
			{
				key: "study-setup", title: "Set up a study project in Dovetail", category: "Studies",
				tags: []string{"setup"}, apps: []string{"Dovetail", "Zoom"},
				summary: "Create the project, bring in the session recordings and transcripts, and set up the tags the team will use for analysis.",
				steps: []string{
					"In Dovetail, click New project and name it after the study and quarter.",
					"Add the research plan as the project's first note.",
					"Import the Zoom cloud recordings; Dovetail transcribes them.",
					"Create the tag board from the study template.",
					"Invite the product manager and designer as viewers.",
				},
				qa: []qa{
					{"Why viewers and not editors?", "Only researchers tag, so the analysis stays consistent."},
					{"Where does the plan live?", "As the first note, so everyone reads it before the data."},
				},
				trail: []string{"Opened Dovetail", "Clicked New project", "Imported Zoom recordings", "Created the tag board",
					"Invited viewers"},
				variants: []variant{
					{label: "diary study", note: "Diary entries arrive daily, so imports are scheduled rather than done once."},
					{label: "unmoderated test", note: "Unmoderated tests come from the testing tool as video and task results.", app: "Maze"},
				},
				next: []string{"incentive"},
			},
			{
				key: "archive", title: "Archive a finished study and delete raw recordings", category: "Data",
				tags: []string{"privacy", "compliance"}, apps: []string{"Dovetail", "Google Drive"},
				summary: "Ninety days after the readout, keep the insights, delete raw recordings and personal data, and log the deletion.",
				steps: []string{
					"Check the readout was 90 days ago and nobody has asked to keep the raw data.",
					"In Dovetail, export highlights and insights to the study's Google Drive folder.",
					"Delete the raw video files and transcripts from the Dovetail project.",
					"Delete the participant list and consent forms from Google Drive, keeping only the signed consent log.",
					"Archive the Dovetail project and record the deletion date in the data register.",
				},
				qa: []qa{
					{"What do you keep?", "Anonymised highlights and insights; nothing that identifies a person."},
					{"Why 90 days?", "It is what the consent form promises participants."},
				},
				trail: []string{"Opened Dovetail", "Exported insights", "Deleted raw recordings", "Opened Google Drive",
					"Deleted the participant list", "Archived the project"},
				variants: []variant{
					{label: "participant deletion request", note: "A participant's request is handled within 30 days for that person only.",
						step: "Reply to the participant confirming the deletion."},
					{label: "study with health data", note: "Health data studies delete raw data after 30 days, as the ethics approval says."},
				},
			},
		},
	},
	{
		id: "lib_paused", workspace: "ws_suspended", name: "Office Management", slug: "office",
		description: "Rooms, visitors, supplies and building issues at the Paused Ltd office.",
		version:     1, demoDocuments: 10, largeWeight: 5,
		sites:        []string{"ground floor", "first floor", "second floor", "third floor", "annex building"},
		siteSentence: "Room names and contacts here are those of the %s.",
		qa: []qa{
			{"Who covers when you are away?", "The office coordinator on the ground floor reception."},
		},
		procs: []proc{
			{
				key: "room-booking", title: "Book a meeting room in Google Calendar", category: "Facilities",
				tags: []string{"self-service"}, apps: []string{"Google Calendar"},
				summary: "Book rooms as calendar resources so the door screens show them and no one double-books.",
				steps: []string{
					"In Google Calendar, create the event and click Rooms.",
					"Filter by capacity and floor, and pick a room that shows as available.",
					"Add the video call if remote people join.",
					"Save; the room accepts automatically if it is free.",
					"Release the room by deleting the event if the meeting is cancelled.",
				},
				qa: []qa{
					{"Why not just walk into a free room?", "The door screens show bookings, and someone else may have it."},
					{"How long can you book?", "Up to four hours, except the boardroom."},
				},
				trail: []string{"Opened Google Calendar", "Created an event", "Clicked Rooms", "Filtered by capacity", "Clicked Save"},
				variants: []variant{
					{label: "boardroom", note: "The boardroom needs the office manager's approval, which the booking requests automatically."},
					{label: "recurring team meeting", note: "Recurring bookings end after three months and must be renewed, so ghost meetings expire."},
				},
				next: []string{"visitor"},
			},
			{
				key: "visitor", title: "Register a visitor in Envoy", category: "Visitors",
				tags: []string{"front-desk"}, apps: []string{"Envoy"},
				summary: "Pre-register visitors so they sign the NDA on arrival, get a badge and the host is told they are here.",
				steps: []string{
					"In Envoy, click Invite visitor and enter the visitor's name and email.",
					"Pick the visit type: Meeting, Interview or Contractor.",
					"Set the host and the arrival time.",
					"Send the invitation; Envoy emails the visitor directions and the NDA.",
					"On arrival, the visitor signs in at the iPad and the host gets a Slack message.",
				},
				qa: []qa{
					{"Do all visitors sign the NDA?", "Everyone except delivery drivers."},
					{"What if the host is late?", "Reception keeps the visitor in the lobby; visitors are never left alone in the office."},
				},
				trail: []string{"Opened Envoy", "Clicked Invite visitor", "Chose the visit type", "Set the host", "Sent the invitation"},
				variants: []variant{
					{label: "contractor working on site", note: "Contractors also upload proof of insurance before their first visit.",
						step: "Check the contractor's insurance certificate is in Envoy."},
					{label: "group visit", note: "Groups over ten are registered by CSV upload and get a reception briefing."},
				},
			},
			{
				key: "supplies", title: "Order office supplies on Amazon Business", category: "Supplies",
				tags: []string{"monthly"}, apps: []string{"Amazon Business", "Slack"},
				summary: "Collect requests from the supplies channel, order from the approved list on the company account and tell people when things arrive.",
				steps: []string{
					"Read the requests in #office-supplies in Slack since the last order.",
					"In Amazon Business, add items from the Approved Supplies list to the cart.",
					"Check the total against the monthly supplies budget.",
					"Place the order on the company account with the cost centre.",
					"Post the expected delivery date in #office-supplies.",
				},
				qa: []qa{
					{"What is the monthly budget?", "$600 for the whole office."},
					{"Can people order things not on the list?", "Only with their manager's approval in the thread."},
				},
				trail: []string{"Opened #office-supplies in Slack", "Opened Amazon Business", "Added approved items to cart",
					"Placed the order", "Posted the delivery date"},
				variants: []variant{
					{label: "kitchen restock", note: "Kitchen supplies come from the weekly grocery delivery instead."},
					{label: "ergonomic equipment", note: "Ergonomic chairs and desks need an occupational health assessment first.",
						step: "Attach the assessment to the order request."},
				},
			},
			{
				key: "facilities", title: "Report a building issue to the property manager", category: "Facilities",
				tags: []string{"maintenance"}, apps: []string{"Slack", "Gmail"},
				summary: "Report heating, lighting and leaks to the property manager in writing, with photos, and follow up until fixed.",
				steps: []string{
					"Take photos of the issue and note where it is.",
					"Email the property manager with the photos, the location and when it started.",
					"Log the issue in the facilities sheet with the date reported.",
					"Post a notice in #office if people should avoid the area.",
					"Follow up after two working days if there is no reply.",
				},
				qa: []qa{
					{"Why email rather than call?", "The lease needs issues reported in writing."},
					{"Who fixes what?", "The landlord fixes the building; we fix our own furniture and equipment."},
				},
				trail: []string{"Took photos", "Opened Gmail", "Emailed the property manager", "Updated the facilities sheet",
					"Posted in #office"},
				variants: []variant{
					{label: "water leak", note: "Leaks are also phoned through to the emergency line at once.", tag: "urgent",
						step: "Call the building's emergency line and move equipment away from the water."},
					{label: "heating failure", note: "If the office falls below 16°C, staff are told to work from home."},
				},
			},
		},
	},
}
