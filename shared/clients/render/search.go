package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/doclib/doclib/shared/api"

	doclib "github.com/doclib/doclib/shared"
)

// SearchResults writes a page of search results: a warning first when the
// results are the low-confidence fallback (suggestions, not matches, with
// the API's hints), then each hit ranked, with its ID, library, signals and
// score, then the facets of the matched set, which narrow a search when sent
// back as filters.
func SearchResults(w io.Writer, r *api.SearchResults) {
	if len(r.UnavailableSignals) > 0 {
		fmt.Fprintf(w, "WORDS ONLY: the meaning match was unavailable (%s did not run); these are word\n", strings.Join(cleanAll(r.UnavailableSignals), ", "))
		fmt.Fprintln(w, "matches, and the search spent no credit. Search again in a moment to match by meaning too.")
		fmt.Fprintln(w)
	}
	if r.LowConfidence {
		fmt.Fprintln(w, "LOW CONFIDENCE: nothing matched this query well. The documents below are")
		fmt.Fprintln(w, "suggestions (the most active documents you can see), not matches.")
		for _, g := range r.Guidance {
			item(w, "  * ", g)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, searchCounts(r))
	start := (max(r.Page, 1)-1)*r.PageSize + 1
	for i, h := range r.Documents {
		fmt.Fprintf(w, "\n%d. %s\n", start+i, orUntitled(h.Title))
		fmt.Fprintf(w, "   %s · %s (%s)", Clean(h.ID), Clean(h.Library.Name), Clean(h.Library.ID))
		if h.Category != "" {
			fmt.Fprintf(w, " · %s", Clean(h.Category))
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "   signals: %s · score %.3f · semantic similarity %.3f\n",
			strings.Join(cleanAll(h.Relevance.Signals), ", "), h.Relevance.Score, h.Relevance.SemanticSimilarity)
	}
	Facets(w, r.Facets)
}

func searchCounts(r *api.SearchResults) string {
	if r.LowConfidence {
		return fmt.Sprintf("%d %s suggested.", r.Total, doclib.Plural(r.Total, "document", "documents"))
	}
	s := fmt.Sprintf("%d %s", r.Total, doclib.Plural(r.Total, "result", "results"))
	if r.MatchedTotal != r.Total {
		s += fmt.Sprintf(" (%d matched before the filters)", r.MatchedTotal)
	}
	return s + "."
}

// Facets writes the breakdown of a search's matched set, one line per facet
// with each value's document count. A facet with no values is left out; all
// empty (the fallback) writes nothing.
func Facets(w io.Writer, f api.SearchFacets) {
	var lines []string
	add := func(name string, labels []api.Label) {
		if len(labels) == 0 {
			return
		}
		parts := make([]string, len(labels))
		for i, l := range labels {
			parts[i] = fmt.Sprintf("%s (%d)", Clean(l.Name), l.DocumentCount)
		}
		lines = append(lines, fmt.Sprintf("  %s: %s", name, strings.Join(parts, ", ")))
	}
	if len(f.Libraries) > 0 {
		parts := make([]string, len(f.Libraries))
		for i, l := range f.Libraries {
			parts[i] = fmt.Sprintf("%s [%s] (%d)", Clean(l.Name), Clean(l.ID), l.DocumentCount)
		}
		lines = append(lines, "  Libraries: "+strings.Join(parts, ", "))
	}
	add("Categories", f.Categories)
	add("Tags", f.Tags)
	add("Applications", f.Applications)
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nMatched documents by facet:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
