// Command doclib-server serves the doclib read API locally from an embedded store:
// the built-in demo data set, or a data-set file given with --data.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/backend/opensearch"
	"github.com/doclib/doclib/shared/clients/mcpserver"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/indexer"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
	"github.com/doclib/doclib/shared/wiring"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := exitCode(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program, so that tests drive the same entry point as main:
// the command line, then serve.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand(getenv, stdout, stderr, func(ctx context.Context, c config) error {
		return serve(ctx, c, getenv, stdout, stderr)
	})
	cmd.SetArgs(args)
	return cmd.ExecuteContext(ctx)
}

// serve serves the API as c says until ctx ends.
func serve(ctx context.Context, c config, getenv func(string) string, stdout, stderr io.Writer) error {
	help, err := settings.AccountHelpFromEnv(getenv)
	if err != nil {
		return usageError{err}
	}
	var logger *slog.Logger
	if c.logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(stderr, nil))
	} else {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}

	start := time.Now()
	var (
		data    *doclib.DataSet
		store   doclib.Store
		limiter doclib.Limiter
		ledger  doclib.Ledger
		follow  *indexer.Poller // the embedded index's follower of a table
	)
	source := "the built-in demo data set"
	switch {
	case c.store == "dynamodb":
		source = "DynamoDB table " + c.table
		t, err := dynamo.Connect(ctx, c.table)
		if err != nil {
			return err
		}
		if err := t.Check(ctx); err != nil {
			return err
		}
		// The embedded search index is built from the table's contents, then
		// follows its changes; in production, search runs on OpenSearch. The
		// baseline of the changes is taken first, so that nothing written
		// while the table is read is missed.
		if c.search == "embedded" {
			follow = &indexer.Poller{Every: c.poll, Logger: logger, Scan: func(ctx context.Context) (map[indexer.Item]string, error) {
				d, err := t.SearchDigests(ctx)
				out := make(map[indexer.Item]string, len(d))
				for k, v := range d {
					out[indexer.Item(k)] = v
				}
				return out, err
			}}
			if err := follow.Baseline(ctx); err != nil {
				return err
			}
			src := *t
			src.ConsistentRead = true // a re-read after a change must see it
			follow.Indexer = &indexer.Indexer{Source: dynamo.NewStore(&src), Logger: logger}
		}
		if data, err = t.Export(ctx); err != nil {
			return err
		}
		store, limiter, ledger = dynamo.NewStore(t), dynamo.NewLimiter(t), dynamo.NewLedger(t)
	case c.data != "":
		source = c.data
		if data, err = untilDone(ctx, func() (*doclib.DataSet, error) { return dataset.LoadFile(c.data) }); err != nil {
			return err
		}
	default:
		if data, err = demo.Load(); err != nil {
			return err
		}
	}
	if store == nil {
		store, limiter, ledger = memory.New(data), memory.NewLimiter(), memory.NewLedger(data.Workspaces)
	}
	loaded := time.Since(start)

	searcher, err := untilDone(ctx, func() (*search.Searcher, error) {
		return newSearcher(ctx, c, data, follow, stdout, stderr, logger)
	})
	if err != nil {
		return err
	}
	if follow != nil {
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); follow.Run(fctx) }()
		defer func() { cancel(); <-done }() // stopped before run returns
		fmt.Fprintf(stdout, "Search follows the table's changes: a change is searchable about %s after it is written.\n", c.poll)
	}
	svc := service.New(store, nil, service.WithSearch(searcher, ledger), service.WithLogger(logger), service.WithAccountHelp(help))
	cfg := httpapi.Config{Service: svc, KeyLimit: c.keyLimit, IPLimit: c.ipLimit,
		Window: c.window, Logger: logger, MemoBytes: c.memoMB << 20,
		MCP: func(api http.Handler) http.Handler { return mcpserver.Handler(api, "", logger) }}
	if c.memoMB <= 0 {
		cfg.MemoBytes = -1
	}
	if !c.noLimits {
		cfg.Limiter = limiter
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (is another server using the port? try --addr 127.0.0.1:0)", c.addr, err)
	}
	srv := newHTTPServer(httpapi.NewServer(cfg), defaultLimits, logger)

	base := "http://" + ln.Addr().String()
	printBanner(stdout, base, source, data, loaded, c.data == "" && c.store == "memory")

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "Shutting down: finishing requests in flight...")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	fmt.Fprintln(stdout, "Stopped.")
	return nil
}

// untilDone returns what f returns, or, as soon as ctx ends (SIGINT,
// SIGTERM), an error saying so: start-up work may wait on what never comes
// (a named pipe given as --data whose writer stalls, a hung disk), and a
// signal must still end the program. f is told by ctx, and is left to end
// with the process if it does not look.
func untilDone[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("stopped while starting: %w", context.Cause(ctx))
	}
}

func printBanner(w io.Writer, base, source string, d *doclib.DataSet, loaded time.Duration, isDemo bool) {
	fmt.Fprintf(w, "doclib read API at %s\n", base)
	fmt.Fprintf(w, "MCP (streamable HTTP, for AI agents; docs/mcp.md) at %s%s\n", base, httpapi.MCPPath)
	fmt.Fprintf(w, "Serving %s: %s, %s, %s, %s, %s (loaded in %s).\n\n", source,
		doclib.Count(len(d.Workspaces), "workspace", "workspaces"), doclib.Count(len(d.Libraries), "library", "libraries"),
		doclib.Count(len(d.Documents), "document", "documents"), doclib.Count(len(d.Edges), "edge", "edges"),
		doclib.Count(len(d.Recordings), "recording", "recordings"), loaded.Round(time.Millisecond))
	if !isDemo {
		fmt.Fprintf(w, "Try (with a key from your data set):\n  curl -s -H \"Authorization: Bearer $%s\" %s/libraries\n\n", settings.EnvAPIKey, base)
		fmt.Fprintln(w, "Press Ctrl-C to stop.")
		return
	}
	fmt.Fprintln(w, "Try:")
	full := demo.Keys[0].Secret
	for _, p := range []string{"/libraries", "/libraries/it-operations", "/libraries/lib_it/documents?pageSize=5",
		"/libraries/lib_it/graph", "/documents/" + firstDocument(d, "lib_it"), "/documents/" + firstDocument(d, "lib_it") + "/traverse?depth=2",
		"/search/documents?q=reset%20password&pageSize=3"} {
		fmt.Fprintf(w, "  curl -s -H 'Authorization: Bearer %s' '%s%s'\n", full, base, p)
	}
	fmt.Fprintln(w, "\nDemo keys (send as Authorization: Bearer <key>):")
	width := 0
	for _, k := range demo.Keys {
		width = max(width, len(k.Secret))
	}
	for _, k := range demo.Keys {
		fmt.Fprintf(w, "  %-*s  %s\n", width, k.Secret, k.Description)
	}
	fmt.Fprintln(w, "\nPress Ctrl-C to stop.")
}

// newSearcher builds the search backend and its searcher: the embedded index
// of data, or OpenSearch (loaded from data when needed). With follow, the
// embedded index is one that follow's indexer keeps in step with the table.
// An index build's progress goes to stderr (progress).
func newSearcher(ctx context.Context, c config, data *doclib.DataSet, follow *indexer.Poller, stdout, stderr io.Writer, logger *slog.Logger) (*search.Searcher, error) {
	embedder, err := wiring.Embedder(ctx, c.embedder)
	if err != nil {
		return nil, err
	}
	if _, err := c.rules.Build(embedder.ID()); err != nil { // before minutes of indexing
		return nil, usageError{err}
	}
	start := time.Now()
	p := newProgress(stderr, isTerminal(stderr), "Indexing for search", time.Now)
	go p.run()
	defer p.finish()
	if c.search != "opensearch" && c.indexDir != "" {
		// IndexDir meters its own build, through the model's vectors
		// kept in the directory.
		// Its Info lines ("in service", with the segments' own load time)
		// would print above the banner and read as the whole time: the
		// line below says what the time covers.
		s, read, err := wiring.IndexDir(ctx, c.indexDir, data, embedder, c.rules, quietLogger(logger), p.report)
		if err != nil {
			return nil, err
		}
		how := "built and written to"
		if read {
			how = "read from"
		}
		fmt.Fprintf(stdout, "Search index %s %s in %s with embedder %s (the data set's digest and the embedder checked, the segments loaded).\n", how, c.indexDir, time.Since(start).Round(time.Millisecond), s.Embedder.ID())
		return s, nil
	}
	build, report := metered(embedder, p)
	if c.search != "opensearch" {
		var s *search.Searcher
		if follow != nil {
			var live *localsearch.Live
			s, live, err = localsearch.LiveSearcher(ctx, data, build, c.rules, report)
			if live != nil {
				follow.Indexer.Embedder, follow.Indexer.Index = live.Embedder(), live
			}
		} else {
			s, err = localsearch.Searcher(ctx, data, build, c.rules, report)
		}
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "Search index built in %s with embedder %s.\n", time.Since(start).Round(time.Millisecond), s.Embedder.ID())
		return s, nil
	}
	backend, err := wiring.OpenSearch(ctx, c.opensearch, embedder)
	if err != nil {
		return nil, err
	}
	if err := loadOpenSearch(ctx, c, backend, data, build, report, stdout); err != nil {
		return nil, err
	}
	return c.rules.Searcher(backend, embedder)
}

// loadOpenSearch makes sure the cluster's index holds data: it rebuilds it
// when it does not exist, when asked, and always for an in-memory store.
func loadOpenSearch(ctx context.Context, c config, b *opensearch.Backend, data *doclib.DataSet, e search.Embedder,
	report func(done, total int), stdout io.Writer) error {
	why := ""
	switch {
	case c.reindex:
		why = "as asked (--reindex)"
	case c.store == "memory":
		why = "from the in-memory data set"
	default:
		created, err := b.EnsureIndex(ctx)
		if errors.Is(err, opensearch.ErrIncompatible) { // the error says how to cure it; this program has one more way
			return fmt.Errorf("%w; or run again with --reindex", err)
		}
		if err != nil {
			return fmt.Errorf("OpenSearch at %s: %w", c.opensearch.URL, err)
		}
		if !created {
			fmt.Fprintf(stdout, "Searching OpenSearch index %s at %s (embedder %s).\n", b.Alias(), c.opensearch.URL, e.ID())
			return nil
		}
		why = "a new index"
	}
	start := time.Now()
	name, err := b.ReindexData(ctx, data, e, func(p opensearch.ReindexProgress) { report(p.Done, p.Total) })
	if err != nil {
		return fmt.Errorf("OpenSearch at %s: %w", c.opensearch.URL, err)
	}
	fmt.Fprintf(stdout, "OpenSearch index %s built %s behind alias %s in %s (%d documents, embedder %s).\n",
		name, why, b.Alias(), time.Since(start).Round(time.Millisecond), len(data.Documents), e.ID())
	return nil
}

// firstDocument picks a stable example document of a library for the banner.
func firstDocument(d *doclib.DataSet, libraryID string) string {
	best := ""
	for _, doc := range d.Documents {
		if doc.LibraryID == libraryID && (best == "" || strings.Compare(doc.ID, best) < 0) {
			best = doc.ID
		}
	}
	return best
}
