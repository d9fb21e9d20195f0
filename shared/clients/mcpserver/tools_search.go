package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

// searchInput is a search: a query and optional filters.
type searchInput struct {
	Query       string `json:"query" jsonschema:"what you are looking for, in words (2 to 512 characters), e.g. reset a user's password"`
	LibraryID   string `json:"libraryId,omitempty" jsonschema:"search one library only, by its lib_… ID (a library slug the user gives you works too)"`
	Category    string `json:"category,omitempty" jsonschema:"keep only this category (a name from the facets or get_library)"`
	Tag         string `json:"tag,omitempty" jsonschema:"keep only this tag"`
	Application string `json:"application,omitempty" jsonschema:"keep only documents that use this application"`
	Page        int    `json:"page,omitempty" jsonschema:"page number, from 1"`
	PageSize    int    `json:"pageSize,omitempty" jsonschema:"hits per page, 1 to 100"`
}

// searchHit is a hit without its full content: an excerpt is enough to
// choose, and get_document reads the rest.
type searchHit struct {
	ID                 string          `json:"id"`
	Title              string          `json:"title"`
	Library            api.DocumentRef `json:"library"`
	Category           string          `json:"category"`
	Tags               []string        `json:"tags"`
	Applications       []string        `json:"applications"`
	Signals            []string        `json:"signals" jsonschema:"the matches that fired: lexical, fuzzy, semantic, source_recordings; or fallback alone when lowConfidence"`
	Score              float64         `json:"score" jsonschema:"the signals blended into one number in [0, 1]"`
	SemanticSimilarity float64         `json:"semanticSimilarity" jsonschema:"similarity of query and document by meaning, whether or not the semantic signal fired"`
	Excerpt            string          `json:"excerpt" jsonschema:"the start of the document's content"`
}

// searchOutput is a page of search results.
type searchOutput struct {
	Query        string           `json:"query"`
	Hits         []searchHit      `json:"hits" jsonschema:"ranked, best first"`
	Total        int              `json:"total" jsonschema:"results after the filters (the fallback set's size when lowConfidence)"`
	MatchedTotal int              `json:"matchedTotal" jsonschema:"everything the query matched before the filters"`
	Page         int              `json:"page"`
	PageSize     int              `json:"pageSize"`
	Facets       api.SearchFacets `json:"facets" jsonschema:"the matched set broken down; send a value back as the matching filter to narrow"`
	// LowConfidence and Guidance are the API's: the hits are suggestions.
	LowConfidence bool     `json:"lowConfidence" jsonschema:"true when nothing matched well: the hits are the most active documents, suggestions rather than matches"`
	Guidance      []string `json:"guidance" jsonschema:"hints on rewording or narrowing; empty unless lowConfidence"`
	// UnavailableSignals are the API's: the meaning match did not run.
	UnavailableSignals []string `json:"unavailableSignals" jsonschema:"signals that could not run (semantic, source_recordings when the embedding provider failed or was late): the hits are word matches only, and the search spent no credit; empty normally"`
}

func (t *tools) addSearchTool(s *mcp.Server) {
	addTool(t, s, &mcp.Tool{
		Name:  "search_documents",
		Title: "Search documents",
		Description: `Hybrid search (word match + meaning match) across every library this API key can see, ranked best first. Each hit has its ID, title, library, signals, score, semanticSimilarity and a short excerpt; facets break the matches down by library, category, tag and application.

Each call spends one AI credit of the workspace, so prefer one well-worded query with a larger pageSize over many calls. Narrow with libraryId (a lib_… ID, or a slug the user gave), category, tag or application, using values from the facets.

If lowConfidence is true, nothing matched well: the hits are the most active documents, given as suggestions, NOT as matches. Do not present them as an answer; reword the query or narrow it as the guidance says. Search never returns an empty list unless the key sees no document.

Read a hit in full with get_document before relying on it: the document's content is authoritative, the excerpt is not.`,
		Annotations: readOnly("Search documents"),
		InputSchema: inputSchema[searchInput](func(p map[string]*jsonschema.Schema) {
			length(p["query"], doclib.MinQueryLength, doclib.MaxQueryLength)
			paging(p, doclib.MaxPageSize)
		}),
		OutputSchema: outputSchema[searchOutput](),
	}, t.search)
}

func (t *tools) search(ctx context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, *searchOutput, error) {
	if in.LibraryID != "" && !strings.HasPrefix(in.LibraryID, "lib_") {
		// The API's libraryId takes only an ID; every other tool takes a
		// slug too, so resolve it the way they do.
		l, err := t.client(ctx).Library(ctx, in.LibraryID)
		if err != nil {
			return nil, nil, t.toolError(ctx, "search_documents", err)
		}
		in.LibraryID = l.ID
	}
	res, err := t.client(ctx).Search(ctx, client.SearchParams{
		Page:  client.Page{Page: in.Page, PageSize: in.PageSize},
		Query: in.Query, LibraryID: in.LibraryID, Category: in.Category, Tag: in.Tag, Application: in.Application,
	})
	if err != nil {
		return nil, nil, t.toolError(ctx, "search_documents", err)
	}
	out := &searchOutput{
		Query: in.Query, Hits: make([]searchHit, len(res.Documents)), Total: res.Total, MatchedTotal: res.MatchedTotal,
		Page: res.Page, PageSize: res.PageSize, LowConfidence: res.LowConfidence, Guidance: nonNil(res.Guidance),
		UnavailableSignals: nonNil(res.UnavailableSignals),
		Facets: api.SearchFacets{Categories: nonNil(res.Facets.Categories), Tags: nonNil(res.Facets.Tags),
			Applications: nonNil(res.Facets.Applications), Libraries: nonNil(res.Facets.Libraries)},
	}
	for i, d := range res.Documents {
		out.Hits[i] = searchHit{
			ID: d.ID, Title: d.Title, Library: d.Library, Category: d.Category,
			Tags: nonNil(d.Tags), Applications: nonNil(d.Applications), Signals: nonNil(d.Relevance.Signals),
			Score: d.Relevance.Score, SemanticSimilarity: d.Relevance.SemanticSimilarity,
			Excerpt: excerpt(d.Content, res.Schemas[d.Library.ID]),
		}
	}
	return textResult(searchText(out)), out, nil
}

// searchText writes the results for the model: the low-confidence warning
// first, where it cannot be missed, then the hits, then how to narrow.
func searchText(r *searchOutput) string {
	var b strings.Builder
	if len(r.UnavailableSignals) > 0 {
		fmt.Fprintf(&b, "WORDS ONLY: the meaning match was unavailable for this search (%s did not run), so these are word matches; it spent no credit. Search again in a moment for matches by meaning too.\n\n", list(r.UnavailableSignals))
	}
	if r.LowConfidence {
		fmt.Fprintf(&b, "LOW CONFIDENCE: nothing matched %q well. The documents below are the most active ones this key can see, given as suggestions, not matches; do not treat them as an answer.\n", r.Query)
		for _, g := range r.Guidance {
			fmt.Fprintf(&b, "- %s\n", render.Clean(g))
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "Search %q: %d %s", r.Query, r.Total, doclib.Plural(r.Total, "result", "results"))
		if r.MatchedTotal != r.Total {
			fmt.Fprintf(&b, " after filters (%d matched before them)", r.MatchedTotal)
		}
		b.WriteString(".\n")
	}
	b.WriteString(capitalise(pageLine("hit", "hits", len(r.Hits), r.Total, r.Page, r.PageSize)) + "\n")
	for i, h := range r.Hits {
		fmt.Fprintf(&b, "\n%d. %s (%s), in %s (%s)\n", (r.Page-1)*r.PageSize+i+1, render.Clean(h.Title), render.Clean(h.ID),
			render.Clean(h.Library.Name), render.Clean(h.Library.ID))
		if f := facts(h.Category, h.Tags, h.Applications); f != "" {
			fmt.Fprintf(&b, "   %s\n", f)
		}
		fmt.Fprintf(&b, "   Score %.3f · semantic similarity %.3f · signals: %s\n", h.Score, h.SemanticSimilarity, list(h.Signals))
		if h.Excerpt != "" {
			fmt.Fprintf(&b, "   %s\n", h.Excerpt)
		}
	}
	if f := facetText(r.Facets); f != "" && !r.LowConfidence {
		b.WriteString("\nNarrow with a filter (documents matched each):\n" + f)
	}
	if len(r.Hits) > 0 {
		b.WriteString("\nRead a hit in full with get_document and its ID; its content is authoritative.\n")
	}
	return b.String()
}

// facetShown is how many values of a facet the text lists.
const facetShown = 12

func facetText(f api.SearchFacets) string {
	var b strings.Builder
	if len(f.Libraries) > 0 {
		parts := make([]string, len(f.Libraries))
		for i, l := range f.Libraries {
			parts[i] = fmt.Sprintf("%s = %s (%d)", render.Clean(l.Name), render.Clean(l.ID), l.DocumentCount)
		}
		fmt.Fprintf(&b, "- libraryId: %s\n", strings.Join(parts, ", "))
	}
	for _, x := range []struct {
		name string
		ls   []api.Label
	}{{"category", f.Categories}, {"tag", f.Tags}, {"application", f.Applications}} {
		// The structured facets hold every value; the text keeps the
		// largest few, which are the useful filters.
		if len(x.ls) > facetShown {
			fmt.Fprintf(&b, "- %s: %s, and %d more\n", x.name, labels(x.ls[:facetShown]), len(x.ls)-facetShown)
		} else if len(x.ls) > 0 {
			fmt.Fprintf(&b, "- %s: %s\n", x.name, labels(x.ls))
		}
	}
	return b.String()
}
