// Package api holds the JSON shapes of the read API exactly as they go over the
// wire (docs/api.md). The HTTP handler encodes them and the Go
// client decodes them, so the two cannot disagree.
package api

import (
	"encoding/json"
	"time"
)

// Time is a timestamp that encodes as RFC 3339 in UTC with a Z suffix.
type Time struct{ time.Time }

// MarshalJSON writes e.g. "2026-11-21T09:30:00Z".
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(time.RFC3339Nano)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// UnmarshalJSON reads any RFC 3339 timestamp.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	p, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = p.UTC()
	return nil
}

// ErrorBody is every error response: {"error": {"code": ..., "message": ...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Label is a tag, category or application entry.
type Label struct {
	Name          string `json:"name"`
	DocumentCount int    `json:"documentCount"`
}

// Schema describes a library's template.
type Schema struct {
	Version  int       `json:"version"`
	Sections []Section `json:"sections"`
}

// Section is one section of a template: content[key] holds a string for "text"
// and an array of strings for "steps" and "list".
type Section struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Type  string `json:"type"`
}

// Library is an item of GET /libraries and, with EdgeCount, GET /libraries/{id}.
type Library struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Categories    []string `json:"categories"`
	Tags          []string `json:"tags"`
	DocumentCount int      `json:"documentCount"`
	// EdgeCount is only on GET /libraries/{id}.
	EdgeCount *int `json:"edgeCount,omitempty"`
	CreatedAt Time `json:"createdAt"`
	UpdatedAt Time `json:"updatedAt"`
}

// LibraryList is GET /libraries.
type LibraryList struct {
	Libraries []Library `json:"libraries"`
}

// Tags is GET /libraries/{id}/tags.
type Tags struct {
	Tags []Label `json:"tags"`
}

// Categories is GET /libraries/{id}/categories.
type Categories struct {
	Categories []Label `json:"categories"`
}

// Applications is GET /libraries/{id}/applications.
type Applications struct {
	Applications []Label `json:"applications"`
}

// DocumentRef names a document's library.
type DocumentRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// OutgoingEdge is an item of a document's edges.outgoing.
type OutgoingEdge struct {
	TargetDocumentID    string `json:"targetDocumentId"`
	TargetDocumentTitle string `json:"targetDocumentTitle"`
	TargetLibraryID     string `json:"targetLibraryId"`
	Label               string `json:"label"`
	EdgeType            string `json:"edgeType"`
	RecordingCount      int    `json:"recordingCount"`
	Support             int    `json:"support"`
	LowConfidence       bool   `json:"lowConfidence"`
}

// IncomingEdge is an item of a document's edges.incoming.
type IncomingEdge struct {
	SourceDocumentID    string `json:"sourceDocumentId"`
	SourceDocumentTitle string `json:"sourceDocumentTitle"`
	SourceLibraryID     string `json:"sourceLibraryId"`
	Label               string `json:"label"`
	EdgeType            string `json:"edgeType"`
	RecordingCount      int    `json:"recordingCount"`
	Support             int    `json:"support"`
	LowConfidence       bool   `json:"lowConfidence"`
}

// Edges are a document's edges inside the key's scope.
type Edges struct {
	Outgoing []OutgoingEdge `json:"outgoing"`
	Incoming []IncomingEdge `json:"incoming"`
}

// Document is GET /documents/{id}: a DocumentItem with its template, library
// and edges. DocumentItem is embedded so that its fields come first in the JSON,
// in the same order as in a list of documents.
type Document struct {
	DocumentItem
	Schema  Schema      `json:"schema"`
	Library DocumentRef `json:"library"`
	Edges   Edges       `json:"edges"`
}

// DocumentItem is an item of GET /libraries/{id}/documents.
type DocumentItem struct {
	ID             string          `json:"id"`
	Title          string          `json:"title"`
	Category       string          `json:"category"`
	Tags           []string        `json:"tags"`
	Applications   []string        `json:"applications"`
	RecordingCount int             `json:"recordingCount"`
	DeviceCount    int             `json:"deviceCount"`
	FirstSeen      Time            `json:"firstSeen"`
	LastSeen       Time            `json:"lastSeen"`
	CreatedAt      Time            `json:"createdAt"`
	UpdatedAt      Time            `json:"updatedAt"`
	Content        json.RawMessage `json:"content"`
}

// DocumentPage is GET /libraries/{id}/documents.
type DocumentPage struct {
	Documents []DocumentItem `json:"documents"`
	Total     int            `json:"total"`
	Page      int            `json:"page"`
	PageSize  int            `json:"pageSize"`
	Schema    Schema         `json:"schema"`
}

// GraphDocument is an item of a graph's documents.
type GraphDocument struct {
	ID             string   `json:"id"`
	Title          string   `json:"title"`
	Category       string   `json:"category"`
	Tags           []string `json:"tags"`
	Applications   []string `json:"applications"`
	RecordingCount int      `json:"recordingCount"`
	LastSeen       Time     `json:"lastSeen"`
}

// GraphEdge is an edge of the graph and of a traversal.
type GraphEdge struct {
	SourceDocumentID    string `json:"sourceDocumentId"`
	SourceDocumentTitle string `json:"sourceDocumentTitle"`
	TargetDocumentID    string `json:"targetDocumentId"`
	TargetDocumentTitle string `json:"targetDocumentTitle"`
	Label               string `json:"label"`
	EdgeType            string `json:"edgeType"`
	RecordingCount      int    `json:"recordingCount"`
	Support             int    `json:"support"`
	LowConfidence       bool   `json:"lowConfidence"`
}

// Graph is GET /libraries/{id}/graph.
type Graph struct {
	Documents []GraphDocument `json:"documents"`
	Edges     []GraphEdge     `json:"edges"`
	Truncated bool            `json:"truncated"`
	Schema    Schema          `json:"schema"`
}

// TraverseNode is a document reached by a traversal.
type TraverseNode struct {
	ID           string          `json:"id"`
	Title        string          `json:"title"`
	Category     string          `json:"category"`
	Tags         []string        `json:"tags"`
	Applications []string        `json:"applications"`
	LibraryID    string          `json:"libraryId"`
	Depth        int             `json:"depth"`
	Content      json.RawMessage `json:"content"`
}

// Traversal is GET /documents/{id}/traverse.
type Traversal struct {
	RootDocumentID string `json:"rootDocumentId"`
	Direction      string `json:"direction"`
	// Label is the label filter, null when every label was followed.
	Label    *string           `json:"label"`
	MaxDepth int               `json:"maxDepth"`
	Nodes    []TraverseNode    `json:"nodes"`
	Edges    []GraphEdge       `json:"edges"`
	Schemas  map[string]Schema `json:"schemas"`
}

// Question is a question-and-answer pair of a recording.
type Question struct {
	ID            string `json:"id"`
	Question      string `json:"question"`
	Response      string `json:"response"`
	SequenceOrder int    `json:"sequenceOrder"`
}

// SourceRecording is a shared recording behind a document.
type SourceRecording struct {
	ID              string     `json:"id"`
	Title           string     `json:"title"`
	Status          string     `json:"status"`
	ClientCreatedAt Time       `json:"clientCreatedAt"`
	Questions       []Question `json:"questions"`
	Steps           []string   `json:"steps"`
}

// SourceRecordings is GET /documents/{id}/source-recordings.
type SourceRecordings struct {
	SourceRecordings []SourceRecording `json:"sourceRecordings"`
	Total            int               `json:"total"`
	LinkedTotal      int               `json:"linkedTotal"`
	PrivateTotal     int               `json:"privateTotal"`
	Guidance         string            `json:"guidance"`
	Page             int               `json:"page"`
	PageSize         int               `json:"pageSize"`
}

// Relevance says why a search hit was returned.
type Relevance struct {
	// Signals are the matches that fired: lexical, fuzzy, semantic,
	// source_recordings, or fallback alone.
	Signals []string `json:"signals"`
	// Score blends the fired signals into one number in [0, 1].
	Score float64 `json:"score"`
	// SemanticSimilarity is the cosine similarity of query and document, whether
	// or not the semantic signal fired.
	SemanticSimilarity float64 `json:"semanticSimilarity"`
}

// SearchHit is a document of GET /search/documents. It carries no schema: the
// response's schemas holds each library's template once.
type SearchHit struct {
	ID           string          `json:"id"`
	Title        string          `json:"title"`
	Category     string          `json:"category"`
	Tags         []string        `json:"tags"`
	Applications []string        `json:"applications"`
	Content      json.RawMessage `json:"content"`
	Library      DocumentRef     `json:"library"`
	Edges        Edges           `json:"edges"`
	Relevance    Relevance       `json:"relevance"`
}

// LibraryFacet is an entry of a search's libraries facet.
type LibraryFacet struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	DocumentCount int    `json:"documentCount"`
}

// SearchFacets break down the documents a query matched.
type SearchFacets struct {
	Categories   []Label        `json:"categories"`
	Tags         []Label        `json:"tags"`
	Applications []Label        `json:"applications"`
	Libraries    []LibraryFacet `json:"libraries"`
}

// SearchResults is GET /search/documents.
type SearchResults struct {
	Documents    []SearchHit       `json:"documents"`
	Schemas      map[string]Schema `json:"schemas"`
	Total        int               `json:"total"`
	MatchedTotal int               `json:"matchedTotal"`
	Page         int               `json:"page"`
	PageSize     int               `json:"pageSize"`
	Facets       SearchFacets      `json:"facets"`
	// LowConfidence is true when the documents are the fallback, not matches.
	LowConfidence bool `json:"lowConfidence"`
	// Guidance are hints on rewording or narrowing, present only with LowConfidence.
	Guidance []string `json:"guidance,omitempty"`
	// UnavailableSignals, present only when some did not run, are the
	// signals this search could not use: "semantic" (and
	// "source_recordings") when the embedding provider failed or was late,
	// so that the answer is the word signals' alone and spent no credit.
	UnavailableSignals []string `json:"unavailableSignals,omitempty"`
}
