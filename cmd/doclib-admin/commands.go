package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/aws/lambdaapp"
	"github.com/doclib/doclib/shared/aws/trigger"
	"github.com/doclib/doclib/shared/aws/usageplan"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/indexer"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
	"github.com/doclib/doclib/shared/wiring"
)

// run is the whole program, so that tests drive what main does.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, tty bool) int {
	root, a := newRoot(ctx, getenv, stdout, stderr, tty)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	err = a.explain(ctx, err)
	if err != nil {
		fmt.Fprintln(stderr, "doclib-admin:", err)
		if exitCode(err) == exitUsage {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return exitCode(err)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

type app struct {
	getenv         func(string) string
	stdout, stderr io.Writer
	tty            bool
	table          string
	now            func() time.Time
}

func newRoot(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, tty bool) (*cobra.Command, *app) {
	a := &app{getenv: getenv, stdout: stdout, stderr: stderr, tty: tty, now: time.Now}
	root := &cobra.Command{
		Use:   "doclib-admin",
		Short: "Operate a doclib table in DynamoDB: import data, manage keys, rebuild the search index",
		Long: `doclib-admin loads data sets into a doclib table in DynamoDB, manages API keys
and rebuilds the OpenSearch index from the table.

The table and the AWS account come from the standard AWS configuration:
AWS_REGION, credentials (environment, profile or role), and
AWS_ENDPOINT_URL_DYNAMODB to point at a local DynamoDB such as dynalite.`,
		Example: `  # A local table on dynalite:
  npx dynalite --port 8000 &
  export AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x
  doclib-admin create-table --table doclib
  doclib-admin import --data shared/data/demo/demo.json --table doclib
  doclib-admin keys create --table doclib --workspace ws_acme --libraries '*' --recording-details`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&a.table, "table", getenv(settings.EnvTable), "DynamoDB table `NAME` (env "+settings.EnvTable+")")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return explainFlag(err) })
	root.AddCommand(a.createTableCmd(), a.importCmd(), a.reindexCmd(), a.keysCmd(), a.workspacesCmd(), a.evalCmd())
	refuseUnknownSubcommands(root)
	return root, a
}

// refuseUnknownSubcommands makes every command that only groups others (the
// root, keys, workspaces) refuse an unknown subcommand as a usage error, with
// cobra's suggestion, and show its help when given none. Left alone, cobra
// checks subcommands at the root only, and there as a plain error (exit 1):
// "keys crate" printed the keys help and exited 0, so a script's typo passed
// for success.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if cmd.SuggestionsMinimumDistance <= 0 {
				cmd.SuggestionsMinimumDistance = 2 // cobra's own default for the root
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
			}
			return usageError{errors.New(msg)}
		}
		cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
}

func (a *app) connect(ctx context.Context) (*dynamo.Table, error) {
	if a.table == "" {
		return nil, usageError{errors.New("no table: give --table NAME or set " + settings.EnvTable)}
	}
	return dynamo.Connect(ctx, a.table)
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])}
	}
	return nil
}

func (a *app) createTableCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "create-table",
		Short: "Create the table (for local use; production tables come from the CDK stack)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			if err := t.CreateTable(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Table %s is ready.\n", t.Name)
			return nil
		},
	}
}

func (a *app) importCmd() *cobra.Command {
	var file string
	var prune, dryRun, allowDemo bool
	var workers int
	cmd := &cobra.Command{
		Use:   "import --data FILE",
		Short: "Import a data set into the table",
		Long: `Validates the whole data-set file with the same loader as local mode, then
writes it in parallel batches. Nothing is written when the file has a problem.
Importing the same file again changes nothing. An interrupted import is finished
by running it again.

Document and library IDs and key secrets are global to the table: an import
that reuses one another workspace holds is refused, naming each conflict, and
writes nothing. Re-importing a workspace is never a conflict with itself.

--prune also deletes what the file's workspaces no longer contain (documents,
edges, recordings, slugs and keys of earlier imports); workspaces the file does
not mention, operators' keys and AI credit are never touched. Without --prune
all of that stays, and is still served: a key the file dropped keeps working.
The import says so, with the keys' IDs; --dry-run lists what --prune would
delete and writes nothing.

A workspace's aiCredit is written the first time it is imported only: after
that searches spend it, and re-importing never changes it. Change it with
doclib-admin workspaces set-credit or add-credit.

A data set whose keys carry the demo data set's published secrets (dlk_demo_…)
is refused unless DynamoDB is on this machine (AWS_ENDPOINT_URL_DYNAMODB on
localhost) or --allow-demo-keys is given: anyone can read those secrets.`,
		Example: `  doclib-admin import --data acme.json --table doclib
  doclib-admin import --data acme.json --table doclib --dry-run    # what --prune would delete
  doclib-admin import --data acme.json --table doclib --prune`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageError{errors.New("give the data set with --data FILE")}
			}
			if a.table == "" { // before reading a file that may be large
				return usageError{errors.New("no table: give --table NAME or set " + settings.EnvTable)}
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			d, err := dataset.Load(bytes.NewReader(raw))
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if err := a.checkDemoKeys(d, allowDemo); err != nil {
				return err
			}
			t, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			if err := t.Check(cmd.Context()); err != nil {
				return err
			}
			p := a.newProgress()
			res, err := t.Import(cmd.Context(), d, dynamo.Generation(raw), dynamo.ImportOptions{Prune: prune, DryRun: dryRun, Workers: workers, Progress: p.update})
			p.finish()
			var refused *dataset.ValidationError
			if errors.As(err, &refused) { // named like a file dataset.Load refuses
				return fmt.Errorf("%s: %w", file, err)
			}
			if err != nil {
				return err
			}
			if dryRun {
				a.printDryRun(file, t.Name, res)
				return nil
			}
			fmt.Fprintf(a.stdout, "Imported %s into %s in %s (generation %s):\n", file, t.Name, res.Duration.Round(time.Millisecond), res.Generation)
			fmt.Fprintf(a.stdout, "  %s\n", itemCounts(res))
			rate := float64(res.Documents) / max(res.Duration.Seconds(), 0.001)
			fmt.Fprintf(a.stdout, "  %s written (%.0f documents/s); starting AI credit set for %s\n",
				doclib.Count(res.Items, "item", "items"), rate, doclib.Count(res.CreditsSet, "new workspace", "new workspaces"))
			if prune {
				fmt.Fprintf(a.stdout, "  %d items of earlier imports deleted\n", res.Deleted)
			} else {
				a.warnLeftovers(file, t.Name, res.Leftovers)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "data", "", "data-set `FILE` (format: docs/dataset.md)")
	cmd.Flags().BoolVar(&prune, "prune", false, "delete what the file's workspaces no longer contain")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the file against the table and list what --prune would delete; write nothing")
	cmd.Flags().BoolVar(&allowDemo, "allow-demo-keys", false, "import keys whose secrets are the demo data set's published ones into a table that is not on this machine")
	cmd.Flags().IntVar(&workers, "workers", 8, "concurrent write requests")
	return cmd
}

func (a *app) reindexCmd() *cobra.Command {
	var emb settings.Embedder
	var cluster settings.OpenSearch
	var snaps settings.Snapshots
	pause := true
	cmd := &cobra.Command{
		Use:   "reindex (--opensearch-url URL | --snapshot-bucket BUCKET)",
		Short: "Rebuild the search index (OpenSearch's, or the embedded tier's snapshot) from the table",
		Long: `Reads every document and recording of the table, embeds them with the
configured embedder and rebuilds the search index from them.

On OpenSearch (--opensearch-url) it loads a new index, then swaps the alias to
it in one atomic step and deletes the index it replaced. Searches keep
answering from the old index until the swap; if anything fails, the new index
is deleted and the old one stays.

On the embedded tier (--snapshot-bucket, the stack's SnapshotBucket output) it
writes a whole new snapshot and publishes it by rewriting the pointer; the
search functions pick it up within seconds. If anything fails, the snapshot in
service stays.

While it runs, the Lambda triggers of the table's stream (the indexer) are
paused: what the indexer wrote meanwhile would land in the old index and be
lost at the swap. The stream keeps its records (24 hours), and once the
triggers are enabled again after the swap the indexer applies them to the new
index. A table without a stream (a local one) has nothing to pause.

Run it after changing the embedder or its dimensions, when the index was built
by another version of doclib, or to recover from a stream outage longer than
the stream's 24-hour retention. The stream-fed indexer keeps the index current
otherwise.`,
		Example: `  doclib-admin reindex --table doclib --opensearch-url https://localhost:9200
  AWS_REGION=eu-west-1 doclib-admin reindex --table doclib --embedder bedrock \
    --opensearch-url https://search-doclib-x.eu-west-1.es.amazonaws.com --opensearch-aws-service es
  AWS_REGION=eu-west-1 doclib-admin reindex --table Doclib-acme-Table1234 --embedder bedrock \
    --embed-dimensions 1024 --snapshot-bucket doclib-acme-snapshots-1234`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			if err := emb.Validate(); err != nil {
				return usageError{err}
			}
			ss := settings.Search{Tier: settings.TierOpenSearch, Embedder: emb, OpenSearch: cluster, Snapshots: snaps}
			switch {
			case cluster.URL != "" && snaps.Bucket != "":
				return usageError{errors.New("give --opensearch-url (a domain) or --snapshot-bucket (the embedded tier), not both")}
			case snaps.Bucket != "":
				ss.Tier = settings.TierEmbedded
				if err := snaps.Validate(); err != nil {
					return usageError{err}
				}
			default:
				if err := cluster.Validate(); err != nil {
					return usageError{fmt.Errorf("%w; or give --snapshot-bucket for a stack of the embedded tier", err)}
				}
			}
			t, err := a.connect(ctx)
			if err != nil {
				return err
			}
			if err := t.Check(ctx); err != nil {
				return err
			}
			e, err := wiring.Embedder(ctx, ss.Embedder)
			if err != nil {
				return err
			}
			var idx search.Index
			if ss.Embedded() {
				var blobs *s3blobs.Blobs
				if blobs, err = s3blobs.Connect(ctx, ss.Snapshots.Bucket); err == nil {
					idx = snapshot.NewWriter(blobs, e, slog.New(slog.DiscardHandler))
				}
			} else {
				idx, err = wiring.OpenSearch(ctx, ss.OpenSearch, e)
			}
			if err != nil {
				return err
			}
			start := a.now()
			if pause {
				resume, perr := a.pauseIndexer(ctx, t)
				if perr != nil {
					return perr
				}
				// Enabled again whatever happens; a failure to do so is
				// the command's error too (named result err).
				defer func() { err = errors.Join(err, resume()) }()
			}
			d, err := t.Export(ctx)
			if err != nil {
				return err
			}
			p := a.newProgress()
			var where string
			switch b := idx.(type) {
			case *opensearch.Backend:
				name, rerr := b.ReindexData(ctx, d, e, func(pr opensearch.ReindexProgress) { p.show("indexing", pr.Done, pr.Total) })
				err, where = rerr, fmt.Sprintf("%s behind alias %s", name, b.Alias())
			case *snapshot.Writer:
				docs := make([]search.IndexDoc, 0, len(d.Documents))
				err = search.DocsFromData(ctx, d, e, 0, func(batch []search.IndexDoc) error {
					docs = append(docs, batch...)
					p.show("embedding", len(docs), len(d.Documents))
					return nil
				})
				if err == nil {
					err = b.Publish(ctx, docs)
				}
				where = fmt.Sprintf("a new index (one segment) in bucket %s", snaps.Bucket)
			default:
				err = fmt.Errorf("reindex: no reindex for %T", idx)
			}
			p.finish()
			if err != nil {
				return err
			}
			took := a.now().Sub(start)
			fmt.Fprintf(a.stdout, "Reindexed %s into %s in %s:\n", t.Name, where, took.Round(time.Millisecond))
			fmt.Fprintf(a.stdout, "  %d documents (%.0f documents/s), embedder %s\n",
				len(d.Documents), float64(len(d.Documents))/max(took.Seconds(), 0.001), e.ID())
			return nil
		},
	}
	emb.Flags(cmd.Flags(), a.getenv)
	cluster.Flags(cmd.Flags(), a.getenv)
	snaps.Flags(cmd.Flags(), a.getenv)
	cmd.Flags().BoolVar(&pause, "pause-indexer", true, "pause the Lambda triggers of the table's stream while reindexing (--pause-indexer=false when nothing else writes to the index)")
	return cmd
}

// pauseIndexer pauses the Lambda triggers of t's stream, if it has one, and
// returns what enables them again.
func (a *app) pauseIndexer(ctx context.Context, t *dynamo.Table) (func() error, error) {
	arn, err := t.StreamARN(ctx)
	if err != nil {
		return nil, err
	}
	if arn == "" {
		return func() error { return nil }, nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	api := lambda.NewFromConfig(cfg)
	fmt.Fprintf(a.stderr, "Pausing the triggers of the table's stream (the indexer) until the new index is in place…\n")
	paused, err := trigger.Pause(ctx, api, arn, trigger.Options{})
	if err != nil {
		return nil, fmt.Errorf("pause the indexer (or run with --pause-indexer=false if nothing else writes to the index): %w", err)
	}
	for _, m := range paused {
		fmt.Fprintf(a.stderr, "  paused %s (trigger %s)\n", m.Function, m.UUID)
	}
	return func() error {
		if err := trigger.Resume(context.WithoutCancel(ctx), api, paused); err != nil {
			return err
		}
		if len(paused) > 0 {
			fmt.Fprintf(a.stderr, "Enabled the indexer's triggers again: it now applies the changes made meanwhile to the new index.\n")
		}
		return nil
	}, nil
}

// progress shows an import's or a reindex's progress: a bar on a terminal, plain lines (at
// most one every 2 s, and one per phase's end) otherwise.
type progress struct {
	a     *app
	bar   *progressbar.ProgressBar
	phase string
	last  time.Time
}

func (a *app) newProgress() *progress { return &progress{a: a} }

func (p *progress) update(pr dynamo.Progress) { p.show(pr.Phase, pr.Done, pr.Total) }

func (p *progress) show(phase string, done, total int) {
	pr := dynamo.Progress{Phase: phase, Done: done, Total: total}
	if p.a.tty {
		if p.bar == nil || pr.Phase != p.phase {
			if p.bar != nil {
				p.bar.Finish()
				fmt.Fprintln(p.a.stderr)
			}
			p.phase = pr.Phase
			p.bar = progressbar.NewOptions(pr.Total, progressbar.OptionSetWriter(p.a.stderr),
				progressbar.OptionSetDescription(pr.Phase), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("items"), progressbar.OptionThrottle(100*time.Millisecond))
		}
		p.bar.Set(pr.Done)
		return
	}
	now := time.Now()
	if pr.Phase != p.phase || pr.Done == pr.Total || now.Sub(p.last) >= 2*time.Second {
		p.phase, p.last = pr.Phase, now
		fmt.Fprintf(p.a.stderr, "%s: %d of %d (%d%%)\n", pr.Phase, pr.Done, pr.Total, 100*pr.Done/max(pr.Total, 1))
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.a.stderr)
	}
}

func (a *app) keysCmd() *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Create, list and revoke API keys",
		Long: "Keys are stored by the SHA-256 of their secret only: a secret is shown once, when the key is created."}
	var ws string
	keys.PersistentFlags().StringVar(&ws, "workspace", "", "workspace `ID` (ws_...)")
	need := func() error {
		if ws == "" {
			return usageError{errors.New("give the workspace with --workspace ws_ID")}
		}
		return nil
	}

	var libraries string
	var recording bool
	var expires string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a key and print its secret (once)",
		Example: `  doclib-admin keys create --table doclib --workspace ws_acme --libraries '*' --recording-details
  doclib-admin keys create --table doclib --workspace ws_acme --libraries lib_it,lib_finance --expires 2027-01-01`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := need(); err != nil {
				return err
			}
			nk := dynamo.NewKey{WorkspaceID: ws, RecordingDetails: recording}
			for _, l := range strings.Split(libraries, ",") {
				if l = strings.TrimSpace(l); l != "" {
					nk.Libraries = append(nk.Libraries, l)
				}
			}
			if len(nk.Libraries) == 0 {
				return usageError{errors.New(`give the key's libraries with --libraries '*' (every library) or --libraries lib_a,lib_b`)}
			}
			if expires != "" {
				t, err := parseExpiry(expires)
				if err != nil {
					return usageError{err}
				}
				nk.ExpiresAt = t
			}
			t, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			id, secret, err := t.CreateKey(cmd.Context(), nk, a.now())
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Created key %s for %s.\n\n  %s\n\nThis secret is shown once and stored only as a hash: copy it now.\n", id, ws, secret)
			return nil
		},
	}
	create.Flags().StringVar(&libraries, "libraries", "", `the key's scope: '*' for every library, or library IDs separated by commas`)
	create.Flags().BoolVar(&recording, "recording-details", false, "allow reading source recordings")
	create.Flags().StringVar(&expires, "expires", "", "expiry `DATE` (2027-01-01) or RFC 3339 time; none by default")

	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List a workspace's keys (never their secrets)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := need(); err != nil {
				return err
			}
			t, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			ks, err := t.ListKeys(cmd.Context(), ws)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(ks)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tLIBRARIES\tRECORDINGS\tEXPIRES\tSOURCE")
			for _, k := range ks {
				source := "operator"
				if k.Imported {
					source = "data set (device " + k.DeviceID + ")"
				}
				exp := k.ExpiresAt
				if exp == "" {
					exp = "never"
				}
				fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", k.ID, strings.Join(k.Libraries, ","), k.RecordingDetails, exp, source)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	revoke := &cobra.Command{
		Use:   "revoke KEY_ID",
		Short: "Revoke a key: it stops working at once",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("give the ID of the key to revoke (see keys list)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := need(); err != nil {
				return err
			}
			t, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			if err := t.RevokeKey(cmd.Context(), ws, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Revoked key %s.\n", args[0])
			return nil
		},
	}
	keys.AddCommand(create, list, revoke, a.keysSyncCmd())
	return keys
}

// keysSyncCmd repairs the API Gateway side of the keys: the indexer registers
// each key's usage identifier in its tier's usage plan from the table's
// stream, and a registration that failed past the stream's retries (its
// record then waits in the failure queue) leaves the key refused by the
// gateway. This does for every key what the indexer does for one, then
// deletes the stack's API keys that no doclib key has any more.
func (a *app) keysSyncCmd() *cobra.Command {
	var plans string
	cmd := &cobra.Command{
		Use:   "sync --usage-plans PLANS",
		Short: "Register every key of the table with API Gateway's usage plans, and remove stale API keys",
		Long: `sync repairs the usage-plan registrations the indexer keeps from the table's
stream (the indexer's failure queue holds the records it gave up on): every key
of the table gets an API key in its workspace plan's usage plan, and the
stack's API keys that no doclib key has any more are deleted. It is safe to run
at any time, and again: it changes only what differs.

PLANS is the stack's UsagePlans output (or $` + settings.EnvUsagePlans + `):
customer=acme,individual=<plan id>,team=<plan id>,enterprise=<plan id>.`,
		Example: `  doclib-admin keys sync --table doclib-acme-Table --usage-plans "$(aws cloudformation describe-stacks \
    --stack-name Doclib-acme --query "Stacks[0].Outputs[?OutputKey=='UsagePlans'].OutputValue" --output text)"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if plans == "" {
				plans = a.getenv(settings.EnvUsagePlans)
			}
			if plans == "" {
				return usageError{errors.New("give the stack's usage plans with --usage-plans (its UsagePlans output) or " + settings.EnvUsagePlans)}
			}
			ctx := cmd.Context()
			t, err := a.connect(ctx)
			if err != nil {
				return err
			}
			u, err := lambdaapp.NewUsageKeys(ctx, plans)
			if err != nil {
				return usageError{err}
			}
			hashes, err := t.KeyHashes(ctx)
			if err != nil {
				return err
			}
			x := &indexer.Indexer{Usage: u, Keys: dynamo.NewStore(t), Logger: slog.New(slog.NewTextHandler(a.stderr, nil))}
			failed := x.SyncKeys(ctx, hashes)
			want := map[string]bool{}
			for _, h := range hashes {
				want[usageplan.Value(u.Syncer.Plans.Customer, h)] = true
			}
			values, err := u.Syncer.Values(ctx)
			if err != nil {
				return err
			}
			removed, removeFailed := 0, 0
			for _, v := range values {
				if want[v] {
					continue
				}
				if err := u.Syncer.Delete(ctx, v); err != nil {
					fmt.Fprintf(a.stderr, "could not delete the stale API key %s: %v\n", usageplan.KeyName(u.Syncer.Plans.Customer, v), err)
					removeFailed++
					continue
				}
				removed++
			}
			fmt.Fprintf(a.stdout, "Registered %d of %d keys in their usage plans; deleted %d stale API keys.\n", len(hashes)-len(failed), len(hashes), removed)
			if n := len(failed) + removeFailed; n > 0 {
				return fmt.Errorf("%d keys could not be synced (see above); run keys sync again once the cause is fixed", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&plans, "usage-plans", "", "the stack's UsagePlans output: `customer=…,individual=…,team=…,enterprise=…`")
	return cmd
}

func parseExpiry(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("--expires %q is neither a date (2027-01-01) nor an RFC 3339 time (2027-01-01T00:00:00Z)", s)
}
