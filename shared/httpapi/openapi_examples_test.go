package httpapi_test

// The examples of docs/openapi.yaml are real answers of this handler over the
// demo data set. Each example names the request that produces it in
// x-doclib-request; TestOpenAPIExamples sends it and compares. With -update it
// rewrites every example's value from the answers instead:
//
//	go test ./shared/httpapi -run TestOpenAPIExamples -update

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/doclib/doclib/internal/checks/yamlnode"
	"github.com/doclib/doclib/internal/suites/openapicheck"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

var updateExamples = flag.Bool("update", false, "rewrite the examples of docs/openapi.yaml from the handler's answers")

// exampleRequestID is the X-Request-Id of every example's answer, so that a
// body that quotes it stays the same from run to run.
const exampleRequestID = "req_example"

// floatTolerance absorbs the last-digit noise of scores between platforms.
const floatTolerance = 1e-9

// exampleRequest is an example's x-doclib-request: the request that produces it.
type exampleRequest struct {
	// Method defaults to GET.
	Method string `yaml:"method"`
	// Path is the path with its query, as sent.
	Path string `yaml:"path"`
	// Key is sent as a bearer token; no Authorization header when empty.
	Key string `yaml:"key"`
	// Exhaust is "key" or "ip": the request is first sent as many times as that
	// limit allows, so that the example is the answer over the limit.
	Exhaust string `yaml:"exhaust"`
	// Fault is "internal" or "unavailable": the store fails that way when it
	// lists libraries; "embedder": the embedding provider is down.
	Fault string `yaml:"fault"`
}

var exampleRequestFields = []string{"method", "path", "key", "exhaust", "fault"}

// example is one named example of docs/openapi.yaml.
type example struct {
	where    string // the operation and status, or the components.responses entry
	name     string
	status   int
	req      exampleRequest
	valueKey *yaml.Node // the "value" key, nil when the example has none
	value    *yaml.Node
}

func (e example) String() string { return e.where + " example " + e.name }

// request is the request e names.
func (e example) request() *http.Request {
	req := httptest.NewRequest(cmp.Or(e.req.Method, http.MethodGet), e.req.Path, nil)
	if e.req.Key != "" {
		req.Header.Set("Authorization", "Bearer "+e.req.Key)
	}
	return req
}

// openAPIDoc is docs/openapi.yaml, parsed with its positions.
type openAPIDoc struct {
	path string
	text []byte
	root *yaml.Node
}

func loadOpenAPIDoc(t *testing.T) openAPIDoc {
	t.Helper()
	path := filepath.Join("..", "..", filepath.FromSlash(openapicheck.DocumentPath))
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		t.Fatalf("%s: not one YAML document", path)
	}
	return openAPIDoc{path: path, text: text, root: root.Content[0]}
}

// unlistedStatus is the status of the components.responses entries that no
// operation lists (see the document's info.description).
var unlistedStatus = map[string]int{"MethodNotAllowed": http.StatusMethodNotAllowed}

// examples returns every example of the document's responses, and a line for
// each documented response (of an operation, or in components.responses)
// that has none.
func (d openAPIDoc) examples(t *testing.T) (all []example, missing []string) {
	t.Helper()
	components := yamlnode.Path(d.root, "components", "responses")
	refStatus := map[string]int{}
	paths := yamlnode.Get(d.root, "paths")
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method, op := strings.ToUpper(item.Content[j].Value), item.Content[j+1]
			if method == "PARAMETERS" {
				continue
			}
			resps := yamlnode.Get(op, "responses")
			for k := 0; k+1 < len(resps.Content); k += 2 {
				code, resp := resps.Content[k].Value, resps.Content[k+1]
				status, err := strconv.Atoi(code)
				if err != nil {
					t.Fatalf("%s %s: response %q is not a status", method, path, code)
				}
				where := fmt.Sprintf("%s %s %s", method, path, code)
				if ref := yamlnode.Get(resp, "$ref"); ref != nil {
					name := strings.TrimPrefix(ref.Value, "#/components/responses/")
					if yamlnode.Get(components, name) == nil {
						t.Fatalf("%s: $ref %s names no components.responses entry", where, ref.Value)
					}
					refStatus[name] = status
					where += " (components.responses." + name + ")"
					resp = yamlnode.Get(components, name)
				}
				if responseExamples(resp) == nil && hasBody(resp) {
					missing = append(missing, where)
				}
				if yamlnode.Get(resps.Content[k+1], "$ref") == nil {
					all = append(all, d.collect(t, where, status, resp)...)
				}
			}
		}
	}
	for i := 0; i+1 < len(components.Content); i += 2 {
		name, resp := components.Content[i].Value, components.Content[i+1]
		status, ok := refStatus[name]
		if !ok {
			status, ok = unlistedStatus[name]
		}
		if !ok {
			t.Fatalf("components.responses.%s: no operation lists it, so its status is unknown", name)
		}
		where := "components.responses." + name
		if responseExamples(resp) == nil && hasBody(resp) {
			missing = append(missing, where)
		}
		all = append(all, d.collect(t, where, status, resp)...)
	}
	return all, missing
}

// hasBody is false for a response documented without content, 304 Not
// Modified: it has no example to give (TestConditionalGet checks it).
func hasBody(resp *yaml.Node) bool {
	return yamlnode.Get(resp, "content") != nil
}

func responseExamples(resp *yaml.Node) *yaml.Node {
	ex := yamlnode.Path(resp, "content", "application/json", "examples")
	if ex == nil || len(ex.Content) == 0 {
		return nil
	}
	return ex
}

func (d openAPIDoc) collect(t *testing.T, where string, status int, resp *yaml.Node) []example {
	t.Helper()
	ex := responseExamples(resp)
	if ex == nil {
		return nil
	}
	var out []example
	for i := 0; i+1 < len(ex.Content); i += 2 {
		e := example{where: where, name: ex.Content[i].Value, status: status}
		m := ex.Content[i+1]
		if yamlnode.Get(m, "summary") == nil {
			t.Errorf("%s: no summary", e)
		}
		r := yamlnode.Get(m, "x-doclib-request")
		if r == nil {
			t.Errorf("%s: no x-doclib-request naming the request that gives it", e)
			continue
		}
		for j := 0; j+1 < len(r.Content); j += 2 {
			if !slices.Contains(exampleRequestFields, r.Content[j].Value) {
				t.Errorf("%s: x-doclib-request has %q; it takes %s", e, r.Content[j].Value, strings.Join(exampleRequestFields, ", "))
			}
		}
		if err := r.Decode(&e.req); err != nil {
			t.Errorf("%s: x-doclib-request: %v", e, err)
			continue
		}
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == "value" {
				e.valueKey, e.value = m.Content[j], m.Content[j+1]
			}
		}
		out = append(out, e)
	}
	return out
}

// exampleStore fails where an example's fault says.
type exampleStore struct {
	doclib.Store
	err error
}

func (s exampleStore) Libraries(context.Context, string) ([]*doclib.Library, error) {
	return nil, s.err
}

// answer sends e's request to a fresh handler over the demo data set (fresh,
// so that rate limits and credit start whole for every example).
func answer(t *testing.T, d *doclib.DataSet, e example) *httptest.ResponseRecorder {
	t.Helper()
	l := memory.NewLedger(d.Workspaces)
	var store doclib.Store = memory.New(d)
	var o options
	switch e.req.Fault {
	case "":
	case "internal":
		store = exampleStore{store, errors.New("the table is on fire")}
	case "unavailable":
		store = exampleStore{store, doclib.Unavailable(errors.New("the table is throttled"))}
	case "embedder":
		o.embedder = downEmbedder{}
	default:
		t.Fatalf("%s: fault %q is not internal, unavailable or embedder", e, e.req.Fault)
	}
	clock := func() time.Time { return testNow }
	h := httpapi.NewServer(httpapi.Config{
		Service:   service.New(store, clock, searchOptions(t, d, o, l)),
		Limiter:   memory.NewLimiter(),
		Now:       clock,
		RequestID: func(*http.Request) string { return exampleRequestID },
	})
	send := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, e.request())
		return rec
	}
	before := map[string]int{"": 0, "key": doclib.KeyLimit, "ip": doclib.IPLimit}
	n, ok := before[e.req.Exhaust]
	if !ok {
		t.Fatalf("%s: exhaust %q is not key or ip", e, e.req.Exhaust)
	}
	for range n {
		send()
	}
	return send()
}

func TestOpenAPIExamples(t *testing.T) {
	doc := loadOpenAPIDoc(t)
	examples, missing := doc.examples(t)
	for _, m := range missing {
		t.Errorf("%s has no example", m)
	}
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	v := openapicheck.Load(t)
	codes := map[string]bool{}
	var updates []valueUpdate
	for _, e := range examples {
		rec := answer(t, d, e)
		body := rec.Body.Bytes()
		req := e.request()
		if rec.Code != e.status {
			t.Errorf("%s: %s %s answers %d, not %d: %s", e, req.Method, e.req.Path, rec.Code, e.status, body)
			continue
		}
		v.Check(t, req, rec.Code, rec.Header(), body)
		var got any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: the answer is not JSON: %v", e, err)
		}
		if m, ok := got.(map[string]any); ok {
			if errBody, ok := m["error"].(map[string]any); ok {
				codes[fmt.Sprint(errBody["code"])] = true
			}
		}
		if *updateExamples {
			updates = append(updates, valueUpdate{e, body})
			continue
		}
		if e.value == nil {
			t.Errorf("%s: no value (go test ./shared/httpapi -run TestOpenAPIExamples -update writes it)", e)
			continue
		}
		want, err := exampleJSON(e.value)
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		// The example must fit the document as the real answer does.
		v.Check(t, req, rec.Code, rec.Header(), want)
		var wantV any
		_ = json.Unmarshal(want, &wantV)
		if diff := jsonDiff("", wantV, got); diff != "" {
			t.Errorf("%s: the handler's answer differs (go test ./shared/httpapi -run TestOpenAPIExamples -update rewrites it): %s", e, diff)
		}
	}
	var enum []string
	if err := yamlnode.Path(doc.root, "components", "schemas", "ErrorCode", "enum").Decode(&enum); err != nil {
		t.Fatalf("components.schemas.ErrorCode.enum: %v", err)
	}
	for _, c := range enum {
		if !codes[c] {
			t.Errorf("error code %s appears in no example", c)
		}
	}
	if *updateExamples && !t.Failed() {
		text, err := rewriteValues(doc.text, updates)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(text, doc.text) {
			if err := os.WriteFile(doc.path, text, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote the examples of %s", doc.path)
		}
	}
}

// exampleJSON is an example's value as JSON.
func exampleJSON(n *yaml.Node) ([]byte, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return json.Marshal(v)
}

// jsonDiff describes the first difference between two decoded JSON values, ""
// when they are equal. Numbers are equal within floatTolerance.
func jsonDiff(at string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %v", cmp.Or(at, "/"), got)
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			wv, inW := w[k]
			gv, inG := g[k]
			switch {
			case !inW:
				return fmt.Sprintf("%s/%s: not in the example", at, k)
			case !inG:
				return fmt.Sprintf("%s/%s: not in the answer", at, k)
			}
			if d := jsonDiff(at+"/"+k, wv, gv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: want an array, got %v", cmp.Or(at, "/"), got)
		}
		if len(w) != len(g) {
			return fmt.Sprintf("%s: want %d items, got %d", cmp.Or(at, "/"), len(w), len(g))
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s/%d", at, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	case float64:
		if g, ok := got.(float64); ok && math.Abs(w-g) <= floatTolerance {
			return ""
		}
	default:
		if want == got {
			return ""
		}
	}
	return fmt.Sprintf("%s: want %v, got %v", cmp.Or(at, "/"), want, got)
}

// valueUpdate is an example's value to write: the handler's answer.
type valueUpdate struct {
	e    example
	body []byte
}

// rewriteValues replaces each example's value in text, the document as read,
// by the answer, in block style. Only the lines of the values change, so the
// rest of the document (comments, layout) stays as written.
func rewriteValues(text []byte, updates []valueUpdate) ([]byte, error) {
	lines := strings.SplitAfter(string(text), "\n")
	sort.Slice(updates, func(i, j int) bool { return updates[i].e.valueKey.Line > updates[j].e.valueKey.Line })
	for _, u := range updates {
		if u.e.valueKey == nil {
			return nil, fmt.Errorf("%s: no value to rewrite; write value: null and run again", u.e)
		}
		start, indent := u.e.valueKey.Line-1, u.e.valueKey.Column-1
		end := start + 1 // past the last line of the value
		for i := start + 1; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], "\r\n")
			if strings.TrimSpace(l) == "" {
				continue
			}
			if len(l)-len(strings.TrimLeft(l, " ")) <= indent {
				break
			}
			end = i + 1
		}
		block, err := valueBlock(u.body, strings.Repeat(" ", indent))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", u.e, err)
		}
		lines = slices.Replace(lines, start, end, block)
	}
	return []byte(strings.Join(lines, "")), nil
}

// valueBlock renders a JSON body as the lines of "value:" at indent.
func valueBlock(body []byte, indent string) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return "", err
	}
	n := doc.Content[0]
	restyle(n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	out := strings.TrimSuffix(buf.String(), "\n")
	if n.Style == yaml.FlowStyle || n.Kind == yaml.ScalarNode || !strings.Contains(out, "\n") {
		return indent + "value: " + out + "\n", nil
	}
	var b strings.Builder
	b.WriteString(indent + "value:\n")
	for _, l := range strings.Split(out, "\n") {
		b.WriteString(indent + "  " + l + "\n")
	}
	return b.String(), nil
}

// restyle turns JSON's flow style and quotes into the document's block style.
// A string that cannot stand plain is double-quoted, as the document writes
// them (the encoder would pick single quotes), and a short list of scalars
// stays on one line.
func restyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if out, err := yaml.Marshal(n); err == nil && !strings.HasPrefix(string(out), n.Value) {
			n.Style = yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		restyle(c)
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return
	}
	width := 0
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			return
		}
		width += len(c.Value) + 2
	}
	if width <= 72 {
		n.Style = yaml.FlowStyle
	}
}
