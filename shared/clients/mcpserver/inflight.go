package mcpserver

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"
)

// The SDK ends a stdio session as soon as its reader returns EOF, and drops
// the answers of requests it is still handling: a client that writes its
// requests and closes stdin at once (a script piping a file into doclib mcp)
// got initialize's answer and nothing else. inflight counts the requests
// messages passed on and the answers written, so that messages can hold the
// end of input back until every request read has been answered.

// drainWait bounds how long the end of input waits for answers: longer than
// any tool call takes (the client's own timeouts are shorter), so that a
// handler that never answers cannot keep the process alive for ever.
const drainWait = 2 * time.Minute

type inflight struct {
	mu      sync.Mutex
	ids     map[string]bool // ids of requests read and not yet answered
	changed chan struct{}   // closed and replaced at each answer
}

func newInflight() *inflight {
	return &inflight{ids: map[string]bool{}, changed: make(chan struct{})}
}

// read records the requests of a line passed to the SDK (a message or a
// batch): messages with a method and an id.
func (f *inflight) read(line []byte) {
	f.each(line, func(id string, request bool) {
		if request {
			f.mu.Lock()
			f.ids[id] = true
			f.mu.Unlock()
		}
	})
}

// wrote records the answers of a line written to the client.
func (f *inflight) wrote(line []byte) {
	f.each(line, func(id string, request bool) {
		if !request {
			f.mu.Lock()
			if f.ids[id] {
				delete(f.ids, id)
				close(f.changed)
				f.changed = make(chan struct{})
			}
			f.mu.Unlock()
		}
	})
}

// each calls fn with the id of each message of line that has one, and
// whether it is a request (it has a method) or an answer.
func (f *inflight) each(line []byte, fn func(id string, request bool)) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	msgs := []json.RawMessage{line}
	if line[0] == '[' && json.Unmarshal(line, &msgs) != nil {
		return
	}
	for _, raw := range msgs {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(raw, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
			continue
		}
		var id bytes.Buffer
		if json.Compact(&id, m.ID) != nil {
			continue
		}
		fn(id.String(), m.Method != "")
	}
}

// drain waits until every request read has been answered, or for at most
// max.
func (f *inflight) drain(max time.Duration) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		n, changed := len(f.ids), f.changed
		f.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}
