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

	"github.com/blevesearch/vellum"
	"github.com/blevesearch/vellum/levenshtein"

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
	analyzer   *analysis.Analyzer

	docs   []search.Doc // by ordinal; libraries are contiguous
	libs   map[string]span
	docLib []uint16 // ordinal -> library number
	libIDs []string // library number -> ID

	// Lexical: term -> postings of (ordinal, tf in title, tf in content).
	terms    map[string]uint32
	postOff  []uint32 // postings of term t are post[postOff[t]:postOff[t+1]]
	post     []posting
	titleLen []uint16
	bodyLen  []uint16
	libTitle []float64 // per library number: sum of title lengths
	libBody  []float64
	// The forward index, for feedback: the words (stop words left out) of
	// document i with their counts are fwd[fwdOff[i]:fwdOff[i+1]].
	fwdOff []uint32
	fwd    []termCount
	vocab  *vellum.FST // term -> term id, for fuzzy matching
	lev    *levenshtein.LevenshteinAutomatonBuilder

	// Vectors, row-major: document i is docVec[i*dims:(i+1)*dims].
	docVec []float32
	recVec []float32
	// The readable recordings of document i are docRecs[docRecOff[i]:docRecOff[i+1]].
	docRecOff []uint32
	docRecs   []uint32
	// libRecs lists, per library number, the recordings behind its documents.
	libRecs [][]uint32

	// activity lists every ordinal, most active first.
	activity []uint32

	scratch sync.Pool
}

type span struct{ start, end uint32 }

type termCount struct {
	term uint32
	tf   uint16
}

type posting struct {
	doc         uint32
	title, body uint16
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
func Build(ctx context.Context, d *doclib.DataSet, e search.Embedder, opt Options) (*Index, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	x := &Index{embedderID: e.ID(), dims: e.Dimensions(), analyzer: analysis.New(), libs: map[string]span{}, terms: map[string]uint32{}}
	if x.dims <= 0 {
		return nil, fmt.Errorf("localsearch: embedder %s has %d dimensions", e.ID(), x.dims)
	}

	// Number the documents library by library (libraries by ID, documents by ID).
	byLib := map[string][]*doclib.Document{}
	for _, doc := range d.Documents {
		byLib[doc.LibraryID] = append(byLib[doc.LibraryID], doc)
	}
	libIDs := make([]string, 0, len(d.Libraries))
	for _, l := range d.Libraries {
		libIDs = append(libIDs, l.ID)
	}
	slices.Sort(libIDs)
	if len(libIDs) > math.MaxUint16 {
		return nil, fmt.Errorf("localsearch: %d libraries; at most %d", len(libIDs), math.MaxUint16)
	}
	x.libIDs = libIDs
	var ordered []*doclib.Document
	for li, id := range libIDs {
		docs := byLib[id]
		slices.SortFunc(docs, func(a, b *doclib.Document) int { return strings.Compare(a.ID, b.ID) })
		x.libs[id] = span{uint32(len(ordered)), uint32(len(ordered) + len(docs))}
		for range docs {
			x.docLib = append(x.docLib, uint16(li))
		}
		ordered = append(ordered, docs...)
	}
	n := len(ordered)
	ordinal := make(map[string]uint32, n)
	x.docs = make([]search.Doc, n)
	labels := search.NewLabelTable()
	for i, doc := range ordered {
		ordinal[doc.ID] = uint32(i)
		x.docs[i] = search.Doc{ID: doc.ID, LibraryID: doc.LibraryID, Category: doc.Category, Tags: doc.Tags,
			Applications: doc.Applications, RecordingCount: doc.RecordingCount, LastSeen: doc.LastSeen}
		labels.Intern(&x.docs[i])
	}

	if err := x.buildLexical(ordered, workers); err != nil {
		return nil, err
	}

	// Readable recordings and the documents they are behind.
	individual := map[string]bool{}
	for _, w := range d.Workspaces {
		individual[w.ID] = w.Plan == doclib.PlanIndividual
	}
	docWS := map[string]string{}
	for _, doc := range d.Documents {
		docWS[doc.ID] = doc.WorkspaceID
	}
	var recTexts []string
	perDoc := make([][]uint32, n)
	x.libRecs = make([][]uint32, len(libIDs))
	for _, r := range d.Recordings {
		plan := doclib.PlanTeam
		if len(r.DocumentIDs) > 0 && individual[docWS[r.DocumentIDs[0]]] {
			plan = doclib.PlanIndividual
		}
		if len(r.DocumentIDs) == 0 || !search.Readable(r, plan) {
			continue // private recordings, and every recording on the Individual plan, never count
		}
		ri := uint32(len(recTexts))
		recTexts = append(recTexts, search.RecordingText(r))
		seenLib := map[uint16]bool{}
		for _, id := range r.DocumentIDs {
			o, ok := ordinal[id]
			if !ok {
				continue
			}
			perDoc[o] = append(perDoc[o], ri)
			if li := x.docLib[o]; !seenLib[li] {
				seenLib[li] = true
				x.libRecs[li] = append(x.libRecs[li], ri)
			}
		}
	}
	x.docRecOff = make([]uint32, n+1)
	for i, rs := range perDoc {
		x.docRecs = append(x.docRecs, rs...)
		x.docRecOff[i+1] = uint32(len(x.docRecs))
	}

	docTexts := make([]string, n)
	for i, doc := range ordered {
		docTexts[i] = search.DocumentText(doc)
	}
	if f, ok := e.(search.Fitter); ok && opt.Fit {
		fitted, err := f.Fit(ctx, docTexts)
		if err != nil {
			return nil, fmt.Errorf("localsearch: fit the embedder to the documents: %w", err)
		}
		e = fitted
		x.embedderID = e.ID()
		if x.dims = e.Dimensions(); x.dims <= 0 {
			return nil, fmt.Errorf("localsearch: embedder %s has %d dimensions", e.ID(), x.dims)
		}
	}
	x.embedder = e
	total := len(docTexts) + len(recTexts)
	var done progress
	done.total, done.report = total, opt.Progress
	var err error
	if x.docVec, err = embedAll(ctx, e, docTexts, workers, &done); err != nil {
		return nil, err
	}
	if x.recVec, err = embedAll(ctx, e, recTexts, workers, &done); err != nil {
		return nil, err
	}

	x.activity = make([]uint32, n)
	for i := range x.activity {
		x.activity[i] = uint32(i)
	}
	slices.SortFunc(x.activity, func(a, b uint32) int { return search.MoreActive(&x.docs[a], &x.docs[b]) })
	return x, nil
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
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	batches := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range batches {
				end := min(start+embedBatch, len(texts))
				vs, err := e.Embed(ctx, texts[start:end])
				if err == nil {
					err = search.CheckVectors(vs, end-start, dims)
				}
				if err != nil {
					cancel(fmt.Errorf("localsearch: embed texts %d to %d: %w", start, end-1, err))
					return
				}
				for i, v := range vs {
					copy(out[(start+i)*dims:], v)
				}
				p.add(end - start)
			}
		}()
	}
feed:
	for start := 0; start < len(texts); start += embedBatch {
		select {
		case batches <- start:
		case <-ctx.Done():
			break feed
		}
	}
	close(batches)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// buildLexical analyses the documents (on workers goroutines) and builds the
// postings, field lengths and the vocabulary transducer.
func (x *Index) buildLexical(docs []*doclib.Document, workers int) error {
	type termFreq struct {
		term        string
		title, body uint16
		stop        bool
	}
	analysed := make([][]termFreq, len(docs))
	x.titleLen = make([]uint16, len(docs))
	x.bodyLen = make([]uint16, len(docs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				counts := map[string]*termFreq{}
				var order []*termFreq
				count := func(s string, title bool) uint16 {
					var n uint16
					x.analyzer.Each(s, func(t analysis.Token) {
						tf := counts[t.Term]
						if tf == nil {
							tf = &termFreq{term: t.Term, stop: t.Stop}
							counts[t.Term] = tf
							order = append(order, tf)
						}
						if title {
							tf.title = satAdd(tf.title)
						} else {
							tf.body = satAdd(tf.body)
						}
						n = satAdd(n)
					})
					return n
				}
				x.titleLen[i] = count(docs[i].Title, true)
				var body uint16
				for _, s := range doclib.ContentStrings(docs[i].Content) {
					body = satAddN(body, count(s, false))
				}
				for _, s := range search.Labels(docs[i]) {
					body = satAddN(body, count(s, false))
				}
				x.bodyLen[i] = body
				out := make([]termFreq, len(order))
				for j, tf := range order {
					out[j] = *tf
				}
				analysed[i] = out
			}
		}()
	}
	for i := range docs {
		next <- i
	}
	close(next)
	wg.Wait()

	x.libTitle = make([]float64, len(x.libIDs))
	x.libBody = make([]float64, len(x.libIDs))
	lists := [][]posting{}
	x.fwdOff = make([]uint32, 1, len(docs)+1)
	for i, tfs := range analysed {
		li := x.docLib[i]
		x.libTitle[li] += float64(x.titleLen[i])
		x.libBody[li] += float64(x.bodyLen[i])
		for _, tf := range tfs {
			id, ok := x.terms[tf.term]
			if !ok {
				id = uint32(len(lists))
				x.terms[tf.term] = id
				lists = append(lists, nil)
			}
			lists[id] = append(lists[id], posting{doc: uint32(i), title: tf.title, body: tf.body})
			if !tf.stop {
				x.fwd = append(x.fwd, termCount{id, satAddN(tf.title, tf.body)})
			}
		}
		x.fwdOff = append(x.fwdOff, uint32(len(x.fwd)))
		analysed[i] = nil
	}
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	x.post = make([]posting, 0, total)
	x.postOff = make([]uint32, 1, len(lists)+1)
	for _, l := range lists {
		x.post = append(x.post, l...)
		x.postOff = append(x.postOff, uint32(len(x.post)))
	}

	// The vocabulary as a transducer, for Levenshtein automata.
	vocab := make([]string, 0, len(x.terms))
	for t := range x.terms {
		vocab = append(vocab, t)
	}
	slices.Sort(vocab)
	var buf bytes.Buffer
	b, err := vellum.New(&buf, nil)
	if err != nil {
		return fmt.Errorf("localsearch: vocabulary: %w", err)
	}
	for _, t := range vocab {
		if err := b.Insert([]byte(t), uint64(x.terms[t])); err != nil {
			return fmt.Errorf("localsearch: vocabulary term %q: %w", t, err)
		}
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("localsearch: vocabulary: %w", err)
	}
	if x.vocab, err = vellum.Load(buf.Bytes()); err != nil {
		return fmt.Errorf("localsearch: vocabulary: %w", err)
	}
	if x.lev, err = levenshtein.NewLevenshteinAutomatonBuilder(2, false); err != nil {
		return fmt.Errorf("localsearch: levenshtein: %w", err)
	}
	return nil
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
	return Stats{Documents: len(x.docs), Recordings: len(x.recVec) / x.dims, Terms: len(x.terms), Postings: len(x.post),
		VectorBytes: 4 * (len(x.docVec) + len(x.recVec))}
}

var errDims = errors.New("localsearch: the query vector's length differs from the index's")
