package client

import (
	"context"
	"iter"
	"net/url"
	"strconv"

	"github.com/doclib/doclib/shared/api"
)

// Libraries lists the libraries the key can see (GET /libraries).
func (c *Client) Libraries(ctx context.Context) (*api.LibraryList, error) {
	var out api.LibraryList
	return &out, c.get(ctx, "/libraries", nil, &out)
}

// Library returns one library by lib_ ID, slug or earlier slug, with its
// edge count (GET /libraries/{id}).
func (c *Client) Library(ctx context.Context, ref string) (*api.Library, error) {
	var out api.Library
	return &out, c.get(ctx, "/libraries/"+seg(ref), nil, &out)
}

// Tags lists a library's tags with document counts.
func (c *Client) Tags(ctx context.Context, library string) (*api.Tags, error) {
	var out api.Tags
	return &out, c.get(ctx, "/libraries/"+seg(library)+"/tags", nil, &out)
}

// Categories lists a library's categories with document counts.
func (c *Client) Categories(ctx context.Context, library string) (*api.Categories, error) {
	var out api.Categories
	return &out, c.get(ctx, "/libraries/"+seg(library)+"/categories", nil, &out)
}

// Applications lists a library's applications with document counts.
func (c *Client) Applications(ctx context.Context, library string) (*api.Applications, error) {
	var out api.Applications
	return &out, c.get(ctx, "/libraries/"+seg(library)+"/applications", nil, &out)
}

// Graph returns a library's documents and edges, most active first, capped
// at 2,000 documents and 5,000 edges (Truncated says whether it was).
func (c *Client) Graph(ctx context.Context, library string) (*api.Graph, error) {
	var out api.Graph
	return &out, c.get(ctx, "/libraries/"+seg(library)+"/graph", nil, &out)
}

// Page selects a page: 0 takes the API's default (page 1, 20 per page).
type Page struct {
	Page, PageSize int
}

func (p Page) query(q url.Values) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if p.Page > 0 {
		q.Set("page", strconv.Itoa(p.Page))
	}
	if p.PageSize > 0 {
		q.Set("pageSize", strconv.Itoa(p.PageSize))
	}
	return q
}

func set(q url.Values, key, value string) {
	if value != "" {
		q.Set(key, value)
	}
}

// DocumentsParams filters a library's documents; empty fields filter nothing.
type DocumentsParams struct {
	Page
	Category, Tag, Application string
	// Search keeps documents whose title or content contains it.
	Search string
}

// Documents returns a page of a library's documents, newest update first.
func (c *Client) Documents(ctx context.Context, library string, p DocumentsParams) (*api.DocumentPage, error) {
	q := url.Values{}
	set(q, "category", p.Category)
	set(q, "tag", p.Tag)
	set(q, "application", p.Application)
	set(q, "search", p.Search)
	var out api.DocumentPage
	return &out, c.get(ctx, "/libraries/"+seg(library)+"/documents", p.Page.query(q), &out)
}

// AllDocuments walks every page of Documents from p.Page (1 when 0), yielding
// each document; it stops at the first error, which it yields.
func (c *Client) AllDocuments(ctx context.Context, library string, p DocumentsParams) iter.Seq2[api.DocumentItem, error] {
	return pages(p.Page, func(pg Page) ([]api.DocumentItem, int, int, error) {
		p.Page = pg
		r, err := c.Documents(ctx, library, p)
		if err != nil {
			return nil, 0, 0, err
		}
		return r.Documents, r.Total, r.PageSize, nil
	})
}

// Document returns one document by doc_ ID, with its schema and edges.
func (c *Client) Document(ctx context.Context, id string) (*api.Document, error) {
	var out api.Document
	return &out, c.get(ctx, "/documents/"+seg(id), nil, &out)
}

// TraverseParams shape a walk of the graph: Direction is outgoing, incoming
// or both (the API's default); Label follows only edges with that label;
// Depth is 1 to 3 (0 takes the API's default).
type TraverseParams struct {
	Direction, Label string
	Depth            int
}

// Traverse walks the graph breadth-first from a document.
func (c *Client) Traverse(ctx context.Context, id string, p TraverseParams) (*api.Traversal, error) {
	q := url.Values{}
	set(q, "direction", p.Direction)
	set(q, "label", p.Label)
	if p.Depth > 0 {
		q.Set("depth", strconv.Itoa(p.Depth))
	}
	var out api.Traversal
	return &out, c.get(ctx, "/documents/"+seg(id)+"/traverse", q, &out)
}

// SourceRecordings returns a page of the shared recordings behind a document
// (the key needs recording-details access; at most 50 per page).
func (c *Client) SourceRecordings(ctx context.Context, id string, p Page) (*api.SourceRecordings, error) {
	var out api.SourceRecordings
	return &out, c.get(ctx, "/documents/"+seg(id)+"/source-recordings", p.query(nil), &out)
}

// AllSourceRecordings walks every page of SourceRecordings.
func (c *Client) AllSourceRecordings(ctx context.Context, id string, p Page) iter.Seq2[api.SourceRecording, error] {
	return pages(p, func(pg Page) ([]api.SourceRecording, int, int, error) {
		r, err := c.SourceRecordings(ctx, id, pg)
		if err != nil {
			return nil, 0, 0, err
		}
		return r.SourceRecordings, r.Total, r.PageSize, nil
	})
}

// SearchParams are a search: Query (2 to 512 characters) and optional filters.
type SearchParams struct {
	Page
	Query                                 string
	LibraryID, Category, Tag, Application string
}

// Search runs a hybrid search across every library the key can see. Each
// page served spends one AI credit of the workspace.
func (c *Client) Search(ctx context.Context, p SearchParams) (*api.SearchResults, error) {
	q := url.Values{"q": {p.Query}}
	set(q, "libraryId", p.LibraryID)
	set(q, "category", p.Category)
	set(q, "tag", p.Tag)
	set(q, "application", p.Application)
	var out api.SearchResults
	return &out, c.get(ctx, "/search/documents", p.Page.query(q), &out)
}

// AllSearch walks every page of a search's results. Each page spends one AI
// credit, so prefer a larger PageSize.
func (c *Client) AllSearch(ctx context.Context, p SearchParams) iter.Seq2[api.SearchHit, error] {
	return pages(p.Page, func(pg Page) ([]api.SearchHit, int, int, error) {
		p.Page = pg
		r, err := c.Search(ctx, p)
		if err != nil {
			return nil, 0, 0, err
		}
		return r.Documents, r.Total, r.PageSize, nil
	})
}

// pages walks pages from start until one comes back short or the total is
// reached, yielding each item, and the first error.
func pages[T any](start Page, fetch func(Page) (items []T, total, pageSize int, err error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		pg := start
		if pg.Page < 1 {
			pg.Page = 1
		}
		for {
			items, total, size, err := fetch(pg)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if len(items) == 0 || size <= 0 || pg.Page*size >= total {
				return
			}
			pg.Page++
			pg.PageSize = size // the API echoes the size it capped to
		}
	}
}
