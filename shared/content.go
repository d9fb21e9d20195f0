package doclib

import (
	"bytes"
	"encoding/json"
)

// ContentStrings returns every string of a document's content in template order:
// a text section whole, a steps or list section item by item. Content is the
// validated form the loader builds: an object of strings and arrays of strings.
func ContentStrings(content json.RawMessage) []string {
	var out []string
	dec := json.NewDecoder(bytes.NewReader(content))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil { // section key
			return out
		}
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch v := tok.(type) {
		case string:
			out = append(out, v)
		case json.Delim: // '[': an array of strings
			for dec.More() {
				item, err := dec.Token()
				if err != nil {
					return out
				}
				if s, ok := item.(string); ok {
					out = append(out, s)
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return out
			}
		}
	}
	return out
}
