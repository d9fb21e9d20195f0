package demo

//go:generate go run ../../../cmd/doclib-datagen --out demo.json

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/data/dataset"
)

// JSON is the demo data set, Generate(Options{}) written by Encode. A test checks
// that it matches the generator byte for byte; run `go generate ./shared/data/demo`
// after changing the generator or corpus.json. (The file must exist for the
// package to build, even an outdated one, because the generator itself lives in
// this package.)
//
//go:embed demo.json
var JSON []byte

// Load validates the embedded demo data set and returns it in domain form.
func Load() (*doclib.DataSet, error) {
	d, err := dataset.Load(bytes.NewReader(JSON))
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return d, nil
}

// Key is one of the demo API keys, each set up to show one case of the API.
type Key struct {
	// Name is a short handle, such as "full" or "expired".
	Name string
	// Secret is the bearer token to send.
	Secret      string
	WorkspaceID string
	// Description says what the key shows.
	Description string
}

// Keys lists the demo keys in a fixed order, the "full" key first, so that a
// local server can print ready-to-run curl lines and the README can list them.
var Keys = func() []Key {
	out := make([]Key, len(keySpecs))
	for i, k := range keySpecs {
		out[i] = Key{Name: k.Name, Secret: k.Secret, WorkspaceID: k.WorkspaceID, Description: k.Description}
	}
	return out
}()

// CompactAbove is the number of documents above which Encode writes compact JSON.
const CompactAbove = 5000

// Encode writes a data set as cmd/doclib-datagen does: indented with two spaces
// for up to CompactAbove documents (the demo set, which is read and diffed by
// people), compact beyond that (benchmark sets, where size and speed matter),
// with a trailing newline either way and no HTML escaping. It streams item by
// item, so a large set is never held twice in memory; for the indented form the
// bytes equal those of a json.Encoder with SetIndent("", "  ") and
// SetEscapeHTML(false) on the whole file.
func Encode(w io.Writer, f *dataset.File) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	s := &stream{w: bw, indent: len(f.Documents) <= CompactAbove}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	if s.indent {
		s.enc.SetIndent("    ", "  ")
	}
	s.raw("{")
	encodeArray(s, "workspaces", f.Workspaces)
	encodeArray(s, "devices", f.Devices)
	encodeArray(s, "apiKeys", f.APIKeys)
	encodeArray(s, "libraries", f.Libraries)
	encodeArray(s, "documents", f.Documents)
	encodeArray(s, "edges", f.Edges)
	encodeArray(s, "recordings", f.Recordings)
	if s.indent && s.arrays > 0 {
		s.raw("\n")
	}
	s.raw("}\n")
	if s.err != nil {
		return fmt.Errorf("demo: encode data set: %w", s.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("demo: write data set: %w", err)
	}
	return nil
}

type stream struct {
	w      *bufio.Writer
	enc    *json.Encoder
	buf    bytes.Buffer
	indent bool
	arrays int
	err    error
}

func (s *stream) raw(str string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(str)
	}
}

// encodeArray writes one top-level array, leaving it out when empty as the
// File's omitempty tags do.
func encodeArray[T any](s *stream, name string, items []T) {
	if len(items) == 0 || s.err != nil {
		return
	}
	if s.arrays > 0 {
		s.raw(",")
	}
	s.arrays++
	if s.indent {
		s.raw("\n  \"" + name + "\": [")
	} else {
		s.raw("\"" + name + "\":[")
	}
	for i := range items {
		if i > 0 {
			s.raw(",")
		}
		if s.indent {
			s.raw("\n    ")
		}
		s.buf.Reset()
		if err := s.enc.Encode(&items[i]); err != nil {
			if s.err == nil {
				s.err = fmt.Errorf("%s[%d]: %w", name, i, err)
			}
			return
		}
		b := s.buf.Bytes()
		if s.err == nil {
			_, s.err = s.w.Write(b[:len(b)-1]) // without the Encoder's newline
		}
	}
	if s.indent {
		s.raw("\n  ]")
	} else {
		s.raw("]")
	}
}
