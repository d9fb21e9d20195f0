package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport ends the session on the first line it cannot
// decode, and cannot be told otherwise. JSON-RPC 2.0 wants an error answer
// instead (-32700 for a line that is not JSON, -32600 for JSON that is not a
// message) and the server to go on, so serveStdio reads through messages,
// which answers such lines itself and hands the SDK only lines it can use.
// MCP's stdio transport is one message per line, so a line is a message.

// messages passes on the lines of in that are JSON-RPC messages, one per
// Read buffer, and answers the others on out with an error (id null when
// the line has none that can be read), logging each.
type messages struct {
	in      *bufio.Reader
	out     io.Writer // shared with the SDK's writes: a lockedWriter
	log     *slog.Logger
	max     int    // bytes in a line, within the SDK's own frame limit
	pending []byte // the line being passed on, with its newline
	err     error  // in's error, returned once pending is passed on
	// inflight, when not nil, holds in's end back until every request
	// passed on has been answered.
	inflight *inflight
	// ids, when not nil, swaps the requests' ids for tokens (ids.go).
	ids *ids
}

func newMessages(in io.Reader, out io.Writer, log *slog.Logger) *messages {
	return &messages{in: bufio.NewReader(in), out: out, log: log, max: mcp.DefaultMaxLineLength - 1}
}

func (m *messages) Read(p []byte) (int, error) {
	for len(m.pending) == 0 {
		if m.err != nil {
			if m.inflight != nil {
				m.inflight.drain(drainWait)
			}
			return 0, m.err
		}
		var line []byte
		var tooLong bool
		line, tooLong, m.err = m.line()
		if len(line) > 0 || tooLong {
			if err := m.check(line, tooLong); err != nil {
				return 0, err
			}
		}
	}
	n := copy(p, m.pending)
	m.pending = m.pending[n:]
	return n, nil
}

// line reads the next line without its line break and surrounding blanks;
// a line longer than max is read to its end and dropped.
func (m *messages) line() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := m.in.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, chunk...)
			if len(buf) > m.max {
				buf, tooLong = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(buf), tooLong, err
	}
}

// check queues a line that is a message and answers one that is not.
func (m *messages) check(line []byte, tooLong bool) error {
	code, msg := 0, ""
	switch {
	case tooLong:
		code, msg = jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a message is at most %d bytes", m.max)
	case !json.Valid(line):
		code, msg = jsonrpc.CodeParseError, "Parse error: the line is not JSON"
	case line[0] == '[':
		// Only protocol 2025-03-26 had batches, and the SDK's stdio
		// transport ends the session on one ("invalid trailing data").
		code, msg = jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not accepted: send each message on a line of its own"
	case !isMessage(line):
		code, msg = jsonrpc.CodeInvalidRequest, "Invalid Request: the JSON is not a JSON-RPC 2.0 message"
	default:
		if m.ids != nil {
			line = m.ids.in(line)
		}
		m.pending = append(line, '\n')
		if m.inflight != nil {
			m.inflight.read(line)
		}
		return nil
	}
	m.log.Warn("mcp: answered a line that is not a message with an error", "code", code, "bytes", len(line))
	answer, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", requestID(line), jsonrpc.Error{Code: int64(code), Message: msg}})
	if err != nil {
		return err
	}
	_, err = m.out.Write(append(answer, '\n'))
	return err
}

// isMessage says whether a line of JSON is one message the SDK accepts.
func isMessage(line []byte) bool {
	_, err := jsonrpc.DecodeMessage(line)
	return err == nil
}

// requestID is the id of a request that is not a valid message, when it
// has one a response can carry (a string or a number), else null.
func requestID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 {
		if c := m.ID[0]; c == '"' || c == '-' || c >= '0' && c <= '9' {
			return m.ID
		}
	}
	return json.RawMessage("null")
}

// lockedWriter makes each Write whole with respect to the others: the SDK
// writes a message in one Write, and so does messages, so their lines never
// interleave.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	inflight *inflight // told of each answer written, when not nil
	ids      *ids      // puts the clients' ids back, when not nil
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := p
	if l.ids != nil {
		out = l.ids.out(p)
	}
	if _, err := l.w.Write(out); err != nil {
		return 0, err
	}
	if l.inflight != nil {
		l.inflight.wrote(p)
	}
	return len(p), nil
}
