// Command doclib is the command-line client of the doclib read API: it lists
// libraries and their labels, reads documents, walks the graph, shows the
// recordings behind a document and searches, as readable text or as the
// API's JSON; `doclib mcp` serves the same API to AI agents over MCP. Every
// call goes through shared/clients/client, so the CLI knows nothing the API does not.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	setVersion(os.Args[1:])
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext is cancelled by Ctrl-C (SIGINT) or SIGTERM, with the signal
// as its cause, so that the exit code can say which one. After the first
// signal the default action is back: a second Ctrl-C ends doclib at once.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(signalled{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}
