package main

import (
	"context"
	"fmt"
	"reflect"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

func (a *app) documentsCmd() *cobra.Command {
	var p client.DocumentsParams
	var pages pageFlags
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "documents LIBRARY",
		Short: "List a library's documents, newest update first, a page at a time",
		Long: `Lists a library's documents (GET /libraries/{id}/documents), newest update
first, 20 to a page unless --page-size. --category, --tag and --application
take the values 'doclib categories|tags|applications LIBRARY' list; --search
keeps documents whose title or content contains the text (no AI credit).
--all walks every page.`,
		Example: `  doclib documents it-operations
  doclib documents lib_it --tag security --page 2
  doclib documents lib_it --search okta --all
  doclib documents lib_it --all --json id --jq length`,
		Args:              oneArg("a library ID or slug"),
		ValidArgsFunction: a.completeLibraries,
	}, func(ctx context.Context, c *client.Client, args []string) error {
		r, err := fetchPages(a, &pages, func(pg client.Page) (*api.DocumentPage, error) {
			p.Page = pg
			return c.Documents(ctx, args[0], p)
		}, func(into, page *api.DocumentPage) int {
			if into != nil {
				into.Documents = append(into.Documents, page.Documents...)
			}
			return len(page.Documents)
		}, func(r *api.DocumentPage) (int, int) { return r.Total, r.PageSize },
			func(r *api.DocumentPage, n int) { r.Page, r.PageSize = 1, n })
		if err != nil {
			return err
		}
		a.pastEnd(pages.all, r.Page, r.PageSize, r.Total, "document", "documents")
		if e.on() {
			return e.write(ctx, a.stdout, r.Documents)
		}
		if r.Total == 0 {
			a.note("No documents match.")
			if p.Category != "" || p.Tag != "" || p.Application != "" {
				a.note("The filters take the names 'doclib categories|tags|applications %s' list.", args[0])
			}
			return nil
		}
		if len(r.Documents) > 0 {
			t := a.rows("ID", "TITLE", "CATEGORY", "UPDATED")
			for _, d := range r.Documents {
				t.row(render.Clean(d.ID), render.Clean(d.Title), render.Clean(d.Category), a.day(d.UpdatedAt))
			}
			if err := t.done(); err != nil {
				return err
			}
		}
		if !a.tty {
			return nil
		}
		if len(r.Documents) > 0 {
			fmt.Fprintln(a.stdout)
		}
		if pages.all {
			fmt.Fprintf(a.stdout, "%s.\n", plural(len(r.Documents), "document", "documents"))
		} else {
			fmt.Fprintln(a.stdout, footer(r.Page, r.PageSize, r.Total, "document", "documents"))
		}
		return nil
	})
	cmd.Flags().StringVar(&p.Category, "category", "", "keep only this `CATEGORY`")
	cmd.Flags().StringVar(&p.Tag, "tag", "", "keep only this `TAG`")
	cmd.Flags().StringVar(&p.Application, "application", "", "keep only documents that use this `APPLICATION`")
	cmd.Flags().StringVar(&p.Search, "search", "", "keep documents whose title or content contains `TEXT`")
	pages.register(cmd, 100)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return pages.check(cmd) }
	e = a.addExport(cmd, reflect.TypeFor[api.DocumentItem](), true)
	return cmd
}

func (a *app) documentCmd() *cobra.Command {
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "document ID",
		Short: "Show a document: its facts, its content section by section, its edges",
		Long: `Shows one document (GET /documents/{id}): title, library, category, tags,
applications and recording counts, then its content section by section in the
order of its library's template, then the documents people go to next and
come from. ID is a doc_ ID; slugs do not work for documents.`,
		Example: `  doclib document doc_it_001
  doclib document doc_it_001 --json content --jq .content`,
		Args: oneArg("a document ID (doc_…)"),
	}, func(ctx context.Context, c *client.Client, args []string) error {
		d, err := c.Document(ctx, args[0])
		if err != nil {
			return err
		}
		if e.on() {
			return e.write(ctx, a.stdout, d)
		}
		return render.Document(a.stdout, d)
	})
	e = a.addExport(cmd, reflect.TypeFor[api.Document](), false)
	return cmd
}

func (a *app) traverseCmd() *cobra.Command {
	var p client.TraverseParams
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "traverse ID",
		Short: "Walk the graph from a document, breadth first, up to 3 hops",
		Long: `Walks the graph outward from a document (GET /documents/{id}/traverse) and
shows the documents reached as a tree indented by hops, each under the
document it was reached from: → marks an edge from that document, ← an edge
into it. Edges the tree does not use are listed after it. A walk may cross
into another library; such documents show their library ID.

--direction, --label and --depth go to the API as they are; it answers
bad_request (exit 1) for a value it does not accept.`,
		Example: `  doclib traverse doc_it_001
  doclib traverse doc_it_001 --direction outgoing --depth 3
  doclib traverse doc_it_001 --label "often next" --json nodes --jq '.nodes[].title'`,
		Args: oneArg("a document ID (doc_…)"),
	}, func(ctx context.Context, c *client.Client, args []string) error {
		t, err := c.Traverse(ctx, args[0], p)
		if err != nil {
			return err
		}
		if e.on() {
			return e.write(ctx, a.stdout, t)
		}
		render.Traversal(a.stdout, t)
		return nil
	})
	cmd.Flags().StringVar(&p.Direction, "direction", "", "`DIRECTION` to follow edges: outgoing, incoming or both (the API's default: both)")
	cmd.Flags().StringVar(&p.Label, "label", "", "follow only edges with this `LABEL`, e.g. \"often next\" or \"alternative to\"")
	cmd.Flags().IntVar(&p.Depth, "depth", 0, "hops to walk, `1-3` (the API's default: 1)")
	cmd.RegisterFlagCompletionFunc("direction", cobra.FixedCompletions([]string{"outgoing", "incoming", "both"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("label", cobra.FixedCompletions([]string{"often next", "alternative to"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("depth") && p.Depth < 1 {
			// The client leaves out a depth below 1, so the API could not refuse it.
			return usageError{fmt.Errorf("--depth must be 1 or more (the API walks 1 to 3 hops), not %d", p.Depth)}
		}
		return nil
	}
	e = a.addExport(cmd, reflect.TypeFor[api.Traversal](), false)
	return cmd
}

func (a *app) recordingsCmd() *cobra.Command {
	var pages pageFlags
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "recordings ID",
		Short: "Show the shared recordings a document was written from",
		Long: `Shows the recordings behind a document (GET /documents/{id}/source-recordings):
each with its questions and answers and its step timeline, newest first.
Only recordings shared with the workspace appear; the API says how many are
private and why. An empty list is normal: the document's own content is then
the authoritative account. The key needs recording-details access (else
forbidden, exit 1). Pages hold at most 50 recordings.`,
		Example: `  doclib recordings doc_it_001
  doclib recordings doc_it_001 --all --json id,title,steps`,
		Args: oneArg("a document ID (doc_…)"),
	}, func(ctx context.Context, c *client.Client, args []string) error {
		r, err := fetchPages(a, &pages, func(pg client.Page) (*api.SourceRecordings, error) {
			return c.SourceRecordings(ctx, args[0], pg)
		}, func(into, page *api.SourceRecordings) int {
			if into != nil {
				into.SourceRecordings = append(into.SourceRecordings, page.SourceRecordings...)
			}
			return len(page.SourceRecordings)
		}, func(r *api.SourceRecordings) (int, int) { return r.Total, r.PageSize },
			func(r *api.SourceRecordings, n int) { r.Page, r.PageSize = 1, n })
		if err != nil {
			return err
		}
		a.pastEnd(pages.all, r.Page, r.PageSize, r.Total, "shared recording", "shared recordings")
		if e.on() {
			return e.write(ctx, a.stdout, r.SourceRecordings)
		}
		render.Recordings(a.stdout, r)
		if a.tty && !pages.all && r.Total > 0 && (r.Page > 1 || r.Total > r.PageSize) {
			fmt.Fprintln(a.stdout, "\n"+footer(r.Page, r.PageSize, r.Total, "shared recording", "shared recordings"))
		}
		return nil
	})
	pages.register(cmd, 50)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return pages.check(cmd) }
	e = a.addExport(cmd, reflect.TypeFor[api.SourceRecording](), true)
	return cmd
}
