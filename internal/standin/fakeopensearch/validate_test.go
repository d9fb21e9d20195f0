package fakeopensearch

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/doclib/doclib/shared/backend/opensearch"
)

// send makes a request with a Content-Type, as doclib's client does.
func send(t *testing.T, c *Cluster, method, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, c.URL+path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// golden reads a request body shared/backend/opensearch checks its code against.
func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "backend", "opensearch", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	ndjson  = "application/x-ndjson"
	appJSON = "application/json"
)

// TestAcceptsWhatDoclibSends: every request shared/backend/opensearch makes, with the
// bodies its own code builds (Mapping) or its golden files hold (the search
// bodies), passes the validation, and the fake serves it.
func TestAcceptsWhatDoclibSends(t *testing.T) {
	c := Start(t)
	vector := make([]float32, 4)
	doc := map[string]any{"id": "d1", "workspaceId": "w", "libraryId": "l1", "category": "c", "tags": []string{},
		"applications": []string{"a"}, "recordingCount": 1, "lastSeen": "2026-11-25T12:00:00Z", "title_terms": "reset password",
		"body_terms": "", "labels_terms": "", "embedding": vector, "recordings": []any{map[string]any{"id": "r1", "embedding": vector}}}
	bulk := mustJSON(t, map[string]any{"index": map[string]any{"_index": "doclib-documents-1", "_id": "d1"}}) + "\n" +
		mustJSON(t, doc) + "\n"
	steps := []struct {
		name, method, path, contentType, body string
	}{
		{"alias missing", "GET", "/_alias/doclib-documents", "", ""},
		{"create the index", "PUT", "/doclib-documents-1", appJSON, mustJSON(t, opensearch.Mapping(1024, "bedrock/amazon.titan-embed-text-v2:0/1024"))},
		{"add the alias", "POST", "/_aliases", appJSON, `{"actions":[{"add":{"alias":"doclib-documents","index":"doclib-documents-1","is_write_index":true}}]}`},
		{"get the alias", "GET", "/_alias/doclib-documents", "", ""},
		{"get the mapping", "GET", "/doclib-documents/_mapping", "", ""},
		{"bulk index", "POST", "/_bulk", ndjson, bulk},
		{"bulk index with refresh", "POST", "/_bulk?refresh=wait_for", ndjson, bulk},
		{"refresh", "POST", "/doclib-documents-1/_refresh", "", ""},
		{"most active", "POST", "/doclib-documents/_search", appJSON, golden(t, "most-active.json")},
		{"most active, filtered", "POST", "/doclib-documents/_search", appJSON, golden(t, "most-active-filtered.json")},
		{"match", "POST", "/doclib-documents/_search?include_named_queries_score=true", appJSON, golden(t, "query-plain.json")},
		{"match, filters", "POST", "/doclib-documents/_search?include_named_queries_score=true", appJSON, golden(t, "query-filters.json")},
		{"match, fuzziness", "POST", "/doclib-documents/_search?include_named_queries_score=true", appJSON, golden(t, "query-fuzziness.json")},
		{"match, no terms", "POST", "/doclib-documents/_search?include_named_queries_score=true", appJSON, golden(t, "query-no-terms.json")},
		{"match, past the window", "POST", "/doclib-documents/_search?include_named_queries_score=true", appJSON, golden(t, "query-past-window.json")},
		{"match, no recordings", "POST", "/doclib-documents/_search?include_named_queries_score=true", appJSON, golden(t, "query-no-recordings.json")},
		{"swap the alias", "POST", "/_aliases", appJSON, `{"actions":[{"add":{"alias":"doclib-documents","index":"doclib-documents-1","is_write_index":true}},{"remove":{"alias":"doclib-documents","index":"doclib-documents-1"}}]}`},
		{"bulk delete", "POST", "/_bulk", ndjson, `{"delete":{"_index":"doclib-documents-1","_id":"d1"}}` + "\n"},
		{"delete the index", "DELETE", "/doclib-documents-1", "", ""},
	}
	for _, s := range steps {
		before := len(c.Refused())
		status, out := send(t, c, s.method, s.path, s.contentType, s.body)
		if r := c.Refused(); len(r) > before {
			t.Errorf("%s: refused (%d): %s", s.name, status, r[len(r)-1])
		} else if status/100 != 2 && s.name != "alias missing" {
			t.Errorf("%s: %d %v", s.name, status, out)
		}
	}
	if t.Failed() {
		c.ExpectRefusals() // reported above
	}
}

// TestAcceptsDoclibsBackend drives the real backend against the fake: index
// creation, writes, a reindex and the fallback search.
func TestAcceptsDoclibsBackend(t *testing.T) {
	c := Start(t)
	b, err := opensearch.New(opensearch.Config{URL: c.URL, Dimensions: 4, Embedder: "test/e"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := b.EnsureIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, []string{"gone"}); err != nil {
		t.Fatal(err)
	}
	if err := b.CheckIndex(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRefusesWhatOpenSearchRefuses: each request is answered as OpenSearch
// answers it and recorded.
func TestRefusesWhatOpenSearchRefuses(t *testing.T) {
	c := Start(t)
	c.ExpectRefusals()
	send(t, c, "PUT", "/i1", appJSON, `{"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2}}}}`)
	for _, r := range c.Refused() {
		t.Fatalf("setup refused: %s", r)
	}
	for _, tc := range []struct {
		name, method, path, contentType, body string
		status                                int
		typ, reason                           string
	}{
		{"unknown path", "GET", "/_cat/foo", "", "", 400, "illegal_argument_exception", "no handler found for uri [/_cat/foo] and method [GET]"},
		{"method of another path", "DELETE", "/_aliases", "", "", 405, "illegal_argument_exception", "Incorrect HTTP method for uri [/_aliases] and method [DELETE], allowed: [POST]"},
		{"unknown query parameter", "POST", "/i1/_search?bogus=1", appJSON, `{"query":{"match_all":{}}}`, 400, "illegal_argument_exception", "request [/i1/_search] contains unrecognized parameter: [bogus]"},
		{"unknown query parameters", "POST", "/_bulk?b=1&a=2", ndjson, `{"delete":{"_index":"i1","_id":"1"}}` + "\n", 400, "illegal_argument_exception", "contains unrecognized parameters: [a], [b]"},
		{"invalid query parameter", "POST", "/_bulk?refresh=sometimes", ndjson, `{"delete":{"_index":"i1","_id":"1"}}` + "\n", 400, "illegal_argument_exception", "invalid value [sometimes] of parameter [refresh]"},
		{"invalid boolean query parameter", "POST", "/_bulk?require_alias=maybe", ndjson, `{"delete":{"_index":"i1","_id":"1"}}` + "\n", 400, "illegal_argument_exception", "require_alias"},
		{"a body where none is read", "POST", "/i1/_refresh", appJSON, `{}`, 400, "illegal_argument_exception", "does not support having a body"},
		{"no content type", "POST", "/i1/_search", "", `{}`, 406, "illegal_argument_exception", "Content-Type header is missing"},
		{"knn without vector", "POST", "/i1/_search", appJSON, `{"query":{"knn":{"v":{"k":3}}}}`, 400, "x_content_parse_exception", "missing property 'vector'"},
		{"unknown search key", "POST", "/i1/_search", appJSON, `{"query":{"match_all":{}},"foo":1}`, 400, "parsing_exception", "$: unknown field [foo]"},
		{"unknown key deep in a nested knn", "POST", "/i1/_search", appJSON, `{"query":{"nested":{"path":"r","query":{"knn":{"r.v":{"vector":[1,2],"k":1,"bogus":1}}}}}}`, 400, "parsing_exception", "unknown field [bogus]"},
		{"unknown alias action", "POST", "/_aliases", appJSON, `{"actions":[{"addx":{"index":"i1","alias":"a"}}]}`, 400, "parsing_exception", "$.actions[0]: unknown field [addx]"},
		{"mapping field of no type", "PUT", "/i2", appJSON, `{"mappings":{"properties":{"x":{"type":"keywrd"}}}}`, 400, "x_content_parse_exception", "$.mappings.properties.x.type"},
		{"mapping field with an unknown parameter", "PUT", "/i2", appJSON, `{"mappings":{"properties":{"x":{"type":"keyword","bogus":1}}}}`, 400, "mapper_parsing_exception", "$.mappings.properties.x: unknown field [bogus]"},
		{"knn space the engine lacks", "PUT", "/i2", appJSON, `{"mappings":{"properties":{"v":{"type":"knn_vector","dimension":2,"method":{"name":"hnsw","engine":"faiss","space_type":"l1"}}}}}`, 400, "mapper_parsing_exception", "field [v]: engine [faiss] does not support space type [l1]"},
		{"knn space types that differ", "PUT", "/i2", appJSON, `{"mappings":{"properties":{"r":{"type":"nested","properties":{"v":{"type":"knn_vector","dimension":2,"space_type":"l2","method":{"name":"hnsw","space_type":"innerproduct"}}}}}}}`, 400, "mapper_parsing_exception", "field [r.v]"},
		{"bulk action with an unknown key", "POST", "/_bulk", ndjson, `{"index":{"_index":"i1","_id":"1","_type":"doc"}}` + "\n{}\n", 400, "illegal_argument_exception", "Action/metadata line [1] contains an unknown parameter [_type]"},
		{"bulk delete with an index-only key", "POST", "/_bulk", ndjson, `{"delete":{"_index":"i1","_id":"1","pipeline":"p"}}` + "\n", 400, "illegal_argument_exception", "contains an unknown parameter [pipeline]"},
		{"bulk unknown action", "POST", "/_bulk", ndjson, `{"upsert":{"_index":"i1","_id":"1"}}` + "\n{}\n", 400, "illegal_argument_exception", "but found [upsert]"},
		{"bulk two actions on a line", "POST", "/_bulk", ndjson, `{"index":{"_index":"i1"},"delete":{"_index":"i1"}}` + "\n{}\n", 400, "illegal_argument_exception", "Malformed action/metadata line [1]"},
		{"bulk id of the wrong type", "POST", "/_bulk", ndjson, `{"index":{"_index":"i1","_id":1}}` + "\n{}\n", 400, "illegal_argument_exception", "$.index._id"},
		{"bulk source not an object", "POST", "/_bulk", ndjson, `{"index":{"_index":"i1","_id":"1"}}` + "\n[1,2]\n", 400, "mapper_parsing_exception", "line [2]: not a JSON object"},
		{"bulk source missing", "POST", "/_bulk", ndjson, `{"index":{"_index":"i1","_id":"1"}}` + "\n", 400, "illegal_argument_exception", "has no source line"},
		{"bulk update with an unknown key", "POST", "/_bulk", ndjson, `{"update":{"_index":"i1","_id":"1"}}` + "\n" + `{"doc":{},"bogus":1}` + "\n", 400, "illegal_argument_exception", "unknown field [bogus]"},
		{"bulk without the final newline", "POST", "/_bulk", ndjson, `{"delete":{"_index":"i1","_id":"1"}}`, 400, "illegal_argument_exception", "must be terminated by a newline"},
		{"bulk without a body", "POST", "/_bulk", ndjson, ``, 400, "parse_exception", "request body is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(c.Refused())
			status, out := send(t, c, tc.method, tc.path, tc.contentType, tc.body)
			e, _ := out["error"].(map[string]any)
			if status != tc.status || e["type"] != tc.typ || !strings.Contains(e["reason"].(string), tc.reason) || out["status"] != float64(tc.status) {
				t.Errorf("%d %v; want %d, %s, a reason with %q", status, out, tc.status, tc.typ, tc.reason)
			}
			r := c.Refused()
			if len(r) != before+1 || !strings.HasPrefix(r[len(r)-1], tc.method+" "+strings.Split(tc.path, "?")[0]+": ") ||
				!strings.Contains(r[len(r)-1], tc.reason) {
				t.Errorf("Refused() = %q, want one more naming it", r[before:])
			}
		})
	}
	// A valid request the fake does not implement is no refusal.
	if status, _ := send(t, c, "POST", "/i1/_search", appJSON, `{"query":{"prefix":{"id":"d"}}}`); status != 400 {
		t.Errorf("an unimplemented query: %d", status)
	}
	if n := len(c.Refused()); n != 26 {
		t.Errorf("%d refusals, want 26", n)
	}
}

// recorder is a test that records what Start's cleanup does.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	errors   []string
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, f)
}
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestStartFailsTheTestThatSentARefusedRequest(t *testing.T) {
	for _, expect := range []bool{false, true} {
		r := &recorder{TB: t}
		c := Start(r)
		if expect {
			c.ExpectRefusals()
		}
		send(t, c, "GET", "/_cat/indices", "", "")
		r.end()
		if failed := len(r.errors) > 0; failed == expect {
			t.Errorf("ExpectRefusals %v: the test failed: %v", expect, failed)
		}
	}
	r := &recorder{TB: t}
	c := Start(r)
	send(t, c, "GET", "/_alias/a", "", "")
	r.end()
	if len(r.errors) > 0 {
		t.Errorf("a test with no refusal failed")
	}
}

func TestNewServesWithoutAServer(t *testing.T) {
	c := New()
	w := httptest.NewRecorder()
	c.ServeHTTP(w, httptest.NewRequest("GET", "/_cat/indices?v", nil))
	if w.Code != 400 || len(c.Refused()) != 1 || c.Refused()[0] != "GET /_cat/indices: no handler found for uri [/_cat/indices?v] and method [GET]" {
		t.Errorf("%d %s %q", w.Code, w.Body, c.Refused())
	}
	w = httptest.NewRecorder()
	c.ServeHTTP(w, httptest.NewRequest("GET", "/_alias/a", nil))
	if w.Code != 404 || len(c.Refused()) != 1 {
		t.Errorf("%d %s %q", w.Code, w.Body, c.Refused())
	}
}

// TestValidationIsCheap: the validator is built once per process, quickly,
// and a request costs little once its schemas are compiled.
func TestValidationIsCheap(t *testing.T) {
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("validator built in %v", s.built)
	body := golden(t, "most-active.json")
	validate := func() time.Duration {
		r := httptest.NewRequest("POST", "/a/_search", strings.NewReader(body))
		r.Header.Set("Content-Type", appJSON)
		start := time.Now()
		if ref := s.validate(r, []byte(body)); ref != nil {
			t.Fatal(ref)
		}
		return time.Since(start)
	}
	first := validate()
	var next time.Duration
	for range 10 {
		next += validate()
	}
	t.Logf("a search body: first %v (compiles its schema), then %v", first, next/10)
	if s.built > 5*time.Second || next/10 > 100*time.Millisecond {
		t.Errorf("too slow: built in %v, %v a request", s.built, next/10)
	}
}
