package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
)

// maxCredit bounds what an operator sets or adds in one command: far above
// any real balance, far below where DynamoDB's numbers lose precision.
const maxCredit = 1_000_000_000_000

// afterChange says when a running deployment sees a change of a workspace.
const afterChange = `A server on this table sees the change at its next request. On the AWS stack the
authorizer's cached answer for a key (60 s by default, context
authorizerCacheSeconds) carries the plan and subscription, so those take up to
that long; credit is read at every search.`

func (a *app) workspacesCmd() *cobra.Command {
	ws := &cobra.Command{
		Use:   "workspaces",
		Short: "List workspaces and change their AI credit, plan and subscription",
		Long: `Workspaces come from data sets (doclib-admin import). These commands show them
and change what a hosted deployment has to manage itself: the AI credit every
search spends, the plan and the subscription.

A data set's aiCredit is written the first time its workspace is imported
only; re-importing never changes the credit. Use set-credit or add-credit.
An import of a data set that names a workspace writes the plan and
subscription the file gives, over what set-plan and set-subscription set.

` + afterChange,
		Example: `  doclib-admin workspaces list --table doclib
  doclib-admin workspaces show --table doclib --workspace ws_acme
  doclib-admin workspaces add-credit --table doclib --workspace ws_acme --credit 500
  doclib-admin workspaces set-credit --table doclib --workspace ws_acme --credit 1000
  doclib-admin workspaces set-plan --table doclib --workspace ws_acme --plan enterprise
  doclib-admin workspaces set-subscription --table doclib --workspace ws_acme --subscription active`,
	}
	var id string
	ws.PersistentFlags().StringVar(&id, "workspace", "", "workspace `ID` (ws_...; see workspaces list)")

	// withWorkspace runs fn on the table once --workspace is given, and
	// turns "no such workspace" into what to do about it.
	withWorkspace := func(cmd *cobra.Command, fn func(context.Context, *dynamo.Table) error) error {
		if id == "" {
			return usageError{errors.New("give the workspace with --workspace ws_ID (doclib-admin workspaces list lists them)")}
		}
		t, err := a.connect(cmd.Context())
		if err != nil {
			return err
		}
		err = fn(cmd.Context(), t)
		if errors.Is(err, dynamo.ErrNoWorkspace) {
			return fmt.Errorf("no workspace %s in table %s; `doclib-admin workspaces list --table %s` lists them", id, t.Name, t.Name)
		}
		return err
	}

	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the table's workspaces with their plan, subscription and AI credit",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			if err := t.Check(cmd.Context()); err != nil {
				return err
			}
			all, err := t.ListWorkspaces(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(all)
			}
			if len(all) == 0 {
				fmt.Fprintf(a.stdout, "Table %s has no workspace yet: doclib-admin import --data FILE --table %s adds them.\n", t.Name, t.Name)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tPLAN\tSUBSCRIPTION\tAI CREDIT")
			for _, w := range all {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.ID, w.Name, w.Plan, w.Subscription, creditText(w))
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var showJSON bool
	show := &cobra.Command{
		Use:   "show --workspace ws_ID",
		Short: "Show one workspace's plan, subscription and AI credit",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withWorkspace(cmd, func(ctx context.Context, t *dynamo.Table) error {
				w, err := t.WorkspaceInfo(ctx, id)
				if err != nil {
					return err
				}
				if showJSON {
					return a.printJSON(w)
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "Workspace\t%s\nName\t%s\nPlan\t%s\nSubscription\t%s\nAI credit\t%s\n",
					w.ID, w.Name, w.Plan, w.Subscription, creditText(*w))
				return tw.Flush()
			})
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON")

	var credit string
	creditCmd := func(use, short, long string, least int64, change func(context.Context, *dynamo.Table, int64) (int64, error), done string) *cobra.Command {
		c := &cobra.Command{
			Use:   use + " --workspace ws_ID --credit N",
			Short: short,
			Long:  long + "\n\n" + afterChange,
			Args:  noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				n, err := parseCredit(credit, least)
				if err != nil {
					return usageError{err}
				}
				return withWorkspace(cmd, func(ctx context.Context, t *dynamo.Table) error {
					balance, err := change(ctx, t, n)
					if err != nil {
						return err
					}
					fmt.Fprintf(a.stdout, done+"\n", n, id, balance)
					return a.noteOwnKey(ctx, t, id)
				})
			},
		}
		c.Flags().StringVar(&credit, "credit", "", "`N` credits (each search spends one)")
		return c
	}
	setCredit := creditCmd("set-credit", "Set a workspace's AI credit to N",
		`Sets the balance to N in one write. A search spending credit at the same
moment is either counted before it (and replaced by N) or spends from N.`,
		0, func(ctx context.Context, t *dynamo.Table, n int64) (int64, error) { return t.SetCredit(ctx, id, n) },
		"Set the AI credit to %d for %s: its balance is now %d.")
	addCredit := creditCmd("add-credit", "Add N to a workspace's AI credit",
		`Adds N to the balance in one atomic increment: searches spending credit at
the same moment keep every credit they spend, and the balance ends exact.`,
		1, func(ctx context.Context, t *dynamo.Table, n int64) (int64, error) { return t.AddCredit(ctx, id, n) },
		"Added %d AI credit to %s: its balance is now %d.")

	var plan string
	setPlan := &cobra.Command{
		Use:   "set-plan --workspace ws_ID --plan PLAN",
		Short: "Change a workspace's plan (" + joinPlans() + ")",
		Long: `Changes the plan. On the individual plan no recording is readable. On the AWS
stack the indexer follows the change: it re-indexes the workspace's documents
and moves its keys to the new tier's usage plan.

` + afterChange,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(doclib.Plans, doclib.Plan(plan)) {
				return usageError{fmt.Errorf("--plan %q is not a plan: give one of %s", plan, joinPlans())}
			}
			return withWorkspace(cmd, func(ctx context.Context, t *dynamo.Table) error {
				if err := t.SetPlan(ctx, id, doclib.Plan(plan)); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "Set the plan of %s to %s.\n", id, plan)
				return nil
			})
		},
	}
	setPlan.Flags().StringVar(&plan, "plan", "", "`PLAN`: "+joinPlans())

	var sub string
	setSub := &cobra.Command{
		Use:   "set-subscription --workspace ws_ID --subscription STATE",
		Short: "Change a workspace's subscription (" + strings.Join(doclib.Subscriptions, ", ") + ")",
		Long: `Changes the subscription. While it is suspended, searches answer 402
subscription_suspended; the other endpoints keep working.

` + afterChange,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(doclib.Subscriptions, sub) {
				return usageError{fmt.Errorf("--subscription %q is not a subscription state: give one of %s", sub, strings.Join(doclib.Subscriptions, ", "))}
			}
			return withWorkspace(cmd, func(ctx context.Context, t *dynamo.Table) error {
				if err := t.SetSubscription(ctx, id, sub); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "Set the subscription of %s to %s.\n", id, sub)
				return nil
			})
		},
	}
	setSub.Flags().StringVar(&sub, "subscription", "", "`STATE`: "+strings.Join(doclib.Subscriptions, ", "))

	ws.AddCommand(list, show, setCredit, addCredit, setPlan, setSub)
	return ws
}

func joinPlans() string {
	names := make([]string, len(doclib.Plans))
	for i, p := range doclib.Plans {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// parseCredit reads --credit: a whole number from least up to maxCredit.
func parseCredit(s string, least int64) (int64, error) {
	if s == "" {
		return 0, errors.New("give the amount with --credit N")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < least || n > maxCredit {
		return 0, fmt.Errorf("--credit %q is not a whole number from %d to %d", s, least, maxCredit)
	}
	return n, nil
}

func creditText(w dynamo.WorkspaceInfo) string {
	switch {
	case w.OwnProviderKey:
		return strconv.FormatInt(w.AICredit, 10) + " (own AI provider key: not spent)"
	case !w.HasCredit:
		return "none set (searches answer 402; set it with workspaces set-credit)"
	}
	return strconv.FormatInt(w.AICredit, 10)
}

// noteOwnKey tells the operator when the credit just changed is never spent.
func (a *app) noteOwnKey(ctx context.Context, t *dynamo.Table, id string) error {
	w, err := t.WorkspaceInfo(ctx, id)
	if err != nil {
		return err
	}
	if w.OwnProviderKey {
		fmt.Fprintf(a.stdout, "Note: %s brings its own AI provider key, so its searches do not spend this credit.\n", id)
	}
	return nil
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
