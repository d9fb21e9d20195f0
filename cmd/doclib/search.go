package main

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

func (a *app) searchCmd() *cobra.Command {
	var p client.SearchParams
	var pages pageFlags
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "search QUERY...",
		Short: "Search every library the key can see, by words and by meaning",
		Long: `Searches the documents of every library the key can see (GET /search/documents)
by their words, close spellings, their meaning and the recordings behind them,
and lists the hits best first with the signals that fired and a score, then
the matched documents broken down by library, category, tag and application:
send a value back with --library (an ID or a slug), --category, --tag or
--application to narrow the search. The words of QUERY are joined with
spaces; put -- before a query that has words starting with a dash (doclib
search -- error -32602).

When nothing matches well, the API returns its most active documents instead,
flagged LOW CONFIDENCE with hints: suggestions, not matches (their signals
are "fallback"). --all then stops after the first page of them.

Piped, each hit is one line: ID, title, score, signals (comma-separated) and
library ID, separated by tabs, with no counts or facets; a LOW CONFIDENCE
warning goes to stderr.

Each page spends one AI credit of the workspace (--all: one per page, in pages
of 100 unless --page-size).`,
		Example: `  doclib search reset a password
  doclib search "approve invoice" --library finance --tag approvals
  doclib search okta --page 2 --page-size 10
  doclib search -- error -32602                # words that start with a dash
  doclib search stock count --json id,relevance --jq '.[] | {id, score: .relevance.score}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("%s needs a query, e.g. doclib search reset password", cmd.Name())}
			}
			return nil
		},
	}, func(ctx context.Context, c *client.Client, args []string) error {
		p.Query = strings.Join(args, " ")
		if p.LibraryID != "" && !strings.HasPrefix(p.LibraryID, "lib_") {
			// The API's libraryId takes only an ID; every other command takes a
			// slug too, so resolve it the way they do.
			l, err := c.Library(ctx, p.LibraryID)
			if err != nil {
				return err
			}
			p.LibraryID = l.ID
		}
		r, err := fetchPages(a, &pages, func(pg client.Page) (*api.SearchResults, error) {
			p.Page = pg
			return c.Search(ctx, p)
		}, func(into, page *api.SearchResults) int {
			if into != nil {
				into.Documents = append(into.Documents, page.Documents...)
				if into.Schemas == nil {
					into.Schemas = map[string]api.Schema{}
				}
				maps.Copy(into.Schemas, page.Schemas)
			}
			return len(page.Documents)
		}, func(r *api.SearchResults) (int, int) {
			if r.LowConfidence {
				// Suggestions, not matches: walking them would spend a
				// credit a page on documents nothing matched.
				return len(r.Documents), r.PageSize
			}
			return r.Total, r.PageSize
		}, func(r *api.SearchResults, n int) { r.Page, r.PageSize = 1, n })
		if err != nil {
			return err
		}
		if pages.all && r.LowConfidence && r.Total > len(r.Documents) {
			fmt.Fprintf(a.stderr, "doclib: nothing matched well, so --all stopped after the first page of %s (each page spends AI credit)\n",
				plural(r.Total, "suggestion", "suggestions"))
		}
		a.pastEnd(pages.all, r.Page, r.PageSize, r.Total, "result", "results")
		if e.on() {
			return e.write(ctx, a.stdout, r.Documents)
		}
		if !a.tty {
			if r.LowConfidence {
				a.note("LOW CONFIDENCE: nothing matched this query well; these are suggestions (the most active documents), not matches.")
			}
			t := a.rows()
			for _, h := range r.Documents {
				t.row(render.Clean(h.ID), render.Clean(h.Title), fmt.Sprintf("%.3f", h.Relevance.Score),
					render.Clean(strings.Join(h.Relevance.Signals, ",")), render.Clean(h.Library.ID))
			}
			return t.done()
		}
		render.SearchResults(a.stdout, r)
		if !pages.all && r.Total > 0 {
			one, many := "result", "results"
			if r.LowConfidence {
				one, many = "suggestion", "suggestions"
			}
			fmt.Fprintln(a.stdout, "\n"+footer(r.Page, r.PageSize, r.Total, one, many))
		}
		if !r.LowConfidence && len(r.Facets.Libraries)+len(r.Facets.Categories)+len(r.Facets.Tags)+len(r.Facets.Applications) > 0 {
			fmt.Fprintln(a.stdout, "Narrow with --library ID or slug, --category, --tag or --application and a value above.")
		}
		return nil
	})
	cmd.Flags().StringVar(&p.LibraryID, "library", "", "search only the library with this `ID` or slug")
	cmd.Flags().StringVar(&p.Category, "category", "", "keep only this `CATEGORY`")
	cmd.Flags().StringVar(&p.Tag, "tag", "", "keep only this `TAG`")
	cmd.Flags().StringVar(&p.Application, "application", "", "keep only documents that use this `APPLICATION`")
	cmd.RegisterFlagCompletionFunc("library", func(cmd *cobra.Command, _ []string, s string) ([]string, cobra.ShellCompDirective) {
		return a.completeLibraries(cmd, nil, s)
	})
	pages.register(cmd, 100)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return pages.check(cmd) }
	e = a.addExport(cmd, reflect.TypeFor[api.SearchHit](), true)
	return cmd
}
