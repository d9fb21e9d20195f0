package service_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/service"
)

// TestTraverseMatchesAPlainWalk holds Traverse, which keeps each edge once
// without a set of edges, to the plain walk it replaced (a set keyed by
// source, target and label), on random dense graphs of the demo's
// documents: every direction, depth and label, with a full-scope key and a
// key that sees one library.
func TestTraverseMatchesAPlainWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for round := range 8 {
		f := demo.Generate(demo.Options{})
		byWS := map[string][]string{}
		wsOf := map[string]string{}
		for _, l := range f.Libraries {
			wsOf[l.ID] = l.WorkspaceID
		}
		for _, d := range f.Documents {
			byWS[wsOf[d.LibraryID]] = append(byWS[wsOf[d.LibraryID]], d.ID)
		}
		seen := map[[3]string]bool{}
		f.Edges = nil
		for _, ids := range byWS {
			for range len(ids) * (2 + round) {
				s, d := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
				l := []string{"often next", "alternative to"}[rng.IntN(2)]
				if s == d || seen[[3]string{s, d, l}] {
					continue
				}
				seen[[3]string{s, d, l}] = true
				f.Edges = append(f.Edges, dataset.Edge{SourceDocumentID: s, TargetDocumentID: d, Label: l, EdgeType: "data", RecordingCount: 1, Support: rng.IntN(6)})
			}
		}
		d, err := dataset.Validate(f)
		if err != nil {
			t.Fatal(err)
		}
		store := memory.New(d)
		svc := service.New(store, nil)
		ctx := context.Background()
		for _, secret := range []string{"dlk_demo_full_scope", "dlk_demo_one_library"} {
			p, err := svc.Authenticate(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			for range 40 {
				root := d.Documents[rng.IntN(len(d.Documents))]
				tp := service.TraverseParams{Direction: []string{"both", "outgoing", "incoming"}[rng.IntN(3)],
					Depth: 1 + rng.IntN(3), Label: []string{"", "often next", "alternative to"}[rng.IntN(3)]}
				got, gotErr := svc.Traverse(ctx, p, root.ID, tp)
				want, wantErr := plainWalk(ctx, store, p, root.ID, tp)
				if (gotErr != nil) != (wantErr != nil) {
					t.Fatalf("%s %+v: error %v, plain walk %v", root.ID, tp, gotErr, wantErr)
				}
				if gotErr == nil && (!reflect.DeepEqual(got.Nodes, want.nodes) || !reflect.DeepEqual(got.Edges, want.edges)) {
					t.Fatalf("%s %+v with %s: %d nodes, %d edges; the plain walk: %d nodes, %d edges",
						root.ID, tp, secret, len(got.Nodes), len(got.Edges), len(want.nodes), len(want.edges))
				}
			}
		}
	}
}

type walk struct {
	nodes []api.TraverseNode
	edges []api.GraphEdge
}

// plainWalk is the breadth-first walk as first written: a set of the edges
// kept, by source, target and label.
func plainWalk(ctx context.Context, store doclib.Store, p *doclib.Principal, id string, tp service.TraverseParams) (*walk, error) {
	docs, edgesOf, err := store.DocumentsWithEdges(ctx, []string{id}, p.Scope())
	if err != nil {
		return nil, err
	}
	root := docs[id]
	if root == nil || root.WorkspaceID != p.WorkspaceID || !p.SeesLibraryID(root.LibraryID) {
		return nil, doclib.ErrNotFound
	}
	depthOf := map[string]int{root.ID: 0}
	order := []string{root.ID}
	reached := map[string]*doclib.Document{root.ID: root}
	seenEdge := map[[3]string]bool{}
	out := &walk{edges: []api.GraphEdge{}, nodes: []api.TraverseNode{}}
	frontier := []string{root.ID}
	for depth := 1; depth <= tp.Depth && len(frontier) > 0; depth++ {
		var next []string
		for _, from := range frontier {
			de := edgesOf[from]
			if de == nil {
				continue
			}
			follow := func(e *doclib.Edge, other, otherLib string) {
				if (tp.Label != "" && e.Label != tp.Label) || !p.SeesLibraryID(otherLib) {
					return
				}
				if k := [3]string{e.SourceID, e.TargetID, e.Label}; !seenEdge[k] {
					seenEdge[k] = true
					out.edges = append(out.edges, api.GraphEdge{SourceDocumentID: e.SourceID, SourceDocumentTitle: e.SourceTitle,
						TargetDocumentID: e.TargetID, TargetDocumentTitle: e.TargetTitle, Label: e.Label, EdgeType: e.Type,
						RecordingCount: e.RecordingCount, Support: e.Support, LowConfidence: e.LowConfidence()})
				}
				if _, ok := depthOf[other]; !ok {
					depthOf[other] = depth
					order = append(order, other)
					next = append(next, other)
				}
			}
			if tp.Direction != service.DirectionIncoming {
				for _, e := range de.Outgoing {
					follow(e, e.TargetID, e.TargetLibraryID)
				}
			}
			if tp.Direction != service.DirectionOutgoing {
				for _, e := range de.Incoming {
					follow(e, e.SourceID, e.SourceLibraryID)
				}
			}
		}
		if len(next) == 0 {
			break
		}
		got, more, err := store.DocumentsWithEdges(ctx, next, nil)
		if err != nil {
			return nil, err
		}
		edgesOf = more
		for k, v := range got {
			reached[k] = v
		}
		frontier = next
	}
	for _, nid := range order {
		d := reached[nid]
		out.nodes = append(out.nodes, api.TraverseNode{ID: d.ID, Title: d.Title, Category: d.Category,
			Tags: d.Tags, Applications: d.Applications, LibraryID: d.LibraryID, Depth: depthOf[nid], Content: d.Content})
	}
	return out, nil
}
