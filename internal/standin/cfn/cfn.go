// Package cfn reads a CloudFormation template as `go run ./infra`
// synthesizes it and resolves its intrinsic functions to the values a local
// stand-in gives the stack's resources, so that the stand-in learns the stack
// from the template alone: which functions exist with which environment,
// which policies their roles hold, which routes the API has.
//
// Only what a CDK template of this project uses is supported (Ref,
// Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::If with
// Conditions absent); anything else is an error naming where it stands, so a
// template the stand-in cannot read fails loudly instead of running a stack
// that differs from the deployed one.
package cfn

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Template is a synthesized template.
type Template struct {
	Resources map[string]Resource
	Outputs   map[string]struct {
		Value any
	}
}

// Resource is one resource of a template.
type Resource struct {
	Type           string
	Properties     map[string]any
	DependsOn      any // a logical ID or a list of them
	Metadata       map[string]any
	DeletionPolicy string
}

// Load reads a template file.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cfn: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return t, nil
}

// Parse reads a template from its JSON.
func Parse(b []byte) (*Template, error) {
	var t Template
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("cfn: %w", err)
	}
	if len(t.Resources) == 0 {
		return nil, fmt.Errorf("cfn: the template has no resources")
	}
	return &t, nil
}

// OfType returns the logical IDs of the resources of type typ, sorted.
func (t *Template) OfType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Values gives the values a stand-in assigns to the template's resources:
// what Ref and Fn::GetAtt of each resource return, and the pseudo
// parameters.
type Values struct {
	Account, Region, Partition, URLSuffix, StackName string
	// Ref is a resource's Ref value (a name or an ID, per type).
	Ref map[string]string
	// Attr is a resource's attribute, keyed "LogicalID.Attribute".
	Attr map[string]string
}

// Resolver resolves intrinsic functions of one template with given values.
type Resolver struct {
	T *Template
	V Values
}

// Resolve returns v with every intrinsic function replaced by its value.
func (r *Resolver) Resolve(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, arg := range x {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") {
					return r.intrinsic(k, arg)
				}
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			rv, err := r.Resolve(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = rv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			rv, err := r.Resolve(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = rv
		}
		return out, nil
	default:
		return v, nil
	}
}

// String resolves v and requires a string.
func (r *Resolver) String(v any) (string, error) {
	rv, err := r.Resolve(v)
	if err != nil {
		return "", err
	}
	switch s := rv.(type) {
	case string:
		return s, nil
	case float64:
		return strconv.FormatFloat(s, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(s), nil
	}
	return "", fmt.Errorf("cfn: want a string, got %T", rv)
}

// JSON resolves v and returns it as JSON (for policy documents).
func (r *Resolver) JSON(v any) ([]byte, error) {
	rv, err := r.Resolve(v)
	if err != nil {
		return nil, err
	}
	if s, ok := rv.(string); ok { // a document given as a JSON string
		return []byte(s), nil
	}
	return json.Marshal(rv)
}

func (r *Resolver) ref(name string) (string, error) {
	switch name {
	case "AWS::AccountId":
		return r.V.Account, nil
	case "AWS::Region":
		return r.V.Region, nil
	case "AWS::Partition":
		return r.V.Partition, nil
	case "AWS::URLSuffix":
		return r.V.URLSuffix, nil
	case "AWS::StackName":
		return r.V.StackName, nil
	case "AWS::NoValue":
		return "", fmt.Errorf("cfn: AWS::NoValue is not supported")
	}
	if v, ok := r.V.Ref[name]; ok {
		return v, nil
	}
	if _, ok := r.T.Resources[name]; ok {
		return "", fmt.Errorf("cfn: no value for Ref %s (%s)", name, r.T.Resources[name].Type)
	}
	return "", fmt.Errorf("cfn: Ref to unknown resource or parameter %s", name)
}

func (r *Resolver) attr(id, name string) (string, error) {
	if v, ok := r.V.Attr[id+"."+name]; ok {
		return v, nil
	}
	if res, ok := r.T.Resources[id]; ok {
		return "", fmt.Errorf("cfn: no value for Fn::GetAtt %s.%s (%s)", id, name, res.Type)
	}
	return "", fmt.Errorf("cfn: Fn::GetAtt of unknown resource %s", id)
}

var subVar = regexp.MustCompile(`\$\{([^}!][^}]*)\}`)

func (r *Resolver) intrinsic(fn string, arg any) (any, error) {
	switch fn {
	case "Ref":
		name, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("cfn: Ref of %T", arg)
		}
		return r.ref(name)
	case "Fn::GetAtt":
		var id, name string
		switch a := arg.(type) {
		case []any:
			if len(a) != 2 {
				return nil, fmt.Errorf("cfn: Fn::GetAtt wants 2 elements, got %d", len(a))
			}
			id, _ = a[0].(string)
			name, _ = a[1].(string)
		case string:
			id, name, _ = strings.Cut(a, ".")
		}
		if id == "" || name == "" {
			return nil, fmt.Errorf("cfn: bad Fn::GetAtt %v", arg)
		}
		return r.attr(id, name)
	case "Fn::Join":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("cfn: bad Fn::Join %v", arg)
		}
		sep, _ := a[0].(string)
		parts, err := r.Resolve(a[1])
		if err != nil {
			return nil, err
		}
		list, ok := parts.([]any)
		if !ok {
			return nil, fmt.Errorf("cfn: Fn::Join of %T", parts)
		}
		ss := make([]string, len(list))
		for i, p := range list {
			s, err := r.String(p)
			if err != nil {
				return nil, fmt.Errorf("cfn: Fn::Join element %d: %w", i, err)
			}
			ss[i] = s
		}
		return strings.Join(ss, sep), nil
	case "Fn::Select":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("cfn: bad Fn::Select %v", arg)
		}
		is, err := r.String(a[0])
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(is)
		if err != nil {
			return nil, fmt.Errorf("cfn: Fn::Select index %q", is)
		}
		list, err := r.Resolve(a[1])
		if err != nil {
			return nil, err
		}
		l, ok := list.([]any)
		if !ok || i < 0 || i >= len(l) {
			return nil, fmt.Errorf("cfn: Fn::Select %d out of %v", i, list)
		}
		return l[i], nil
	case "Fn::Split":
		a, ok := arg.([]any)
		if !ok || len(a) != 2 {
			return nil, fmt.Errorf("cfn: bad Fn::Split %v", arg)
		}
		sep, _ := a[0].(string)
		s, err := r.String(a[1])
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range strings.Split(s, sep) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::Sub":
		var tmpl string
		vars := map[string]any{}
		switch a := arg.(type) {
		case string:
			tmpl = a
		case []any:
			if len(a) != 2 {
				return nil, fmt.Errorf("cfn: bad Fn::Sub %v", arg)
			}
			tmpl, _ = a[0].(string)
			m, _ := a[1].(map[string]any)
			vars = m
		}
		var subErr error
		out := subVar.ReplaceAllStringFunc(tmpl, func(m string) string {
			name := m[2 : len(m)-1]
			var s string
			var err error
			switch v, ok := vars[name]; {
			case ok:
				s, err = r.String(v)
			case strings.Contains(name, ".") && !strings.HasPrefix(name, "AWS::"):
				id, at, _ := strings.Cut(name, ".")
				s, err = r.attr(id, at)
			default:
				s, err = r.ref(name)
			}
			if err != nil && subErr == nil {
				subErr = err
			}
			return s
		})
		if subErr != nil {
			return nil, subErr
		}
		return strings.ReplaceAll(out, "${!", "${"), nil
	}
	return nil, fmt.Errorf("cfn: intrinsic function %s is not supported by the stand-in", fn)
}
