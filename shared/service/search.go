package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/search"
)

// SearchParams are the validated parameters of GET /search/documents.
type SearchParams struct {
	// Query is q, trimmed, 2 to 512 characters.
	Query  string
	Filter search.Filter
	Page   Page
}

// RefundTimeout bounds the refund of a failed search's credit; it fits in
// the time apigw.DeadlineReserve keeps before a function's deadline.
const RefundTimeout = time.Second

// Search is GET /search/documents. The checks follow docs/api.md: a libraryId
// outside scope is 404 before anything is spent; then the subscription, then the
// credit; a search that fails after it was paid for is refunded.
func (s *Service) Search(ctx context.Context, p *doclib.Principal, sp SearchParams) (out *api.SearchResults, err error) {
	if s.searcher == nil {
		return nil, doclib.Unavailable(errors.New("service: search is not configured"))
	}
	if sp.Filter.LibraryID != "" {
		if _, err := s.library(ctx, p, sp.Filter.LibraryID); err != nil {
			if doclib.ErrorCode(err) == doclib.ENotFound {
				// Name the parameter; unlike a path, libraryId takes no slug.
				return nil, doclib.Errorf(doclib.ENotFound, "The parameter libraryId names no library visible to this API key: %s. It takes a lib_ ID from GET /libraries.", doclib.Quote(sp.Filter.LibraryID))
			}
			return nil, err
		}
	}
	libs, err := s.store.Libraries(ctx, p.WorkspaceID)
	if err != nil {
		return nil, fmt.Errorf("service: search: libraries: %w", err)
	}
	visible := make([]string, 0, len(libs))
	byID := make(map[string]*doclib.Library, len(libs))
	for _, l := range libs {
		if p.Sees(l) {
			visible = append(visible, l.ID)
			byID[l.ID] = l
		}
	}

	if p.Suspended {
		return nil, doclib.Errorf(doclib.ESubscriptionSuspend, "The workspace's subscription is suspended, so it cannot pay for the meaning match that every search runs; the other endpoints keep working. %s", s.help.Ask("renew the workspace's subscription"))
	}
	metered := !p.OwnProviderKey
	if metered {
		if err := s.ledger.Spend(ctx, p.WorkspaceID); err != nil {
			if errors.Is(err, doclib.ErrNoCredit) {
				return nil, doclib.Errorf(doclib.EInsufficientCredit, "The workspace has no AI credit left, and every search spends one on its meaning match; the other endpoints keep working. %s", s.help.Ask("add AI credit to the workspace"))
			}
			return nil, doclib.Unavailable(fmt.Errorf("service: search: spend credit: %w", err))
		}
	}
	if !metered {
		return s.search(ctx, p, sp, visible, byID)
	}
	// A search that does not answer gives its credit back, whether it
	// failed or panicked (the handler turns a panic into a 500; the credit
	// must not go with it), and so does one answered from words alone: the
	// meaning match, which the credit pays for, did not run.
	answered := false
	defer func() {
		if answered && len(out.UnavailableSignals) == 0 {
			return
		}
		// The request's own context may be over (its deadline is why the
		// search failed): the refund gets a short budget of its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RefundTimeout)
		defer cancel()
		if rerr := s.ledger.Refund(rctx, p.WorkspaceID); rerr != nil {
			err = errors.Join(err, fmt.Errorf("service: search: refund credit: %w", rerr))
		}
	}()
	out, err = s.search(ctx, p, sp, visible, byID)
	answered = err == nil
	return out, err
}

func (s *Service) search(ctx context.Context, p *doclib.Principal, sp SearchParams, visible []string, libs map[string]*doclib.Library) (*api.SearchResults, error) {
	res, err := s.searcher.Search(ctx, search.Request{Text: sp.Query, Libraries: visible, Filter: sp.Filter,
		NoRecordings: p.Plan == doclib.PlanIndividual,
		Offset:       sp.Page.Offset(), Limit: sp.Page.Size})
	if err != nil {
		if errors.Is(err, search.ErrEmbedder) {
			return nil, doclib.Unavailable(err)
		}
		return nil, err
	}
	var unavailable []string
	if res.MeaningUnavailable != nil {
		unavailable = []string{search.SignalSemantic}
		if p.Plan != doclib.PlanIndividual {
			unavailable = append(unavailable, search.SignalSourceRecordings)
		}
		s.logger().WarnContext(ctx, "search answered from words: the meaning match was unavailable", "error", res.MeaningUnavailable)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.DocumentID
	}
	docs, edges, err := s.store.DocumentsWithEdges(ctx, ids, p.Scope())
	if err != nil {
		return nil, fmt.Errorf("service: search: documents: %w", err)
	}
	out := &api.SearchResults{Documents: make([]api.SearchHit, 0, len(res.Hits)), Schemas: map[string]api.Schema{},
		Total: res.Total, MatchedTotal: res.MatchedTotal, Page: sp.Page.Number, PageSize: sp.Page.Size,
		Facets: facetsOut(res.Facets, libs), LowConfidence: res.LowConfidence, Guidance: res.Guidance,
		UnavailableSignals: unavailable}
	for _, h := range res.Hits {
		d, lib := docs[h.DocumentID], libs[h.LibraryID]
		if d == nil || lib == nil || d.LibraryID != lib.ID {
			// The index knew a document the store no longer has (possible while
			// an index catches up with its table); leave it out rather than fail.
			continue
		}
		out.Documents = append(out.Documents, api.SearchHit{ID: d.ID, Title: d.Title, Category: d.Category,
			Tags: d.Tags, Applications: d.Applications, Content: d.Content,
			Library: api.DocumentRef{ID: lib.ID, Name: lib.Name}, Edges: edgesOut(p, edges[d.ID]),
			Relevance: api.Relevance{Signals: h.Signals, Score: round4(h.Score), SemanticSimilarity: round4(h.SemanticSimilarity)}})
		if _, ok := out.Schemas[lib.ID]; !ok {
			out.Schemas[lib.ID] = schemaOut(lib.Schema)
		}
	}
	return out, nil
}

func facetsOut(f search.Facets, libs map[string]*doclib.Library) api.SearchFacets {
	out := api.SearchFacets{Categories: labelsOut(f.Categories), Tags: labelsOut(f.Tags),
		Applications: labelsOut(f.Applications), Libraries: make([]api.LibraryFacet, 0, len(f.Libraries))}
	for _, l := range f.Libraries {
		if lib := libs[l.Name]; lib != nil {
			out.Libraries = append(out.Libraries, api.LibraryFacet{ID: lib.ID, Name: lib.Name, DocumentCount: l.DocumentCount})
		}
	}
	return out
}

// round4 keeps four decimals: enough to rank by, short to read.
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
