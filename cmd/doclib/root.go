package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/settings"
)

// Exit codes, listed in the root --help.
const (
	exitOK      = 0
	exitAPI     = 1   // the API answered with an error, or its answer could not be used
	exitUsage   = 2   // the command line, the configuration or the key is wrong or missing
	exitNetwork = 3   // the API could not be reached
	exitSignal  = 130 // interrupted (Ctrl-C), as shells report SIGINT
	exitTerm    = 143 // terminated (SIGTERM), as shells report it
)

// signalled is the cause of the program's context when a signal ends it.
// It is context.Canceled, so every wait and request stops on it.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string        { return s.sig.String() }
func (s signalled) Is(target error) bool { return target == context.Canceled }

// usageError is a mistake in the command line or the configuration.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// ranError is an error of a command that ran (as opposed to one cobra found
// in the command line before running anything).
type ranError struct{ error }

func (e ranError) Unwrap() error { return e.error }

func exitCode(err error) int {
	var ue usageError
	var ne *client.NetworkError
	var ae *client.Error
	var re ranError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitSignal
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ne):
		return exitNetwork
	case errors.As(err, &ae), errors.As(err, &re):
		return exitAPI
	default: // cobra's own: an unknown command or flag, a bad flag value
		return exitUsage
	}
}

// app is the program: its environment, its global flags and what they
// resolve to.
type app struct {
	getenv         func(string) string
	stdin          io.Reader // nil means os.Stdin (doclib mcp)
	stdout, stderr io.Writer
	// userConfigDir finds the default config file's directory (os.UserConfigDir).
	userConfigDir func() (string, error)
	// sleep waits between retries; nil waits for real (tests shorten it).
	sleep func(context.Context, time.Duration) error
	// transport carries the requests; nil is http.DefaultTransport.
	transport http.RoundTripper

	// isTerminal says whether stdout is a terminal (people) rather than a
	// pipe or a file (programs); nil checks for real.
	isTerminal func(io.Writer) bool
	// tty is what isTerminal said of stdout when the program started.
	tty bool

	// Global flags.
	url, configFile, keyFile string
	verbose                  bool
	timeout                  time.Duration
	retries                  int

	// exports are the --json and --jq flags of each command that has them.
	exports map[*cobra.Command]*export

	// set is what the configuration resolved to, once a command needed it.
	set *resolved
}

// run is the whole program, so that tests drive what main does.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	a := &app{getenv: getenv, stdout: stdout, stderr: stderr, userConfigDir: os.UserConfigDir}
	return a.run(ctx, args)
}

func (a *app) run(ctx context.Context, args []string) int {
	if a.isTerminal == nil {
		a.isTerminal = isTerminal
	}
	a.tty = a.isTerminal(a.stdout)
	out := &errWriter{w: a.stdout}
	a.stdout = out
	root := a.newRoot()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if out.err != nil {
		// Whatever the command returned, the failed write is the cause.
		err = ranError{fmt.Errorf("writing the output: %w", out.err)}
	}
	if err != nil {
		a.report(cmd, err)
	}
	code := exitCode(err)
	var s signalled
	if code == exitSignal && errors.As(context.Cause(ctx), &s) && s.sig == syscall.SIGTERM {
		code = exitTerm
	}
	return code
}

const rootLong = `doclib reads libraries of step-by-step documents through the doclib read API:
libraries and their labels, a library's graph and documents, one document, a
walk of the graph from it, the recordings behind it, and search across every
library the key can see. It only reads; nothing it does changes any data.

Configuration (the first one set wins):
  API URL  --url, then ` + settings.EnvURL + `, then "url" in the config file,
           then http://127.0.0.1:8080 (the local server: go run ./cmd/doclib-server)
  API key  --api-key-file FILE, then ` + settings.EnvAPIKey + `, then "apiKey" in the config file
There is no flag for the key itself: a key on a command line leaks into shell
history and process lists. doclib never prints the key.

The config file is doclib/config.json in your user config directory
($XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support on macOS,
%AppData% on Windows), or the file --config names. It is JSON:
  {"url": "https://api.example.com", "apiKey": "YOUR_KEY"}
Keep it private (chmod 600): doclib warns when others can read a file holding a key.

Output is for people when stdout is a terminal: aligned tables with headers,
page footers and hints. Piped or redirected, the lists (libraries, tags,
categories, applications, documents, search) print one item per line, its
values separated by tabs, with no header, footer or hint, and notes go to
stderr; library prints "field:<tab>value" lines. A document, graph, walk or
recording reads the same either way.
--json FIELDS prints JSON instead, as gh does: the named fields of each item
(an array) or of the one object a command shows; --json alone lists a
command's fields, and --jq EXPR filters the JSON with a jq expression. With
--all the array holds the items of every page.

Exit codes:
  0    success
  1    the API answered with an error: its code, message and request ID are printed
  2    usage: a bad flag or argument, a bad config file, or no API key; or a
       --jq expression that fails, or runs past --jq-timeout or --jq-max-output
  3    the API could not be reached
  130  interrupted (Ctrl-C, SIGINT)
  143  terminated (SIGTERM)`

func (a *app) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:     "doclib",
		Short:   "Read doclib libraries, documents, graphs, recordings and search from the command line",
		Long:    rootLong,
		Version: version,
		Example: `  go run ./cmd/doclib-server &             # the local API with demo data and demo keys
  export ` + settings.EnvAPIKey + `=...                 # one of the keys it prints
  doclib libraries
  doclib documents it-operations --tag security
  doclib document doc_it_001
  doclib search reset a password
  doclib graph lib_it --format dot | dot -Tsvg -o it.svg
  doclib libraries --json id,name --jq '.[].id'`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if fields := a.noFields(cmd, err); fields != nil {
			return fields
		}
		return usageError{flagError(err)}
	})
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if e := a.exports[cmd]; e != nil {
			return e.check()
		}
		return nil
	}
	f := root.PersistentFlags()
	f.StringVar(&a.url, "url", "", "API base `URL` (env "+settings.EnvURL+"; default http://127.0.0.1:8080)")
	f.StringVar(&a.configFile, "config", "", "config `FILE` (default doclib/config.json in the user config directory)")
	f.StringVar(&a.keyFile, "api-key-file", "", "read the API key from `FILE` (else env "+settings.EnvAPIKey+", else the config file)")
	f.DurationVar(&a.timeout, "timeout", client.DefaultTimeout, "time limit of each request")
	f.IntVar(&a.retries, "retries", client.DefaultMaxRetries, "retries after a rate limit (waiting its Retry-After), a server error or a network failure")
	f.BoolVarP(&a.verbose, "verbose", "v", false, "print the configuration's sources and each request to stderr (never the key)")
	root.AddCommand(a.librariesCmd(), a.libraryCmd(), a.labelsCmd("tags"), a.labelsCmd("categories"), a.labelsCmd("applications"),
		a.graphCmd(), a.documentsCmd(), a.documentCmd(), a.traverseCmd(), a.recordingsCmd(), a.searchCmd(), a.mcpCmd())
	addExamples(root)
	return root
}

// addExamples gives cobra's own help and completion commands an Examples
// section like every other command.
func addExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  doclib help search"
		case "completion":
			c.Example = `  source <(doclib completion bash)
  doclib completion zsh > "${fpath[1]}/_doclib"
  doclib completion fish > ~/.config/fish/completions/doclib.fish`
			shells := map[string]string{
				"bash":       "  source <(doclib completion bash)",
				"zsh":        `  doclib completion zsh > "${fpath[1]}/_doclib"`,
				"fish":       "  doclib completion fish > ~/.config/fish/completions/doclib.fish",
				"powershell": "  doclib completion powershell | Out-String | Invoke-Expression",
			}
			for _, sh := range c.Commands() {
				sh.Example = shells[sh.Name()]
			}
		}
	}
}

// command wraps a command's work: it builds the client from the
// configuration, then runs, marking what fails as a failure of the run.
func (a *app) command(cmd *cobra.Command, work func(ctx context.Context, c *client.Client, args []string) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := a.client()
		if err != nil {
			return err
		}
		if err := work(cmd.Context(), c, args); err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			return ranError{err}
		}
		return nil
	}
	return cmd
}

// client builds the API client from the configuration.
func (a *app) client() (*client.Client, error) {
	switch {
	case a.timeout <= 0:
		return nil, usageError{fmt.Errorf("--timeout must be positive, e.g. 30s, not %s", a.timeout)}
	case a.retries < 0:
		return nil, usageError{fmt.Errorf("--retries must be 0 or more, not %d", a.retries)}
	}
	s, err := a.settings()
	if err != nil {
		return nil, err
	}
	if a.verbose {
		fmt.Fprintf(a.stderr, "doclib: API %s (from %s); API key from %s\n", redactURL(s.url), s.urlFrom, s.keyFrom)
	}
	transport := a.transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	if a.verbose {
		transport = logTransport{next: transport, w: a.stderr}
	}
	c, err := client.New(s.url, s.key, client.WithTimeout(a.timeout), client.WithRetries(a.retries),
		client.WithUserAgent("doclib-cli/"+version), client.WithSleep(a.wait), client.WithHTTPClient(&http.Client{Transport: transport}))
	switch {
	case errors.Is(err, client.ErrBadKey):
		return nil, usageError{fmt.Errorf("the API key from %s holds a space, a line break or a control character; it must be the key alone, on one line", s.keyFrom)}
	case err != nil:
		return nil, usageError{fmt.Errorf("the API URL %q (from %s) is not an http(s) URL such as http://127.0.0.1:8080", redactURL(s.url), s.urlFrom)}
	}
	return c, nil
}

// redactURL hides the password of a URL that carries one, for messages.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// wait is the client's pause before a retry: it says why the command is
// quiet when the pause is long enough to notice.
func (a *app) wait(ctx context.Context, d time.Duration) error {
	if a.verbose || d >= time.Second {
		fmt.Fprintf(a.stderr, "doclib: waiting %s before retrying (--retries %d)\n", d.Round(time.Millisecond), a.retries)
	}
	if a.sleep != nil {
		return a.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// logTransport writes one line per request to stderr: method, URL, status,
// time, request ID and remaining quota. It never writes headers, so never
// the key.
type logTransport struct {
	next http.RoundTripper
	w    io.Writer
}

func (l logTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := l.next.RoundTrip(r)
	if err != nil {
		fmt.Fprintf(l.w, "doclib: %s %s: %v\n", r.Method, r.URL.Redacted(), err)
		return resp, err
	}
	line := fmt.Sprintf("doclib: %s %s → %d in %s", r.Method, r.URL.Redacted(), resp.StatusCode, time.Since(start).Round(time.Millisecond))
	var about []string
	if id := resp.Header.Get("X-Request-Id"); id != "" {
		about = append(about, "request "+id)
	}
	if left := resp.Header.Get("X-RateLimit-Remaining"); left != "" {
		about = append(about, left+" requests left")
	}
	if len(about) > 0 {
		line += " (" + strings.Join(about, ", ") + ")"
	}
	fmt.Fprintln(l.w, line)
	return resp, nil
}
