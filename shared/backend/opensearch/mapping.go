// Package opensearch is the search backend on OpenSearch (2.19+ and 3.x): the
// index (a versioned name behind an alias), the query that answers a search in
// one round trip, the decoding of its response into search.Matches, and the
// writes of the indexer and of a reindex.
//
// It gives the embedded engine's answers by construction where it can:
//
//   - the text fields hold terms already analysed by shared/analysis (the same
//     folding, stop words and stems) and are indexed with a whitespace analyzer,
//     and queries send terms analysed the same way, so both backends match the
//     same words;
//   - each signal is one clause whose score a script turns into its share of
//     search.Rules.Score, so OpenSearch ranks by the same blended score;
//   - the meaning matches are radial k-NN searches with min_score at each
//     threshold, on cosine spaces, so "at or above the threshold" is exact up to
//     HNSW's approximation.
//
// docs/search.md lists what differs (BM25 across fields instead of BM25F, the
// fuzzy strength, typos of words the corpus knows).
package opensearch

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/search"
)

// Field names of the index.
const (
	fieldID             = "id"
	fieldWorkspace      = "workspaceId"
	fieldLibrary        = "libraryId"
	fieldCategory       = "category"
	fieldTags           = "tags"
	fieldApplications   = "applications"
	fieldRecordingCount = "recordingCount"
	fieldLastSeen       = "lastSeen"
	fieldTitle          = "title_terms"
	fieldBody           = "body_terms"
	fieldLabels         = "labels_terms"
	fieldVector         = "embedding"
	fieldRecordings     = "recordings"
	fieldRecordingVec   = "recordings.embedding"
)

// HNSW parameters of the vector fields: the usual m and a generous
// ef_construction; docs/search.md gives the memory they cost.
const (
	hnswM              = 16
	hnswEfConstruction = 128
)

// The index's _meta: the embedder of its vectors and the version of this
// mapping (raised when a change needs a reindex).
const (
	metaEmbedder    = "embedder"
	metaSchema      = "schema"
	metaCalibration = "calibration"
	schemaVersion   = 1
)

// meta is an index's _meta: its embedder and mapping version, and the
// calibration of its embedder when a reindex measured one.
func meta(embedder string, cal *search.Calibration) map[string]any {
	m := map[string]any{metaEmbedder: embedder, metaSchema: schemaVersion}
	if cal != nil {
		m[metaCalibration] = cal
	}
	return m
}

// Mapping returns the body that creates an index for vectors of dims
// dimensions made by the embedder with the given ID, which the index records
// in its _meta so that no program searches it with another embedder's vectors.
func Mapping(dims int, embedder string) map[string]any {
	vector := func() map[string]any {
		return map[string]any{
			"type":       "knn_vector",
			"dimension":  dims,
			"space_type": "cosinesimil",
			"method": map[string]any{
				"name":       "hnsw",
				"engine":     "faiss",
				"parameters": map[string]any{"m": hnswM, "ef_construction": hnswEfConstruction},
			},
		}
	}
	keyword := map[string]any{"type": "keyword"}
	terms := map[string]any{"type": "text", "analyzer": "whitespace", "similarity": "BM25"}
	return map[string]any{
		"settings": map[string]any{
			// One shard (the index is small); copies follow the data nodes:
			// none on a single-node domain (which would otherwise stay
			// yellow for a replica it cannot place), one on two nodes, two
			// on three or more (a copy in each of three zones).
			"index": map[string]any{"knn": true, "number_of_shards": 1, "auto_expand_replicas": "0-2"},
		},
		"mappings": map[string]any{
			"dynamic": "strict",
			"_meta":   meta(embedder, nil),
			"_source": map[string]any{"excludes": []string{fieldRecordings}},
			"properties": map[string]any{
				fieldID:             keyword,
				fieldWorkspace:      keyword,
				fieldLibrary:        keyword,
				fieldCategory:       keyword,
				fieldTags:           keyword,
				fieldApplications:   keyword,
				fieldRecordingCount: map[string]any{"type": "integer"},
				fieldLastSeen:       map[string]any{"type": "date"},
				fieldTitle:          terms,
				fieldBody:           terms,
				fieldLabels:         terms,
				fieldVector:         vector(),
				fieldRecordings: map[string]any{
					"type": "nested",
					"properties": map[string]any{
						"id":        keyword,
						"embedding": vector(),
					},
				},
			},
		},
	}
}

// source is one document of the index.
type source struct {
	ID             string            `json:"id"`
	WorkspaceID    string            `json:"workspaceId"`
	LibraryID      string            `json:"libraryId"`
	Category       string            `json:"category"`
	Tags           []string          `json:"tags"`
	Applications   []string          `json:"applications"`
	RecordingCount int               `json:"recordingCount"`
	LastSeen       time.Time         `json:"lastSeen"`
	Title          string            `json:"title_terms"`
	Body           string            `json:"body_terms"`
	Labels         string            `json:"labels_terms"`
	Embedding      []float32         `json:"embedding"`
	Recordings     []recordingSource `json:"recordings"`
}

type recordingSource struct {
	ID        string    `json:"id"`
	Embedding []float32 `json:"embedding"`
}

// terms analyses texts into the space-separated terms the index stores: every
// word's term, stop words included (the query decides which to ask for), as the
// embedded engine indexes them.
func terms(a *analysis.Analyzer, texts []string) string {
	var b strings.Builder
	for _, t := range texts {
		a.Each(t, func(tok analysis.Token) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(tok.Term)
		})
	}
	return b.String()
}

// newSource builds the index document of d.
func newSource(a *analysis.Analyzer, d search.IndexDoc) source {
	s := source{ID: d.ID, WorkspaceID: d.WorkspaceID, LibraryID: d.LibraryID, Category: d.Category,
		Tags: nonNil(d.Tags), Applications: nonNil(d.Applications), RecordingCount: d.RecordingCount,
		LastSeen: d.LastSeen.UTC(), Title: terms(a, []string{d.Title}), Body: terms(a, d.Body),
		Labels: terms(a, d.Labels), Embedding: d.Vector, Recordings: []recordingSource{}}
	for _, r := range d.Recordings {
		s.Recordings = append(s.Recordings, recordingSource{ID: r.ID, Embedding: r.Vector})
	}
	return s
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// mustJSON encodes a body built by this package (maps, slices, numbers,
// strings): it cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("opensearch: encode a request body: " + err.Error())
	}
	return b
}
