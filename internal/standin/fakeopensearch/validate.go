package fakeopensearch

//go:generate go run ./gen

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/cache"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/radix"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// specYAML is OpenSearch's API description for 2.19, pruned by ./gen to the
// endpoints doclib calls; openapi/README.md says where it comes from.
//
//go:embed openapi/opensearch-2.19-doclib.yaml
var specYAML []byte

// apiSpec validates requests against specYAML. One is built per process, on
// first use, and shared by every cluster.
type apiSpec struct {
	model     *v3.Document
	validator validator.Validator
	schemas   schema_validation.SchemaValidator
	routes    *config.ValidationOptions // the path tree, for paths.FindPath

	// _bulk: the schema of an action line and the metadata fields each action
	// accepts; the schema of an update's second line and its fields.
	bulkAction *base.Schema
	bulkMeta   map[string][]string
	bulkUpdate *base.Schema
	updateKeys []string

	built time.Duration // how long building took
}

var (
	specOnce sync.Once
	theSpec  *apiSpec
	specErr  error
)

// loadSpec returns the process's validator, building it on first use.
func loadSpec() (*apiSpec, error) {
	specOnce.Do(func() { theSpec, specErr = buildSpec() })
	return theSpec, specErr
}

// lazyCache is the validator's schema cache. While the validator is being
// built it claims to hold every schema, so that building does not compile
// all of them up front (seconds: the search body alone reaches most of the
// query DSL and the responses are never validated); afterwards a schema is
// compiled the first time a request needs it and kept.
type lazyCache struct {
	building atomic.Bool
	*cache.DefaultCache
}

func (c *lazyCache) Load(key uint64) (*cache.SchemaCacheEntry, bool) {
	if c.building.Load() {
		return nil, true
	}
	return c.DefaultCache.Load(key)
}

func buildSpec() (*apiSpec, error) {
	start := time.Now()
	doc, err := libopenapi.NewDocumentWithConfiguration(oneOfAsAnyOf(specYAML), &datamodel.DocumentConfiguration{
		IgnorePolymorphicCircularReferences: true,
		IgnoreArrayCircularReferences:       true,
	})
	if err != nil {
		return nil, fmt.Errorf("fakeopensearch: the API description: %w", err)
	}
	m, err := doc.BuildV3Model()
	if err != nil && m == nil {
		return nil, fmt.Errorf("fakeopensearch: the API description: %w", err)
	}
	sc := &lazyCache{DefaultCache: cache.NewDefaultCache()}
	sc.building.Store(true)
	v := validator.NewValidatorFromV3Model(&m.Model, config.WithSchemaCache(sc))
	sc.building.Store(false)
	s := &apiSpec{
		model:     &m.Model,
		validator: v,
		schemas:   schema_validation.NewSchemaValidator(config.WithSchemaCache(sc)),
		routes:    config.NewValidationOptions(config.WithPathTree(radix.BuildPathTree(&m.Model))),
		bulkMeta:  map[string][]string{},
	}
	schemas := m.Model.Components.Schemas
	if p := schemas.GetOrZero("_core.bulk___OperationContainer"); p != nil {
		s.bulkAction = p.Schema()
		for name, prop := range s.bulkAction.Properties.FromOldest() {
			s.bulkMeta[name] = propertyNames(prop.Schema())
		}
	}
	if p := schemas.GetOrZero("_core.bulk___UpdateAction"); p != nil {
		s.bulkUpdate = p.Schema()
		s.updateKeys = propertyNames(s.bulkUpdate)
	}
	if len(s.bulkMeta) != 4 || s.bulkUpdate == nil {
		return nil, fmt.Errorf("fakeopensearch: the API description lacks the _core.bulk schemas")
	}
	s.built = time.Since(start)
	return s, nil
}

// oneOfKey is a oneOf keyword of the description (block YAML: every one is a
// key on a line of its own).
var oneOfKey = regexp.MustCompile(`(?m)^(\s*(?:- )?)oneOf:$`)

// oneOfAsAnyOf reads every oneOf of the description as anyOf. The description
// uses oneOf for "one of these forms" where the forms overlap: a sort of
// {"id":"asc"} is both a field with a direction and (one property, none
// forbidden) sort options, so a strict oneOf refuses the commonest sort there
// is. OpenSearch's parsers take a value in any form that parses, which is
// anyOf.
func oneOfAsAnyOf(spec []byte) []byte {
	return oneOfKey.ReplaceAll(spec, []byte("${1}anyOf:"))
}

// propertyNames lists the properties a schema declares, through allOf.
func propertyNames(s *base.Schema) []string {
	if s == nil {
		return nil
	}
	var names []string
	if s.Properties != nil {
		for name := range s.Properties.KeysFromOldest() {
			names = append(names, name)
		}
	}
	for _, p := range s.AllOf {
		names = append(names, propertyNames(p.Schema())...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// jsonTypes are the media types OpenSearch parses as JSON.
var jsonTypes = []string{"application/json", "application/x-ndjson"}

// refusal is a request a real cluster would not accept.
type refusal struct {
	status      int
	typ, reason string
}

func (r *refusal) Error() string { return r.reason }

func refuse(typ, format string, args ...any) *refusal {
	return &refusal{status: http.StatusBadRequest, typ: typ, reason: fmt.Sprintf(format, args...)}
}

// validate checks a request, its body already read, against the API
// description; nil means a real cluster would accept it.
func (s *apiSpec) validate(r *http.Request, body []byte) *refusal {
	req := r.Clone(r.Context())
	req.Body = http.NoBody
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
	}
	path := r.URL.Path
	pathItem, errs, pathValue := paths.FindPath(req, s.model, s.routes)
	if pathItem == nil {
		return refuse("illegal_argument_exception", "no handler found for uri [%s] and method [%s]", r.URL.RequestURI(), r.Method)
	}
	op := pathItem.GetOperations().GetOrZero(strings.ToLower(r.Method))
	if op == nil || len(errs) > 0 {
		var allowed []string
		for m := range pathItem.GetOperations().KeysFromOldest() {
			allowed = append(allowed, strings.ToUpper(m))
		}
		return &refusal{status: http.StatusMethodNotAllowed, typ: "illegal_argument_exception", reason: fmt.Sprintf(
			"Incorrect HTTP method for uri [%s] and method [%s], allowed: [%s]", r.URL.RequestURI(), r.Method, strings.Join(allowed, ", "))}
	}

	// Query parameters the operation does not declare: OpenSearch refuses
	// them, the validator does not look.
	declared := map[string]bool{}
	for _, p := range slices.Concat(pathItem.Parameters, op.Parameters) {
		if p != nil && p.In == "query" {
			declared[p.Name] = true
		}
	}
	var unknown []string
	for name := range r.URL.Query() {
		if !declared[name] {
			unknown = append(unknown, "["+name+"]")
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		plural := ""
		if len(unknown) > 1 {
			plural = "s"
		}
		return refuse("illegal_argument_exception", "request [%s] contains unrecognized parameter%s: %s", path, plural, strings.Join(unknown, ", "))
	}
	// The parameter validator passes values of composite schemas (oneOf
	// "true", "false" or "wait_for", say) unchecked.
	for _, p := range slices.Concat(pathItem.Parameters, op.Parameters) {
		if p == nil || p.In != "query" || p.Schema == nil || !r.URL.Query().Has(p.Name) {
			continue
		}
		if ps := p.Schema.Schema(); ps != nil && len(ps.AnyOf)+len(ps.OneOf) > 0 && !scalarFits(ps, r.URL.Query().Get(p.Name), 0) {
			return refuse("illegal_argument_exception", "request [%s]: invalid value [%s] of parameter [%s]", path, r.URL.Query().Get(p.Name), p.Name)
		}
	}
	pv := s.validator.GetParameterValidator()
	if ok, errs := pv.ValidatePathParamsWithPathItem(req, pathItem, pathValue); !ok {
		return refuse("illegal_argument_exception", "%s", describe(errs))
	}
	if ok, errs := pv.ValidateQueryParamsWithPathItem(req, pathItem, pathValue); !ok {
		return refuse("illegal_argument_exception", "%s", describe(errs))
	}

	if op.RequestBody != nil && len(body) > 0 {
		// OpenSearch reads JSON under either JSON media type.
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if ct == "" {
			return &refusal{status: http.StatusNotAcceptable, typ: "illegal_argument_exception", reason: "Content-Type header is missing"}
		}
		declared := op.RequestBody.Content.GetOrZero(ct) != nil
		for alt := range op.RequestBody.Content.KeysFromOldest() {
			if !declared && slices.Contains(jsonTypes, alt) && slices.Contains(jsonTypes, ct) {
				declared = true
				req.Header.Set("Content-Type", alt)
			}
		}
		if !declared {
			return &refusal{status: http.StatusNotAcceptable, typ: "illegal_argument_exception",
				reason: fmt.Sprintf("Content-Type header [%s] is not supported", r.Header.Get("Content-Type"))}
		}
	}
	switch {
	case op.RequestBody == nil && len(body) > 0:
		return refuse("illegal_argument_exception", "request [%s] does not support having a body", path)
	case op.RequestBody == nil:
		return nil
	case len(body) == 0:
		if op.RequestBody.Required != nil && *op.RequestBody.Required {
			return refuse("parse_exception", "request body is required")
		}
		return nil
	case pathValue == "/_bulk":
		return s.validateBulk(body)
	}
	if ok, errs := s.validator.GetRequestBodyValidator().ValidateRequestBodyWithPathItem(req, pathItem, pathValue); !ok {
		return refuse("x_content_parse_exception", "%s", describe(errs))
	}
	if mt := op.RequestBody.Content.GetOrZero("application/json"); mt != nil && mt.Schema != nil {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return refuse("x_content_parse_exception", "%v", err)
		}
		if where := undeclared(mt.Schema.Schema(), v, "$"); where != "" {
			typ := "parsing_exception"
			if strings.Contains(where, ".properties.") {
				typ = "mapper_parsing_exception"
			}
			return refuse(typ, "%s", where)
		}
	}
	if r.Method == http.MethodPut && pathValue == "/{index}" {
		return checkMappings(body)
	}
	return nil
}

// describe turns the validator's errors into one line.
func describe(errs []*liberrors.ValidationError) string {
	var parts []string
	for _, e := range errs {
		p := e.Message
		if e.Reason != "" && e.Reason != e.Message {
			p += ": " + e.Reason
		}
		// One reason per field: a value that fits none of a oneOf's
		// alternatives fails each of them.
		var details []string
		at := map[string]int{} // field → index in details
		others := map[string]int{}
		for _, se := range e.SchemaValidationErrors {
			if _, seen := at[se.FieldPath]; seen {
				others[se.FieldPath]++
				continue
			}
			at[se.FieldPath] = len(details)
			d := se.Reason
			if se.FieldPath != "" {
				d = se.FieldPath + ": " + d
			}
			details = append(details, d)
		}
		for f, n := range others {
			details[at[f]] += fmt.Sprintf(" (or %d other alternatives)", n)
		}
		if len(details) > 5 {
			details = append(details[:5], "…")
		}
		if len(details) > 0 {
			p += " [" + strings.Join(details, "; ") + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// validateBulk checks an NDJSON _bulk body as OpenSearch parses it: action
// lines of one of index, create, update or delete with the metadata fields
// the description gives that action, each but delete followed by its source
// line (a JSON object; for update, the fields of an update action), and a
// final newline.
func (s *apiSpec) validateBulk(body []byte) *refusal {
	if body[len(body)-1] != '\n' {
		return refuse("illegal_argument_exception", "The bulk request must be terminated by a newline [\\n]")
	}
	lines := strings.Split(string(body[:len(body)-1]), "\n")
	n := 0
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" {
			continue // OpenSearch skips empty lines
		}
		n++
		var action map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &action); err != nil || action == nil {
			return refuse("illegal_argument_exception", "Malformed action/metadata line [%d], expected START_OBJECT: %s", i+1, clip(line))
		}
		if len(action) != 1 {
			return refuse("illegal_argument_exception", "Malformed action/metadata line [%d], expected one action, found %d", i+1, len(action))
		}
		for op, meta := range action {
			allowed, ok := s.bulkMeta[op]
			if !ok {
				return refuse("illegal_argument_exception", "Malformed action/metadata line [%d], expected field [create], [delete], [index] or [update] but found [%s]", i+1, op)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(meta, &fields); err != nil || fields == nil {
				return refuse("illegal_argument_exception", "Malformed action/metadata line [%d], expected START_OBJECT but found %s", i+1, clip(string(meta)))
			}
			for _, k := range sortedKeys(fields) {
				if !slices.Contains(allowed, k) {
					return refuse("illegal_argument_exception", "Action/metadata line [%d] contains an unknown parameter [%s]", i+1, k)
				}
			}
			if ok, errs := s.schemas.ValidateSchemaBytes(s.bulkAction, []byte(line)); !ok {
				return refuse("illegal_argument_exception", "Action/metadata line [%d]: %s", i+1, describe(errs))
			}
			if op == "delete" {
				continue
			}
			i++
			if i >= len(lines) || strings.TrimSpace(lines[i]) == "" {
				return refuse("illegal_argument_exception", "Validation Failed: 1: the %s action on line [%d] has no source line;", op, i)
			}
			var src map[string]json.RawMessage
			if err := json.Unmarshal([]byte(lines[i]), &src); err != nil || src == nil {
				return refuse("mapper_parsing_exception", "failed to parse the source on line [%d]: not a JSON object: %s", i+1, clip(lines[i]))
			}
			if op == "update" {
				for _, k := range sortedKeys(src) {
					if !slices.Contains(s.updateKeys, k) {
						return refuse("illegal_argument_exception", "[UpdateRequest] unknown field [%s] on line [%d]", k, i+1)
					}
				}
				if ok, errs := s.schemas.ValidateSchemaBytes(s.bulkUpdate, []byte(lines[i])); !ok {
					return refuse("illegal_argument_exception", "update on line [%d]: %s", i+1, describe(errs))
				}
			}
		}
	}
	if n == 0 {
		return refuse("action_request_validation_exception", "Validation Failed: 1: no requests added;")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// knnSpaces are the space types each k-NN engine supports in OpenSearch 2.19
// (the description leaves method.engine and space_type free strings). faiss
// gained cosinesimil in 2.19; hamming needs data_type binary.
var knnSpaces = map[string][]string{
	"faiss":  {"l2", "innerproduct", "cosinesimil", "hamming"},
	"lucene": {"l2", "innerproduct", "cosinesimil"},
	"nmslib": {"l2", "innerproduct", "cosinesimil", "l1", "linf"},
}

// knnMethods are the method names each engine supports.
var knnMethods = map[string][]string{
	"faiss":  {"hnsw", "ivf"},
	"lucene": {"hnsw"},
	"nmslib": {"hnsw"},
}

// checkMappings checks what the description's schema leaves loose in an index
// creation body and doclib relies on: the k-NN engine, method and space type
// of every knn_vector field.
func checkMappings(body []byte) *refusal {
	var req struct {
		Mappings struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"mappings"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return refuse("mapper_parsing_exception", "%v", err)
	}
	return checkProperties("", req.Mappings.Properties)
}

func checkProperties(prefix string, props map[string]json.RawMessage) *refusal {
	for _, name := range sortedKeys(props) {
		var f struct {
			Type       string                     `json:"type"`
			SpaceType  string                     `json:"space_type"`
			DataType   string                     `json:"data_type"`
			ModelID    string                     `json:"model_id"`
			Properties map[string]json.RawMessage `json:"properties"`
			Fields     map[string]json.RawMessage `json:"fields"`
			Method     *struct {
				Name      string `json:"name"`
				Engine    string `json:"engine"`
				SpaceType string `json:"space_type"`
			} `json:"method"`
		}
		if err := json.Unmarshal(props[name], &f); err != nil {
			return refuse("mapper_parsing_exception", "field [%s%s]: %v", prefix, name, err)
		}
		field := prefix + name
		if r := checkProperties(field+".", f.Properties); r != nil {
			return r
		}
		if r := checkProperties(field+".", f.Fields); r != nil {
			return r
		}
		if f.Type != "knn_vector" || f.ModelID != "" {
			continue
		}
		engine, method, space := "faiss", "hnsw", f.SpaceType // 2.19's defaults
		if f.Method != nil {
			method = f.Method.Name
			if f.Method.Engine != "" {
				engine = f.Method.Engine
			}
			if f.Method.SpaceType != "" {
				if space != "" && space != f.Method.SpaceType {
					return refuse("mapper_parsing_exception", "field [%s]: the space type in [method] [%s] and the top-level space_type [%s] differ",
						field, f.Method.SpaceType, space)
				}
				space = f.Method.SpaceType
			}
		}
		if space == "" {
			space = "l2"
		}
		spaces, ok := knnSpaces[engine]
		if !ok {
			return refuse("mapper_parsing_exception", "field [%s]: invalid engine [%s]", field, engine)
		}
		if !slices.Contains(knnMethods[engine], method) {
			return refuse("mapper_parsing_exception", "field [%s]: engine [%s] has no method [%s]", field, engine, method)
		}
		if !slices.Contains(spaces, space) {
			return refuse("mapper_parsing_exception", "field [%s]: engine [%s] does not support space type [%s]", field, engine, space)
		}
		if (space == "hamming") != (f.DataType == "binary") {
			return refuse("mapper_parsing_exception", "field [%s]: space type [hamming] goes with data_type [binary] only", field)
		}
	}
	return nil
}

// objectShape is one way a schema can describe an object: the properties it
// declares (through allOf), whether it admits others (then the schema for
// their values, when it gives one).
type objectShape struct {
	props map[string]*base.Schema
	open  bool
	extra *base.Schema
}

// shapes expands a schema into the object shapes it allows: allOf merged,
// oneOf and anyOf as alternatives.
func shapes(s *base.Schema, depth int) []objectShape {
	if s == nil || depth > 8 {
		return []objectShape{{open: true}}
	}
	if len(s.Type) > 0 && !slices.Contains(s.Type, "object") {
		return nil // not an object
	}
	own := objectShape{props: map[string]*base.Schema{}}
	if s.Properties != nil {
		for name, p := range s.Properties.FromOldest() {
			own.props[name] = p.Schema()
		}
	}
	if s.AdditionalProperties != nil && (s.AdditionalProperties.IsA() || s.AdditionalProperties.B) {
		own.open = true
		if s.AdditionalProperties.IsA() {
			own.extra = s.AdditionalProperties.A.Schema()
		}
	}
	if s.PatternProperties != nil && s.PatternProperties.Len() > 0 {
		own.open = true
	}
	out := []objectShape{own}
	cross := func(alts []objectShape) {
		var next []objectShape
		for _, a := range out {
			for _, b := range alts {
				m := objectShape{props: map[string]*base.Schema{}, open: a.open || b.open, extra: cmpOr(a.extra, b.extra)}
				for k, v := range a.props {
					m.props[k] = v
				}
				for k, v := range b.props {
					if _, dup := m.props[k]; !dup {
						m.props[k] = v
					}
				}
				next = append(next, m)
			}
		}
		out = next
		if len(out) > 256 {
			out = []objectShape{{open: true}}
		}
	}
	for _, p := range s.AllOf {
		cross(shapes(p.Schema(), depth+1))
	}
	var alts []objectShape
	for _, p := range slices.Concat(s.OneOf, s.AnyOf) {
		alts = append(alts, shapes(p.Schema(), depth+1)...)
	}
	if len(s.OneOf)+len(s.AnyOf) > 0 {
		cross(alts)
	}
	if len(s.AllOf)+len(s.OneOf)+len(s.AnyOf) == 0 && len(own.props) == 0 {
		out[0].open = true // a free-form object
	}
	return out
}

func cmpOr(a, b *base.Schema) *base.Schema {
	if a != nil {
		return a
	}
	return b
}

// undeclared finds the object keys of v its schema does not declare, which
// OpenSearch's parsers refuse but the schema validator (outside its strict
// mode, which misjudges additionalProperties) lets through. Where the schema
// allows several shapes it keeps those whose enumerated properties (the
// discriminator "type" of a mapping field, say) the value fits, and descends
// only where one shape remains.
func undeclared(s *base.Schema, v any, path string) string {
	if s == nil {
		return ""
	}
	switch v := v.(type) {
	case []any:
		if s.Items != nil && s.Items.IsA() {
			for i, x := range v {
				if r := undeclared(s.Items.A.Schema(), x, fmt.Sprintf("%s[%d]", path, i)); r != "" {
					return r
				}
			}
		}
		// An array may also stand for one item (oneOf [T, array of T]).
		for _, p := range slices.Concat(s.OneOf, s.AnyOf) {
			if ps := p.Schema(); ps != nil && slices.Contains(ps.Type, "array") && ps.Items != nil && ps.Items.IsA() {
				for i, x := range v {
					if r := undeclared(ps.Items.A.Schema(), x, fmt.Sprintf("%s[%d]", path, i)); r != "" {
						return r
					}
				}
			}
		}
	case map[string]any:
		var fit []objectShape
		for _, sh := range shapes(s, 0) {
			if fits(sh, v) {
				fit = append(fit, sh)
			}
		}
		if len(fit) == 0 {
			return "" // the schema validator judges this one
		}
		for _, k := range sortedKeys(v) {
			var child *base.Schema
			n, open := 0, false
			for _, sh := range fit {
				if p, ok := sh.props[k]; ok {
					child, n = p, n+1
				} else if sh.open {
					open = true
					if sh.extra != nil {
						child, n = sh.extra, n+1
					}
				}
			}
			if n == 0 && !open {
				return fmt.Sprintf("%s: unknown field [%s]", path, k)
			}
			if n == 1 {
				if r := undeclared(child, v[k], path+"."+k); r != "" {
					return r
				}
			}
		}
	}
	return ""
}

// fits says whether the properties of v that sh enumerates hold allowed
// values.
func fits(sh objectShape, v map[string]any) bool {
	for k, x := range v {
		p := sh.props[k]
		if p == nil || len(p.Enum) == 0 {
			continue
		}
		s, ok := x.(string)
		if !ok {
			continue
		}
		found := false
		for _, e := range p.Enum {
			if e.Value == s {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// scalarFits says whether a query parameter's text is a value of schema s.
func scalarFits(s *base.Schema, v string, depth int) bool {
	if s == nil || depth > 8 {
		return true
	}
	for _, p := range s.AllOf {
		if !scalarFits(p.Schema(), v, depth+1) {
			return false
		}
	}
	if alts := slices.Concat(s.AnyOf, s.OneOf); len(alts) > 0 {
		if !slices.ContainsFunc(alts, func(p *base.SchemaProxy) bool { return scalarFits(p.Schema(), v, depth+1) }) {
			return false
		}
	}
	if s.Const != nil && s.Const.Value != v {
		return false
	}
	if len(s.Enum) > 0 {
		found := false
		for _, e := range s.Enum {
			found = found || e.Value == v
		}
		if !found {
			return false
		}
	}
	if len(s.Type) == 0 {
		return true
	}
	return slices.ContainsFunc(s.Type, func(t string) bool {
		switch t {
		case "boolean":
			return v == "true" || v == "false"
		case "integer":
			_, err := strconv.ParseInt(v, 10, 64)
			return err == nil
		case "number":
			_, err := strconv.ParseFloat(v, 64)
			return err == nil
		case "string", "array":
			return true
		}
		return false
	})
}
