package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"

	"github.com/doclib/doclib/shared/clients/mcpserver"
	"github.com/doclib/doclib/shared/settings"
)

// noKeyForMCP answers every tool call of `doclib mcp` started without a key:
// the agent passes it on to the person who can fix the configuration.
const noKeyForMCP = `missing_api_key: doclib mcp was started without an API key, so no tool can read the libraries. ` +
	`A person has to set ` + settings.EnvAPIKey + ` in this server's entry of the MCP client's configuration, beside "command" and "args": ` +
	`"env": {"` + settings.EnvAPIKey + `": "YOUR_KEY"} (Claude Desktop: claude_desktop_config.json; Cursor: .cursor/mcp.json; ` +
	`Claude Code: claude mcp add doclib -e ` + settings.EnvAPIKey + `=YOUR_KEY -- doclib mcp), then restart the server. Retrying will not help until then.`

func (a *app) mcpCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the API to AI agents as an MCP server (stdio, or streamable HTTP with --http)",
		Long: `Serves the doclib read API as Model Context Protocol tools, with the same
configuration (URL and key) as every other command. By default it speaks MCP
on stdin and stdout, for an agent that starts doclib itself; with --http ADDR
it serves streamable HTTP at http://ADDR/mcp until interrupted. Diagnostics go
to stderr; --verbose adds debug detail.

Serving over HTTP beyond 127.0.0.1 lets anyone who can reach the address read
the libraries with this key.

Started without an API key, it still completes the MCP handshake and lists
its tools, and answers every tool call with how to set ` + settings.EnvAPIKey + ` in the
MCP client's configuration: a desktop client shows that instead of a bare
"disconnected".`,
		Example: `  # An agent's MCP configuration (stdio):
  {"mcpServers": {"doclib": {"command": "doclib", "args": ["mcp"],
                             "env": {"` + settings.EnvAPIKey + `": "YOUR_KEY"}}}}

  doclib mcp --http 127.0.0.1:8765     # then connect to http://127.0.0.1:8765/mcp`,
		Args: noArgs,
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := a.client()
		unavailable := ""
		switch {
		case errors.Is(err, errNoKey):
			unavailable = noKeyForMCP
		case err != nil:
			return err
		}
		level := slog.LevelInfo
		if a.verbose {
			level = slog.LevelDebug
		}
		err = mcpserver.Run(cmd.Context(), mcpserver.Options{
			Client:      c,
			Unavailable: unavailable,
			Version:     version,
			HTTPAddr:    addr,
			Stdin:       a.stdin,
			Stdout:      a.stdout,
			Logger:      slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})),
		})
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "listen" {
			// A bad or busy --http address is the command line's mistake.
			return usageError{fmt.Errorf("--http %s: cannot listen there (%v); give a free host:port such as 127.0.0.1:8765", addr, op.Err)}
		}
		if err != nil {
			return ranError{err}
		}
		return nil
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8765; port 0 picks one) instead of stdio")
	return cmd
}
