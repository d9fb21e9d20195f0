package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/shared/clients/render"
)

// The SDK checks a call's arguments against the tool's input schema, but
// its messages are the validator's ("validating /properties/pageSize:
// maximum: 500 is greater than 100.000000", "<invalid reflect.Value>").
// An agent acts better on a sentence that names the argument and what it
// takes, so the arguments are checked here first, against the same schema,
// with messages of our own.

// addTool registers a tool and keeps its input schema for checkArguments.
func addTool[In, Out any](t *tools, s *mcp.Server, tool *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	if sch, ok := tool.InputSchema.(*jsonschema.Schema); ok {
		t.inputs[tool.Name] = sch
	}
	mcp.AddTool(s, tool, h)
}

// argumentProblems lists what is wrong with a call's arguments under the
// tool's input schema, one sentence each, or nothing.
func argumentProblems(s *jsonschema.Schema, raw json.RawMessage) []string {
	args := map[string]any{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return []string{"the arguments must be one JSON object of named arguments, such as " + example(s)}
		}
	}
	var out []string
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range args {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		p, ok := s.Properties[name]
		if !ok {
			out = append(out, fmt.Sprintf("%s is not an argument of this tool; it takes %s", quoted(name), takes(s)))
			continue
		}
		if msg := valueProblem(name, p, args[name]); msg != "" {
			out = append(out, msg)
		}
	}
	for _, name := range s.Required {
		if _, ok := args[name]; !ok {
			out = append(out, fmt.Sprintf("%s is required: %s", name, describe(s.Properties[name])))
		}
	}
	return out
}

// valueProblem says what is wrong with one argument's value, or "".
func valueProblem(name string, p *jsonschema.Schema, v any) string {
	if ok := fits(p, v); ok {
		return ""
	}
	return fmt.Sprintf("%s must be %s, not %s", name, describe(p), shown(v))
}

// fits says whether v satisfies p, for the schema features the tools use:
// a type, integer bounds, string lengths, an enum, arrays of such items.
func fits(p *jsonschema.Schema, v any) bool {
	if v == nil {
		return false // no property of ours takes null: leave it out instead
	}
	if len(p.Enum) > 0 && !slices.ContainsFunc(p.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		return false
	}
	switch p.Type {
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := n.Int64()
		return err == nil && (p.Minimum == nil || float64(i) >= *p.Minimum) && (p.Maximum == nil || float64(i) <= *p.Maximum)
	case "string":
		str, ok := v.(string)
		n := len([]rune(str))
		return ok && (p.MinLength == nil || n >= *p.MinLength) && (p.MaxLength == nil || n <= *p.MaxLength)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		items, ok := v.([]any)
		if !ok {
			return false
		}
		for i, it := range items {
			if p.Items != nil && !fits(p.Items, it) {
				return false
			}
			if p.UniqueItems && slices.ContainsFunc(items[:i], func(o any) bool { return fmt.Sprint(o) == fmt.Sprint(it) }) {
				return false
			}
		}
		return true
	}
	return true
}

// describe says what a property takes, in words: "a whole number from 1 to
// 100", "one of outgoing, incoming, both".
func describe(p *jsonschema.Schema) string {
	if p == nil {
		return "see the tool's input schema"
	}
	if len(p.Enum) > 0 {
		return "one of " + enumList(p.Enum)
	}
	switch p.Type {
	case "integer":
		switch {
		case p.Minimum != nil && p.Maximum != nil:
			return fmt.Sprintf("a whole number from %d to %d", int(*p.Minimum), int(*p.Maximum))
		case p.Minimum != nil:
			return fmt.Sprintf("a whole number, %d or more", int(*p.Minimum))
		}
		return "a whole number"
	case "string":
		switch {
		case p.MinLength != nil && p.MaxLength != nil:
			return fmt.Sprintf("a string of %d to %d characters", *p.MinLength, *p.MaxLength)
		case p.MinLength != nil && *p.MinLength > 0:
			return "a non-empty string"
		}
		return "a string"
	case "boolean":
		return "true or false"
	case "array":
		s := "a list"
		if p.Items != nil && len(p.Items.Enum) > 0 {
			s += " of " + enumList(p.Items.Enum)
		} else if p.Items != nil {
			s += " of " + strings.TrimPrefix(describe(p.Items), "a ") + "s"
		}
		if p.UniqueItems {
			s += ", each at most once"
		}
		return s
	}
	return "as the tool's input schema says"
}

func enumList(e []any) string {
	s := make([]string, len(e))
	for i, v := range e {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ", ")
}

// shown is a value as the message quotes it: JSON, cut short, cleaned.
func shown(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "that value"
	}
	s := string(b)
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return render.Clean(s)
}

func quoted(name string) string {
	b, _ := json.Marshal(render.Clean(name))
	return string(b)
}

// takes lists a tool's arguments, the required ones first.
func takes(s *jsonschema.Schema) string {
	if len(s.Properties) == 0 {
		return "no arguments"
	}
	var names []string
	for name := range s.Properties {
		if !slices.Contains(s.Required, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = append(slices.Clone(s.Required), names...)
	return strings.Join(names, ", ")
}

// example is an arguments object with the required arguments, as a hint.
func example(s *jsonschema.Schema) string {
	if len(s.Required) == 0 {
		return "{}"
	}
	return fmt.Sprintf(`{"%s": …}`, s.Required[0])
}
