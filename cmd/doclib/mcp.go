package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/mcpserver"
	"github.com/doclib/doclib/shared/settings"
)

func (a *app) mcpCmd() *cobra.Command {
	var addr string
	cmd := a.command(&cobra.Command{
		Use:   "mcp",
		Short: "Serve the API to AI agents as an MCP server (stdio, or streamable HTTP with --http)",
		Long: `Serves the doclib read API as Model Context Protocol tools, with the same
configuration (URL and key) as every other command. By default it speaks MCP
on stdin and stdout, for an agent that starts doclib itself; with --http ADDR
it serves streamable HTTP at http://ADDR/mcp until interrupted. Diagnostics go
to stderr; --verbose adds debug detail.

Serving over HTTP beyond 127.0.0.1 lets anyone who can reach the address read
the libraries with this key.`,
		Example: `  # An agent's MCP configuration (stdio):
  {"mcpServers": {"doclib": {"command": "doclib", "args": ["mcp"],
                             "env": {"` + settings.EnvAPIKey + `": "YOUR_KEY"}}}}

  doclib mcp --http 127.0.0.1:8765     # then connect to http://127.0.0.1:8765/mcp`,
		Args: noArgs,
	}, func(ctx context.Context, c *client.Client, _ []string) error {
		level := slog.LevelInfo
		if a.verbose {
			level = slog.LevelDebug
		}
		err := mcpserver.Run(ctx, mcpserver.Options{
			Client:   c,
			Version:  version,
			HTTPAddr: addr,
			Stdin:    a.stdin,
			Stdout:   a.stdout,
			Logger:   slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})),
		})
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "listen" {
			// A bad or busy --http address is the command line's mistake.
			return usageError{fmt.Errorf("--http %s: cannot listen there (%v); give a free host:port such as 127.0.0.1:8765", addr, op.Err)}
		}
		return err
	})
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8765; port 0 picks one) instead of stdio")
	return cmd
}
