package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
)

// The SDK infers a tool's schemas from its Go types, but struct tags only
// carry descriptions: bounds and enums have to be added to the inferred
// schema. The SDK then validates every call against the edited input schema
// before the handler runs, so a bad argument is refused as a tool error
// without spending an API request (or an AI credit).

// Defaults the API's limits (doclib's limits.go) do not hold.
const (
	defaultPage    = 1
	defaultDirectn = "both"
)

// typeSchemas describe the API types whose JSON is not what their Go type
// suggests: timestamps are strings, and content is a JSON object keyed by the
// template's sections. The structured output is the API's answer as sent,
// so content may also be whatever else a faulty document holds (null is
// made {} by the tool): refusing it there would fail the whole call, where
// the text still reads.
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[api.Time](): {Type: "string", Format: "date-time"},
	reflect.TypeFor[json.RawMessage](): {
		Description: "normally an object keyed by the template's section keys: a string for a text section, an array of strings for a steps or list section; any other shape is passed on as the API sent it",
		AnyOf: []*jsonschema.Schema{{Type: "object"}, {Type: "string"}, {Type: "array"},
			{Type: "number"}, {Type: "boolean"}}},
}

// inputSchema infers T's schema and lets edit add bounds to its properties.
// It panics on a schema the SDK cannot use: that is a programming error that
// every test run catches when New builds the tools.
func inputSchema[T any](edit func(p map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err))
	}
	portable(s)
	if edit != nil {
		edit(s.Properties)
	}
	for name, p := range s.Properties {
		if p == nil {
			panic(fmt.Sprintf("mcpserver: input schema: property %q edited away", name))
		}
	}
	return s
}

// outputSchema infers T's schema with the API's types described as they are
// on the wire.
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema: %v", err))
	}
	portable(s)
	return s
}

// portable rewrites the nullable types inference gives Go slices and
// pointers (type: ["null", "array"]), which clients that map schemas onto a
// single-type dialect reject or mangle (the MCP inspector warns about each).
// A list is never null on the wire (the API sends [] and the tools make sure
// of it), and an optional property is left out rather than sent as null, so
// both become their plain type; a property that really can be null (a
// traversal's label) becomes anyOf null or its type.
func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			typ := p.Types[1]
			switch {
			case typ == "array" || !slices.Contains(s.Required, name):
				p.Type, p.Types = typ, nil
			default:
				p.AnyOf, p.Types = []*jsonschema.Schema{{Type: "null"}, {Type: typ}}, nil
			}
		}
		portable(p)
	}
	portable(s.Items)
}

// bounds sets an integer property's minimum and, when max > 0, its maximum,
// and the default the API applies when it is left out.
func bounds(p *jsonschema.Schema, min, max, def int) {
	p.Minimum = ptr(float64(min))
	if max > 0 {
		p.Maximum = ptr(float64(max))
	}
	p.Default = json.RawMessage(fmt.Sprint(def))
}

// length sets a string property's length bounds.
func length(p *jsonschema.Schema, min, max int) {
	p.MinLength, p.MaxLength = ptr(min), ptr(max)
}

// paging bounds the usual page and pageSize properties.
func paging(p map[string]*jsonschema.Schema, maxSize int) {
	bounds(p["page"], 1, 0, defaultPage)
	bounds(p["pageSize"], 1, maxSize, doclib.DefaultPageSize)
}

func ptr[T any](v T) *T { return &v }
