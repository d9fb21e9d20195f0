package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	opensearchgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchtransport"
	"github.com/opensearch-project/opensearch-go/v4/signer/awsv2"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// Config says how to reach the cluster.
type Config struct {
	// URL is the cluster's endpoint, e.g. https://search-x.eu-west-1.es.amazonaws.com.
	URL string
	// Alias is the name searched and written (settings.DefaultOpenSearchAlias when empty).
	Alias string
	// Dimensions of the embedder's vectors: the index's knn_vector size.
	Dimensions int
	// Embedder is the ID of the embedder of the vectors written and searched
	// (search.Embedder.ID). An index records it when created; EnsureIndex
	// refuses an index built with another.
	Embedder string
	// Username and Password for HTTP basic authentication (self-managed clusters).
	Username, Password string
	// AWSService signs requests with SigV4 for a managed domain ("es") or a
	// serverless collection ("aoss"), with AWS.
	AWSService string
	AWS        *aws.Config
	// Timeout bounds each attempt of a request (10 s when 0).
	Timeout time.Duration
	// Transport replaces the HTTP transport (tests).
	Transport http.RoundTripper
}

// Backend is the OpenSearch search backend and index. Build it once.
type Backend struct {
	client   *opensearchgo.Client
	alias    string
	dims     int
	embedder string
	analyzer *analysis.Analyzer
	cal      atomic.Pointer[search.Calibration] // read from the index's _meta
}

var (
	_ search.Backend = (*Backend)(nil)
	_ search.Index   = (*Backend)(nil)
)

// New returns the backend of a cluster. It makes no request.
func New(cfg Config) (*Backend, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("opensearch: the URL %q is not an http(s) URL of a cluster, e.g. https://localhost:9200", cfg.URL)
	}
	if cfg.Dimensions <= 0 {
		return nil, errors.New("opensearch: the embedder's dimensions are needed for the index mapping")
	}
	// The transport is built directly, not through opensearchgo.NewClient,
	// because only its own Config can turn the node-stats poller off.
	u.Path = strings.TrimRight(u.Path, "/")
	tc := opensearchtransport.Config{
		URLs:                 []*url.URL{u},
		Username:             cfg.Username,
		Password:             cfg.Password,
		Transport:            cfg.Transport,
		RequestTimeout:       cfg.Timeout,
		MaxRetries:           3,
		RetryOnStatus:        []int{429, 502, 503, 504},
		EnableRetryOnTimeout: true,
		// One endpoint, no cluster management: an AWS domain answers on one
		// load-balanced address, and the functions' roles may send only the
		// requests doclib makes (infra/stack/search.go). The client's own
		// background traffic (node stats every 5 s, cluster health probes,
		// health checks to resurrect a node) would be refused there, with
		// 403s in the domain's logs, so it is turned off; the stand-in's
		// checker found the node-stats poll.
		NodeStatsInterval:     -1,
		MaxRetryClusterHealth: -1,
		HealthCheckMaxRetries: -1,
	}
	if tc.RequestTimeout <= 0 {
		tc.RequestTimeout = 10 * time.Second
	}
	if cfg.AWSService != "" {
		if cfg.AWSService != "es" && cfg.AWSService != "aoss" {
			return nil, fmt.Errorf(`opensearch: the AWS service is "es" (a managed domain) or "aoss" (serverless), not %q`, cfg.AWSService)
		}
		if cfg.AWS == nil {
			return nil, errors.New("opensearch: SigV4 signing needs the AWS configuration")
		}
		s, err := awsv2.NewSignerWithService(*cfg.AWS, cfg.AWSService)
		if err != nil {
			return nil, fmt.Errorf("opensearch: SigV4 signer: %w", err)
		}
		tc.Signer = s
	}
	tp, err := opensearchtransport.New(tc)
	if err != nil {
		return nil, fmt.Errorf("opensearch: client: %w", err)
	}
	c := &opensearchgo.Client{Transport: tp}
	alias := cfg.Alias
	if alias == "" {
		alias = settings.DefaultOpenSearchAlias
	}
	return &Backend{client: c, alias: alias, dims: cfg.Dimensions, embedder: cfg.Embedder, analyzer: analysis.New()}, nil
}

// Alias is the name the backend searches and writes.
func (b *Backend) Alias() string { return b.alias }

// do sends a request and decodes a 2xx JSON answer into out (when not nil).
// Other answers become errors; those a retry may cure are doclib.Unavailable,
// so the API answers 503 without the cluster's text.
func (b *Backend) do(ctx context.Context, method, path string, query url.Values, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	u := path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("opensearch: %s %s: %w", method, path, err)
	}
	if body != nil {
		ct := "application/json"
		if strings.HasSuffix(path, "_bulk") {
			ct = "application/x-ndjson"
		}
		req.Header.Set("Content-Type", ct)
	}
	// Perform is deprecated for v5; its buffered contract is what this needs
	// (the whole body, read below, with the transport's retries), and the
	// move to Stream or the typed helpers belongs to the v5 upgrade.
	//lint:ignore SA1019 see above
	resp, err := b.client.Perform(req)
	if err != nil {
		return doclib.Unavailable(fmt.Errorf("opensearch: %s %s: %w", method, path, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return doclib.Unavailable(fmt.Errorf("opensearch: %s %s: read: %w", method, path, err))
	}
	if resp.StatusCode/100 != 2 {
		e := &StatusError{Status: resp.StatusCode, Method: method, Path: path, Body: clip(data, 500)}
		if resp.StatusCode == 429 || resp.StatusCode >= 500 {
			return doclib.Unavailable(e)
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("opensearch: %s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

// StatusError is a non-2xx answer of the cluster. Its text goes to logs only.
type StatusError struct {
	Status       int
	Method, Path string
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("opensearch: %s %s: status %d: %s", e.Method, e.Path, e.Status, e.Body)
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// searchParams are the URL parameters of every search: scores of the named
// queries (ignored in the body).
var searchParams = url.Values{"include_named_queries_score": {"true"}}

// Match implements search.Backend: one search request.
func (b *Backend) Match(ctx context.Context, q *search.Query) (*search.Matches, error) {
	if len(q.Vector) != b.dims {
		return nil, fmt.Errorf("opensearch: the query vector has %d dimensions, the index %d", len(q.Vector), b.dims)
	}
	terms := b.analyzer.DistinctTerms(q.Text)
	var resp searchResponse
	if err := b.do(ctx, http.MethodPost, "/"+b.alias+"/_search", searchParams, mustJSON(matchBody(q, terms)), &resp); err != nil {
		return nil, err
	}
	return resp.matches(q, len(terms))
}

// MostActive implements search.Backend.
func (b *Backend) MostActive(ctx context.Context, q *search.Query, f search.Filter) ([]search.Hit, int, error) {
	var resp searchResponse
	if err := b.do(ctx, http.MethodPost, "/"+b.alias+"/_search", nil, mustJSON(mostActiveBody(q, f)), &resp); err != nil {
		return nil, 0, err
	}
	hits := make([]search.Hit, 0, len(resp.Hits.Hits))
	for _, h := range resp.Hits.Hits {
		hits = append(hits, search.Hit{DocumentID: h.Source.ID, LibraryID: h.Source.LibraryID,
			Signals: []string{search.SignalFallback}, SemanticSimilarity: dot(q.Vector, h.Source.Embedding)})
	}
	return hits, resp.Hits.Total.Value, nil
}

// searchResponse is the part of a search answer the backend reads.
type searchResponse struct {
	Hits struct {
		Total struct {
			Value int `json:"value"`
		} `json:"total"`
		Hits []struct {
			ID     string   `json:"_id"`
			Score  *float64 `json:"_score"`
			Source struct {
				ID        string    `json:"id"`
				LibraryID string    `json:"libraryId"`
				Embedding []float32 `json:"embedding"`
			} `json:"_source"`
			MatchedQueries matchedQueries `json:"matched_queries"`
		} `json:"hits"`
	} `json:"hits"`
	Aggregations struct {
		Categories   bucketAgg `json:"categories"`
		Tags         bucketAgg `json:"tags"`
		Applications bucketAgg `json:"applications"`
		Libraries    bucketAgg `json:"libraries"`
		Matched      struct {
			Value float64 `json:"value"`
		} `json:"matched"`
	} `json:"aggregations"`
}

type bucketAgg struct {
	Buckets []struct {
		Key      string `json:"key"`
		DocCount int    `json:"doc_count"`
	} `json:"buckets"`
}

func (a bucketAgg) facets() []search.Facet {
	m := make(map[string]int, len(a.Buckets))
	for _, bk := range a.Buckets {
		m[bk.Key] = bk.DocCount
	}
	return search.SortFacets(m)
}

// matchedQueries reads both forms of matched_queries: the map of names to
// scores that include_named_queries_score gives, and the plain list of names a
// cluster without it gives (the scores are then NaN).
type matchedQueries map[string]float64

func (m *matchedQueries) UnmarshalJSON(b []byte) error {
	scores := map[string]float64{}
	if err := json.Unmarshal(b, &scores); err == nil {
		*m = scores
		return nil
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("matched_queries is neither a map of scores nor a list of names: %w", err)
	}
	out := make(map[string]float64, len(names))
	for _, n := range names {
		out[n] = math.NaN()
	}
	*m = out
	return nil
}

// matches turns the answer into the rules' terms: each hit's evidence from its
// named queries (and its own vector for the cosine), then its signals and score
// by search.Rules, as the embedded engine's hits get them.
func (r *searchResponse) matches(q *search.Query, nTerms int) (*search.Matches, error) {
	m := &search.Matches{
		MatchedTotal: int(r.Aggregations.Matched.Value),
		Total:        r.Hits.Total.Value,
		Facets: search.Facets{Categories: r.Aggregations.Categories.facets(), Tags: r.Aggregations.Tags.facets(),
			Applications: r.Aggregations.Applications.facets(), Libraries: r.Aggregations.Libraries.facets()},
		Hits: make([]search.Hit, 0, len(r.Hits.Hits)),
	}
	for _, h := range r.Hits.Hits {
		if h.Source.ID == "" {
			return nil, fmt.Errorf("opensearch: hit %s has no id in its _source", h.ID)
		}
		e := evidence(q, nTerms, h.MatchedQueries, h.Source.Embedding)
		m.Hits = append(m.Hits, search.Hit{DocumentID: h.Source.ID, LibraryID: h.Source.LibraryID,
			Signals: q.Rules.Signals(e), Score: q.Rules.Score(e), SemanticSimilarity: e.Semantic})
	}
	return m, nil
}

// evidence reads a hit's named queries. Each name sits on the clause inside
// its function_score, so matched_queries reports the clause's own score, before
// the script: the BM25 of the lexical or fuzzy clause, turned into the word
// strength by the scripts' map (wordHalf), and the best recording's k-NN score
// (knnScore), turned back into its cosine. A lexical hit holds every term,
// all of the query's weight (Share 1); a fuzzy hit's share of the idf weight is
// unknown here (Share 0). The document's cosine is computed from its vector,
// whether or not it matched.
func evidence(q *search.Query, nTerms int, mq matchedQueries, vec []float32) search.Evidence {
	e := search.Evidence{Semantic: dot(q.Vector, vec)}
	if s, ok := mq[nameLexical]; ok {
		e.LexicalHit, e.Word, e.Share = true, wordStrength(s, nTerms), 1
	}
	if s, ok := mq[nameFuzzy]; ok && !e.LexicalHit {
		e.FuzzyHit, e.Word = true, wordStrength(s, nTerms)
	}
	if s, ok := mq[nameRecordings]; ok {
		if math.IsNaN(s) {
			e.Recordings = q.Rules.RecordingsThreshold // matched, strength unknown
		} else {
			e.Recordings = knnCosine(s)
		}
	}
	return e
}

// wordStrength is the word scripts' strength of a clause score x for n terms,
// x / (x + wordHalf · n); 0 when the cluster gave no score (NaN).
func wordStrength(x float64, n int) float64 {
	if math.IsNaN(x) || n == 0 || x <= 0 {
		return 0
	}
	return x / (x + wordHalf*float64(n))
}

func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
