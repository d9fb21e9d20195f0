// Package dataset reads and writes the data-set file used for import and local
// mode (docs/dataset.md), and validates it as a whole: a file with
// any problem is refused entirely, with messages that name the offending items.
package dataset

// File is the data-set file as it is written. Every array is optional.
type File struct {
	Workspaces []Workspace `json:"workspaces,omitempty"`
	Devices    []Device    `json:"devices,omitempty"`
	APIKeys    []APIKey    `json:"apiKeys,omitempty"`
	Libraries  []Library   `json:"libraries,omitempty"`
	Documents  []Document  `json:"documents,omitempty"`
	Edges      []Edge      `json:"edges,omitempty"`
	Recordings []Recording `json:"recordings,omitempty"`
}

// Workspace as written in a data set.
type Workspace struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Plan           string `json:"plan"`
	AICredit       int64  `json:"aiCredit"`
	OwnProviderKey bool   `json:"ownProviderKey"`
	Subscription   string `json:"subscription"`
}

// Device as written in a data set.
type Device struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspaceId"`
	Status      string `json:"status"`
}

// APIKey as written in a data set: the secret is plaintext here and nowhere else.
type APIKey struct {
	ID               string   `json:"id"`
	WorkspaceID      string   `json:"workspaceId"`
	DeviceID         string   `json:"deviceId"`
	Secret           string   `json:"secret"`
	Libraries        []string `json:"libraries"`
	RecordingDetails bool     `json:"recordingDetails"`
	ExpiresAt        string   `json:"expiresAt,omitempty"`
}

// Library as written in a data set.
type Library struct {
	ID            string   `json:"id"`
	WorkspaceID   string   `json:"workspaceId"`
	Name          string   `json:"name"`
	Slug          string   `json:"slug"`
	PreviousSlugs []string `json:"previousSlugs,omitempty"`
	Description   string   `json:"description"`
	CreatedAt     string   `json:"createdAt"`
	UpdatedAt     string   `json:"updatedAt"`
	Schema        Schema   `json:"schema"`
}

// Schema is a library template.
type Schema struct {
	Version  int       `json:"version"`
	Sections []Section `json:"sections"`
}

// Section is one section of a template.
type Section struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Type  string `json:"type"`
}

// Document as written in a data set. Content maps section keys to a string (text
// sections) or an array of strings (steps and list sections).
type Document struct {
	ID           string         `json:"id"`
	LibraryID    string         `json:"libraryId"`
	Slug         string         `json:"slug"`
	Title        string         `json:"title"`
	Category     string         `json:"category"`
	Tags         []string       `json:"tags"`
	Applications []string       `json:"applications"`
	DeviceCount  int            `json:"deviceCount"`
	FirstSeen    string         `json:"firstSeen"`
	LastSeen     string         `json:"lastSeen"`
	CreatedAt    string         `json:"createdAt"`
	UpdatedAt    string         `json:"updatedAt"`
	Content      map[string]any `json:"content"`
}

// Edge as written in a data set.
type Edge struct {
	SourceDocumentID string `json:"sourceDocumentId"`
	TargetDocumentID string `json:"targetDocumentId"`
	Label            string `json:"label"`
	EdgeType         string `json:"edgeType"`
	RecordingCount   int    `json:"recordingCount"`
	Support          int    `json:"support"`
}

// Recording as written in a data set.
type Recording struct {
	ID              string     `json:"id"`
	DocumentIDs     []string   `json:"documentIds"`
	Title           string     `json:"title"`
	Status          string     `json:"status"`
	Shared          bool       `json:"shared"`
	ClientCreatedAt string     `json:"clientCreatedAt"`
	Questions       []Question `json:"questions"`
	Steps           []string   `json:"steps"`
}

// Question as written in a data set.
type Question struct {
	ID            string `json:"id"`
	Question      string `json:"question"`
	Response      string `json:"response"`
	SequenceOrder int    `json:"sequenceOrder"`
}
