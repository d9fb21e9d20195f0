package opensearch

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/doclib/doclib/shared/search"
)

// Names of the signal clauses: OpenSearch reports them in matched_queries, with
// the score of each (include_named_queries_score).
const (
	nameLexical    = "lexical"
	nameFuzzy      = "fuzzy"
	nameSemantic   = "semantic"
	nameRecordings = "source_recordings"
)

// wordHalf is the BM25 per query term at which the word strength is one half:
// the word scripts map their clause's score x, for n query terms, to the
// strength x / (x + wordHalf · n). The embedded engine divides a document's
// BM25F by the most any document could score, Σ idf · (k1 + 1) over the terms;
// OpenSearch cannot, because a script sees the clause's score but no term's idf.
// The map keeps the order of the clause's scores and is bounded by 1. 1.4 is
// fitted to the embedded engine with its defaults on the demo data (the lexical
// hits of the relevance set's queries, Lucene BM25 recomputed for each): medians
// 0.71 here and 0.74 there, root mean square difference 0.08. On a larger corpus
// words are rarer (larger idf), so the same match lands higher.
const wordHalf = 1.4

// maxResultWindow is OpenSearch's default index.max_result_window: from + size
// may not pass it.
const maxResultWindow = 10000

// textFields are the analysed text fields. The title's boost multiplies its
// field's score, where the embedded engine's BM25F weighs a title occurrence 2
// before saturation; 3 matched the engine's level and order about as well as 2
// on the demo data.
var textFields = []string{fieldTitle + "^3", fieldBody, fieldLabels}

// matchBody is the search that answers Backend.Match in one round trip:
//
//   - query: the visible libraries as a filter, and the four signals as should
//     clauses (at least one must match): the matched set. Each clause is named and
//     wrapped in a function_score whose script makes its score exactly its share of
//     search.Rules.Score, so the bool's score is the blended score;
//   - aggs: the matched set's facets and size, computed before post_filter;
//   - post_filter: the user's filters, so hits.total is the filtered total;
//   - sort: score, then id; from/size: the page.
//
// There is no pseudo-relevance feedback (search.Rules.Feedback, RM3) here: it
// needs the words of the best matches before scoring, a second round trip, so
// the word strength is that of the query's own words.
func matchBody(q *search.Query, terms []string) map[string]any {
	r := q.Rules
	var should []any
	if len(terms) > 0 {
		lexical := lexicalQuery(terms)
		strength := "double x = _score; return params.w * x / (x + params.k * params.n);"
		should = append(should,
			scored(named(nameLexical, lexical), strength,
				map[string]any{"w": r.Weights.Lexical, "n": len(terms), "k": wordHalf}),
			// The near miss: at least FuzzyShare of the terms, each exactly or
			// within its edits. OpenSearch cannot weigh the share by each term's
			// idf, as the embedded engine does: the count is the closest the DSL
			// gets. Its strength is the same map of its own score (a near term
			// scored by Lucene's fuzzy rewrite), over all n terms.
			scored(named(nameFuzzy, map[string]any{"bool": map[string]any{
				"should":               fuzzyQueries(terms, r),
				"minimum_should_match": fuzzyCount(len(terms), r.FuzzyShare),
				"must_not":             []any{lexical},
			}}), strength, map[string]any{"w": r.Weights.Fuzzy, "n": len(terms), "k": wordHalf}))
	}
	if q.NoMeaning {
		// No embedding (the embedder failed or was late): words alone.
		return searchBody(q, should)
	}
	similarity := "double c = params.scale * _score - params.offset; return params.w * c;"
	should = append(should,
		scored(named(nameSemantic, map[string]any{"knn": map[string]any{fieldVector: map[string]any{
			"vector":    q.Vector,
			"min_score": knnScore(r.SemanticThreshold),
			"filter":    visibleFilter(q.Libraries),
		}}}), similarity, similarityParams(r.Weights.Semantic, r.SemanticThreshold)))
	if q.NoRecordings {
		// The Individual plan: whatever the index still holds of this
		// workspace's recordings must not match.
		return searchBody(q, should)
	}
	should = append(should,
		scored(named(nameRecordings, map[string]any{"nested": map[string]any{
			"path":       fieldRecordings,
			"score_mode": "max",
			"query": map[string]any{"knn": map[string]any{fieldRecordingVec: map[string]any{
				"vector":    q.Vector,
				"min_score": knnScore(r.RecordingsThreshold),
			}}},
		}}), similarity, similarityParams(r.Weights.Recordings, r.RecordingsThreshold)))
	return searchBody(q, should)
}

// searchBody is the request around the should clauses of matchBody.
func searchBody(q *search.Query, should []any) map[string]any {
	from, size := window(q.Offset, q.Limit)
	body := map[string]any{
		"from":             from,
		"size":             size,
		"track_total_hits": true,
		"_source":          []string{fieldID, fieldLibrary, fieldVector},
		"query": map[string]any{"bool": map[string]any{
			"filter":               []any{visibleFilter(q.Libraries)},
			"should":               should,
			"minimum_should_match": 1,
		}},
		"aggs": map[string]any{
			"categories":   termsAgg(fieldCategory),
			"tags":         termsAgg(fieldTags),
			"applications": termsAgg(fieldApplications),
			"libraries":    termsAgg(fieldLibrary),
			"matched":      map[string]any{"value_count": map[string]any{"field": fieldID}},
		},
		"sort": []any{map[string]any{"_score": "desc"}, map[string]any{fieldID: "asc"}},
	}
	if f := userFilters(q.Filter); len(f) > 0 {
		body["post_filter"] = map[string]any{"bool": map[string]any{"filter": f}}
	}
	return body
}

// mostActiveBody is the fallback: the visible documents that pass f, most
// active first (doclib.CompareActivity, written as OpenSearch sorts), and how
// many.
func mostActiveBody(q *search.Query, f search.Filter) map[string]any {
	from, size := window(q.Offset, q.Limit)
	return map[string]any{
		"from":             from,
		"size":             size,
		"track_total_hits": true,
		"_source":          []string{fieldID, fieldLibrary, fieldVector},
		"query": map[string]any{"bool": map[string]any{
			"filter": append([]any{visibleFilter(q.Libraries)}, userFilters(f)...),
		}},
		"sort": []any{
			map[string]any{fieldRecordingCount: "desc"},
			map[string]any{fieldLastSeen: "desc"},
			map[string]any{fieldID: "asc"},
		},
	}
}

// window keeps from + size within the result window: a page past it is empty,
// with its totals.
func window(offset, limit int) (int, int) {
	if offset+limit > maxResultWindow {
		return 0, 0
	}
	return offset, limit
}

// lexicalQuery matches documents holding every term, in any text field,
// BM25-scored across the fields (cross_fields blends their statistics, as
// BM25F does).
func lexicalQuery(terms []string) map[string]any {
	return map[string]any{"multi_match": map[string]any{
		"query":    joinTerms(terms),
		"type":     "cross_fields",
		"fields":   textFields,
		"operator": "and",
		"analyzer": "whitespace",
	}}
}

// fuzzyCount is how many of n terms make FuzzyShare of them, at least one.
func fuzzyCount(n int, share float64) int {
	return max(1, int(math.Ceil(share*float64(n)-1e-9)))
}

// fuzzyQueries matches each term within its allowed edits (search.Rules.
// MaxEdits: none up to 4 letters, 1 from 5, 2 from 10), Levenshtein without
// transpositions, as the embedded engine counts them. Unlike the engine, which
// widens only a term no visible document holds, every term is widened: one
// query cannot know which terms the visible documents hold.
func fuzzyQueries(terms []string, r *search.Rules) []any {
	out := make([]any, len(terms))
	for i, t := range terms {
		out[i] = map[string]any{"multi_match": map[string]any{
			"query":                t,
			"type":                 "best_fields",
			"fields":               textFields,
			"analyzer":             "whitespace",
			"fuzziness":            strconv.Itoa(r.MaxEdits(utf8.RuneCountInString(t))),
			"prefix_length":        0,
			"max_expansions":       50,
			"fuzzy_transpositions": false,
		}}
	}
	return out
}

func joinTerms(terms []string) string {
	s := ""
	for i, t := range terms {
		if i > 0 {
			s += " "
		}
		s += t
	}
	return s
}

// named wraps a query in a bool carrying its name: every query type takes a
// bool's _name, which is not so for knn.
func named(name string, q map[string]any) map[string]any {
	return map[string]any{"bool": map[string]any{"must": []any{q}, "_name": name}}
}

// scored makes a clause's score the script's value of its own score. The
// function goes in "functions", the form OpenSearch's API description
// declares; the one-function shorthand (script_score beside query) is
// accepted by the server but not described, so the fake cluster refuses it.
func scored(q map[string]any, script string, params map[string]any) map[string]any {
	return map[string]any{"function_score": map[string]any{
		"query": q,
		"functions": []any{map[string]any{"script_score": map[string]any{"script": map[string]any{
			"lang": "painless", "source": script, "params": params,
		}}}},
		"boost_mode": "replace",
	}}
}

// OpenSearch scores a cosinesimil k-NN match (knnOffset + cosine) / knnScale.
// The similarity script turns that score back into the cosine with these two
// as its params, so that the map is written once, here.
const (
	knnOffset = 1.0
	knnScale  = 2.0
)

// knnScore is the radial min_score for a cosine threshold.
func knnScore(cosine float64) float64 { return (knnOffset + cosine) / knnScale }

// knnCosine is the cosine of a k-NN score, knnScore's inverse: what the
// similarity script computes in the cluster.
func knnCosine(score float64) float64 { return knnScale*score - knnOffset }

// similarityParams are the similarity script's params for a signal of
// weight w and threshold t: the script gives w · c with c = scale · _score
// - offset, which is search.Strength's w · (cosine - t) / (1 - t) once the
// threshold is in the offset and 1 / (1 - t) in the weight.
func similarityParams(w, t float64) map[string]any {
	if t >= 1 {
		return map[string]any{"w": 0.0, "scale": knnScale, "offset": knnOffset}
	}
	return map[string]any{"w": w / (1 - t), "scale": knnScale, "offset": knnOffset + t}
}

func visibleFilter(libraries []string) map[string]any {
	return map[string]any{"terms": map[string]any{fieldLibrary: nonNil(libraries)}}
}

func userFilters(f search.Filter) []any {
	var out []any
	for _, c := range []struct{ field, value string }{
		{fieldLibrary, f.LibraryID}, {fieldCategory, f.Category}, {fieldTags, f.Tag}, {fieldApplications, f.Application},
	} {
		if c.value != "" {
			out = append(out, map[string]any{"term": map[string]any{c.field: c.value}})
		}
	}
	return out
}

// facetSize bounds each facet's list; docs/search.md says so.
const facetSize = 1000

func termsAgg(field string) map[string]any {
	return map[string]any{"terms": map[string]any{
		"field": field,
		"size":  facetSize,
		"order": []any{map[string]any{"_count": "desc"}, map[string]any{"_key": "asc"}},
	}}
}
