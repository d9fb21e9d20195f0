package fakeopensearch

import (
	"encoding/json"
	"strings"
	"testing"
)

// call sends a JSON body (or none).
func call(t *testing.T, c *Cluster, method, path, body string) (int, map[string]any) {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	return send(t, c, method, path, contentType, body)
}

func TestSearchAppliesFiltersPostFilterAndAggregations(t *testing.T) {
	c := Start(t)
	call(t, c, "PUT", "/i1", `{"mappings":{"_meta":{"embedder":"e"}}}`)
	call(t, c, "POST", "/_aliases", `{"actions":[{"add":{"index":"i1","alias":"a"}}]}`)
	bulk := `{"index":{"_index":"a","_id":"d1"}}
{"id":"d1","libraryId":"l1","category":"x","title_terms":"reset password","recordingCount":1}
{"index":{"_index":"a","_id":"d2"}}
{"id":"d2","libraryId":"l1","category":"y","body_terms":"password password reset","recordingCount":3}
{"index":{"_index":"a","_id":"d3"}}
{"id":"d3","libraryId":"l2","category":"x","title_terms":"reset password"}
{"index":{"_index":"a","_id":"d4"}}
{"id":"d4","libraryId":"l1","category":"x","title_terms":"printer"}
`
	if status, out := call(t, c, "POST", "/_bulk", bulk); status != 200 || out["errors"] != false {
		t.Fatalf("bulk: %d %v", status, out)
	}
	q := `{"from":0,"size":1,"_source":["id"],"sort":[{"_score":"desc"},{"id":"asc"}],
	  "query":{"bool":{"filter":[{"terms":{"libraryId":["l1"]}}],"minimum_should_match":1,
	    "should":[{"function_score":{"query":{"bool":{"_name":"lexical","must":[{"multi_match":{"query":"reset password"}}]}}}}]}},
	  "post_filter":{"bool":{"filter":[{"term":{"category":"y"}}]}},
	  "aggs":{"categories":{"terms":{"field":"category"}},"matched":{"value_count":{"field":"id"}}}}`
	status, out := call(t, c, "POST", "/a/_search", q)
	if status != 200 {
		t.Fatalf("search: %d %v", status, out)
	}
	raw, _ := json.Marshal(out)
	for _, want := range []string{`"total":{"relation":"eq","value":1}`, `"_id":"d2"`, `"matched":{"value":2}`,
		`{"doc_count":1,"key":"x"},{"doc_count":1,"key":"y"}`, `"matched_queries":{"lexical":3}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("response lacks %s: %s", want, raw)
		}
	}
	if strings.Contains(string(raw), `"d3"`) || strings.Contains(string(raw), `"d4"`) {
		t.Errorf("a filtered or unmatched document came back: %s", raw)
	}
	// What the fake does not understand is refused, not ignored.
	if status, _ := call(t, c, "POST", "/a/_search", `{"query":{"bool":{"filter":[{"prefix":{"id":"d"}}]}}}`); status != 400 {
		t.Errorf("an unknown filter: %d", status)
	}
	c.ExpectRefusals()
	if status, _ := call(t, c, "GET", "/_cat/indices", ""); status != 400 {
		t.Errorf("an unknown endpoint: %d", status)
	}
	if status, _ := call(t, c, "GET", "/nope/_mapping", ""); status != 404 {
		t.Errorf("a missing index: %d", status)
	}
}
