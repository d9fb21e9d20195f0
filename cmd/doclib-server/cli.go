package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/indexer"
	"github.com/doclib/doclib/shared/settings"
)

// Exit codes, as doclib-admin's.
const (
	exitOK    = 0
	exitError = 1 // serving failed: a bad data file, a port in use...
	exitUsage = 2 // the command line is wrong
)

// usageError marks a mistake in the command line or the environment.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// exitCode reports err on stderr, once, and returns the program's exit code.
// A usage error gets one line pointing at --help, not the whole help.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "doclib-server:", err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "Run 'doclib-server --help' for usage.")
		return exitUsage
	}
	return exitError
}

const long = `Serves the doclib read API on a local address from an in-memory store. Without
--data it serves the built-in demo data set and prints demo keys to try.

Search runs on an embedded engine built at start, or on OpenSearch (--search
opensearch). With --index-dir the embedded index is kept in a directory, as a
stack keeps it in S3, and a restart over the same data reads it instead of
building it. Over --store dynamodb the embedded engine follows the table: it
scans it every --search-poll and re-indexes what changed (docs/search.md).
With OpenSearch, the index is rebuilt from the served data at start when it
does not exist, when --reindex is given, and always for --store memory (an
in-memory data set lives only in this process).`

const examples = `  go run ./cmd/doclib-server
  go run ./cmd/doclib-server --addr 127.0.0.1:9090 --key-limit 1000
  go run ./cmd/doclib-server --data my-data.json
  go run ./cmd/doclib-server --data my-data.json --index-dir ~/.cache/doclib-index
  AWS_REGION=us-east-1 AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 \
    go run ./cmd/doclib-server --store dynamodb --table doclib
  go run ./cmd/doclib-server --search opensearch --opensearch-url http://localhost:9200`

// config is what the flags and environment decide.
type config struct {
	data       string
	store      string
	table      string
	search     string
	indexDir   string
	embedder   settings.Embedder
	opensearch settings.OpenSearch
	reindex    bool
	rules      settings.Rules
	addr       string
	keyLimit   int
	ipLimit    int
	window     time.Duration
	noLimits   bool
	memoMB     int
	logFormat  string
	poll       time.Duration
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// newCommand is the command line: its flags and their checks, then serve with
// the config they make. --help prints the help to stdout and serves nothing.
func newCommand(getenv func(string) string, stdout, stderr io.Writer, serve func(context.Context, config) error) *cobra.Command {
	var c config
	cmd := &cobra.Command{
		Use:     "doclib-server",
		Short:   "Serve the doclib read API locally",
		Long:    long,
		Example: examples,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unexpected argument %q; doclib-server takes flags only", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.check(); err != nil {
				return err
			}
			return serve(cmd.Context(), c)
		},
		SilenceUsage:  true, // a typo gets one line, not the whole help
		SilenceErrors: true, // exitCode prints the error, once
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return flagError(cmd.Flags(), err) })
	cmd.CompletionOptions.DisableDefaultCmd = true // one command: no completion or help subcommands

	fs := cmd.Flags()
	fs.SortFlags = false // in the order below: the data, the limits, then search
	fs.StringVar(&c.data, "data", getenv(settings.EnvData), "data-set `FILE` to serve instead of the demo (env "+settings.EnvData+")")
	fs.StringVar(&c.store, "store", envOr(getenv, settings.EnvStore, "memory"), "`KIND` of store: memory (a data set in memory) or dynamodb (env "+settings.EnvStore+")")
	fs.StringVar(&c.table, "table", getenv(settings.EnvTable), "DynamoDB table `NAME` for --store dynamodb; AWS settings from the standard AWS variables (env "+settings.EnvTable+")")
	fs.StringVar(&c.addr, "addr", envOr(getenv, settings.EnvAddr, "127.0.0.1:8080"), "`HOST:PORT` to listen on; port 0 picks a free one (env "+settings.EnvAddr+")")
	fs.IntVar(&c.keyLimit, "key-limit", doclib.KeyLimit, "requests per window per API key")
	fs.IntVar(&c.ipLimit, "ip-limit", doclib.IPLimit, "requests per window per client IP")
	fs.DurationVar(&c.window, "rate-window", doclib.RateWindow, "length of a rate-limit window")
	fs.BoolVar(&c.noLimits, "no-rate-limits", false, "serve without rate limits (for load tests)")
	fs.IntVar(&c.memoMB, "answer-cache", httpapi.DefaultMemoBytes>>20, "`MB` of answers kept for repeated reads of a data set in memory (0 keeps none; never a search's; docs/design.md)")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.search, "search", envOr(getenv, settings.EnvSearch, "embedded"), "`KIND` of search backend: embedded (an index built in memory at start) or opensearch (env "+settings.EnvSearch+")")
	fs.StringVar(&c.indexDir, "index-dir", getenv(settings.EnvIndexDir), "`DIR` to keep the embedded search index in between runs: a restart over the same data reads it instead of building it (env "+settings.EnvIndexDir+")")
	fs.DurationVar(&c.poll, "search-poll", indexer.DefaultPollEvery, "with --store dynamodb and the embedded search engine, the pause between two scans of the table for changes to index")
	c.embedder.Flags(fs, getenv)
	c.opensearch.Flags(fs, getenv)
	fs.BoolVar(&c.reindex, "reindex", false, "with --search opensearch and --store dynamodb, rebuild the index from the table at start")
	c.rules.Flags(fs, getenv)
	return cmd
}

// check refuses a config the server cannot serve, before any work.
func (c *config) check() error {
	switch {
	case c.keyLimit < 1 || c.ipLimit < 1:
		return usageError{errors.New("--key-limit and --ip-limit must be 1 or more")}
	case c.window < time.Second:
		return usageError{errors.New("--rate-window must be at least 1s")}
	case c.logFormat != "text" && c.logFormat != "json":
		return usageError{fmt.Errorf("--log-format must be text or json, not %q", c.logFormat)}
	case c.store != "memory" && c.store != "dynamodb":
		return usageError{fmt.Errorf("--store must be memory or dynamodb, not %q", c.store)}
	case c.store == "dynamodb" && c.table == "":
		return usageError{errors.New("--store dynamodb needs --table NAME (and AWS_REGION; AWS_ENDPOINT_URL_DYNAMODB for a local DynamoDB)")}
	case c.store == "dynamodb" && c.data != "":
		return usageError{errors.New("--data is for --store memory; a DynamoDB table is loaded with doclib-admin import")}
	case c.search != "embedded" && c.search != "opensearch":
		return usageError{fmt.Errorf("--search must be embedded or opensearch, not %q", c.search)}
	case c.poll < 100*time.Millisecond:
		return usageError{errors.New("--search-poll must be at least 100ms, e.g. 2s")}
	case c.indexDir != "" && (c.search != "embedded" || c.store != "memory"):
		return usageError{errors.New("--index-dir is for the embedded search engine over a data set in memory (--store memory); over a table it follows the table's changes instead")}
	case c.reindex && c.search != "opensearch":
		return usageError{errors.New("--reindex is for --search opensearch; the embedded index is always built at start")}
	}
	if err := c.embedder.Validate(); err != nil {
		return usageError{err}
	}
	if _, err := c.rules.Build(c.embedder.Kind); err != nil { // the overrides' own checks, before any work
		return usageError{err}
	}
	if c.search == "opensearch" {
		if err := c.opensearch.Validate(); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// parseFlags is the command line alone: the config that args and the
// environment make, or the usage error. --help gives pflag.ErrHelp.
func parseFlags(args []string, getenv func(string) string, stdout io.Writer) (config, error) {
	var got *config
	cmd := newCommand(getenv, stdout, io.Discard, func(_ context.Context, c config) error { got = &c; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return config{}, err
	}
	if got == nil {
		return config{}, pflag.ErrHelp
	}
	return *got, nil
}

// flagError makes pflag's errors say what to type instead: the flag a typo
// was meant to be, and that flags take two dashes (doclib-server once used
// Go's flag package, which took -addr as well as --addr).
func flagError(fs *pflag.FlagSet, err error) error {
	var iv *pflag.InvalidValueError
	var nf *pflag.NotExistError
	switch {
	case errors.As(err, &iv) && iv.GetFlag() != nil:
		f := iv.GetFlag()
		switch f.Value.Type() {
		case "int":
			return usageError{fmt.Errorf("--%s takes a whole number such as 2, not %q", f.Name, iv.GetValue())}
		case "duration":
			return usageError{fmt.Errorf("--%s takes a duration such as 30s or 2m, not %q", f.Name, iv.GetValue())}
		case "bool":
			return usageError{fmt.Errorf("--%s is true or false (or given alone), not %q", f.Name, iv.GetValue())}
		}
	case errors.As(err, &nf):
		name := nf.GetSpecifiedName()
		if nf.GetSpecifiedShortnames() != "" { // -addr: pflag reads single letters after one dash
			name, _, _ = strings.Cut(nf.GetSpecifiedShortnames(), "=")
			if fs.Lookup(name) != nil {
				return usageError{fmt.Errorf("flags take two dashes: --%s, not -%s", name, name)}
			}
		}
		if s := closestFlag(fs, name); s != "" {
			return usageError{fmt.Errorf("%w; did you mean --%s?", err, s)}
		}
	}
	return usageError{err}
}

// closestFlag is the flag whose name is within two edits of name, if any.
func closestFlag(fs *pflag.FlagSet, name string) string {
	best, bestD := "", 3
	fs.VisitAll(func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
