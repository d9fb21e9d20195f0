package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
)

// The SDK reads a JSON-RPC id into an int64 (or a string), so that a
// number it cannot hold comes back as another: 9007199254740993 as …992,
// 1e308 as -9223372036854775808, 1.5 as 1. JSON-RPC wants a reply's id to
// be the request's. Both transports therefore give the SDK a string token
// of their own in place of each request's id, which it keeps as it is,
// and put the client's bytes back into the answer: /mcp in front.go (one
// message per POST), stdio with ids below (many at once).

// idOf finds the top-level "id" member of a JSON object: the span of its
// value in msg, the value, and whether msg is a request (it has a method).
// It reads each member's bytes once, decoding none of them.
func idOf(msg []byte) (at [2]int, id json.RawMessage, request bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return at, nil, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return [2]int{}, nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return [2]int{}, nil, false
		}
		switch k {
		case "id":
			end := int(dec.InputOffset())
			at, id = [2]int{end - len(raw), end}, raw
		case "method":
			request = true
		}
	}
	return at, id, request
}

// ids swaps the ids of the requests read on stdio for tokens, and the
// tokens of the answers written back for the ids.
type ids struct {
	mu   sync.Mutex
	next int
	sent map[string]json.RawMessage // token -> the client's id
}

func newIDs() *ids { return &ids{sent: map[string]json.RawMessage{}} }

// in gives the request of a line a token for its id; answers and
// notifications are left as they are.
func (x *ids) in(line []byte) []byte {
	return eachMessage(line, func(msg []byte) []byte {
		at, id, request := idOf(msg)
		if !request || id == nil || string(id) == "null" {
			return msg
		}
		x.mu.Lock()
		x.next++
		token := `"doclib-` + strconv.Itoa(x.next) + `"`
		x.sent[token] = id
		x.mu.Unlock()
		return splice(msg, at, []byte(token))
	})
}

// out puts the client's id back into the answer of a line that carries a
// token.
func (x *ids) out(line []byte) []byte {
	return eachMessage(line, func(msg []byte) []byte {
		at, id, request := idOf(msg)
		if request || id == nil {
			return msg
		}
		x.mu.Lock()
		sent, ok := x.sent[string(id)]
		delete(x.sent, string(id))
		x.mu.Unlock()
		if !ok {
			return msg
		}
		return splice(msg, at, sent)
	})
}

// eachMessage applies fn to a line's message and returns the line with
// what fn made of it; the line's trailing newline is kept. (A batch never
// reaches the SDK: stdio refuses it, and /mcp too.)
func eachMessage(line []byte, fn func([]byte) []byte) []byte {
	body := bytes.TrimRight(line, "\n")
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return line
	}
	return append(fn(trimmed), line[len(body):]...)
}
