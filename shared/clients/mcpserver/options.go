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
	// Unavailable, when set, says why no tool can run (no API key, say)
	// and what to do: the server still starts, completes the handshake
	// and lists its tools, so that an MCP client shows this text on each
	// call instead of a bare "disconnected". Client may then be nil.
	Unavailable string
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
