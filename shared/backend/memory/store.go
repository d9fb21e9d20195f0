// Package memory is the embedded store: the whole data set in memory, indexed once
// at load so that no request scans more than the items it returns (a substring
// search scans one library's documents, never the store's).
package memory

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	doclib "github.com/doclib/doclib/shared"
)

// Store is an immutable snapshot of a data set. Replace swaps in a new snapshot
// atomically, so readers never see half of a load.
type Store struct {
	snap atomic.Pointer[snapshot]
}

var (
	_ doclib.Store     = (*Store)(nil)
	_ doclib.Versioned = (*Store)(nil)
)

// versions numbers the snapshots of every store of the process.
var versions atomic.Uint64

// Version implements doclib.Versioned: the snapshot's number, new at every
// Replace.
func (s *Store) Version() uint64 { return s.load().version }

type snapshot struct {
	version     uint64 // unique to this snapshot: doclib.Versioned
	keys        map[doclib.KeyHash]*doclib.APIKey
	workspaces  map[string]*doclib.Workspace
	devices     map[string]*doclib.Device
	libraries   map[string]*library
	byWorkspace map[string][]*doclib.Library // by name, then ID
	slugs       map[string]*library          // workspace + "/" + slug or earlier slug
	documents   map[string]*document
}

type library struct {
	*doclib.Library
	// byUpdated holds the documents by UpdatedAt desc then ID; the label indexes
	// hold the same order, so every filtered list is already sorted.
	byUpdated     []*document
	byCategory    map[string][]*document
	byTag         map[string][]*document
	byApplication map[string][]*document
	// byActivity orders documents for the graph (doclib.CompareActivity).
	byActivity []*doclib.Document
	// edges are the edges inside the library by Support desc, source, target.
	edges []*doclib.Edge
	// words indexes the text of byUpdated for the documents filter's search.
	words *wordIndex

	// graphs caches the capped graph per pair of caps: the snapshot never
	// changes, so each is computed once, on first use.
	graphMu sync.Mutex
	graphs  map[[2]int]*graph
}

type graph struct {
	docs      []*doclib.Document
	edges     []*doclib.Edge
	truncated bool
}

type document struct {
	*doclib.Document
	edges doclib.DocumentEdges
	// shared holds the recordings marked shared, by ClientCreatedAt desc then ID.
	shared []*doclib.Recording
	// ord is the document's position in its library's byUpdated.
	ord uint32
}

// New returns a store holding d.
func New(d *doclib.DataSet) *Store {
	s := &Store{}
	s.Replace(d)
	return s
}

// Replace swaps the store's contents for d.
func (s *Store) Replace(d *doclib.DataSet) { s.snap.Store(build(d)) }

func build(d *doclib.DataSet) *snapshot {
	sn := &snapshot{
		version:     versions.Add(1),
		keys:        make(map[doclib.KeyHash]*doclib.APIKey, len(d.APIKeys)),
		workspaces:  make(map[string]*doclib.Workspace, len(d.Workspaces)),
		devices:     make(map[string]*doclib.Device, len(d.Devices)),
		libraries:   make(map[string]*library, len(d.Libraries)),
		byWorkspace: map[string][]*doclib.Library{},
		slugs:       map[string]*library{},
		documents:   make(map[string]*document, len(d.Documents)),
	}
	for _, k := range d.APIKeys {
		sn.keys[k.Hash] = k
	}
	for _, w := range d.Workspaces {
		sn.workspaces[w.ID] = w
	}
	for _, dv := range d.Devices {
		sn.devices[dv.ID] = dv
	}
	for _, l := range d.Libraries {
		lib := &library{Library: l, byCategory: map[string][]*document{}, byTag: map[string][]*document{}, byApplication: map[string][]*document{}}
		sn.libraries[l.ID] = lib
		sn.byWorkspace[l.WorkspaceID] = append(sn.byWorkspace[l.WorkspaceID], l)
		sn.slugs[l.WorkspaceID+"/"+l.Slug] = lib
		for _, old := range l.PreviousSlugs {
			sn.slugs[l.WorkspaceID+"/"+old] = lib
		}
	}
	for _, libs := range sn.byWorkspace {
		slices.SortFunc(libs, doclib.CompareLibraries)
	}
	for _, doc := range d.Documents {
		sn.documents[doc.ID] = &document{Document: doc}
	}
	for _, doc := range sn.documents {
		lib := sn.libraries[doc.LibraryID]
		lib.byUpdated = append(lib.byUpdated, doc)
		lib.byActivity = append(lib.byActivity, doc.Document)
	}
	for _, e := range d.Edges {
		src, dst := sn.documents[e.SourceID], sn.documents[e.TargetID]
		src.edges.Outgoing = append(src.edges.Outgoing, e)
		dst.edges.Incoming = append(dst.edges.Incoming, e)
		if e.SourceLibraryID == e.TargetLibraryID {
			lib := sn.libraries[e.SourceLibraryID]
			lib.edges = append(lib.edges, e)
		}
	}
	for _, r := range d.Recordings {
		if !r.Shared {
			continue
		}
		for _, id := range r.DocumentIDs {
			doc := sn.documents[id]
			doc.shared = append(doc.shared, r)
		}
	}
	for _, doc := range sn.documents {
		slices.SortFunc(doc.edges.Outgoing, doclib.CompareEdges)
		slices.SortFunc(doc.edges.Incoming, doclib.CompareEdges)
		slices.SortFunc(doc.shared, func(a, b *doclib.Recording) int {
			if c := b.ClientCreatedAt.Compare(a.ClientCreatedAt); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
	// Libraries are independent: index them on every core.
	work := make(chan *library)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(1, len(sn.libraries))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lib := range work {
				lib.index()
			}
		}()
	}
	for _, lib := range sn.libraries {
		work <- lib
	}
	close(work)
	wg.Wait()
	return sn
}

// index sorts a library's lists and builds its label and word indexes.
func (lib *library) index() {
	slices.SortFunc(lib.byUpdated, func(a, b *document) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	lib.words = buildWordIndex(lib.byUpdated)
	for i, doc := range lib.byUpdated {
		doc.ord = uint32(i)
		lib.byCategory[doc.Category] = append(lib.byCategory[doc.Category], doc)
		for _, t := range doc.Tags {
			lib.byTag[t] = append(lib.byTag[t], doc)
		}
		for _, a := range doc.Applications {
			lib.byApplication[a] = append(lib.byApplication[a], doc)
		}
	}
	slices.SortFunc(lib.byActivity, func(a, b *doclib.Document) int {
		return doclib.CompareActivity(a.Activity(), b.Activity())
	})
	slices.SortFunc(lib.edges, doclib.CompareEdges)
}

func (s *Store) load() *snapshot { return s.snap.Load() }

// APIKey implements doclib.Store.
func (s *Store) APIKey(_ context.Context, hash doclib.KeyHash) (*doclib.APIKey, error) {
	if k := s.load().keys[hash]; k != nil {
		return k, nil
	}
	return nil, doclib.ErrNotFound
}

// Workspace implements doclib.Store.
func (s *Store) Workspace(_ context.Context, id string) (*doclib.Workspace, error) {
	if w := s.load().workspaces[id]; w != nil {
		return w, nil
	}
	return nil, doclib.ErrNotFound
}

// Device implements doclib.Store.
func (s *Store) Device(_ context.Context, workspaceID, id string) (*doclib.Device, error) {
	if d := s.load().devices[id]; d != nil && d.WorkspaceID == workspaceID {
		return d, nil
	}
	return nil, doclib.ErrNotFound
}

// Libraries implements doclib.Store.
func (s *Store) Libraries(_ context.Context, workspaceID string) ([]*doclib.Library, error) {
	return s.load().byWorkspace[workspaceID], nil
}

// Library implements doclib.Store.
func (s *Store) Library(_ context.Context, workspaceID, ref string) (*doclib.Library, error) {
	sn := s.load()
	if l := sn.libraries[ref]; l != nil && l.WorkspaceID == workspaceID {
		return l.Library, nil
	}
	if l := sn.slugs[workspaceID+"/"+ref]; l != nil {
		return l.Library, nil
	}
	return nil, doclib.ErrNotFound
}

// ListDocuments implements doclib.Store. It starts from the smallest index that the
// filter selects (a label's list, or the documents the word index finds for the
// search) and checks the remaining conditions on that list only.
func (s *Store) ListDocuments(_ context.Context, l *doclib.Library, f doclib.DocumentFilter, offset, limit int) ([]*doclib.Document, int, error) {
	lib := s.load().libraries[l.ID]
	if lib == nil {
		return nil, 0, doclib.ErrNotFound
	}
	for _, c := range []struct {
		v string
		m map[string][]*document
	}{{f.Category, lib.byCategory}, {f.Tag, lib.byTag}, {f.Application, lib.byApplication}} {
		if c.v != "" && len(c.m[c.v]) == 0 {
			return []*doclib.Document{}, 0, nil
		}
	}
	base := lib.byUpdated
	for _, idx := range [][]*document{pick(lib.byCategory, f.Category), pick(lib.byTag, f.Tag), pick(lib.byApplication, f.Application)} {
		if idx != nil && len(idx) < len(base) {
			base = idx
		}
	}
	needle := strings.ToLower(f.Search)
	var found bitmap // nil: the search, if any, does not narrow by index
	exact := true
	if needle != "" {
		found, exact = lib.words.match(needle)
	}
	match := func(d *document) bool {
		return (f.Category == "" || d.Category == f.Category) &&
			(f.Tag == "" || slices.Contains(d.Tags, f.Tag)) &&
			(f.Application == "" || slices.Contains(d.Applications, f.Application)) &&
			(found == nil || found.has(d.ord)) &&
			(exact || doclib.ContainsText(d.Document, needle))
	}
	out := []*doclib.Document{}
	total := 0
	visit := func(d *document) bool {
		if match(d) {
			if total >= offset && len(out) < limit {
				out = append(out, d.Document)
			}
			total++
		}
		return true
	}
	if found != nil && len(base) == len(lib.byUpdated) {
		found.each(func(ord uint32) bool { return visit(lib.byUpdated[ord]) })
	} else {
		for _, d := range base {
			visit(d)
		}
	}
	return out, total, nil
}

func pick(m map[string][]*document, v string) []*document {
	if v == "" {
		return nil
	}
	return m[v]
}

// Documents implements doclib.Store.
func (s *Store) Documents(_ context.Context, ids []string) (map[string]*doclib.Document, error) {
	sn := s.load()
	out := make(map[string]*doclib.Document, len(ids))
	for _, id := range ids {
		if d := sn.documents[id]; d != nil {
			out[id] = d.Document
		}
	}
	return out, nil
}

// edges returns the edges of each given document that has any.
func (s *Store) edges(ids []string) map[string]*doclib.DocumentEdges {
	sn := s.load()
	out := make(map[string]*doclib.DocumentEdges, len(ids))
	for _, id := range ids {
		if d := sn.documents[id]; d != nil && (len(d.edges.Outgoing) > 0 || len(d.edges.Incoming) > 0) {
			out[id] = &d.edges
		}
	}
	return out
}

// Graph implements doclib.Store. Callers must not modify the returned slices.
func (s *Store) Graph(_ context.Context, libraryID string, maxDocs, maxEdges int) ([]*doclib.Document, []*doclib.Edge, bool, error) {
	lib := s.load().libraries[libraryID]
	if lib == nil {
		return nil, nil, false, doclib.ErrNotFound
	}
	caps := [2]int{maxDocs, maxEdges}
	lib.graphMu.Lock()
	defer lib.graphMu.Unlock()
	g := lib.graphs[caps]
	if g == nil {
		if lib.graphs == nil {
			lib.graphs = map[[2]int]*graph{}
		}
		g = lib.graph(maxDocs, maxEdges)
		lib.graphs[caps] = g
	}
	return g.docs, g.edges, g.truncated, nil
}

func (lib *library) graph(maxDocs, maxEdges int) *graph {
	docs, edges, truncated := doclib.CapGraph(lib.byActivity, lib.edges, maxDocs, maxEdges)
	return &graph{docs: docs, edges: edges, truncated: truncated}
}

// SharedRecordings implements doclib.Store.
func (s *Store) SharedRecordings(_ context.Context, doc *doclib.Document, offset, limit int) ([]*doclib.Recording, error) {
	d := s.load().documents[doc.ID]
	if d == nil {
		return nil, doclib.ErrNotFound
	}
	if offset >= len(d.shared) {
		return []*doclib.Recording{}, nil
	}
	return d.shared[offset:min(len(d.shared), offset+limit)], nil
}

// DocumentsWithEdges implements doclib.Store.
func (s *Store) DocumentsWithEdges(ctx context.Context, ids []string, within *doclib.Scope) (map[string]*doclib.Document, map[string]*doclib.DocumentEdges, error) {
	docs, _ := s.Documents(ctx, ids)
	kept := make([]string, 0, len(docs))
	for id, d := range docs {
		if within.Holds(d.WorkspaceID, d.LibraryID) {
			kept = append(kept, id)
		} else {
			delete(docs, id)
		}
	}
	return docs, s.edges(kept), nil
}
