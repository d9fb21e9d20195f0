package mcpserver

import (
	"io"
	"log/slog"

	"github.com/doclib/doclib/shared/clients/client"
)

// Options run the MCP server.
type Options struct {
	// Client calls the API with the key from the environment.
	Client *client.Client
	// Version is the program's version, reported to MCP clients.
	Version string
	// HTTPAddr, when set (e.g. 127.0.0.1:8765), serves MCP over streamable
	// HTTP at that address instead of stdio.
	HTTPAddr string
	// Stdin and Stdout are the stdio transport's streams (os.Stdin/os.Stdout
	// when nil). Nothing else may write to Stdout.
	Stdin  io.Reader
	Stdout io.Writer
	// Logger gets diagnostics (to stderr); nil discards them.
	Logger *slog.Logger
}
