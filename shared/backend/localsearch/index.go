// Package localsearch is the embedded search engine: an in-process index of the
// documents' words (BM25F, title above content), of their vocabulary for typos
// (Levenshtein automata over a finite-state transducer), and of the vectors of
// the documents and of their readable recordings. It implements
// search.Retriever; the rules of search (thresholds, score, facets, paging) are
// applied by package search, as for every backend.
//
// Scope is built in: documents are numbered library by library, and every step
// of a query (posting lists, term statistics, vectors) reads only the ranges of
// the visible libraries, so nothing outside a key's scope is read, counted or
// allowed to shift a ranking.
package localsearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/vellum"
	"golang.org/x/sync/errgroup"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/search"
)

// BM25F parameters: the usual k1, b, and the weight of a title occurrence
// relative to one in the content. b and the title's weight were measured on the
// public test collections (docs/search.md): short documents gain from less
// length normalisation than the textbook 0.75.
const (
	k1          = 1.2
	bm25b       = 0.5
	titleWeight = 2.0
)

// Index is a built, immutable index. It is safe for concurrent queries.
type Index struct {
	embedder   search.Embedder
	embedderID string
	dims       int
	analyzer   *analysis.Analyzer // of the build

	docs   []search.Doc // by ordinal; libraries are contiguous
	libs   map[string]span
	docLib []uint16 // ordinal -> library number
	libIDs []string // library number -> ID

	// Lexical: term ID -> postings of (ordinal, tf in title, tf in content).
	postOff  []uint32 // postings of term t are post[postOff[t]:postOff[t+1]]
	post     []posting
	titleLen []uint16
	bodyLen  []uint16
	libTitle []float64 // per library number: sum of title lengths
	libBody  []float64
	// The forward index, for feedback: the words (stop words left out) of
	// document i with their counts are fwd[fwdOff[i]:fwdOff[i+1]].
	fwdOff   []uint32
	fwd      []termCount
	vocab    *vellum.FST // term -> term id, for fuzzy matching
	termName []string    // term ID -> term: the vocabulary, sorted

	// The documents' and recordings' vectors, quantized (quant.go).
	rot    *rotation
	docQ   quantized
	recQ   quantized
	recIDs []string // recording number -> ID
	// The readable recordings of document i are docRecs[docRecOff[i]:docRecOff[i+1]].
	docRecOff []uint32
	docRecs   []uint32
	// libRecs lists, per library number, the recordings behind its documents.
	libRecs [][]uint32

	// activity lists every ordinal, most active first; byID every ordinal by
	// document ID.
	activity []uint32
	byID     []uint32

	// The libraries that hold each term, and where their postings begin in
	// its list: term t's entries are termLib[termLibOff[t]:termLibOff[t+1]].
	// A segment opened by range reads the postings of the visible
	// libraries only, and counts a term's documents without reading them.
	termLibOff []uint32
	termLib    []termLib

	// cold, when set, holds post, fwd and the vectors' codes, which are
	// then nil: the segment was opened by range (OpenSegment), and a query
	// reads what it needs of them first (cold.go).
	cold *coldPart

	// whole is the index as a segment of its own, every document live.
	whole *segment

	scratch sync.Pool
}

type span struct{ start, end uint32 }

type termCount struct {
	term uint32
	tf   uint16
	_    uint16 // zero: a segment file stores the struct as it lies in memory
}

type posting struct {
	doc         uint32
	title, body uint16
}

// termLib is a library that holds a term, and where its postings begin in
// the term's list.
type termLib struct {
	lib, start uint32
}

// Options of a build.
type Options struct {
	// Workers bounds the concurrent embedding calls and analysis (GOMAXPROCS when 0).
	Workers int
	// Progress, when set, is told how many of the texts to embed are done.
	Progress func(done, total int)
	// Fit fits an embedder that learns from its corpus (search.Fitter, as the
	// offline one) to the documents before embedding them; queries must then
	// be embedded by Index.Embedder. Without it the embedder is used as given.
	Fit bool
}

// Build indexes a data set with an embedder. Every document and every readable
// recording (shared, in a workspace not on the Individual plan) is embedded. With
// Options.Fit, an embedder that learns from its corpus (search.Fitter) is first
// fitted to the documents; Embedder returns the one queries must use.
//
// The data set becomes the index documents an indexer would write
// (IndexDocs), and those are indexed as FromDocs indexes them.
func Build(ctx context.Context, d *doclib.DataSet, e search.Embedder, opt Options) (*Index, error) {
	docs, e, err := IndexDocs(ctx, d, e, opt)
	if err != nil {
		return nil, err
	}
	return build(ctx, docs, e, workerCount(opt))
}

func workerCount(opt Options) int {
	if opt.Workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return opt.Workers
}

// IndexDocs makes the index documents of a data set, as Build indexes them:
// the documents of its libraries, in the index's order, with their readable
// recordings and their vectors. With Options.Fit the embedder is first fitted
// to the documents; the embedder returned is the one that made the vectors,
// and the one to embed queries and later documents with.
func IndexDocs(ctx context.Context, d *doclib.DataSet, e search.Embedder, opt Options) ([]search.IndexDoc, search.Embedder, error) {
	workers := workerCount(opt)
	if dims := e.Dimensions(); dims <= 0 {
		return nil, nil, fmt.Errorf("localsearch: embedder %s has %d dimensions", e.ID(), dims)
	}
	if len(d.Libraries) > math.MaxUint16 {
		return nil, nil, fmt.Errorf("localsearch: %d libraries; at most %d", len(d.Libraries), math.MaxUint16)
	}

	// The documents of the data set's libraries in the index's order (libraries
	// by ID, documents by ID): the embedder is fitted to their texts in it.
	known := make(map[string]bool, len(d.Libraries))
	for _, l := range d.Libraries {
		known[l.ID] = true
	}
	var ordered []*doclib.Document
	for _, doc := range d.Documents {
		if known[doc.LibraryID] {
			ordered = append(ordered, doc)
		}
	}
	slices.SortFunc(ordered, func(a, b *doclib.Document) int {
		if c := strings.Compare(a.LibraryID, b.LibraryID); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	n := len(ordered)
	pos := make(map[string]int, n)
	for i, doc := range ordered {
		pos[doc.ID] = i
	}

	// Readable recordings and the documents they are behind. A recording's plan
	// is that of its (first) document's workspace: a recording belongs to one.
	individual := map[string]bool{}
	for _, w := range d.Workspaces {
		individual[w.ID] = w.Plan == doclib.PlanIndividual
	}
	docWS := map[string]string{}
	for _, doc := range d.Documents {
		docWS[doc.ID] = doc.WorkspaceID
	}
	var recTexts []string
	var recs []*doclib.Recording
	perDoc := make([][]int, n) // indexes into recs
	for _, r := range d.Recordings {
		plan := doclib.PlanTeam
		if len(r.DocumentIDs) > 0 && individual[docWS[r.DocumentIDs[0]]] {
			plan = doclib.PlanIndividual
		}
		if len(r.DocumentIDs) == 0 || !search.Readable(r, plan) {
			continue // private recordings, and every recording on the Individual plan, never count
		}
		ri, linked := len(recs), false
		for _, id := range r.DocumentIDs {
			if o, ok := pos[id]; ok {
				perDoc[o] = append(perDoc[o], ri)
				linked = true
			}
		}
		if linked { // behind no indexed document, it could never be read
			recs = append(recs, r)
			recTexts = append(recTexts, search.RecordingText(r))
		}
	}

	docTexts := make([]string, n)
	for i, doc := range ordered {
		docTexts[i] = search.DocumentText(doc)
	}
	if f, ok := e.(search.Fitter); ok && opt.Fit {
		fitted, err := f.Fit(ctx, docTexts)
		if err != nil {
			return nil, nil, fmt.Errorf("localsearch: fit the embedder to the documents: %w", err)
		}
		e = fitted
		if dims := e.Dimensions(); dims <= 0 {
			return nil, nil, fmt.Errorf("localsearch: embedder %s has %d dimensions", e.ID(), dims)
		}
	}
	dims := e.Dimensions()
	total := len(docTexts) + len(recTexts)
	var done progress
	done.total, done.report = total, opt.Progress
	docVec, err := embedAll(ctx, e, docTexts, workers, &done)
	if err != nil {
		return nil, nil, err
	}
	recVec, err := embedAll(ctx, e, recTexts, workers, &done)
	if err != nil {
		return nil, nil, err
	}

	docs := make([]search.IndexDoc, n)
	var docRecs []*doclib.Recording
	var docRecVecs [][]float32
	for i, doc := range ordered {
		docRecs, docRecVecs = docRecs[:0], docRecVecs[:0]
		for _, ri := range perDoc[i] {
			docRecs = append(docRecs, recs[ri])
			docRecVecs = append(docRecVecs, recVec[ri*dims:(ri+1)*dims:(ri+1)*dims])
		}
		docs[i] = search.NewIndexDoc(doc, docVec[i*dims:(i+1)*dims:(i+1)*dims], docRecs, docRecVecs)
	}
	return docs, e, nil
}

// FromDocs builds an index from index documents whose vectors are already
// made (a snapshot the indexer wrote); nothing is embedded. e embeds the
// queries: its ID and dimensions must be those the vectors were made with.
//
// Libraries are the distinct LibraryIDs of the documents. A recording behind
// several documents appears in each of their IndexDocs: it is kept once, with
// the vector of the first document in the index's order (libraries by ID,
// documents by ID). Two different vectors for one recording are a state the
// indexer passes through (a recording edited while only some of its
// documents were indexed again): the first is kept, and the next snapshot,
// once every document was indexed again, agrees. Duplicate document IDs are
// refused, as are vectors of other than e.Dimensions() floats or holding a NaN
// or an infinity. Vectors are expected of unit length (as search.CheckVectors
// leaves them); one that is not is normalised in the index.
//
// The vectors are copied into the index's own arrays: neither docs nor their
// vectors are retained, so the caller may drop them once FromDocs returns.
// Options.Progress is not called (nothing is embedded), and Options.Fit is
// refused with an embedder that learns from its corpus (search.Fitter): the
// vectors were made by an embedder fitted already, the one to pass as e.
func FromDocs(ctx context.Context, docs []search.IndexDoc, e search.Embedder, opt Options) (*Index, error) {
	if _, ok := e.(search.Fitter); ok && opt.Fit {
		return nil, errors.New("localsearch: FromDocs cannot fit the embedder: the vectors are made; pass the embedder they were made with, without Options.Fit")
	}
	return build(ctx, docs, e, workerCount(opt))
}

// checkEvery is how many items a build's serial loops handle between two looks
// at the context.
const checkEvery = 1024

// build is the core of Build and FromDocs: it indexes documents whose vectors
// are made, numbering them library by library (libraries by ID, documents by
// ID). docs is not modified nor retained.
func build(ctx context.Context, docs []search.IndexDoc, e search.Embedder, workers int) (*Index, error) {
	x := &Index{embedder: e, embedderID: e.ID(), dims: e.Dimensions(), analyzer: analysis.New(), libs: map[string]span{}}
	if x.dims <= 0 {
		return nil, fmt.Errorf("localsearch: embedder %s has %d dimensions", e.ID(), x.dims)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := len(docs)
	if n > math.MaxUint32-1 {
		return nil, fmt.Errorf("localsearch: %d documents; at most %d", n, math.MaxUint32-1)
	}

	// Number the documents library by library (libraries by ID, documents by ID).
	order := make([]uint32, n) // ordinal -> index in docs
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		if c := strings.Compare(docs[a].LibraryID, docs[b].LibraryID); c != 0 {
			return c
		}
		return strings.Compare(docs[a].ID, docs[b].ID)
	})
	seen := make(map[string]struct{}, n)
	x.docs = make([]search.Doc, n)
	x.docLib = make([]uint16, n)
	labels := search.NewLabelTable()
	for i, j := range order {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		doc := &docs[j]
		if _, dup := seen[doc.ID]; dup {
			return nil, fmt.Errorf("localsearch: document %s is given twice", doc.ID)
		}
		seen[doc.ID] = struct{}{}
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
		x.docs[i] = doc.Doc
		labels.Intern(&x.docs[i])
	}
	if len(x.libIDs) > 0 {
		last := x.libIDs[len(x.libIDs)-1]
		x.libs[last] = span{x.libs[last].start, uint32(n)}
	}
	seen = nil

	// The documents' vectors, and each distinct recording's once.
	x.rot = rotationFor(x.dims)
	docVecs := make([][]float32, n)
	type rec struct {
		id   string
		doc  string // the first document it was found behind, for errors
		vec  []float32
		rank uint32
	}
	recIdx := map[string]uint32{} // recording ID -> index in recs
	var recs []rec
	perDoc := make([][]uint32, n) // indexes into recs, then ranks
	for i, j := range order {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		doc := &docs[j]
		v, err := x.checkVector(doc.Vector)
		if err != nil {
			return nil, fmt.Errorf("localsearch: document %s: %w", doc.ID, err)
		}
		docVecs[i] = v
		for _, r := range doc.Recordings {
			if len(r.Vector) != x.dims {
				return nil, fmt.Errorf("localsearch: recording %s of document %s: a vector of %d dimensions, want %d", r.ID, doc.ID, len(r.Vector), x.dims)
			}
			k, ok := recIdx[r.ID]
			if !ok {
				k = uint32(len(recs))
				recIdx[r.ID] = k
				recs = append(recs, rec{id: r.ID, doc: doc.ID, vec: r.Vector})
			}
			perDoc[i] = append(perDoc[i], k)
		}
	}
	recIdx = nil
	// Recordings are numbered by ID.
	byID := make([]uint32, len(recs))
	for k := range byID {
		byID[k] = uint32(k)
	}
	slices.SortFunc(byID, func(a, b uint32) int { return strings.Compare(recs[a].id, recs[b].id) })
	recVecs := make([][]float32, len(recs))
	x.recIDs = make([]string, len(recs))
	for rank, k := range byID {
		if rank%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		recs[k].rank = uint32(rank)
		x.recIDs[rank] = recs[k].id
		v, err := x.checkVector(recs[k].vec)
		if err != nil {
			return nil, fmt.Errorf("localsearch: recording %s: %w", recs[k].id, err)
		}
		recVecs[rank] = v
	}
	x.docQ = x.rot.quantizeAll(n, func(i int) []float32 { return docVecs[i] }, workers)
	x.recQ = x.rot.quantizeAll(len(recVecs), func(i int) []float32 { return recVecs[i] }, workers)
	docVecs, recVecs = nil, nil
	x.setRecordings(func(i int) []uint32 {
		rs := perDoc[i]
		for j, k := range rs {
			rs[j] = recs[k].rank
		}
		return rs
	})
	recs, perDoc = nil, nil

	if err := x.buildLexical(ctx, n, func(i int) (string, []string, []string) {
		d := &docs[order[i]]
		return d.Title, d.Body, d.Labels
	}, workers); err != nil {
		return nil, err
	}

	x.setOrders()
	return x, nil
}

// setRecordings lists the readable recordings of each document (those of
// document i are the recording numbers ranks(i), which it may reorder), and
// of each library, each sorted.
func (x *Index) setRecordings(ranks func(i int) []uint32) {
	n := len(x.docs)
	x.docRecOff = make([]uint32, n+1)
	x.libRecs = make([][]uint32, len(x.libIDs))
	for i := range n {
		rs := ranks(i)
		slices.Sort(rs)
		rs = slices.Compact(rs)
		x.docRecs = append(x.docRecs, rs...)
		x.docRecOff[i+1] = uint32(len(x.docRecs))
		li := x.docLib[i]
		x.libRecs[li] = append(x.libRecs[li], rs...)
	}
	for li, rs := range x.libRecs {
		slices.Sort(rs)
		x.libRecs[li] = slices.Clip(slices.Compact(rs))
	}
}

// setOrders lists the documents most active first and by ID, and makes the
// index a segment of its own.
func (x *Index) setOrders() {
	n := len(x.docs)
	x.activity = make([]uint32, n)
	for i := range x.activity {
		x.activity[i] = uint32(i)
	}
	slices.SortFunc(x.activity, func(a, b uint32) int { return search.MoreActive(&x.docs[a], &x.docs[b]) })
	x.byID = slices.Clone(x.activity)
	slices.SortFunc(x.byID, func(a, b uint32) int { return strings.Compare(x.docs[a].ID, x.docs[b].ID) })
	x.whole = newSegment(x, nil)
}

// checkVector checks a made vector: dims floats, finite. One of unit length
// (within float32 rounding) is returned as it is; another is normalised into
// a copy, as search.CheckVectors would have.
func (x *Index) checkVector(v []float32) ([]float32, error) {
	if len(v) != x.dims {
		return nil, fmt.Errorf("a vector of %d dimensions, want %d", len(v), x.dims)
	}
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil, errors.New("a vector holding a NaN or an infinity")
	}
	if sum != 0 && math.Abs(sum-1) > 1e-4 {
		v = slices.Clone(v)
		search.Normalize(v)
	}
	return v, nil
}

type progress struct {
	mu          sync.Mutex
	done, total int
	report      func(done, total int)
}

func (p *progress) add(n int) {
	if p.report == nil {
		return
	}
	p.mu.Lock()
	p.done += n
	done := p.done
	p.mu.Unlock()
	p.report(done, p.total)
}

// embedBatch is how many texts go to the embedder at once.
const embedBatch = 256

// embedAll embeds texts in batches on up to workers goroutines into one arena.
func embedAll(ctx context.Context, e search.Embedder, texts []string, workers int, p *progress) ([]float32, error) {
	dims := e.Dimensions()
	out := make([]float32, len(texts)*dims)
	g, gctx := errgroup.WithContext(ctx) // the first error cancels the other batches
	g.SetLimit(workers)
	for start := 0; start < len(texts) && gctx.Err() == nil; start += embedBatch {
		g.Go(func() error {
			end := min(start+embedBatch, len(texts))
			vs, err := e.Embed(gctx, texts[start:end])
			if err == nil {
				err = search.CheckVectors(vs, end-start, dims)
			}
			if err != nil {
				return fmt.Errorf("localsearch: embed texts %d to %d: %w", start, end-1, err)
			}
			for i, v := range vs {
				copy(out[(start+i)*dims:], v)
			}
			p.add(end - start)
			return nil
		})
	}
	if err := errors.Join(g.Wait(), ctx.Err()); err != nil { // ctx: ended before the first batch
		return nil, err
	}
	return out, nil
}

// buildLexical analyses the n documents (on workers goroutines) and builds the
// postings, field lengths and the vocabulary transducer. text gives document
// i's words: its title, its content strings in template order and its labels
// (search.IndexDoc's Title, Body and Labels).
func (x *Index) buildLexical(ctx context.Context, n int, text func(i int) (title string, body, labels []string), workers int) error {
	type termFreq struct {
		term        string
		title, body uint16
		stop        bool
	}
	analysed := make([][]termFreq, n)
	x.titleLen = make([]uint16, n)
	x.bodyLen = make([]uint16, n)
	// Each worker keeps its own scratch space, so the documents are dealt out
	// by a counter rather than one goroutine each.
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			// A document's terms in order of first occurrence, and where each
			// is in order: reused from one document to the next, as a map
			// made and grown per document cost most of the analysis.
			var order []termFreq
			counts := map[string]int{}
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				if i%64 == 0 && gctx.Err() != nil {
					return gctx.Err()
				}
				if len(counts) > 4096 { // after a long document: clear costs its capacity
					counts = map[string]int{}
				}
				clear(counts)
				order = order[:0]
				count := func(s string, title bool) uint16 {
					var n uint16
					x.analyzer.Each(s, func(t analysis.Token) {
						k, ok := counts[t.Term]
						if !ok {
							k = len(order)
							counts[t.Term] = k
							order = append(order, termFreq{term: t.Term, stop: t.Stop})
						}
						if title {
							order[k].title = satAdd(order[k].title)
						} else {
							order[k].body = satAdd(order[k].body)
						}
						n = satAdd(n)
					})
					return n
				}
				title, content, labels := text(i)
				x.titleLen[i] = count(title, true)
				var body uint16
				for _, s := range content {
					body = satAddN(body, count(s, false))
				}
				for _, s := range labels {
					body = satAddN(body, count(s, false))
				}
				x.bodyLen[i] = body
				analysed[i] = slices.Clone(order)
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}

	x.libTitle = make([]float64, len(x.libIDs))
	x.libBody = make([]float64, len(x.libIDs))
	terms := map[string]uint32{} // term -> number, in order of first occurrence
	lists := [][]posting{}
	x.fwdOff = make([]uint32, 1, n+1)
	for i, tfs := range analysed {
		li := x.docLib[i]
		x.libTitle[li] += float64(x.titleLen[i])
		x.libBody[li] += float64(x.bodyLen[i])
		for _, tf := range tfs {
			id, ok := terms[tf.term]
			if !ok {
				id = uint32(len(lists))
				terms[tf.term] = id
				lists = append(lists, nil)
			}
			lists[id] = append(lists[id], posting{doc: uint32(i), title: tf.title, body: tf.body})
			if !tf.stop {
				x.fwd = append(x.fwd, termCount{term: id, tf: satAddN(tf.title, tf.body)})
			}
		}
		x.fwdOff = append(x.fwdOff, uint32(len(x.fwd)))
		analysed[i] = nil
	}

	// Terms are numbered in the vocabulary's order: the same documents make
	// the same index, however they were numbered on the way.
	vocab := make([]string, 0, len(terms))
	for t := range terms {
		vocab = append(vocab, t)
	}
	slices.Sort(vocab)
	rank := make([]uint32, len(vocab)) // first-occurrence number -> term ID
	for r, t := range vocab {
		rank[terms[t]] = uint32(r)
	}
	for i := range x.fwd {
		x.fwd[i].term = rank[x.fwd[i].term]
	}
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	x.post = make([]posting, 0, total)
	x.postOff = make([]uint32, 1, len(lists)+1)
	for _, t := range vocab {
		x.post = append(x.post, lists[terms[t]]...)
		x.postOff = append(x.postOff, uint32(len(x.post)))
	}
	x.setTermLibs()
	return x.setVocabulary(vocab)
}

// setVocabulary makes the term IDs' names and, for Levenshtein automata, the
// vocabulary transducer of the terms vocab, sorted (term ID = position).
func (x *Index) setVocabulary(vocab []string) error {
	var buf bytes.Buffer
	b, err := vellum.New(&buf, nil)
	if err != nil {
		return fmt.Errorf("localsearch: vocabulary: %w", err)
	}
	for id, t := range vocab {
		if err := b.Insert([]byte(t), uint64(id)); err != nil {
			return fmt.Errorf("localsearch: vocabulary term %q: %w", t, err)
		}
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("localsearch: vocabulary: %w", err)
	}
	if x.vocab, err = vellum.Load(buf.Bytes()); err != nil {
		return fmt.Errorf("localsearch: vocabulary: %w", err)
	}
	x.termName = vocab
	return nil
}

// termID is the ID of term, if the index holds it.
// Knows reports whether a word is, after analysis, a term of the index's
// documents (a calibration's random letters must not be one).
func (x *Index) Knows(word string) bool {
	for _, t := range analyzer().Terms(word) {
		if _, ok := x.termID(t); ok {
			return true
		}
	}
	return false
}

func (x *Index) termID(term string) (uint32, bool) {
	i, ok := slices.BinarySearch(x.termName, term)
	return uint32(i), ok
}

func satAdd(n uint16) uint16 {
	if n == math.MaxUint16 {
		return n
	}
	return n + 1
}

func satAddN(a, b uint16) uint16 {
	if s := uint32(a) + uint32(b); s < math.MaxUint16 {
		return uint16(s)
	}
	return math.MaxUint16
}

// EmbedderID is the ID of the embedder the index was built with; queries must be
// embedded by the same one.
func (x *Index) EmbedderID() string { return x.embedderID }

// Embedder is the embedder the index was built with: the one given to Build or,
// when that one learns from its corpus (search.Fitter), the one fitted to the
// documents. Queries must be embedded by it.
func (x *Index) Embedder() search.Embedder { return x.embedder }

// Stats describe an index, for logs and benchmarks.
type Stats struct {
	Documents, Recordings, Terms, Postings int
	VectorBytes                            int
}

// Stats returns the index's sizes.
func (x *Index) Stats() Stats {
	return Stats{Documents: len(x.docs), Recordings: x.recQ.len(), Terms: len(x.termName), Postings: int(x.postOff[len(x.postOff)-1]),
		VectorBytes: x.docQ.bytes() + x.recQ.bytes()}
}

var errDims = errors.New("localsearch: the query vector's length differs from the index's")
