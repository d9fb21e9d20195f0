package staleread

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// projection is what a read asks of each item: nil for all of it. It is a
// tree of document paths ("Referring to item attributes when using
// expressions in DynamoDB", Amazon DynamoDB Developer Guide): a map keeps
// the attributes named under it, a list the elements named, in order.
type projection struct {
	all    bool
	fields map[string]*projection
	elems  map[int]*projection
}

// parseProjection reads a ProjectionExpression (names through
// placeholders) or, when expr is empty, AttributesToGet. A request naming
// neither gets nil: every attribute.
func parseProjection(expr string, names map[string]string, attrs []string) (*projection, error) {
	root := &projection{}
	switch {
	case expr != "":
		for _, path := range strings.Split(expr, ",") {
			elems, err := parsePath(strings.TrimSpace(path), names)
			if err != nil {
				return nil, err
			}
			root.add(elems)
		}
	case len(attrs) > 0:
		for _, a := range attrs {
			root.add([]pathElem{{name: a}})
		}
	default:
		return nil, nil
	}
	return root, nil
}

// pathElem is a step of a document path: an attribute name, or a list
// index when name is empty.
type pathElem struct {
	name  string
	index int
}

// parsePath reads one document path: a name, then .name or [n] steps.
func parsePath(path string, names map[string]string) ([]pathElem, error) {
	var out []pathElem
	rest := path
	for first := true; rest != "" || first; first = false {
		if !first {
			switch rest[0] {
			case '.':
				rest = rest[1:]
			case '[':
				end := strings.IndexByte(rest, ']')
				if end < 0 {
					return nil, fmt.Errorf("projection path %q: no ] after [", path)
				}
				n, err := strconv.Atoi(strings.TrimSpace(rest[1:end]))
				if err != nil || n < 0 {
					return nil, fmt.Errorf("projection path %q: index %q", path, rest[1:end])
				}
				out = append(out, pathElem{index: n})
				rest = strings.TrimSpace(rest[end+1:])
				continue
			default:
				return nil, fmt.Errorf("projection path %q: %q is not . or [", path, rest[0])
			}
		}
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		name := strings.TrimSpace(rest[:end])
		rest = strings.TrimSpace(rest[end:])
		if strings.HasPrefix(name, "#") {
			v, ok := names[name]
			if !ok {
				return nil, fmt.Errorf("projection path %q: no value for %s", path, name)
			}
			name = v
		}
		if name == "" {
			return nil, fmt.Errorf("projection path %q: an empty name", path)
		}
		out = append(out, pathElem{name: name})
	}
	return out, nil
}

func (p *projection) add(path []pathElem) {
	n := p
	for _, e := range path {
		if n.all {
			return // a path above it takes everything
		}
		var next *projection
		if e.name != "" {
			if n.fields == nil {
				n.fields = map[string]*projection{}
			}
			if next = n.fields[e.name]; next == nil {
				next = &projection{}
				n.fields[e.name] = next
			}
		} else {
			if n.elems == nil {
				n.elems = map[int]*projection{}
			}
			if next = n.elems[e.index]; next == nil {
				next = &projection{}
				n.elems[e.index] = next
			}
		}
		n = next
	}
	n.all, n.fields, n.elems = true, nil, nil
}

// topLevel reports whether the projection takes the attribute name whole.
func (p *projection) topLevel(name string) bool {
	return p == nil || p.fields[name] != nil
}

// apply returns what the projection keeps of an item.
func (p *projection) apply(it item) item {
	if p == nil || it == nil {
		return it
	}
	out := item{}
	for name, sub := range p.fields {
		if v, ok := it[name]; ok {
			if pv, ok := sub.value(v); ok {
				out[name] = pv
			}
		}
	}
	return out
}

// value projects one attribute value; false when nothing of it is kept.
func (p *projection) value(v json.RawMessage) (json.RawMessage, bool) {
	if p.all {
		return v, true
	}
	var av struct {
		M item
		L []json.RawMessage
	}
	if json.Unmarshal(v, &av) != nil {
		return nil, false
	}
	switch {
	case p.fields != nil && av.M != nil:
		m := p.apply(av.M)
		if len(m) == 0 {
			return nil, false
		}
		b, _ := json.Marshal(map[string]item{"M": m})
		return b, true
	case p.elems != nil && av.L != nil:
		var l []json.RawMessage
		idx := make([]int, 0, len(p.elems))
		for i := range p.elems {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			if i < len(av.L) {
				if ev, ok := p.elems[i].value(av.L[i]); ok {
					l = append(l, ev)
				}
			}
		}
		if len(l) == 0 {
			return nil, false
		}
		b, _ := json.Marshal(map[string][]json.RawMessage{"L": l})
		return b, true
	}
	return nil, false
}

// indexProjection is what an index holds of an item: its attributes, or
// its keys, the table's and the index's, and the included attributes.
func indexProjection(s *schema, x *index) *projection {
	if x.projection == "ALL" || x.projection == "" {
		return nil
	}
	p := &projection{}
	for _, names := range [][]string{s.keys, x.keys, x.include} {
		for _, n := range names {
			p.add([]pathElem{{name: n}})
		}
	}
	return p
}
