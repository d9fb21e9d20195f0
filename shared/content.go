package doclib

import (
	"bytes"
	"encoding/json"
)

// ContentStrings returns every string of a document's content in template order:
// a text section whole, a steps or list section item by item. Content is the
// validated form the loader builds: an object of strings and arrays of strings.
//
// It reads the loader's compact form directly, without a JSON decoder, because
// the store calls it for every document at load; anything else falls back to
// encoding/json.
func ContentStrings(content json.RawMessage) []string {
	if out, ok := scanContent(content); ok {
		return out
	}
	return decodeContent(content)
}

// scanContent reads {"key":"text","key":["a","b"],...} with optional white space.
// It reports false on anything it does not expect.
func scanContent(b []byte) ([]string, bool) {
	out := make([]string, 0, 16)
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		var ok bool
		if _, i, ok = scanString(b, i); !ok { // section key
			return nil, false
		}
		if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		switch {
		case i < len(b) && b[i] == '"':
			var s string
			if s, i, ok = scanString(b, i); !ok {
				return nil, false
			}
			out = append(out, s)
		case i < len(b) && b[i] == '[':
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			for {
				var s string
				if s, i, ok = scanString(b, i); !ok {
					return nil, false
				}
				out = append(out, s)
				if i = skipSpace(b, i); i < len(b) && b[i] == ',' {
					i = skipSpace(b, i+1)
					continue
				}
				if i < len(b) && b[i] == ']' {
					i++
					break
				}
				return nil, false
			}
		default:
			return nil, false
		}
		if i = skipSpace(b, i); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return out, skipSpace(b, i+1) == len(b)
		}
		return nil, false
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// scanString reads the JSON string starting at b[i] (a quote) and returns it and
// the index after it. Strings without escapes are copied as they are; the rest go
// through encoding/json, which knows every escape.
func scanString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return "", i, false
		case c == '"':
			if !escaped {
				return string(b[i+1 : j]), j + 1, true
			}
			var s string
			if err := json.Unmarshal(b[i:j+1], &s); err != nil {
				return "", i, false
			}
			return s, j + 1, true
		}
	}
	return "", i, false
}

// decodeContent is the general path: any JSON object. It keeps the sections that
// are a string or an array of strings, in order, and skips any other value.
func decodeContent(content json.RawMessage) []string {
	var out []string
	dec := json.NewDecoder(bytes.NewReader(content))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil { // section key
			return out
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			out = append(out, one)
		case json.Unmarshal(raw, &many) == nil:
			out = append(out, many...)
		}
	}
	return out
}
