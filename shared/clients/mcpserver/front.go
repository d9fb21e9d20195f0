package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
)

// The front of /mcp (docs/mcp.md, "What /mcp refuses, and how"): it reads
// a POST before the SDK does, so that what it refuses costs no more than
// its own size, and every refusal has a shape a client can read.
//
//   - HTTP's own rules first, before the body is read: a Content-Type other
//     than application/json is 415, an Accept that refuses JSON is 406, a
//     body over MaxBody is 413 (by Content-Length before a byte is read, or
//     as it is read). These carry the API's error shape, code bad_request,
//     as doclib-server's other refusals of HTTP do.
//   - Then the message, once, whole: JSON that does not parse is JSON-RPC's
//     -32700, and a batch, a non-object, a wrong "jsonrpc", a method that is
//     no string or an id that is no string or number is -32600, each with
//     HTTP 400 and application/json.
//   - The SDK gets a message it will take, and a token for the request's id;
//     the answer gets the id back as the very bytes the client sent. The SDK
//     reads ids into an int64 (9007199254740993 came back as …992, 1e308 as
//     -9223372036854775808, 1.5 as 1), and JSON-RPC wants the reply's id to
//     be the request's.
//   - What the SDK still answers in plain text (a protocol version it does
//     not speak, say) is put into the API's error shape.

// MaxBody is the largest message /mcp reads. A real one is far smaller: the
// largest tool call (search_documents with a 512-character query, every
// character escaped, and every filter) is under 4 KiB, and the initialize of
// the clients tried (the inspector, the Go SDK's, the conformance tool) under
// 1 KiB. The SDK's own bound is 4 MiB, and its decoding costs 40 to 50 times
// a message's size in memory (30 bodies of 4 MiB at once held 3.9 GB); at
// 64 KiB, 30 hostile bodies at once cost tens of MB.
const MaxBody = 64 << 10

// idToken is the id the SDK is given in place of the request's: a string,
// which it keeps as it is. One message per POST, so one token will do.
const idToken = `"doclib-request"`

func front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			httpRefusal(w, http.StatusUnsupportedMediaType,
				"POST /mcp takes one JSON-RPC message with Content-Type: application/json.")
			return
		}
		if !acceptsJSON(r.Header.Values("Accept")) {
			httpRefusal(w, http.StatusNotAcceptable,
				"/mcp answers with application/json: send Accept: application/json, text/event-stream (or no Accept).")
			return
		}
		if r.ContentLength > MaxBody {
			tooLarge(w)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				tooLarge(w)
				return
			}
			httpRefusal(w, http.StatusBadRequest, "The request's body could not be read whole; send it again.")
			return
		}
		m, rerr := readMessage(body)
		if rerr != nil {
			rpcRefusal(w, m.id, rerr)
			return
		}
		if m.id != nil {
			body = splice(body, m.idAt, []byte(idToken))
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		// The SDK wants both; every answer here is JSON whatever it says.
		r.Header.Set("Accept", "application/json, text/event-stream")
		rw := &response{header: http.Header{}}
		next.ServeHTTP(rw, r)
		rw.send(w, m.id)
	})
}

// acceptsJSON reports whether an Accept header lets the answer be JSON:
// none at all, or a range that covers application/json with a weight above
// 0.
func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err != nil || !(f > 0 && f <= 1) {
					continue
				}
			}
			switch mt {
			case "application/json", "application/*", "*/*":
				return true
			}
		}
	}
	return false
}

// message is what the front reads of a JSON-RPC message.
type message struct {
	id   json.RawMessage // the id as sent; nil for a notification
	idAt [2]int          // its bytes in the body
}

// rpcError is a JSON-RPC error the front answers with.
type rpcError struct {
	code    int
	message string
}

func (e *rpcError) Error() string { return e.message }

var (
	errParse = &rpcError{-32700, "Parse error: the body is not JSON."}
	errBatch = &rpcError{-32600, "JSON-RPC batches are not accepted: send each message in a POST of its own (each POST counts once against the key's rate limit)."}
)

// readMessage reads one JSON-RPC message: it parses the whole body once,
// and each member of the top-level object only as far as the front needs.
// A message it refuses comes back with its id when the id was readable.
func readMessage(body []byte) (message, *rpcError) {
	var m message
	b := bytes.TrimLeft(body, " \t\r\n")
	if !json.Valid(b) {
		return m, errParse
	}
	switch b[0] {
	case '[':
		return m, errBatch
	case '{':
	default:
		return m, &rpcError{-32600, "Invalid Request: a JSON-RPC message is a JSON object."}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // the '{'
		return m, errParse
	}
	var version, method json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return m, errParse
		}
		key, _ := k.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return m, errParse
		}
		if seen[key] && (key == "id" || key == "jsonrpc" || key == "method") {
			return message{}, &rpcError{-32600, "Invalid Request: the member " + strconv.Quote(key) + " is given twice."}
		}
		seen[key] = true
		switch key {
		case "id":
			end := int(dec.InputOffset())
			m.idAt = [2]int{end - len(raw), end}
			m.id = raw
		case "jsonrpc":
			version = raw
		case "method":
			method = raw
		}
	}
	if m.id != nil {
		switch c := m.id[0]; {
		case c == 'n': // null: JSON-RPC's id of a message it could not read
			m.id = nil
		case c == '"', c == '-', c >= '0' && c <= '9':
		default:
			m.id = nil
			return m, &rpcError{-32600, "Invalid Request: the id must be a string or a number."}
		}
	}
	var v string
	if json.Unmarshal(version, &v) != nil || v != "2.0" {
		return m, &rpcError{-32600, `Invalid Request: "jsonrpc" must be "2.0".`}
	}
	if method != nil && method[0] != '"' {
		return m, &rpcError{-32600, `Invalid Request: "method" must be a string.`}
	}
	return m, nil
}

// splice returns b with the bytes at span replaced by with.
func splice(b []byte, span [2]int, with []byte) []byte {
	out := make([]byte, 0, len(b)-(span[1]-span[0])+len(with))
	out = append(out, b[:span[0]]...)
	out = append(out, with...)
	return append(out, b[span[1]:]...)
}

// Flush is a no-op: an answer the front keeps is sent whole, once the SDK
// is done (one JSON message; the server answers JSON, not an event stream).
func (w *response) Flush() {}

// send writes the answer to w, with the id the client sent.
func (a *response) send(w http.ResponseWriter, id json.RawMessage) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	body := a.body.Bytes()
	mt, _, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
	switch {
	case a.status >= 400 && mt != "application/json":
		// The SDK's http.Error: its words, as a JSON-RPC error to a
		// request, in the API's shape otherwise.
		msg := strings.TrimSpace(string(body))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if len(msg) > 300 {
			msg = msg[:300]
		}
		switch {
		case a.status >= 500:
			httpRefusal(w, a.status, "Internal error.")
		case id != nil && strings.HasPrefix(msg, "JSON RPC not handled"):
			rpcRefusal(w, id, &rpcError{-32601, "Method not found: " + msg})
		case id != nil:
			rpcRefusal(w, id, &rpcError{-32600, "Invalid Request: " + msg})
		default:
			httpRefusal(w, a.status, msg)
		}
		return
	case id != nil && mt == "application/json":
		if at, ok := tokenAt(body); ok {
			body = splice(body, at, id)
		}
	}
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	if len(body) > 0 {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(body)
}

// tokenAt finds idToken as the id of an answer: the span of its top-level
// "id" member's value, when that value is the token.
func tokenAt(body []byte) ([2]int, bool) {
	at, id, _ := idOf(body)
	return at, string(id) == idToken
}

// httpRefusal answers a request refused as HTTP, before or outside
// JSON-RPC, in the API's error shape: the status kept, the code bad_request
// (internal for a 5xx).
func httpRefusal(w http.ResponseWriter, status int, message string) {
	code := doclib.EBadRequest
	if status >= 500 {
		code = doclib.EInternal
	}
	body, _ := json.Marshal(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: message}})
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func tooLarge(w http.ResponseWriter) {
	httpRefusal(w, http.StatusRequestEntityTooLarge,
		"The message is over "+strconv.Itoa(MaxBody>>10)+" KiB, the most /mcp reads: a tool call is a few KB. Send a shorter one.")
}

// rpcRefusal answers a message the front refuses with a JSON-RPC error,
// HTTP 400: with its id when it had a readable one, null when not.
func rpcRefusal(w http.ResponseWriter, id json.RawMessage, e *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":{"code":`)
	b.WriteString(strconv.Itoa(e.code))
	b.WriteString(`,"message":`)
	msg, _ := json.Marshal(e.message)
	b.Write(msg)
	b.WriteString("}}\n")
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b.Bytes())
}
