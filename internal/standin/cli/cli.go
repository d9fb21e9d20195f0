// Package cli reads the command line of scripts/standin
// (internal/standin/cmd/standin) and writes what it prints once the API
// serves. The command itself only wires these to package standin.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/doclib/doclib/infra/stack"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/settings"
)

// CacheDir is where the synthesized assemblies are cached, relative to the
// repository root (git-ignored).
var CacheDir = filepath.Join(".cache", "standin")

// DefaultAddr is where the API listens unless --addr says otherwise.
const DefaultAddr = "127.0.0.1:8090"

// Options are the command's flags, checked.
type Options struct {
	Data, Addr       string
	Verbose, NoCache bool
	// S3Loopback makes the buckets answer at loopback's speed instead of
	// S3's (fakes3.DefaultSpeed).
	S3Loopback bool
	// Context is the CDK context the app is given, the -c pairs and
	// --customer, as `cdk synth -c` would give it; Config is what the app
	// makes of it.
	Context map[string]string
	Config  stack.Config
	// Unknown are the keys of Context that neither the app nor the CDK
	// reads, sorted.
	Unknown []string
}

// contextFlag collects -c KEY=VALUE pairs; a later pair of the same key
// wins, as with cdk synth.
type contextFlag map[string]string

func (c contextFlag) String() string { return formatContext(c) }

func (c contextFlag) Set(pair string) error {
	k, v, ok := strings.Cut(pair, "=")
	if !ok {
		return fmt.Errorf("want KEY=VALUE, as cdk synth -c takes it (e.g. -c %s=%s)", stack.KeySearch, stack.SearchEmbedded)
	}
	if k == "" {
		return fmt.Errorf("the key is empty: want KEY=VALUE (infra/README.md lists the keys)")
	}
	c[k] = v
	return nil
}

// formatContext writes a context as KEY=VALUE pairs sorted by key.
func formatContext(c map[string]string) string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		pairs = append(pairs, k+"="+c[k])
	}
	return strings.Join(pairs, " ")
}

const usage = `Usage: scripts/standin [-c KEY=VALUE]... [--customer NAME] [--data FILE] [--addr HOST:PORT] [--no-cache] [--s3-loopback] [-v]

Runs the stack that 'go run ./infra' synthesizes, on this machine: the real
function binaries under a Lambda runtime emulator, the REST API with its
authorizer, usage plans and gateway responses, and every AWS call checked
against the template's IAM policies (docs/standin.md, "Running it by hand").

-c KEY=VALUE gives the CDK app a context value, as 'cdk synth -c KEY=VALUE'
does; repeat it for more keys. infra/README.md, "Context values", lists the
keys, their defaults and what they accept. For example:

  scripts/standin                                    # Doclib-demo, search=domain
  scripts/standin -c search=embedded                 # the embedded search tier
  scripts/standin -c usagePlans=false                # no usage plans: the function's limit alone
  scripts/standin -c accountHelp='In the Acme app, {action}.'
  scripts/standin --customer acme -c search=embedded --addr 127.0.0.1:8091

A value the app would refuse is refused before anything starts, with the
app's own message; a key the app does not read is passed on with a warning
(the app ignores it, as under cdk synth). The synthesis is cached in
%s, keyed by the context, cdk.json, the toolchain and the sources
of the app and the functions, so an unchanged stack starts in seconds;
--no-cache synthesizes anew and leaves the cache alone.

The buckets answer at S3's speed (a first byte of 20 ms, 75 MB/s per
connection, 150 MB/s per function; docs/standin.md, "S3's speed"), so a
cold start waits for its index as it would in Lambda; --s3-loopback answers
at loopback's speed instead.

Once the API serves, it prints its base URL on stdout, and on stderr the
stack, the context, the table, a curl line to try, and how to stop it.

Options:
`

// Parse reads the command line. project is the context of cdk.json (nil
// for none), which the app starts from and a -c value outranks, so that a
// context is checked as the app will read it. A context value the app
// refuses is an error with the app's own sentence ("context KEY=VALUE:
// ..."). For -h or --help, Parse writes the usage to help and returns
// flag.ErrHelp.
func Parse(args []string, project map[string]any, help io.Writer) (*Options, error) {
	o := &Options{Context: map[string]string{}}
	fs := flag.NewFlagSet("standin", flag.ContinueOnError)
	// Errors are returned, and printed once by the command; the usage is
	// printed for --help alone, where it does not bury an error.
	fs.SetOutput(io.Discard)
	fs.Var(contextFlag(o.Context), "c", "a context value of the CDK app, as cdk synth -c `KEY=VALUE` takes it; repeat it for more keys")
	fs.Var(contextFlag(o.Context), "context", "the same as -c `KEY=VALUE`")
	customer := fs.String("customer", "", "the stack's customer, short for -c customer=`NAME` (default: the app's, "+stack.Defaults.Customer+")")
	fs.StringVar(&o.Data, "data", "", "data set `FILE` to import (default: the built-in demo data set)")
	fs.StringVar(&o.Addr, "addr", DefaultAddr, "`HOST:PORT` the API listens on")
	fs.BoolVar(&o.NoCache, "no-cache", false, "synthesize anew, without reading or writing the cache in "+CacheDir)
	fs.BoolVar(&o.S3Loopback, "s3-loopback", false, "the buckets answer at loopback's speed, not S3's")
	fs.BoolVar(&o.Verbose, "v", false, "print the functions' and the stand-in's log lines")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(help)
		fmt.Fprintf(help, usage, CacheDir)
		fs.PrintDefaults()
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("%w (scripts/standin --help lists the options)", err)
	}
	if fs.NArg() > 0 {
		arg := fs.Arg(0)
		if strings.Contains(arg, "=") {
			return nil, fmt.Errorf("%q is not a flag: a context value goes after -c, as in -c %s", arg, arg)
		}
		return nil, fmt.Errorf("%q is not a flag (scripts/standin --help lists them)", arg)
	}
	if *customer != "" {
		if v, ok := o.Context[stack.KeyCustomer]; ok && v != *customer {
			return nil, fmt.Errorf("--customer %s and -c %s=%s name two customers: give one (--customer NAME is short for -c %s=NAME)",
				*customer, stack.KeyCustomer, v, stack.KeyCustomer)
		}
		o.Context[stack.KeyCustomer] = *customer
	}
	read := map[string]bool{}
	cfg, err := stack.ParseConfig(func(key string) any {
		read[key] = true
		if v, ok := o.Context[key]; ok {
			return v
		}
		return project[key]
	})
	if err != nil {
		return nil, err
	}
	o.Config = cfg
	for _, k := range slices.Sorted(maps.Keys(o.Context)) {
		if !read[k] && !cdkKey(k) {
			o.Unknown = append(o.Unknown, k)
		}
	}
	return o, nil
}

// cdkKey tells whether the CDK itself reads a context key: its feature flags
// (@aws-cdk/aws-apigateway:...) and settings (aws:cdk:...) have a colon,
// which none of the app's keys has.
func cdkKey(k string) bool { return strings.Contains(k, ":") }

// Warnings are the lines to print before starting: one for each key that
// nothing reads.
func (o *Options) Warnings() []string {
	var lines []string
	for _, k := range o.Unknown {
		lines = append(lines, fmt.Sprintf("warning: -c %s=%s: the app reads no context key %q and ignores it, as under cdk synth (infra/README.md lists the keys)",
			k, o.Context[k], k))
	}
	return lines
}

// Effective is the context in effect, as KEY=VALUE pairs: the customer and
// the search tier always, with the app's defaults, and every other key given
// a value that something reads.
func (o *Options) Effective() string {
	c := map[string]string{stack.KeyCustomer: o.Config.Customer, stack.KeySearch: o.Config.Search}
	for k, v := range o.Context {
		if strings.TrimSpace(v) != "" && !slices.Contains(o.Unknown, k) {
			c[k] = v
		}
	}
	return formatContext(c)
}

// Ready is what a user needs once the stand-in serves.
type Ready struct {
	Stack, Context, Table, DynamoDB, URL string
	// Source names the data set: a file, or the built-in demo data set.
	Source string
	Data   *doclib.DataSet
	PID    int
}

// Print writes Ready as the lines the command prints on stderr.
func (r Ready) Print(w io.Writer) {
	fmt.Fprintf(w, "standin: stack %s, context %s (the other keys at the app's defaults: infra/README.md)\n", r.Stack, r.Context)
	fmt.Fprintf(w, "standin: table %s in dynalite at %s\n", r.Table, r.DynamoDB)
	fmt.Fprintf(w, "standin: data: %s, %d documents in %d libraries, %d keys\n", r.Source, len(r.Data.Documents), len(r.Data.Libraries), len(r.Data.APIKeys))
	if key := ExampleKey(r.Data); key != "" {
		fmt.Fprintf(w, "standin: try: curl -s -H 'Authorization: Bearer %s' %s/libraries\n", key, r.URL)
	} else {
		fmt.Fprintf(w, "standin: try: curl -s -H \"Authorization: Bearer $%s\" %s/libraries   (%s: a key of the data set)\n",
			settings.EnvAPIKey, r.URL, settings.EnvAPIKey)
	}
	fmt.Fprintf(w, "standin: stop: Ctrl-C, or kill %d (dynalite and the functions stop with it)\n", r.PID)
}

// ExampleKey returns the secret of the first demo key (demo.Keys: the one
// with every library first) that d holds, or "" when it holds none: other
// data sets hold only their keys' hashes, not the secrets.
func ExampleKey(d *doclib.DataSet) string {
	held := map[doclib.KeyHash]bool{}
	for _, k := range d.APIKeys {
		held[k.Hash] = true
	}
	for _, k := range demo.Keys {
		if held[doclib.HashKey(k.Secret)] {
			return k.Secret
		}
	}
	return ""
}
