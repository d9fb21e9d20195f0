// Package doclib is the domain of the doclib read API: the stored entities, the
// principal a request acts for, the error model and the small interfaces that the
// backends (memory, DynamoDB, ...) implement. It imports no backend.
//
// The package lives in the repository's shared/ folder; every dependency gets a
// package of its own below it (shared/backend/memory, shared/httpapi, ...).
package doclib

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Plan is a workspace's subscription plan.
type Plan string

// Plans a workspace can be on. On the Individual plan no recording can be shared.
const (
	PlanIndividual Plan = "individual"
	PlanTeam       Plan = "team"
	PlanEnterprise Plan = "enterprise"
)

// Plans lists every plan, in the order operators read them.
var Plans = []Plan{PlanIndividual, PlanTeam, PlanEnterprise}

// Subscription states of a workspace.
const (
	SubscriptionActive    = "active"
	SubscriptionSuspended = "suspended"
)

// Subscriptions lists every subscription state.
var Subscriptions = []string{SubscriptionActive, SubscriptionSuspended}

// Device states. A key whose creating device is removed or archived stops working.
const (
	DeviceActive   = "active"
	DeviceRemoved  = "removed"
	DeviceArchived = "archived"
)

// Edge types and the support below which a data edge is low-confidence.
const (
	EdgeData     = "data"
	EdgeSemantic = "semantic"

	LowSupport = 3
)

// Workspace owns libraries, devices and keys; billing is per workspace.
type Workspace struct {
	ID             string
	Name           string
	Plan           Plan
	AICredit       int64
	OwnProviderKey bool
	Subscription   string
}

// Device is the desktop app installation that created a key.
type Device struct {
	ID          string
	WorkspaceID string
	Status      string
}

// KeyHash is the SHA-256 of an API key's secret. Only the hash is ever stored.
type KeyHash [sha256.Size]byte

// HashKey hashes a key secret for storage and lookup.
func HashKey(secret string) KeyHash { return sha256.Sum256([]byte(secret)) }

// String is the hash in hexadecimal, as stored.
func (h KeyHash) String() string { return hex.EncodeToString(h[:]) }

// ParseKeyHash reads a hash written by String.
func ParseKeyHash(s string) (KeyHash, error) {
	var h KeyHash
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != len(h) {
		return h, fmt.Errorf("%q is not a SHA-256 in hexadecimal", s)
	}
	copy(h[:], raw)
	return h, nil
}

// APIKey is a stored key: its hash, never its secret.
type APIKey struct {
	ID          string
	WorkspaceID string
	// DeviceID is the desktop app installation that created the key; empty for a
	// key an operator created with doclib-admin, which no device can revoke.
	DeviceID string
	Hash     KeyHash
	// AllLibraries is true for a key whose scope is "*": every library of the workspace.
	AllLibraries bool
	// Libraries is the key's scope when AllLibraries is false.
	Libraries        []string
	RecordingDetails bool
	// ExpiresAt is zero for a key that never expires.
	ExpiresAt time.Time
}

// Label is a category, tag or application with the number of documents using it.
type Label struct {
	Name          string
	DocumentCount int
}

// Section is one section of a library template.
type Section struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	// Type is "text" (a string), "steps" or "list" (arrays of strings).
	Type string `json:"type"`
}

// Section types.
const (
	SectionText  = "text"
	SectionSteps = "steps"
	SectionList  = "list"
)

// Schema describes a library's template; documents' content is keyed by its sections.
type Schema struct {
	Version  int       `json:"version"`
	Sections []Section `json:"sections"`
}

// Library is a collection of documents with one template. Its label lists and
// counts are derived from its documents and edges when data is loaded.
type Library struct {
	ID            string
	WorkspaceID   string
	Name          string
	Slug          string
	PreviousSlugs []string
	Description   string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	Schema        Schema

	// Derived at load time.
	Categories    []Label // by name
	Tags          []Label // by name
	Applications  []Label // by name
	DocumentCount int
	// EdgeCount counts the edges whose two ends are both in this library, the
	// edges its graph can show; cross-library edges are left out so that the count
	// never reveals a library outside a key's scope.
	EdgeCount int
}

// Document is a step-by-step record written from recorded work.
type Document struct {
	ID           string
	LibraryID    string
	WorkspaceID  string
	Slug         string
	Title        string
	Category     string
	Tags         []string
	Applications []string
	DeviceCount  int
	FirstSeen    time.Time
	LastSeen     time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// Content is the JSON object keyed by the library template's sections, in the
	// template's order, validated and compacted at load time.
	Content json.RawMessage

	// RecordingCount is derived: the recordings that list the document, shared or not.
	RecordingCount int
	// SharedRecordingCount is derived: those of them marked shared.
	SharedRecordingCount int
}

// Edge is a labelled link between two documents of one workspace. The titles and
// libraries of both ends are denormalised so that no lookup is needed to show it.
type Edge struct {
	SourceID        string
	SourceTitle     string
	SourceLibraryID string
	TargetID        string
	TargetTitle     string
	TargetLibraryID string
	Label           string
	Type            string
	RecordingCount  int
	Support         int
}

// CompareEdges orders edges by Support desc, then source ID, target ID and
// label: the order of a document's edges and of a graph's, in every store.
func CompareEdges(a, b *Edge) int {
	if a.Support != b.Support {
		return b.Support - a.Support
	}
	if c := strings.Compare(a.SourceID, b.SourceID); c != 0 {
		return c
	}
	if c := strings.Compare(a.TargetID, b.TargetID); c != 0 {
		return c
	}
	return strings.Compare(a.Label, b.Label)
}

// CompareLibraries orders libraries by name, ignoring case, then ID: the order
// of GET /libraries in every store.
func CompareLibraries(a, b *Library) int {
	if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// Activity is what the "most active" order reads of a document: search's
// documents are not Documents, so the order takes only these.
type Activity struct {
	RecordingCount int
	LastSeen       time.Time
	ID             string
}

// Activity is the document's place in the most-active order.
func (d *Document) Activity() Activity {
	return Activity{RecordingCount: d.RecordingCount, LastSeen: d.LastSeen, ID: d.ID}
}

// CompareActivity orders documents most active first: recordingCount desc,
// lastSeen desc, then id (docs/api.md): the order of a graph's documents and
// of search's fallback, in every store and engine.
func CompareActivity(a, b Activity) int {
	if c := cmp.Compare(b.RecordingCount, a.RecordingCount); c != 0 {
		return c
	}
	if c := b.LastSeen.Compare(a.LastSeen); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// LowConfidence reports whether the edge is a data edge with too little support.
func (e *Edge) LowConfidence() bool { return e.Type == EdgeData && e.Support < LowSupport }

// Question is one question-and-answer pair of a recording.
type Question struct {
	ID            string
	Question      string
	Response      string
	SequenceOrder int
}

// Recording is recorded work that documents were written from.
type Recording struct {
	ID              string
	DocumentIDs     []string
	Title           string
	Status          string
	Shared          bool
	ClientCreatedAt time.Time
	Questions       []Question // by SequenceOrder
	Steps           []string
}

// DocumentEdges are the edges of one document.
type DocumentEdges struct {
	Outgoing []*Edge
	Incoming []*Edge
}
