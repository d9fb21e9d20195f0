package dynamo

import (
	"encoding/json"
	"fmt"
	"time"

	doclib "github.com/doclib/doclib/shared"
)

// The items of the table (docs/dynamodb.md). Every imported item carries its
// workspace (ws) and import generation (gen); items without ws (credit, rate
// limits, operators' keys) are never pruned by an import.

type base struct {
	PK  string `dynamodbav:"pk"`
	SK  string `dynamodbav:"sk"`
	WS  string `dynamodbav:"ws,omitempty"`
	Gen string `dynamodbav:"gen,omitempty"`
}

type workspaceItem struct {
	base
	ID             string `dynamodbav:"id"`
	Name           string `dynamodbav:"name"`
	Plan           string `dynamodbav:"plan"`
	Subscription   string `dynamodbav:"subscription"`
	OwnProviderKey bool   `dynamodbav:"ownProviderKey"`
}

type creditItem struct {
	base
	Credit int64 `dynamodbav:"credit"`
}

type deviceItem struct {
	base
	ID     string `dynamodbav:"id"`
	Status string `dynamodbav:"status"`
}

// keyItem is both the lookup item (pk KEY#<hash>) and the workspace's listing of
// the key (pk WS#<ws>, sk KEY#<id>), which holds the hash so that revoking can
// find the lookup item. Neither holds the secret.
type keyItem struct {
	base
	ID               string   `dynamodbav:"id"`
	WorkspaceID      string   `dynamodbav:"workspaceId"`
	DeviceID         string   `dynamodbav:"deviceId,omitempty"`
	Hash             string   `dynamodbav:"hash"`
	AllLibraries     bool     `dynamodbav:"allLibraries"`
	Libraries        []string `dynamodbav:"libraries,omitempty"`
	RecordingDetails bool     `dynamodbav:"recordingDetails"`
	ExpiresAt        string   `dynamodbav:"expiresAt,omitempty"` // RFC 3339; empty: never
	CreatedAt        string   `dynamodbav:"createdAt,omitempty"`
}

type libraryItem struct {
	base
	ID            string    `dynamodbav:"id"`
	Name          string    `dynamodbav:"name"`
	Slug          string    `dynamodbav:"slug"`
	PreviousSlugs []string  `dynamodbav:"previousSlugs,omitempty"`
	Description   string    `dynamodbav:"description"`
	CreatedAt     time.Time `dynamodbav:"createdAt"`
	UpdatedAt     time.Time `dynamodbav:"updatedAt"`
	Schema        string    `dynamodbav:"schema"` // JSON of doclib.Schema
	Categories    string    `dynamodbav:"categories"`
	Tags          string    `dynamodbav:"tags"`
	Applications  string    `dynamodbav:"applications"`
	DocumentCount int       `dynamodbav:"documentCount"`
	EdgeCount     int       `dynamodbav:"edgeCount"`
}

type slugItem struct {
	base
	LibraryID string `dynamodbav:"libraryId"`
}

// documentItem is a document in its own partition (sk A) and, with ord, its copy
// in its library's list.
type documentItem struct {
	base
	Ord                  string    `dynamodbav:"ord,omitempty"`
	ID                   string    `dynamodbav:"id"`
	LibraryID            string    `dynamodbav:"libraryId"`
	WorkspaceID          string    `dynamodbav:"workspaceId"`
	Slug                 string    `dynamodbav:"slug"`
	Title                string    `dynamodbav:"title"`
	Category             string    `dynamodbav:"category"`
	Tags                 []string  `dynamodbav:"tags"`
	Applications         []string  `dynamodbav:"applications"`
	DeviceCount          int       `dynamodbav:"deviceCount"`
	RecordingCount       int       `dynamodbav:"recordingCount"`
	SharedRecordingCount int       `dynamodbav:"sharedRecordingCount"`
	FirstSeen            time.Time `dynamodbav:"firstSeen"`
	LastSeen             time.Time `dynamodbav:"lastSeen"`
	CreatedAt            time.Time `dynamodbav:"createdAt"`
	UpdatedAt            time.Time `dynamodbav:"updatedAt"`
	Content              string    `dynamodbav:"content"` // compact JSON, in template order
}

type edgeItem struct {
	base
	SourceID        string `dynamodbav:"src"`
	SourceTitle     string `dynamodbav:"srcTitle"`
	SourceLibraryID string `dynamodbav:"srcLib"`
	TargetID        string `dynamodbav:"dst"`
	TargetTitle     string `dynamodbav:"dstTitle"`
	TargetLibraryID string `dynamodbav:"dstLib"`
	Label           string `dynamodbav:"label"`
	Type            string `dynamodbav:"type"`
	RecordingCount  int    `dynamodbav:"recordingCount"`
	Support         int    `dynamodbav:"support"`
}

type recordingItem struct {
	base
	Ord             string    `dynamodbav:"ord"`
	ID              string    `dynamodbav:"id"`
	DocumentIDs     []string  `dynamodbav:"documentIds"`
	Title           string    `dynamodbav:"title"`
	Status          string    `dynamodbav:"status"`
	Shared          bool      `dynamodbav:"shared"`
	ClientCreatedAt time.Time `dynamodbav:"clientCreatedAt"`
	Questions       string    `dynamodbav:"questions"` // JSON, by sequenceOrder
	Steps           []string  `dynamodbav:"steps"`
}

// graphMetaItem and graphChunkItem hold a library's capped graph, computed by the
// import with the same code as the embedded store, in chunks under the item size
// limit.
type graphMetaItem struct {
	base
	Chunks    int  `dynamodbav:"chunks"`
	MaxDocs   int  `dynamodbav:"maxDocs"`
	MaxEdges  int  `dynamodbav:"maxEdges"`
	Truncated bool `dynamodbav:"truncated"`
}

type graphChunkItem struct {
	base
	Data string `dynamodbav:"data"` // JSON of graphChunk
}

type graphChunk struct {
	Documents []graphDoc  `json:"d,omitempty"`
	Edges     []graphEdge `json:"e,omitempty"`
}

type graphDoc struct {
	ID             string    `json:"i"`
	Title          string    `json:"t"`
	Category       string    `json:"c"`
	Tags           []string  `json:"g"`
	Applications   []string  `json:"a"`
	RecordingCount int       `json:"r"`
	LastSeen       time.Time `json:"l"`
}

type graphEdge struct {
	SourceID, SourceTitle, TargetID, TargetTitle, Label, Type string
	RecordingCount, Support                                   int
}

// rateItem is one fixed window of one bucket.
type rateItem struct {
	base
	Count int   `dynamodbav:"n"`
	Exp   int64 `dynamodbav:"exp"`
}

// Conversions.

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

func (w *workspaceItem) domain(credit int64) *doclib.Workspace {
	return &doclib.Workspace{ID: w.ID, Name: w.Name, Plan: doclib.Plan(w.Plan), AICredit: credit,
		OwnProviderKey: w.OwnProviderKey, Subscription: w.Subscription}
}

func (k *keyItem) domain() (*doclib.APIKey, error) {
	h, err := doclib.ParseKeyHash(k.Hash)
	if err != nil {
		return nil, fmt.Errorf("dynamo: key %s: the stored hash is not a SHA-256", k.ID)
	}
	key := &doclib.APIKey{ID: k.ID, WorkspaceID: k.WorkspaceID, DeviceID: k.DeviceID, Hash: h,
		AllLibraries: k.AllLibraries, Libraries: k.Libraries, RecordingDetails: k.RecordingDetails}
	if k.ExpiresAt != "" {
		if key.ExpiresAt, err = time.Parse(time.RFC3339, k.ExpiresAt); err != nil {
			return nil, fmt.Errorf("dynamo: key %s: expiresAt: %w", k.ID, err)
		}
	}
	return key, nil
}

func (l *libraryItem) domain() (*doclib.Library, error) {
	lib := &doclib.Library{ID: l.ID, WorkspaceID: l.WS, Name: l.Name, Slug: l.Slug, PreviousSlugs: nonNil(l.PreviousSlugs),
		Description: l.Description, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
		DocumentCount: l.DocumentCount, EdgeCount: l.EdgeCount}
	for _, part := range []struct {
		raw string
		out any
	}{{l.Schema, &lib.Schema}, {l.Categories, &lib.Categories}, {l.Tags, &lib.Tags}, {l.Applications, &lib.Applications}} {
		if err := json.Unmarshal([]byte(part.raw), part.out); err != nil {
			return nil, fmt.Errorf("dynamo: library %s: %w", l.ID, err)
		}
	}
	for _, ls := range []*[]doclib.Label{&lib.Categories, &lib.Tags, &lib.Applications} {
		if *ls == nil {
			*ls = []doclib.Label{}
		}
	}
	if lib.Schema.Sections == nil {
		lib.Schema.Sections = []doclib.Section{}
	}
	return lib, nil
}

func (d *documentItem) domain() *doclib.Document {
	return &doclib.Document{ID: d.ID, LibraryID: d.LibraryID, WorkspaceID: d.WorkspaceID, Slug: d.Slug, Title: d.Title,
		Category: d.Category, Tags: nonNil(d.Tags), Applications: nonNil(d.Applications), DeviceCount: d.DeviceCount,
		FirstSeen: d.FirstSeen, LastSeen: d.LastSeen, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		Content: json.RawMessage(d.Content), RecordingCount: d.RecordingCount, SharedRecordingCount: d.SharedRecordingCount}
}

func (e *edgeItem) domain() *doclib.Edge {
	return &doclib.Edge{SourceID: e.SourceID, SourceTitle: e.SourceTitle, SourceLibraryID: e.SourceLibraryID,
		TargetID: e.TargetID, TargetTitle: e.TargetTitle, TargetLibraryID: e.TargetLibraryID, Label: e.Label,
		Type: e.Type, RecordingCount: e.RecordingCount, Support: e.Support}
}

func (r *recordingItem) domain() (*doclib.Recording, error) {
	rec := &doclib.Recording{ID: r.ID, DocumentIDs: r.DocumentIDs, Title: r.Title, Status: r.Status, Shared: r.Shared,
		ClientCreatedAt: r.ClientCreatedAt, Steps: nonNil(r.Steps), Questions: []doclib.Question{}}
	if err := json.Unmarshal([]byte(r.Questions), &rec.Questions); err != nil {
		return nil, fmt.Errorf("dynamo: recording %s: %w", r.ID, err)
	}
	return rec, nil
}
