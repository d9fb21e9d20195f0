package opensearch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares v, as indented JSON, with testdata/name; -update rewrites it.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./shared/backend/opensearch -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; if the change is meant, run with -update and review the diff.\n got: %s", name, got)
	}
}

func rules() *search.Rules {
	// Fixed thresholds, so that tuning a default changes no golden file.
	r := search.DefaultRules("bedrock/amazon.titan-embed-text-v2:0/1024")
	r.SemanticThreshold, r.RecordingsThreshold = 0.55, 0.6
	return &r
}

func query(text string, f search.Filter, offset, limit int) *search.Query {
	return &search.Query{Text: text, Vector: []float32{0.5, 0.5, 0.5, 0.5}, Libraries: []string{"lib_a1", "lib_a2"},
		Filter: f, Offset: offset, Limit: limit, Rules: rules()}
}

func TestMappingGolden(t *testing.T) {
	golden(t, "mapping-1024.json", Mapping(1024, "bedrock/amazon.titan-embed-text-v2:0/1024"))
}

func TestQueryBodiesGolden(t *testing.T) {
	b := &Backend{}
	_ = b
	for _, c := range []struct {
		name  string
		q     *search.Query
		terms []string
	}{
		{"query-plain.json", query("reset password", search.Filter{}, 0, 20), []string{"reset", "password"}},
		{"query-filters.json", query("okta", search.Filter{LibraryID: "lib_a1", Category: "Accounts", Tag: "security", Application: "Okta"}, 20, 10), []string{"okta"}},
		// Edits grow with length: none up to 4 letters, 1 from 5, 2 from 10.
		{"query-fuzziness.json", query("sso pasword photosynthesis", search.Filter{}, 0, 20), []string{"sso", "pasword", "photosynthesi"}},
		// Nothing to match by words: only the meaning clauses.
		{"query-no-terms.json", query("??!", search.Filter{}, 0, 20), nil},
		// Past the result window: no hits, the totals still.
		{"query-past-window.json", query("okta", search.Filter{}, 9990, 20), []string{"okta"}},
	} {
		golden(t, c.name, matchBody(c.q, c.terms))
	}
	// The Individual plan: no recordings clause, whatever the index holds.
	noRec := query("reset password", search.Filter{}, 0, 20)
	noRec.NoRecordings = true
	golden(t, "query-no-recordings.json", matchBody(noRec, []string{"reset", "password"}))
	// No embedding (the embedder failed or was late): no k-NN clause at all.
	noMeaning := query("reset password", search.Filter{}, 0, 20)
	noMeaning.NoMeaning = true
	golden(t, "query-no-meaning.json", matchBody(noMeaning, []string{"reset", "password"}))
	golden(t, "most-active.json", mostActiveBody(query("x", search.Filter{}, 0, 20), search.Filter{}))
	golden(t, "most-active-filtered.json", mostActiveBody(query("x", search.Filter{}, 40, 20), search.Filter{Category: "Accounts", Tag: "security"}))
}

// TestQueryScoresAreTheRules: the scripts give each clause exactly its share of
// search.Rules.Score, so the bool's sum, OpenSearch's ranking, is the blend.
func TestQueryScoresAreTheRules(t *testing.T) {
	r := rules()
	lex := func(score float64, n int) float64 { // the word scripts
		return r.Weights.Lexical * score / (score + wordHalf*float64(n))
	}
	sim := func(knn, w, t float64) float64 { // the similarity script, with its params
		p := similarityParams(w, t)
		return p["w"].(float64) * (p["scale"].(float64)*knn - p["offset"].(float64))
	}
	for _, c := range []struct {
		bm25, cos, rec float64
		n              int
	}{{7.2, 0.7, 0.0, 2}, {1.1, 0.58, 0.8, 1}, {15, 0.95, 0.66, 3}} {
		e := search.Evidence{LexicalHit: true, Word: wordStrength(c.bm25, c.n), Semantic: c.cos, Recordings: c.rec}
		got := lex(c.bm25, c.n)
		if c.cos >= r.SemanticThreshold {
			got += sim(knnScore(c.cos), r.Weights.Semantic, r.SemanticThreshold)
		}
		if c.rec >= r.RecordingsThreshold {
			got += sim(knnScore(c.rec), r.Weights.Recordings, r.RecordingsThreshold)
		}
		if want := r.Score(e); math.Abs(got-want) > 0.5e-4 { // the rules keep four decimals
			t.Errorf("%+v: scripts sum to %f, the rules give %f", c, got, want)
		}
	}
	if got, want := r.Weights.Fuzzy*3.0/(3.0+wordHalf*2), r.Score(search.Evidence{FuzzyHit: true, Word: wordStrength(3, 2)}); math.Abs(got-want) > 0.5e-4 {
		t.Errorf("fuzzy script %f, rules %f", got, want)
	}
	// The scripts in the body are the ones checked here.
	body := string(mustJSON(matchBody(query("reset", search.Filter{}, 0, 1), []string{"reset"})))
	for _, s := range []string{"params.w * x / (x + params.k * params.n)", "double c = params.scale * _score - params.offset; return params.w * c;"} {
		if !strings.Contains(body, s) {
			t.Errorf("the body has no script %q", s)
		}
	}
}

// TestFuzzyCount: the near miss asks for ⌈FuzzyShare × n⌉ of the n terms, at
// least one.
func TestFuzzyCount(t *testing.T) {
	for _, c := range []struct {
		n     int
		share float64
		want  int
	}{{1, 0.1, 1}, {10, 0.1, 1}, {11, 0.1, 2}, {20, 0.1, 2}, {21, 0.1, 3}, {3, 0.5, 2}, {4, 0.5, 2}, {3, 1, 3}, {3, 0.3, 1}} {
		if got := fuzzyCount(c.n, c.share); got != c.want {
			t.Errorf("fuzzyCount(%d, %g) = %d, want %d", c.n, c.share, got, c.want)
		}
	}
	// Eleven terms ask for two, and the API description the fake validates
	// against (OpenSearch 2.19's) takes the count.
	text := "reset password new laptop before monday morning vpn token expired okta printer"
	cluster := fakeopensearch.Start(t)
	cluster.CreateIndex("doclib-documents-1", settings.DefaultOpenSearchAlias, map[string]any{"embedder": "test/4", "schema": schemaVersion})
	b, err := New(Config{URL: cluster.URL, Dimensions: 4, Embedder: "test/4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Match(context.Background(), query(text, search.Filter{}, 0, 10)); err != nil {
		t.Fatal(err)
	}
	terms := b.analyzer.DistinctTerms(text)
	if body := mustJSON(matchBody(query(text, search.Filter{}, 0, 10), terms)); len(terms) != 11 || !strings.Contains(string(body), `"minimum_should_match":2,"must_not"`) {
		t.Errorf("the fuzzy clause of the %d terms %q does not ask for 2: %s", len(terms), terms, body)
	}
}

// A response shaped as OpenSearch answers a search with aggregations and
// include_named_queries_score (documentation examples: hits.total as an object,
// matched_queries as a map of names to scores, terms buckets, value_count).
const recordedSearch = `{
  "took": 12, "timed_out": false,
  "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
  "hits": {
    "total": {"value": 3, "relation": "eq"},
    "max_score": 0.78,
    "hits": [
      {"_index": "doclib-documents-20261122t101010.000000", "_id": "doc_a1_1", "_score": 0.78,
       "_source": {"id": "doc_a1_1", "libraryId": "lib_a1", "embedding": [0.5, 0.5, 0.5, 0.5]},
       "matched_queries": {"lexical": 7.2, "semantic": 1.0, "source_recordings": 0.9},
       "sort": [0.78, "doc_a1_1"]},
      {"_index": "doclib-documents-20261122t101010.000000", "_id": "doc_a1_2", "_score": 0.288,
       "_source": {"id": "doc_a1_2", "libraryId": "lib_a1", "embedding": [1, 0, 0, 0]},
       "matched_queries": {"fuzzy": 2.3},
       "sort": [0.288, "doc_a1_2"]}
    ]
  },
  "aggregations": {
    "categories": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [{"key": "Accounts", "doc_count": 3}, {"key": "Audit", "doc_count": 1}]},
    "tags": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [{"key": "security", "doc_count": 2}, {"key": "daily", "doc_count": 2}]},
    "applications": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [{"key": "Okta", "doc_count": 4}]},
    "libraries": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [{"key": "lib_a1", "doc_count": 3}, {"key": "lib_a2", "doc_count": 1}]},
    "matched": {"value": 4}
  }
}`

func TestDecodeRecordedSearch(t *testing.T) {
	var resp searchResponse
	if err := json.Unmarshal([]byte(recordedSearch), &resp); err != nil {
		t.Fatal(err)
	}
	q := query("reset password", search.Filter{Category: "Accounts"}, 0, 20)
	m, err := resp.matches(q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if m.MatchedTotal != 4 || m.Total != 3 || len(m.Hits) != 2 {
		t.Fatalf("totals %d %d, %d hits", m.MatchedTotal, m.Total, len(m.Hits))
	}
	// Facets in the rules' order: count desc, then name.
	if got := m.Facets.Tags; len(got) != 2 || got[0].Name != "daily" || got[1].Name != "security" {
		t.Errorf("tags facet %v", got)
	}
	if m.Facets.Libraries[0] != (search.Facet{Name: "lib_a1", DocumentCount: 3}) {
		t.Errorf("libraries facet %v", m.Facets.Libraries)
	}
	first := m.Hits[0]
	if first.DocumentID != "doc_a1_1" || !slices.Equal(first.Signals, []string{"lexical", "semantic", "source_recordings"}) {
		t.Errorf("first hit %+v", first)
	}
	// cos(q, own vector) = 1; recordings 2*0.9-1 = 0.8; lexical 7.2 over 2 terms.
	want := q.Rules.Score(search.Evidence{LexicalHit: true, Word: 7.2 / (7.2 + wordHalf*2), Semantic: 1, Recordings: 0.8})
	if math.Abs(first.Score-want) > 1e-9 || math.Abs(first.SemanticSimilarity-1) > 1e-9 {
		t.Errorf("first hit score %f (want %f), similarity %f", first.Score, want, first.SemanticSimilarity)
	}
	second := m.Hits[1]
	if !slices.Equal(second.Signals, []string{"fuzzy"}) || math.Abs(second.SemanticSimilarity-0.5) > 1e-9 {
		t.Errorf("second hit %+v", second)
	}
}

func TestDecodeMatchedQueriesWithoutScores(t *testing.T) {
	raw := strings.Replace(recordedSearch, `{"lexical": 7.2, "semantic": 1.0, "source_recordings": 0.9}`, `["lexical", "source_recordings"]`, 1)
	var resp searchResponse
	if err := json.Unmarshal([]byte(raw), &resp); err != nil {
		t.Fatal(err)
	}
	m, err := resp.matches(query("x", search.Filter{}, 0, 20), 2)
	if err != nil || !slices.Equal(m.Hits[0].Signals, []string{"lexical", "semantic", "source_recordings"}) {
		t.Fatalf("%+v %v", m, err)
	}
}

// cluster is a fake OpenSearch: it records each request and answers from a
// handler per method and path.
type cluster struct {
	mu       sync.Mutex
	requests []string // "METHOD path?query body"
	answer   func(r *http.Request, body []byte) (int, string)
}

func (c *cluster) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.requests = append(c.requests, r.Method+" "+r.URL.RequestURI()+" "+string(body))
	c.mu.Unlock()
	status, out := c.answer(r, body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, out)
}

func fakeCluster(t *testing.T, answer func(r *http.Request, body []byte) (int, string)) (*Backend, *cluster) {
	t.Helper()
	c := &cluster{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	b, err := New(Config{URL: srv.URL, Dimensions: 4, Embedder: "test/4", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

func TestMatchAgainstAFakeCluster(t *testing.T) {
	b, c := fakeCluster(t, func(r *http.Request, body []byte) (int, string) {
		if r.Method != "POST" || r.URL.Path != "/doclib-documents/_search" || r.URL.Query().Get("include_named_queries_score") != "true" {
			return 400, `{"error":"unexpected request"}`
		}
		return 200, recordedSearch
	})
	q := query("Resetting passwords, how?", search.Filter{}, 0, 20)
	m, err := b.Match(context.Background(), q)
	if err != nil || len(m.Hits) != 2 || m.MatchedTotal != 4 {
		t.Fatalf("%+v %v", m, err)
	}
	// The query sent our analysed terms ("how" is a stop word, dropped).
	if !strings.Contains(c.requests[0], `"query":"reset password"`) {
		t.Errorf("the query did not send the analysed terms: %.400s", c.requests[0])
	}
	if _, err := b.Match(context.Background(), &search.Query{Vector: []float32{1}, Rules: q.Rules}); err == nil {
		t.Error("a vector of the wrong size was sent")
	}
}

func TestErrorsOfTheCluster(t *testing.T) {
	status := 503
	b, _ := fakeCluster(t, func(*http.Request, []byte) (int, string) {
		return status, `{"error":{"type":"cluster_block_exception","reason":"blocked by: [FORBIDDEN/8/index write (api)]"}}`
	})
	q := query("okta", search.Filter{}, 0, 20)
	_, err := b.Match(context.Background(), q)
	if doclib.ErrorCode(err) != doclib.EUnavailable {
		t.Errorf("503: %v, want unavailable", err)
	}
	if strings.Contains(doclib.ErrorMessage(err), "cluster_block") {
		t.Error("the cluster's text reaches the client message")
	}
	status = 404
	_, err = b.Match(context.Background(), q)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 404 || doclib.ErrorCode(err) != doclib.EInternal {
		t.Errorf("404: %v", err)
	}
}

func TestUpsertAndDelete(t *testing.T) {
	b, c := fakeCluster(t, func(r *http.Request, body []byte) (int, string) {
		if strings.Contains(string(body), `"delete"`) {
			return 200, `{"took":1,"errors":true,"items":[{"delete":{"_id":"doc_1","status":200}},{"delete":{"_id":"doc_gone","status":404,"result":"not_found"}}]}`
		}
		return 200, `{"took":1,"errors":false,"items":[{"index":{"_id":"doc_1","status":201}}]}`
	})
	doc := search.NewIndexDoc(&doclib.Document{ID: "doc_1", WorkspaceID: "ws_a", LibraryID: "lib_a1", Title: "Resetting Passwords",
		Category: "Accounts", Tags: []string{"security"}, Content: json.RawMessage(`{"summary":"Open Okta."}`), RecordingCount: 2,
		LastSeen: time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)}, []float32{1, 0, 0, 0},
		[]*doclib.Recording{{ID: "rec_1"}}, [][]float32{{0, 1, 0, 0}})
	if err := b.Upsert(context.Background(), []search.IndexDoc{doc}); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(strings.SplitN(c.requests[0], " ", 3)[2]))
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bulk line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 || lines[0]["index"].(map[string]any)["_id"] != "doc_1" {
		t.Fatalf("bulk body %v", lines)
	}
	src := lines[1]
	if src["title_terms"] != "reset password" || src["body_terms"] != "open okta" || src["labels_terms"] != "account secur" ||
		len(src["recordings"].([]any)) != 1 || src["lastSeen"] != "2026-03-05T10:00:00Z" {
		t.Errorf("index document %v", src)
	}
	// A document already gone is no error.
	if err := b.Delete(context.Background(), []string{"doc_1", "doc_gone"}); err != nil {
		t.Errorf("delete: %v", err)
	}
}

func TestReindexSwapsTheAlias(t *testing.T) {
	b, c := fakeCluster(t, func(r *http.Request, body []byte) (int, string) {
		switch {
		case r.Method == "GET" && r.URL.Path == "/_alias/doclib-documents":
			return 200, `{"doclib-documents-old":{"aliases":{"doclib-documents":{}}}}`
		case strings.HasSuffix(r.URL.Path, "/_bulk"):
			return 200, `{"errors":false,"items":[]}`
		}
		return 200, `{"acknowledged":true}`
	})
	doc := search.IndexDoc{Doc: search.Doc{ID: "doc_1"}, Vector: []float32{1, 0, 0, 0}}
	var seen []ReindexProgress
	name, err := b.Reindex(context.Background(), nil, 2, func(yield func([]search.IndexDoc) error) error {
		if err := yield([]search.IndexDoc{doc}); err != nil {
			return err
		}
		return yield([]search.IndexDoc{doc})
	}, func(p ReindexProgress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, r := range c.requests {
		f := strings.SplitN(r, " ", 3)
		steps = append(steps, f[0]+" "+strings.Replace(f[1], name, "NEW", 1))
	}
	want := []string{"PUT /NEW", "POST /_bulk", "POST /_bulk", "POST /NEW/_refresh", "GET /_alias/doclib-documents", "POST /_aliases", "DELETE /doclib-documents-old"}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
	swap := c.requests[5]
	if !strings.Contains(swap, `"add":{"alias":"doclib-documents","index":"`+name+`","is_write_index":true}`) || !strings.Contains(swap, `"remove":{"alias":"doclib-documents","index":"doclib-documents-old"}`) {
		t.Errorf("alias swap not one atomic action: %s", swap)
	}
	if len(seen) != 2 || seen[1].Done != 2 || seen[1].Total != 2 {
		t.Errorf("progress %v", seen)
	}
}

func TestFailedReindexLeavesTheOldIndex(t *testing.T) {
	b, c := fakeCluster(t, func(r *http.Request, body []byte) (int, string) {
		return 200, `{"acknowledged":true}`
	})
	_, err := b.Reindex(context.Background(), nil, 1, func(yield func([]search.IndexDoc) error) error {
		return errors.New("embedder down")
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "embedder down") {
		t.Fatalf("error %v", err)
	}
	if len(c.requests) != 2 || !strings.HasPrefix(c.requests[0], "PUT /doclib-documents-") ||
		!strings.HasPrefix(c.requests[1], "DELETE "+strings.Fields(c.requests[0])[1]+" ") {
		t.Errorf("requests %q: want the new index created, then deleted, and the alias untouched", c.requests)
	}
}

func TestEnsureIndex(t *testing.T) {
	existing := ""
	b, c := fakeCluster(t, func(r *http.Request, body []byte) (int, string) {
		if r.Method == "GET" && r.URL.Path == "/doclib-documents/_mapping" {
			if existing == "" {
				return 404, `{"error":{"type":"index_not_found_exception"},"status":404}`
			}
			return 200, existing
		}
		return 200, `{"acknowledged":true}`
	})
	ctx := context.Background()
	created, err := b.EnsureIndex(ctx)
	if err != nil || !created {
		t.Fatalf("no index: created %v, error %v", created, err)
	}
	if len(c.requests) != 3 || !strings.HasPrefix(c.requests[1], "PUT /doclib-documents-") ||
		!strings.Contains(c.requests[1], `"_meta":{"embedder":"test/4","schema":1}`) ||
		!strings.Contains(c.requests[2], `"add":{"alias":"doclib-documents"`) {
		t.Fatalf("requests %q", c.requests)
	}
	for _, tc := range []struct {
		meta string
		ok   bool
	}{
		{`{"embedder":"test/4","schema":1}`, true},
		{`{"embedder":"hash-v1/256","schema":1}`, false},
		{`{"embedder":"test/4","schema":0}`, false},
		{`{}`, false},
	} {
		existing = `{"doclib-documents-1":{"mappings":{"_meta":` + tc.meta + `,"properties":{}}}}`
		c.requests = nil
		created, err := b.EnsureIndex(ctx)
		if created || len(c.requests) != 1 {
			t.Errorf("%s: created %v after %q", tc.meta, created, c.requests)
		}
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrIncompatible) {
			t.Errorf("%s: error %v", tc.meta, err)
		}
	}
}

func TestReindexData(t *testing.T) {
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	var bulkLines atomic.Int32
	b, _ := fakeCluster(t, func(r *http.Request, body []byte) (int, string) {
		switch {
		case r.Method == "GET":
			return 404, `{}`
		case strings.HasSuffix(r.URL.Path, "/_bulk"):
			bulkLines.Add(int32(bytes.Count(body, []byte("\n"))))
			return 200, `{"errors":false,"items":[]}`
		}
		return 200, `{"acknowledged":true}`
	})
	e := fixedEmbedder{id: "test/4"}
	var last ReindexProgress
	if _, err := b.ReindexData(context.Background(), d, e, func(p ReindexProgress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if n := len(d.Documents); int(bulkLines.Load()) != 2*n || last.Done != n || last.Total != n {
		t.Errorf("%d bulk lines and progress %+v for %d documents", bulkLines.Load(), last, n)
	}
	if _, err := b.ReindexData(context.Background(), d, fixedEmbedder{id: "other/4"}, nil); err == nil {
		t.Error("a reindex with another embedder's vectors was accepted")
	}
}

// fixedEmbedder gives every text the same unit vector.
type fixedEmbedder struct{ id string }

func (f fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return out, nil
}
func (f fixedEmbedder) Dimensions() int { return 4 }
func (f fixedEmbedder) ID() string      { return f.id }

func TestConfig(t *testing.T) {
	for _, c := range []Config{{URL: "localhost:9200", Dimensions: 4}, {URL: "https://x", Dimensions: 0}, {URL: "https://x", Dimensions: 4, AWSService: "s3"}, {URL: "https://x", Dimensions: 4, AWSService: "es"}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestDocsFromDataWithoutItsWorkspace: a document whose workspace is not in
// the data counts as on the Individual plan, so its shared recordings are
// not indexed (privacy first, as the indexer and the embedded engine do).
func TestDocsFromDataWithoutItsWorkspace(t *testing.T) {
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &doclib.DataSet{
		Documents:  []*doclib.Document{{ID: "doc_x", LibraryID: "lib_x", WorkspaceID: "ws_gone", Title: "Reset a password"}},
		Recordings: []*doclib.Recording{{ID: "rec_x", DocumentIDs: []string{"doc_x"}, Title: "a shared recording", Shared: true}},
	}
	var got []search.IndexDoc
	if err := search.DocsFromData(context.Background(), d, e, 0, func(b []search.IndexDoc) error { got = append(got, b...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Recordings) != 0 {
		t.Errorf("indexed %d documents, the first with %d recordings; want 1 with none", len(got), len(got[0].Recordings))
	}
}

// TestCreateIndexSurvivesARetriedCreate: a create that timed out may have
// succeeded, and the client's retry then finds the index there. The name is
// the backend's own, so an index there with its mapping is the one it made;
// one with another embedder's mapping is still an error.
func TestCreateIndexSurvivesARetriedCreate(t *testing.T) {
	for _, c := range []struct {
		embedder string
		ok       bool
	}{{"test/4", true}, {"other/4", false}} {
		b, _ := fakeCluster(t, func(r *http.Request, body []byte) (int, string) {
			switch {
			case r.Method == "PUT":
				name := strings.TrimPrefix(r.URL.Path, "/")
				return 400, `{"error":{"type":"resource_already_exists_exception","reason":"index [` + name + `] already exists"},"status":400}`
			case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/_mapping"):
				name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/_mapping")
				return 200, `{"` + name + `":{"mappings":{"_meta":{"embedder":"` + c.embedder + `","schema":` + strconv.Itoa(schemaVersion) + `}}}}`
			}
			return 200, `{"acknowledged":true}`
		})
		name := b.versionedName(time.Now())
		err := b.createIndex(context.Background(), name)
		if c.ok && err != nil {
			t.Errorf("the index this backend made on an earlier attempt: %v", err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "already exists")) {
			t.Errorf("an index of another embedder under the same name: %v, want the create's error", err)
		}
	}
}
