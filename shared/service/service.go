// Package service is the behaviour of the read API over any doclib.Store: key
// checks, scope, paging, traversal and the shapes of the responses. The HTTP layer
// parses requests and encodes what this package returns; backends only store.
// Putting the rules here, once, is what makes every backend answer alike.
package service

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/search"
)

// Service answers the read API's questions for an authenticated principal.
type Service struct {
	store    doclib.Store
	now      func() time.Time
	searcher *search.Searcher
	ledger   doclib.Ledger
	log      *slog.Logger
	help     doclib.AccountHelp
}

// Option configures a Service.
type Option func(*Service)

// WithSearch enables GET /search/documents: searcher finds documents and ledger
// holds the AI credit every search spends.
func WithSearch(searcher *search.Searcher, ledger doclib.Ledger) Option {
	return func(s *Service) { s.searcher, s.ledger = searcher, ledger }
}

// WithLogger sets where the service logs what it does not tell clients, such
// as why a key was refused when the cause is in the data (nil: slog.Default()).
// The service logs with the request's context, and its lines carry the
// request's ID (doclib.LogHandler).
func WithLogger(log *slog.Logger) Option {
	return func(s *Service) { s.log = doclib.Logger(log) }
}

// WithAccountHelp sets the sentence that 401, 402 and 403 answers end with,
// saying who changes what the key or workspace lacks (zero: the default
// for a self-hosted deployment).
func WithAccountHelp(h doclib.AccountHelp) Option {
	return func(s *Service) { s.help = h }
}

func (s *Service) logger() *slog.Logger {
	if s.log != nil {
		return s.log
	}
	return doclib.Logger(slog.Default())
}

// New returns a Service over store. now may be nil (time.Now).
func New(store doclib.Store, now func() time.Time, opts ...Option) *Service {
	if now == nil {
		now = time.Now
	}
	s := &Service{store: store, now: now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Version is the store's snapshot number when its data is a snapshot
// (doclib.Versioned): every answer but a search's is then a function of
// the version, the principal and the request alone.
func (s *Service) Version() (uint64, bool) {
	if v, ok := s.store.(doclib.Versioned); ok {
		return v.Version(), true
	}
	return 0, false
}

// Page is a validated page request.
type Page struct {
	Number int
	Size   int
}

// Offset is the index of the page's first item, saturating instead of overflowing.
func (p Page) Offset() int {
	const maxInt = int(^uint(0) >> 1)
	if p.Number-1 > maxInt/p.Size {
		return maxInt
	}
	return (p.Number - 1) * p.Size
}

// Authenticate checks a bearer secret and returns who it acts for. The stored key
// is found by the SHA-256 of the secret and the hashes are compared in constant time.
// A key that cannot work (unknown, expired, of a removed device or of a workspace
// that no longer exists) is a coded 401; any other error is a failure to check.
func (s *Service) Authenticate(ctx context.Context, secret string) (*doclib.Principal, error) {
	if secret == "" {
		return nil, doclib.MissingKeyError()
	}
	hash := doclib.HashKey(secret)
	key, err := s.store.APIKey(ctx, hash)
	if errors.Is(err, doclib.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare(key.Hash[:], hash[:]) != 1) {
		return nil, doclib.Errorf(doclib.EUnauthorised, "The API key is not valid. Check that it was copied whole. %s", s.help.Ask("create a new API key"))
	}
	if err != nil {
		return nil, fmt.Errorf("service: look up key: %w", err)
	}
	if err := doclib.CheckKeyExpiry(key.ExpiresAt, s.now(), s.help); err != nil {
		return nil, err
	}
	// The device and the workspace are independent reads: one round trip.
	var (
		dev          *doclib.Device
		ws           *doclib.Workspace
		devErr, wErr error
		wg           sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		ws, wErr = s.store.Workspace(ctx, key.WorkspaceID)
	}()
	if key.DeviceID != "" {
		dev, devErr = s.store.Device(ctx, key.WorkspaceID, key.DeviceID)
	} else {
		dev = &doclib.Device{Status: doclib.DeviceActive} // an operator's key: no device can remove it
	}
	wg.Wait()
	if devErr != nil && !errors.Is(devErr, doclib.ErrNotFound) {
		return nil, fmt.Errorf("service: look up device %s: %w", key.DeviceID, devErr)
	}
	if dev == nil || dev.Status != doclib.DeviceActive {
		return nil, doclib.Errorf(doclib.EKeyDeviceRemoved, "The device that created this API key was removed or archived, so the key no longer works. %s", s.help.Ask("create a new API key"))
	}
	if errors.Is(wErr, doclib.ErrNotFound) {
		// The key outlived its workspace: no request can succeed with it. That is
		// a refusal (which API Gateway caches), not a failure to check the key
		// (retried on every request, and alarmed on).
		s.logger().WarnContext(ctx, "service: API key refused: its workspace does not exist",
			"key_id", key.ID, "workspace_id", key.WorkspaceID)
		return nil, doclib.Errorf(doclib.EUnauthorised, "The API key no longer works: its workspace no longer exists. %s", s.help.Ask("check which workspace you should use"))
	}
	if wErr != nil {
		return nil, fmt.Errorf("service: look up workspace %s: %w", key.WorkspaceID, wErr)
	}
	p := &doclib.Principal{KeyID: key.ID, WorkspaceID: key.WorkspaceID, Plan: ws.Plan,
		AllLibraries: key.AllLibraries, RecordingDetails: key.RecordingDetails,
		Suspended: ws.Subscription == doclib.SubscriptionSuspended, OwnProviderKey: ws.OwnProviderKey, ExpiresAt: key.ExpiresAt}
	if !key.AllLibraries {
		p.Libraries = make(map[string]bool, len(key.Libraries))
		for _, id := range key.Libraries {
			p.Libraries[id] = true
		}
	}
	return p, nil
}

func libraryNotFound(ref string) error {
	return doclib.Errorf(doclib.ENotFound, "No library %s is visible to this API key. Use a lib_ ID or a slug from GET /libraries.", doclib.Quote(ref))
}

func documentNotFound(id string) error {
	return doclib.Errorf(doclib.ENotFound, "No document %s is visible to this API key. Documents are addressed by their doc_ ID, never by slug.", doclib.Quote(id))
}

// library resolves a library reference inside the principal's scope.
func (s *Service) library(ctx context.Context, p *doclib.Principal, ref string) (*doclib.Library, error) {
	lib, err := s.store.Library(ctx, p.WorkspaceID, ref)
	if errors.Is(err, doclib.ErrNotFound) || (err == nil && !p.Sees(lib)) {
		return nil, libraryNotFound(ref)
	}
	if err != nil {
		return nil, fmt.Errorf("service: look up library %q: %w", ref, err)
	}
	return lib, nil
}

// document returns a document inside the principal's scope with its edges: one
// round trip (a document and its edges are stored together). The document itself
// says its workspace and library, so scope needs no other read.
func (s *Service) document(ctx context.Context, p *doclib.Principal, id string) (*doclib.Document, *doclib.DocumentEdges, error) {
	docs, edges, err := s.store.DocumentsWithEdges(ctx, []string{id}, p.Scope())
	if err != nil {
		return nil, nil, fmt.Errorf("service: get document %s: %w", id, err)
	}
	doc := docs[id]
	if doc == nil || doc.WorkspaceID != p.WorkspaceID || !p.SeesLibraryID(doc.LibraryID) {
		return nil, nil, documentNotFound(id)
	}
	return doc, edges[id], nil
}

// Libraries is GET /libraries.
func (s *Service) Libraries(ctx context.Context, p *doclib.Principal) (*api.LibraryList, error) {
	libs, err := s.store.Libraries(ctx, p.WorkspaceID)
	if err != nil {
		return nil, fmt.Errorf("service: list libraries: %w", err)
	}
	out := &api.LibraryList{Libraries: []api.Library{}}
	for _, l := range libs {
		if p.Sees(l) {
			out.Libraries = append(out.Libraries, libraryOut(l))
		}
	}
	return out, nil
}

// Library is GET /libraries/{id}.
func (s *Service) Library(ctx context.Context, p *doclib.Principal, ref string) (*api.Library, error) {
	lib, err := s.library(ctx, p, ref)
	if err != nil {
		return nil, err
	}
	out := libraryOut(lib)
	n := lib.EdgeCount
	out.EdgeCount = &n
	return &out, nil
}

// LabelKind selects one of a library's label lists.
type LabelKind int

// The three label lists.
const (
	Tags LabelKind = iota
	Categories
	Applications
)

// Labels is GET /libraries/{id}/tags, /categories and /applications.
func (s *Service) Labels(ctx context.Context, p *doclib.Principal, ref string, kind LabelKind) (any, error) {
	lib, err := s.library(ctx, p, ref)
	if err != nil {
		return nil, err
	}
	switch kind {
	case Categories:
		return &api.Categories{Categories: labelsOut(lib.Categories)}, nil
	case Applications:
		return &api.Applications{Applications: labelsOut(lib.Applications)}, nil
	default:
		return &api.Tags{Tags: labelsOut(lib.Tags)}, nil
	}
}

// Documents is GET /libraries/{id}/documents.
func (s *Service) Documents(ctx context.Context, p *doclib.Principal, ref string, f doclib.DocumentFilter, page Page) (*api.DocumentPage, error) {
	lib, err := s.library(ctx, p, ref)
	if err != nil {
		return nil, err
	}
	docs, total, err := s.store.ListDocuments(ctx, lib, f, page.Offset(), page.Size)
	if err != nil {
		return nil, fmt.Errorf("service: list documents of %s: %w", lib.ID, err)
	}
	out := &api.DocumentPage{Documents: make([]api.DocumentItem, len(docs)), Total: total,
		Page: page.Number, PageSize: page.Size, Schema: schemaOut(lib.Schema)}
	for i, d := range docs {
		out.Documents[i] = documentItem(d)
	}
	return out, nil
}

// documentItem is a document as a list shows it, and as GET /documents/{id}
// begins.
func documentItem(d *doclib.Document) api.DocumentItem {
	return api.DocumentItem{ID: d.ID, Title: d.Title, Category: d.Category,
		Tags: d.Tags, Applications: d.Applications, RecordingCount: d.RecordingCount,
		DeviceCount: d.DeviceCount, FirstSeen: api.Time{Time: d.FirstSeen}, LastSeen: api.Time{Time: d.LastSeen},
		CreatedAt: api.Time{Time: d.CreatedAt}, UpdatedAt: api.Time{Time: d.UpdatedAt}, Content: d.Content}
}

// Document is GET /documents/{id}.
func (s *Service) Document(ctx context.Context, p *doclib.Principal, id string) (*api.Document, error) {
	doc, edges, err := s.document(ctx, p, id)
	if err != nil {
		return nil, err
	}
	lib, err := s.library(ctx, p, doc.LibraryID) // its template and name: the second round trip
	if err != nil {
		return nil, err
	}
	out := &api.Document{DocumentItem: documentItem(doc), Schema: schemaOut(lib.Schema),
		Library: api.DocumentRef{ID: lib.ID, Name: lib.Name}, Edges: edgesOut(p, edges)}
	return out, nil
}

// Graph is GET /libraries/{id}/graph. Both ends of every edge are in the library,
// so the library's scope covers the whole response. The answer is a view of
// the store's documents and edges, written item by item (api.GraphView):
// a graph at its caps is 7,000 items, and copying them into an api.Graph
// first cost as much as writing them.
func (s *Service) Graph(ctx context.Context, p *doclib.Principal, ref string) (*api.GraphView, error) {
	lib, err := s.library(ctx, p, ref)
	if err != nil {
		return nil, err
	}
	docs, edges, truncated, err := s.store.Graph(ctx, lib.ID, doclib.GraphMaxDocuments, doclib.GraphMaxEdges)
	if err != nil {
		return nil, fmt.Errorf("service: graph of %s: %w", lib.ID, err)
	}
	return &api.GraphView{Source: graphSource{docs, edges}, Documents: len(docs), Edges: len(edges),
		Truncated: truncated, Schema: schemaOut(lib.Schema)}, nil
}

// graphSource is a store's graph as an api.GraphSource.
type graphSource struct {
	docs  []*doclib.Document
	edges []*doclib.Edge
}

func (g graphSource) GraphDocument(i int) api.GraphDocument {
	d := g.docs[i]
	return api.GraphDocument{ID: d.ID, Title: d.Title, Category: d.Category, Tags: d.Tags,
		Applications: d.Applications, RecordingCount: d.RecordingCount, LastSeen: api.Time{Time: d.LastSeen}}
}

func (g graphSource) GraphEdge(i int) api.GraphEdge { return graphEdgeOut(g.edges[i]) }

// Directions of a traversal.
const (
	DirectionOutgoing = "outgoing"
	DirectionIncoming = "incoming"
	DirectionBoth     = "both"
)

// TraverseParams are the validated parameters of a traversal.
type TraverseParams struct {
	Direction string
	// Label, when not empty, is the only edge label followed.
	Label string
	Depth int
}

// Traverse is GET /documents/{id}/traverse: a breadth-first walk from the document
// that never enters a document outside the principal's scope. Each level is one
// round trip: the documents of a level come with their edges, which name the next
// level; the last level needs its documents only. A walk of depth d costs d + 1
// round trips whatever its size (the workspace's libraries, for the schemas, come
// alongside the first).
func (s *Service) Traverse(ctx context.Context, p *doclib.Principal, id string, tp TraverseParams) (*api.Traversal, error) {
	var (
		libs    []*doclib.Library
		libsErr error
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		libs, libsErr = s.store.Libraries(ctx, p.WorkspaceID)
	}()
	docs, edgesOf, err := s.store.DocumentsWithEdges(ctx, []string{id}, p.Scope())
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("service: traverse %s: %w", id, err)
	}
	if libsErr != nil {
		return nil, fmt.Errorf("service: traverse %s: libraries: %w", id, libsErr)
	}
	root := docs[id]
	if root == nil || root.WorkspaceID != p.WorkspaceID || !p.SeesLibraryID(root.LibraryID) {
		return nil, documentNotFound(id)
	}

	// Each reached document's depth, and whether its edges were followed
	// (it was expanded). Walking both ways, an edge between two expanded
	// documents is met from each end: it is kept from the first, and met
	// again from the second, whose other end is then expanded. A document
	// counts as expanded once its outgoing edges are in, so that a self-loop,
	// met again as an incoming edge, is kept once too. No set of edges is
	// needed (it hashed three strings per edge, most of a walk's time).
	type node struct {
		depth    int
		expanded bool
	}
	nodes := make(map[string]node, 64)
	nodes[root.ID] = node{}
	order := []string{root.ID}
	reached := map[string]*doclib.Document{root.ID: root}
	edges := []api.GraphEdge{}
	frontier := []string{root.ID}
	both := tp.Direction == DirectionBoth
	for depth := 1; depth <= tp.Depth && len(frontier) > 0; depth++ {
		var next []string
		follow := func(e *doclib.Edge, other, otherLib string) {
			if (tp.Label != "" && e.Label != tp.Label) || !p.SeesLibraryID(otherLib) {
				return
			}
			st, known := nodes[other]
			if both && known && st.expanded {
				return // kept from other's end
			}
			edges = append(edges, graphEdgeOut(e))
			if !known {
				nodes[other] = node{depth: depth}
				order = append(order, other)
				next = append(next, other)
			}
		}
		for _, from := range frontier {
			de := edgesOf[from]
			if de == nil {
				de = &doclib.DocumentEdges{}
			}
			if tp.Direction != DirectionIncoming {
				for _, e := range de.Outgoing {
					follow(e, e.TargetID, e.TargetLibraryID)
				}
			}
			st := nodes[from]
			st.expanded = true
			nodes[from] = st
			if tp.Direction != DirectionOutgoing {
				for _, e := range de.Incoming {
					follow(e, e.SourceID, e.SourceLibraryID)
				}
			}
		}
		if len(next) == 0 {
			break
		}
		// The next level's documents, with their edges unless it is the last.
		var got map[string]*doclib.Document
		if depth < tp.Depth {
			got, edgesOf, err = s.store.DocumentsWithEdges(ctx, next, nil) // in scope: their edges were checked
		} else {
			got, err = s.store.Documents(ctx, next)
		}
		if err != nil {
			return nil, fmt.Errorf("service: traverse %s: level %d: %w", id, depth, err)
		}
		for k, v := range got {
			reached[k] = v
		}
		frontier = next
	}

	out := &api.Traversal{RootDocumentID: root.ID, Direction: tp.Direction, MaxDepth: tp.Depth,
		Nodes: make([]api.TraverseNode, 0, len(order)), Edges: edges, Schemas: map[string]api.Schema{}}
	if tp.Label != "" {
		out.Label = &tp.Label
	}
	needed := map[string]bool{}
	for _, nid := range order {
		d := reached[nid]
		if d == nil {
			// An edge outlived its document (possible on eventually consistent
			// backends); drop the node rather than fail the walk.
			continue
		}
		needed[d.LibraryID] = true
		out.Nodes = append(out.Nodes, api.TraverseNode{ID: d.ID, Title: d.Title, Category: d.Category,
			Tags: d.Tags, Applications: d.Applications, LibraryID: d.LibraryID, Depth: nodes[nid].depth, Content: d.Content})
	}
	for _, l := range libs {
		if needed[l.ID] && p.Sees(l) {
			out.Schemas[l.ID] = schemaOut(l.Schema)
		}
	}
	return out, nil
}

// SourceRecordings is GET /documents/{id}/source-recordings. Only shared recordings
// are readable, and none on the Individual plan; private ones only count.
func (s *Service) SourceRecordings(ctx context.Context, p *doclib.Principal, id string, page Page) (*api.SourceRecordings, error) {
	if !p.RecordingDetails {
		return nil, doclib.Errorf(doclib.EForbidden, "This API key has no recording-details access, which source recordings need. %s", s.help.Ask("create a key with recording-details access"))
	}
	doc, _, err := s.document(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out := &api.SourceRecordings{SourceRecordings: []api.SourceRecording{}, LinkedTotal: doc.RecordingCount,
		Page: page.Number, PageSize: page.Size}
	if p.Plan != doclib.PlanIndividual {
		out.Total = doc.SharedRecordingCount
		recs, err := s.store.SharedRecordings(ctx, doc, page.Offset(), page.Size)
		if err != nil {
			return nil, fmt.Errorf("service: recordings of %s: %w", doc.ID, err)
		}
		for _, r := range recs {
			qs := make([]api.Question, len(r.Questions))
			for i, q := range r.Questions {
				qs[i] = api.Question{ID: q.ID, Question: q.Question, Response: q.Response, SequenceOrder: q.SequenceOrder}
			}
			out.SourceRecordings = append(out.SourceRecordings, api.SourceRecording{ID: r.ID, Title: r.Title,
				Status: r.Status, ClientCreatedAt: api.Time{Time: r.ClientCreatedAt}, Questions: qs, Steps: r.Steps})
		}
	}
	out.PrivateTotal = out.LinkedTotal - out.Total
	out.Guidance = recordingGuidance(p.Plan, out.LinkedTotal, out.PrivateTotal)
	return out, nil
}

func recordingGuidance(plan doclib.Plan, linked, private int) string {
	switch {
	case private == 0:
		return ""
	case plan == doclib.PlanIndividual:
		return fmt.Sprintf("This document was written from %d %s, but the workspace is on the Individual plan, where recordings cannot be shared, so none can be read here. The document's own content is the authoritative account.",
			linked, doclib.Plural(linked, "recording", "recordings"))
	case private == linked:
		return fmt.Sprintf("All %d %s behind this document are private. Recordings stay private until a member shares them from the desktop app; until then the document's own content is the authoritative account.",
			linked, doclib.Plural(linked, "recording", "recordings"))
	default:
		return fmt.Sprintf("%d of the %d recordings behind this document %s private and not listed. Recordings stay private until a member shares them from the desktop app.",
			private, linked, doclib.Plural(private, "is", "are"))
	}
}

// edgesOut is a document's edges inside the principal's scope: an edge whose
// other end is in a library the key cannot see is left out.
func edgesOut(p *doclib.Principal, de *doclib.DocumentEdges) api.Edges {
	out := api.Edges{Outgoing: []api.OutgoingEdge{}, Incoming: []api.IncomingEdge{}}
	if de == nil {
		return out
	}
	for _, e := range de.Outgoing {
		if p.SeesLibraryID(e.TargetLibraryID) {
			out.Outgoing = append(out.Outgoing, api.OutgoingEdge{TargetDocumentID: e.TargetID,
				TargetDocumentTitle: e.TargetTitle, TargetLibraryID: e.TargetLibraryID, Label: e.Label,
				EdgeType: e.Type, RecordingCount: e.RecordingCount, Support: e.Support, LowConfidence: e.LowConfidence()})
		}
	}
	for _, e := range de.Incoming {
		if p.SeesLibraryID(e.SourceLibraryID) {
			out.Incoming = append(out.Incoming, api.IncomingEdge{SourceDocumentID: e.SourceID,
				SourceDocumentTitle: e.SourceTitle, SourceLibraryID: e.SourceLibraryID, Label: e.Label,
				EdgeType: e.Type, RecordingCount: e.RecordingCount, Support: e.Support, LowConfidence: e.LowConfidence()})
		}
	}
	return out
}

func libraryOut(l *doclib.Library) api.Library {
	out := api.Library{ID: l.ID, Name: l.Name, Description: l.Description,
		Categories: make([]string, len(l.Categories)), Tags: make([]string, len(l.Tags)),
		DocumentCount: l.DocumentCount, CreatedAt: api.Time{Time: l.CreatedAt}, UpdatedAt: api.Time{Time: l.UpdatedAt}}
	for i, c := range l.Categories {
		out.Categories[i] = c.Name
	}
	for i, t := range l.Tags {
		out.Tags[i] = t.Name
	}
	return out
}

func labelsOut(ls []doclib.Label) []api.Label {
	out := make([]api.Label, len(ls))
	for i, l := range ls {
		out[i] = api.Label{Name: l.Name, DocumentCount: l.DocumentCount}
	}
	return out
}

func schemaOut(s doclib.Schema) api.Schema {
	out := api.Schema{Version: s.Version, Sections: make([]api.Section, len(s.Sections))}
	for i, sec := range s.Sections {
		out.Sections[i] = api.Section{Key: sec.Key, Title: sec.Title, Type: sec.Type}
	}
	return out
}

func graphEdgeOut(e *doclib.Edge) api.GraphEdge {
	return api.GraphEdge{SourceDocumentID: e.SourceID, SourceDocumentTitle: e.SourceTitle,
		TargetDocumentID: e.TargetID, TargetDocumentTitle: e.TargetTitle, Label: e.Label, EdgeType: e.Type,
		RecordingCount: e.RecordingCount, Support: e.Support, LowConfidence: e.LowConfidence()}
}
