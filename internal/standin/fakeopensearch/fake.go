// Package fakeopensearch is an OpenSearch cluster in a test process, for the
// programs' end-to-end tests (the server and doclib-admin) where no cluster can
// run. It speaks the documented REST wire format of the calls doclib makes:
// index creation with a mapping, aliases (get, atomic actions), _mapping,
// _bulk (index and delete), _refresh, index deletion and _search.
//
// It validates every request before serving it against OpenSearch's own API
// description for 2.19 (the official OpenAPI specification, pruned to these
// endpoints by ./gen and embedded; openapi/README.md): the path and method,
// the path and query parameters (an undeclared query parameter too), the JSON
// body against its schema, each line of a _bulk body, and the k-NN engine and
// space type of knn_vector fields, which the schema leaves free. A request a
// real cluster would refuse is answered as OpenSearch answers it (400, with
// the error's type and reason) and recorded (Refused); Start fails the test at
// its end if any was, unless the test said it expects refusals.
//
// Its _search is no relevance engine. It applies the filters (term, terms,
// range), the post_filter, the sort, from and size, and terms and value_count
// aggregations exactly; of the scored clauses it evaluates only the one named
// "lexical" (every analysed term present in one of the *_terms fields, scored by
// the number of term occurrences) and it ignores fuzzy and k-NN clauses. The
// ranking rules themselves are tested against a real cluster by the
// shared/backend/opensearch suite when DOCLIB_TEST_OPENSEARCH_URL is set. A valid
// clause or endpoint the fake does not implement is a 400 too (type
// fake_unsupported, not recorded as a refusal), so a change in what doclib
// sends fails loudly.
package fakeopensearch

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Cluster is a fake cluster; Start one per test.
type Cluster struct {
	URL string // set by Start

	mu             sync.Mutex
	indexes        map[string]*index // by name
	aliases        map[string]string // alias → index
	requests       []string          // "METHOD /path"
	refused        []string          // "METHOD /path: reason"
	expectRefusals bool
}

type index struct {
	mapping json.RawMessage
	docs    map[string]map[string]any
}

// New makes a cluster to serve as an http.Handler wherever the caller likes,
// with no server and no test: the caller checks Refused itself.
func New() *Cluster {
	return &Cluster{indexes: map[string]*index{}, aliases: map[string]string{}}
}

// Start serves a fake cluster until the test ends. At the end, the test fails
// if the cluster refused any request (see Refused), unless ExpectRefusals was
// called.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c := New()
	srv := httptest.NewServer(c)
	t.Cleanup(func() {
		srv.Close()
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.expectRefusals && len(c.refused) > 0 {
			t.Errorf("fakeopensearch: OpenSearch would refuse %d request(s) sent to the fake:\n\t%s",
				len(c.refused), strings.Join(c.refused, "\n\t"))
		}
	})
	c.URL = srv.URL
	return c
}

// ExpectRefusals says the test sends requests a real cluster refuses on
// purpose: Start's check at the end of the test is off.
func (c *Cluster) ExpectRefusals() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expectRefusals = true
}

// Refused returns the requests refused because a real cluster would refuse
// them, one "METHOD /path: reason" each, in order.
func (c *Cluster) Refused() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.refused)
}

// Requests returns "METHOD /path" of every request so far.
func (c *Cluster) Requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

// Indexed returns the IDs of the documents behind alias, sorted.
func (c *Cluster) Indexed(alias string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	idx := c.indexes[c.aliases[alias]]
	if idx == nil {
		return nil
	}
	ids := make([]string, 0, len(idx.docs))
	for id := range idx.docs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// CreateIndex makes an index behind alias with the given _meta, as an earlier
// program would have.
func (c *Cluster) CreateIndex(name, alias string, meta map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, _ := json.Marshal(map[string]any{"mappings": map[string]any{"_meta": meta}})
	c.indexes[name] = &index{mapping: m, docs: map[string]map[string]any{}}
	c.aliases[alias] = name
}

// ServeHTTP validates the request against OpenSearch's API description and
// serves it if a real cluster would accept it.
func (c *Cluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var rejected *refusal
	if spec, err := loadSpec(); err != nil {
		rejected = &refusal{status: http.StatusInternalServerError, typ: "fake_broken", reason: err.Error()}
	} else {
		rejected = spec.validate(r, body)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests = append(c.requests, r.Method+" "+r.URL.Path)
	var status int
	var out any
	if rejected != nil {
		c.refused = append(c.refused, r.Method+" "+r.URL.Path+": "+rejected.reason)
		status, out = errorBody(rejected.status, rejected.typ, rejected.reason)
	} else {
		status, out = c.handle(r.Method, strings.Split(strings.Trim(r.URL.Path, "/"), "/"), body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = json.NewEncoder(w).Encode(out)
	}
}

func errorBody(status int, typ, reason string) (int, any) {
	return status, map[string]any{"error": map[string]any{"type": typ, "reason": reason}, "status": status}
}

// resolve names an index directly or through an alias.
func (c *Cluster) resolve(name string) (string, *index) {
	if n, ok := c.aliases[name]; ok {
		name = n
	}
	return name, c.indexes[name]
}

func (c *Cluster) handle(method string, p []string, body []byte) (int, any) {
	switch {
	case len(p) == 2 && p[0] == "_alias" && (method == http.MethodGet || method == http.MethodHead):
		name, ok := c.aliases[p[1]]
		if !ok {
			return errorBody(404, "aliases_not_found_exception", "alias ["+p[1]+"] missing")
		}
		return 200, map[string]any{name: map[string]any{"aliases": map[string]any{p[1]: map[string]any{}}}}
	case len(p) == 1 && p[0] == "_aliases" && method == http.MethodPost:
		return c.aliasActions(body)
	case len(p) == 1 && p[0] == "_bulk" && method == http.MethodPost:
		return c.bulk(body)
	case len(p) == 1 && method == http.MethodPut:
		if _, ok := c.indexes[p[0]]; ok {
			return errorBody(400, "resource_already_exists_exception", "index ["+p[0]+"] already exists")
		}
		if !json.Valid(body) {
			return errorBody(400, "parse_exception", "not JSON")
		}
		c.indexes[p[0]] = &index{mapping: body, docs: map[string]map[string]any{}}
		return 200, map[string]any{"acknowledged": true, "index": p[0]}
	case len(p) == 1 && method == http.MethodDelete:
		if _, ok := c.indexes[p[0]]; !ok {
			return errorBody(404, "index_not_found_exception", "no such index ["+p[0]+"]")
		}
		delete(c.indexes, p[0])
		for a, n := range c.aliases {
			if n == p[0] {
				delete(c.aliases, a)
			}
		}
		return 200, map[string]any{"acknowledged": true}
	}
	if len(p) != 2 || strings.HasPrefix(p[0], "_") {
		return errorBody(400, "fake_unsupported", "the fake does not serve "+method+" /"+strings.Join(p, "/"))
	}
	name, idx := c.resolve(p[0])
	if idx == nil {
		return errorBody(404, "index_not_found_exception", "no such index ["+p[0]+"]")
	}
	switch {
	case p[1] == "_mapping" && method == http.MethodGet:
		var m map[string]any
		_ = json.Unmarshal(idx.mapping, &m)
		return 200, map[string]any{name: map[string]any{"mappings": m["mappings"]}}
	case p[1] == "_mapping" && method == http.MethodPut:
		return putMeta(idx, body)
	case p[1] == "_refresh" && method == http.MethodPost:
		return 200, map[string]any{"_shards": map[string]any{"total": 1, "successful": 1, "failed": 0}}
	case p[1] == "_search" && (method == http.MethodPost || method == http.MethodGet):
		return search(idx, body)
	}
	return errorBody(400, "fake_unsupported", "the fake does not serve "+method+" /"+strings.Join(p, "/"))
}

// putMeta is PUT /<index>/_mapping with a new _meta, which replaces the
// index's whole _meta, as OpenSearch's put-mapping does. The fake takes no
// other change of a mapping (new fields, changed types): doclib sends none.
func putMeta(idx *index, body []byte) (int, any) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return errorBody(400, "parse_exception", err.Error())
	}
	meta, ok := req["_meta"]
	if !ok || len(req) != 1 {
		return errorBody(400, "fake_unsupported", "the fake's put-mapping takes a _meta and nothing else")
	}
	var m map[string]any
	if err := json.Unmarshal(meta, &m); err != nil || m == nil {
		return errorBody(400, "mapper_parsing_exception", "_meta must be an object")
	}
	var whole map[string]map[string]any
	_ = json.Unmarshal(idx.mapping, &whole)
	if whole == nil {
		whole = map[string]map[string]any{}
	}
	if whole["mappings"] == nil {
		whole["mappings"] = map[string]any{}
	}
	whole["mappings"]["_meta"] = m
	idx.mapping, _ = json.Marshal(whole)
	return 200, map[string]any{"acknowledged": true}
}

func (c *Cluster) aliasActions(body []byte) (int, any) {
	var req struct {
		Actions []map[string]struct {
			Index string `json:"index"`
			Alias string `json:"alias"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errorBody(400, "parse_exception", err.Error())
	}
	// Atomic: check every action before applying any.
	for _, a := range req.Actions {
		for _, x := range a {
			if c.indexes[x.Index] == nil {
				return errorBody(404, "index_not_found_exception", "no such index ["+x.Index+"]")
			}
		}
	}
	for _, a := range req.Actions {
		for op, x := range a {
			switch op {
			case "add":
				c.aliases[x.Alias] = x.Index
			case "remove":
				if c.aliases[x.Alias] == x.Index {
					delete(c.aliases, x.Alias)
				}
			}
		}
	}
	return 200, map[string]any{"acknowledged": true}
}

func (c *Cluster) bulk(body []byte) (int, any) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 64<<20)
	var items []any
	for sc.Scan() {
		var action map[string]struct {
			Index string `json:"_index"`
			ID    string `json:"_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &action); err != nil || len(action) != 1 {
			return errorBody(400, "illegal_argument_exception", "malformed action line")
		}
		for op, a := range action {
			_, idx := c.resolve(a.Index)
			if idx == nil {
				return errorBody(404, "index_not_found_exception", "no such index ["+a.Index+"]")
			}
			switch op {
			case "index":
				var doc map[string]any
				if !sc.Scan() || json.Unmarshal(sc.Bytes(), &doc) != nil {
					return errorBody(400, "illegal_argument_exception", "malformed source line")
				}
				idx.docs[a.ID] = doc
				items = append(items, map[string]any{op: map[string]any{"_id": a.ID, "status": 201, "result": "created"}})
			case "delete":
				status, result := 200, "deleted"
				if _, ok := idx.docs[a.ID]; !ok {
					status, result = 404, "not_found"
				}
				delete(idx.docs, a.ID)
				items = append(items, map[string]any{op: map[string]any{"_id": a.ID, "status": status, "result": result}})
			default:
				return errorBody(400, "fake_unsupported", "bulk action "+op)
			}
		}
	}
	return 200, map[string]any{"took": 1, "errors": false, "items": items}
}

type hit struct {
	id    string
	score float64
	doc   map[string]any
}

func search(idx *index, body []byte) (int, any) {
	var req struct {
		From       int                        `json:"from"`
		Size       *int                       `json:"size"`
		Source     []string                   `json:"_source"`
		Query      map[string]json.RawMessage `json:"query"`
		PostFilter json.RawMessage            `json:"post_filter"`
		Sort       []map[string]string        `json:"sort"`
		Aggs       map[string]map[string]struct {
			Field string `json:"field"`
		} `json:"aggs"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errorBody(400, "parse_exception", err.Error())
	}
	var b struct {
		Filter             []json.RawMessage `json:"filter"`
		Should             []json.RawMessage `json:"should"`
		MinimumShouldMatch int               `json:"minimum_should_match"`
	}
	if q, ok := req.Query["bool"]; ok {
		if err := json.Unmarshal(q, &b); err != nil {
			return errorBody(400, "parse_exception", err.Error())
		}
	} else if len(req.Query) > 0 {
		return errorBody(400, "fake_unsupported", "a query that is not bool")
	}
	var terms []string
	for _, s := range b.Should {
		if t, ok := lexicalTerms(s); ok {
			terms = t
		}
	}
	var matched []hit
	for id, doc := range idx.docs {
		ok, err := passes(doc, b.Filter)
		if err != nil {
			return errorBody(400, "fake_unsupported", err.Error())
		}
		if !ok {
			continue
		}
		score := 0.0
		if b.MinimumShouldMatch > 0 {
			if score = lexicalScore(doc, terms); score == 0 {
				continue
			}
		}
		matched = append(matched, hit{id, score, doc})
	}
	aggs := map[string]any{}
	for name, a := range req.Aggs {
		switch {
		case a["terms"].Field != "":
			aggs[name] = termsAgg(matched, a["terms"].Field)
		case a["value_count"].Field != "":
			aggs[name] = map[string]any{"value": len(matched)}
		default:
			return errorBody(400, "fake_unsupported", "aggregation "+name)
		}
	}
	hits := matched
	if len(req.PostFilter) > 0 {
		var pf struct {
			Bool struct {
				Filter []json.RawMessage `json:"filter"`
			} `json:"bool"`
		}
		if err := json.Unmarshal(req.PostFilter, &pf); err != nil {
			return errorBody(400, "parse_exception", err.Error())
		}
		hits = nil
		for _, h := range matched {
			if ok, err := passes(h.doc, pf.Bool.Filter); err != nil {
				return errorBody(400, "fake_unsupported", err.Error())
			} else if ok {
				hits = append(hits, h)
			}
		}
	}
	slices.SortFunc(hits, func(x, y hit) int { return compareBySort(x, y, req.Sort) })
	total := len(hits)
	size := 10
	if req.Size != nil {
		size = *req.Size
	}
	page := hits[min(req.From, len(hits)):min(req.From+size, len(hits))]
	out := make([]any, 0, len(page))
	for _, h := range page {
		src := map[string]any{}
		for _, f := range req.Source {
			if v, ok := h.doc[f]; ok {
				src[f] = v
			}
		}
		entry := map[string]any{"_id": h.id, "_score": h.score, "_source": src}
		if b.MinimumShouldMatch > 0 {
			entry["matched_queries"] = map[string]float64{"lexical": h.score}
		}
		out = append(out, entry)
	}
	return 200, map[string]any{"took": 1, "timed_out": false,
		"hits": map[string]any{"total": map[string]any{"value": total, "relation": "eq"}, "hits": out}, "aggregations": aggs}
}

// lexicalTerms finds the terms of the clause named "lexical" inside a
// function_score, as doclib sends it.
func lexicalTerms(raw json.RawMessage) ([]string, bool) {
	var fs struct {
		FunctionScore struct {
			Query struct {
				Bool struct {
					Name string `json:"_name"`
					Must []struct {
						MultiMatch struct {
							Query string `json:"query"`
						} `json:"multi_match"`
					} `json:"must"`
				} `json:"bool"`
			} `json:"query"`
		} `json:"function_score"`
	}
	if json.Unmarshal(raw, &fs) != nil || fs.FunctionScore.Query.Bool.Name != "lexical" || len(fs.FunctionScore.Query.Bool.Must) == 0 {
		return nil, false
	}
	return strings.Fields(fs.FunctionScore.Query.Bool.Must[0].MultiMatch.Query), true
}

func lexicalScore(doc map[string]any, terms []string) float64 {
	var words []string
	for _, f := range []string{"title_terms", "body_terms", "labels_terms"} {
		s, _ := doc[f].(string)
		words = append(words, strings.Fields(s)...)
	}
	n := 0
	for _, t := range terms {
		c := 0
		for _, w := range words {
			if w == t {
				c++
			}
		}
		if c == 0 {
			return 0
		}
		n += c
	}
	return float64(n)
}

// passes applies term, terms and range filters.
func passes(doc map[string]any, filters []json.RawMessage) (bool, error) {
	for _, raw := range filters {
		var f map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &f); err != nil || len(f) != 1 {
			return false, fmt.Errorf("filter %s", raw)
		}
		for kind, fields := range f {
			for field, v := range fields {
				ok, err := passesOne(kind, doc[field], v)
				if err != nil || !ok {
					return false, err
				}
			}
		}
	}
	return true, nil
}

func passesOne(kind string, have any, v json.RawMessage) (bool, error) {
	values := func() []any { // a keyword field holds one value or many
		if l, ok := have.([]any); ok {
			return l
		}
		return []any{have}
	}
	switch kind {
	case "term":
		var want any
		_ = json.Unmarshal(v, &want)
		return slices.Contains(values(), want), nil
	case "terms":
		var want []any
		if err := json.Unmarshal(v, &want); err != nil {
			return false, fmt.Errorf("terms filter %s", v)
		}
		return slices.ContainsFunc(values(), func(x any) bool { return slices.Contains(want, x) }), nil
	case "range":
		var r map[string]any
		_ = json.Unmarshal(v, &r)
		for op, bound := range r {
			c := compareValues(have, bound)
			if op == "gte" && c < 0 || op == "gt" && c <= 0 || op == "lte" && c > 0 || op == "lt" && c >= 0 {
				return false, nil
			}
		}
		return true, nil
	}
	return false, fmt.Errorf("filter kind %q", kind)
}

func compareValues(a, b any) int {
	switch x := a.(type) {
	case float64:
		y, _ := b.(float64)
		return cmp.Compare(x, y)
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y) // dates as RFC 3339 UTC strings
	}
	return 0
}

func compareBySort(x, y hit, sort []map[string]string) int {
	for _, s := range sort {
		for field, order := range s {
			var c int
			if field == "_score" {
				c = cmp.Compare(x.score, y.score)
			} else {
				c = compareValues(x.doc[field], y.doc[field])
			}
			if order == "desc" {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
	}
	return 0
}

func termsAgg(hits []hit, field string) map[string]any {
	counts := map[string]int{}
	for _, h := range hits {
		switch v := h.doc[field].(type) {
		case string:
			counts[v]++
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					counts[s]++
				}
			}
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b)) })
	buckets := make([]any, 0, len(keys))
	for _, k := range keys {
		buckets = append(buckets, map[string]any{"key": k, "doc_count": counts[k]})
	}
	return map[string]any{"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": buckets}
}
