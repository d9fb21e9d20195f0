package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/api"
	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

func (a *app) librariesCmd() *cobra.Command {
	return a.command(&cobra.Command{
		Use:   "libraries",
		Short: "List the libraries the key can see",
		Long:  "Lists every library the API key can see, with its ID, name, document count and last update (GET /libraries).",
		Example: `  doclib libraries
  doclib libraries --json | jq -r '.libraries[].id'`,
		Args: noArgs,
	}, func(ctx context.Context, c *client.Client, _ []string) error {
		r, err := c.Libraries(ctx)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(r)
		}
		if len(r.Libraries) == 0 {
			fmt.Fprintln(a.stdout, "This key sees no libraries.")
			return nil
		}
		tw := table(a.stdout)
		fmt.Fprintln(tw, "ID\tNAME\tDOCUMENTS\tUPDATED")
		for _, l := range r.Libraries {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", render.Clean(l.ID), render.Clean(l.Name), l.DocumentCount, day(l.UpdatedAt))
		}
		return tw.Flush()
	})
}

func (a *app) libraryCmd() *cobra.Command {
	return a.command(&cobra.Command{
		Use:   "library ID",
		Short: "Show a library: description, counts, categories and tags",
		Long: `Shows one library (GET /libraries/{id}): its description, document and edge
counts, dates, and the categories and tags its documents use, which are the
values the documents and search filters accept. ID is a lib_ ID or a slug
(earlier slugs keep working).`,
		Example: `  doclib library lib_it
  doclib library it-operations
  doclib library it-operations --json`,
		Args:              oneArg("a library ID or slug"),
		ValidArgsFunction: a.completeLibraries,
	}, func(ctx context.Context, c *client.Client, args []string) error {
		l, err := c.Library(ctx, args[0])
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(l)
		}
		fmt.Fprintf(a.stdout, "%s (%s)\n", render.Clean(l.Name), render.Clean(l.ID))
		if l.Description != "" {
			fmt.Fprintln(a.stdout, render.CleanText(l.Description))
		}
		fmt.Fprintln(a.stdout)
		tw := table(a.stdout)
		fmt.Fprintf(tw, "Documents:\t%d\n", l.DocumentCount)
		if l.EdgeCount != nil {
			fmt.Fprintf(tw, "Edges:\t%d\n", *l.EdgeCount)
		}
		fmt.Fprintf(tw, "Created:\t%s\n", day(l.CreatedAt))
		fmt.Fprintf(tw, "Updated:\t%s\n", day(l.UpdatedAt))
		fmt.Fprintf(tw, "Categories:\t%s\n", list(l.Categories))
		fmt.Fprintf(tw, "Tags:\t%s\n", list(l.Tags))
		return tw.Flush()
	})
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
	return a.command(&cobra.Command{
		Use:   kind + " LIBRARY",
		Short: fmt.Sprintf("List a library's %s with their document counts", kind),
		Long: fmt.Sprintf(`Lists the %s used by a library's documents, with how many documents use
each (GET /libraries/{id}/%s). The names are the values that
'doclib documents --%s' and 'doclib search --%s' accept.`, kind, kind, one, one),
		Example: fmt.Sprintf(`  doclib %s it-operations
  doclib %s lib_finance --json`, kind, kind),
		Args:              oneArg("a library ID or slug"),
		ValidArgsFunction: a.completeLibraries,
	}, func(ctx context.Context, c *client.Client, args []string) error {
		var labels []api.Label
		var v any
		switch kind {
		case "tags":
			r, err := c.Tags(ctx, args[0])
			if err != nil {
				return err
			}
			v, labels = r, r.Tags
		case "categories":
			r, err := c.Categories(ctx, args[0])
			if err != nil {
				return err
			}
			v, labels = r, r.Categories
		default:
			r, err := c.Applications(ctx, args[0])
			if err != nil {
				return err
			}
			v, labels = r, r.Applications
		}
		if a.json {
			return a.printJSON(v)
		}
		if len(labels) == 0 {
			fmt.Fprintf(a.stdout, "The library's documents use no %s.\n", kind)
			return nil
		}
		tw := table(a.stdout)
		fmt.Fprintf(tw, "%s\tDOCUMENTS\n", strings.ToUpper(one))
		for _, l := range labels {
			fmt.Fprintf(tw, "%s\t%d\n", render.Clean(l.Name), l.DocumentCount)
		}
		return tw.Flush()
	})
}

func (a *app) graphCmd() *cobra.Command {
	var format string
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
  doclib graph lib_it --json | jq '.edges | length'`,
		Args:              oneArg("a library ID or slug"),
		ValidArgsFunction: a.completeLibraries,
	}, func(ctx context.Context, c *client.Client, args []string) error {
		g, err := c.Graph(ctx, args[0])
		if err != nil {
			return err
		}
		switch {
		case a.json:
			return a.printJSON(g)
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
		case format == "dot" && a.json:
			return usageError{fmt.Errorf("choose --json or --format dot, not both")}
		}
		return nil
	}
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
