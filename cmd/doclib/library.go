package main

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

func (a *app) librariesCmd() *cobra.Command {
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "libraries",
		Short: "List the libraries the key can see",
		Long:  "Lists every library the API key can see, with its ID, name, document count and last update (GET /libraries).",
		Example: `  doclib libraries
  doclib libraries --json id,name,documentCount
  doclib libraries --json id --jq '.[].id'`,
		Args: noArgs,
	}, func(ctx context.Context, c *client.Client, _ []string) error {
		r, err := c.Libraries(ctx)
		if err != nil {
			return err
		}
		if e.on() {
			return e.write(ctx, a.stdout, r.Libraries)
		}
		if len(r.Libraries) == 0 {
			a.note("This key sees no libraries.")
			return nil
		}
		t := a.rows("ID", "NAME", "DOCUMENTS", "UPDATED")
		for _, l := range r.Libraries {
			t.row(render.Clean(l.ID), render.Clean(l.Name), l.DocumentCount, a.day(l.UpdatedAt))
		}
		return t.done()
	})
	e = a.addExport(cmd, reflect.TypeFor[api.Library](), true, "edgeCount")
	return cmd
}

func (a *app) libraryCmd() *cobra.Command {
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "library ID",
		Short: "Show a library: description, counts, categories and tags",
		Long: `Shows one library (GET /libraries/{id}): its description, document and edge
counts, dates, and the categories and tags its documents use, which are the
values the documents and search filters accept. ID is a lib_ ID or a slug
(earlier slugs keep working).`,
		Example: `  doclib library lib_it
  doclib library it-operations
  doclib library it-operations --json id,name,categories`,
		Args:              oneArg("a library ID or slug"),
		ValidArgsFunction: a.completeLibraries,
	}, func(ctx context.Context, c *client.Client, args []string) error {
		l, err := c.Library(ctx, args[0])
		if err != nil {
			return err
		}
		if e.on() {
			return e.write(ctx, a.stdout, l)
		}
		edges := "-"
		if l.EdgeCount != nil {
			edges = fmt.Sprint(*l.EdgeCount)
		}
		if !a.tty {
			// gh's view commands piped: one "field:<tab>value" line each.
			t := a.rows()
			for _, f := range [][2]any{{"id:", render.Clean(l.ID)}, {"name:", render.Clean(l.Name)},
				{"documents:", l.DocumentCount}, {"edges:", edges}, {"created:", a.day(l.CreatedAt)},
				{"updated:", a.day(l.UpdatedAt)}, {"categories:", list(l.Categories)}, {"tags:", list(l.Tags)},
				{"description:", render.Clean(l.Description)}} {
				t.row(f[0], f[1])
			}
			return t.done()
		}
		fmt.Fprintf(a.stdout, "%s (%s)\n", render.Clean(l.Name), render.Clean(l.ID))
		if l.Description != "" {
			fmt.Fprintln(a.stdout, render.CleanText(l.Description))
		}
		fmt.Fprintln(a.stdout)
		tw := table(a.stdout)
		fmt.Fprintf(tw, "Documents:\t%d\n", l.DocumentCount)
		if l.EdgeCount != nil {
			fmt.Fprintf(tw, "Edges:\t%s\n", edges)
		}
		fmt.Fprintf(tw, "Created:\t%s\n", day(l.CreatedAt))
		fmt.Fprintf(tw, "Updated:\t%s\n", day(l.UpdatedAt))
		fmt.Fprintf(tw, "Categories:\t%s\n", list(l.Categories))
		fmt.Fprintf(tw, "Tags:\t%s\n", list(l.Tags))
		return tw.Flush()
	})
	e = a.addExport(cmd, reflect.TypeFor[api.Library](), false)
	return cmd
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return render.Clean(strings.Join(s, ", "))
}

// labelsCmd is tags, categories or applications: the same list of names with
// document counts.
func (a *app) labelsCmd(kind string) *cobra.Command {
	one := map[string]string{"tags": "tag", "categories": "category", "applications": "application"}[kind]
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   kind + " LIBRARY",
		Short: fmt.Sprintf("List a library's %s with their document counts", kind),
		Long: fmt.Sprintf(`Lists the %s used by a library's documents, with how many documents use
each (GET /libraries/{id}/%s). The names are the values that
'doclib documents --%s' and 'doclib search --%s' accept.`, kind, kind, one, one),
		Example: fmt.Sprintf(`  doclib %s it-operations
  doclib %s lib_finance --json name --jq '.[].name'`, kind, kind),
		Args:              oneArg("a library ID or slug"),
		ValidArgsFunction: a.completeLibraries,
	}, func(ctx context.Context, c *client.Client, args []string) error {
		var labels []api.Label
		switch kind {
		case "tags":
			r, err := c.Tags(ctx, args[0])
			if err != nil {
				return err
			}
			labels = r.Tags
		case "categories":
			r, err := c.Categories(ctx, args[0])
			if err != nil {
				return err
			}
			labels = r.Categories
		default:
			r, err := c.Applications(ctx, args[0])
			if err != nil {
				return err
			}
			labels = r.Applications
		}
		if e.on() {
			return e.write(ctx, a.stdout, labels)
		}
		if len(labels) == 0 {
			a.note("The library's documents use no %s.", kind)
			return nil
		}
		t := a.rows(strings.ToUpper(one), "DOCUMENTS")
		for _, l := range labels {
			t.row(render.Clean(l.Name), l.DocumentCount)
		}
		return t.done()
	})
	e = a.addExport(cmd, reflect.TypeFor[api.Label](), true)
	return cmd
}

func (a *app) graphCmd() *cobra.Command {
	var format string
	var e *export
	cmd := a.command(&cobra.Command{
		Use:   "graph LIBRARY",
		Short: "Show a library's graph of documents and edges (text tree or Graphviz DOT)",
		Long: `Shows a library's graph (GET /libraries/{id}/graph): its documents, most
active first, each with the edges leading out of it, their labels and how
many recordings support them. The API caps a graph at 2000 documents and 5000
edges; the output says when it was truncated.

--format dot writes Graphviz DOT instead: semantic edges dashed, low-confidence
data edges dotted.`,
		Example: `  doclib graph it-operations
  doclib graph lib_it --format dot > it.dot && dot -Tsvg it.dot -o it.svg
  doclib graph lib_it --json edges --jq '.edges | length'`,
		Args:              oneArg("a library ID or slug"),
		ValidArgsFunction: a.completeLibraries,
	}, func(ctx context.Context, c *client.Client, args []string) error {
		g, err := c.Graph(ctx, args[0])
		if err != nil {
			return err
		}
		switch {
		case e.on():
			return e.write(ctx, a.stdout, g)
		case format == "dot":
			render.GraphDOT(a.stdout, g, args[0])
		default:
			render.GraphTree(a.stdout, g)
		}
		return nil
	})
	cmd.Flags().StringVar(&format, "format", "tree", "output `FORMAT`: tree (text) or dot (Graphviz)")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"tree", "dot"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.PreRunE = func(*cobra.Command, []string) error {
		switch {
		case format != "tree" && format != "dot":
			return usageError{fmt.Errorf("--format must be tree or dot, not %q", format)}
		case format == "dot" && e.on():
			return usageError{fmt.Errorf("choose --json or --format dot, not both")}
		}
		return nil
	}
	e = a.addExport(cmd, reflect.TypeFor[api.Graph](), false)
	return cmd
}

// completeLibraries offers the IDs of the libraries the key can see, when the
// configuration has a key and the API answers quickly.
func (a *app) completeLibraries(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	a.retries = 0
	c, err := a.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	r, err := c.Libraries(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, l := range r.Libraries {
		out = append(out, render.Clean(l.ID)+"\t"+render.Clean(l.Name))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
