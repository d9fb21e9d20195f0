package doclib

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Store reads stored data. Every method is one access pattern; an implementation
// answers it with as few round trips as its backend allows. A missing item is
// ErrNotFound (never nil, nil). The service applies a key's scope to what
// Store methods return; DocumentsWithEdges also takes it, so that a document
// outside it costs what a missing one does (a timing would tell them apart).
type Store interface {
	// APIKey returns the key whose secret hashes to hash.
	APIKey(ctx context.Context, hash KeyHash) (*APIKey, error)
	// Workspace returns a workspace by ID.
	Workspace(ctx context.Context, id string) (*Workspace, error)
	// Device returns a device of a workspace by ID.
	Device(ctx context.Context, workspaceID, id string) (*Device, error)

	// Libraries returns every library of a workspace.
	Libraries(ctx context.Context, workspaceID string) ([]*Library, error)
	// Library resolves a library of a workspace by ID, current slug or earlier slug.
	Library(ctx context.Context, workspaceID, ref string) (*Library, error)

	// ListDocuments returns one page of a library's documents that pass the filter,
	// ordered by UpdatedAt descending then ID, and the exact number that pass. lib
	// is the library as Library returned it: its derived counts let a store know
	// the total of an unfiltered or single-label list without counting.
	ListDocuments(ctx context.Context, lib *Library, f DocumentFilter, offset, limit int) ([]*Document, int, error)
	// Documents returns the documents with the given IDs; missing IDs are left out.
	Documents(ctx context.Context, ids []string) (map[string]*Document, error)
	// DocumentsWithEdges returns the documents with the given IDs and the edges of
	// each, in one access: a document and its edges live together. A document
	// without edges (or missing) has no entry in the second map. A document
	// outside within (nil: no limit) is left out as if missing, and reading it
	// costs what reading a missing one does.
	DocumentsWithEdges(ctx context.Context, ids []string, within *Scope) (map[string]*Document, map[string]*DocumentEdges, error)
	// Graph returns a library's most active documents (CompareActivity), at most
	// maxDocs, and the edges between them (CompareEdges), at most maxEdges;
	// truncated is true when either cap removed anything. CapGraph computes it.
	Graph(ctx context.Context, libraryID string, maxDocs, maxEdges int) (docs []*Document, edges []*Edge, truncated bool, err error)
	// SharedRecordings returns one page of the recordings behind a document that are
	// marked shared, by ClientCreatedAt desc then ID. Their number is the
	// document's SharedRecordingCount.
	SharedRecordings(ctx context.Context, doc *Document, offset, limit int) ([]*Recording, error)
}

// Versioned is a Store whose data is a snapshot: while Version returns the
// same number, every read returns the same data. The memory store is one (a
// snapshot until Replace); what is derived from its reads alone may be kept
// and reused while the version holds (httpapi keeps answers so).
type Versioned interface {
	Version() uint64
}

// DocumentFilter narrows a library's document list. Empty fields do not filter.
type DocumentFilter struct {
	Category    string
	Tag         string
	Application string
	// Search is a case-insensitive substring of the title or of one content string.
	Search string
}

// ContainsText reports whether the lower-cased needle occurs in the document's
// title or in one of its content strings, ignoring case: the documents filter's
// search, the same for every store.
func ContainsText(d *Document, needle string) bool {
	if strings.Contains(strings.ToLower(d.Title), needle) {
		return true
	}
	for _, s := range ContentStrings(d.Content) {
		if strings.Contains(strings.ToLower(s), needle) {
			return true
		}
	}
	return false
}

// Limiter counts requests in fixed windows. An implementation must be exact under
// concurrent callers, also across processes where it is shared.
type Limiter interface {
	// Take takes one request from bucket's window containing now if fewer than
	// limit were taken; a refused request takes nothing.
	Take(ctx context.Context, bucket string, limit int, window time.Duration, now time.Time) (Quota, error)
	// Release gives back one request taken from bucket's window containing now,
	// for a request that a later limit refused: a refused request consumes no
	// quota anywhere. It never takes a window's count below zero.
	Release(ctx context.Context, bucket string, window time.Duration, now time.Time) error
}

// Ledger holds the AI credit of workspaces: every search that passes validation
// spends one credit of the key's workspace, unless the workspace brings its own
// AI provider key. An implementation must be exact under concurrent callers, also
// across processes where it is shared.
type Ledger interface {
	// Spend takes one credit from the workspace, or returns ErrNoCredit (and takes
	// nothing) when none is left.
	Spend(ctx context.Context, workspaceID string) error
	// Refund gives back one credit, for a search that failed after it was paid.
	Refund(ctx context.Context, workspaceID string) error
}

// ErrNoCredit is what a Ledger returns when a workspace has no AI credit left.
var ErrNoCredit = errors.New("no AI credit left")

// Quota is a limiter's answer.
type Quota struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is when the current window ends.
	Reset time.Time
}

// Principal is who a request acts for: an authenticated key and its scope.
type Principal struct {
	KeyID            string
	WorkspaceID      string
	Plan             Plan
	AllLibraries     bool
	Libraries        map[string]bool
	RecordingDetails bool
	// Suspended is true when the workspace's subscription is suspended.
	Suspended bool
	// OwnProviderKey is true when the workspace brings its own AI provider key:
	// its searches are never metered.
	OwnProviderKey bool
	// ExpiresAt is the key's expiry; zero for a key that never expires.
	ExpiresAt time.Time
}

// Sees reports whether the principal may see a library. Libraries of other
// workspaces are never visible.
func (p *Principal) Sees(lib *Library) bool {
	return lib != nil && lib.WorkspaceID == p.WorkspaceID && p.SeesLibraryID(lib.ID)
}

// Scope is the principal's scope as a store reads it.
func (p *Principal) Scope() *Scope {
	sc := &Scope{WorkspaceID: p.WorkspaceID}
	if !p.AllLibraries {
		sc.Libraries = make([]string, 0, len(p.Libraries))
		for id := range p.Libraries {
			sc.Libraries = append(sc.Libraries, id)
		}
		slices.Sort(sc.Libraries)
	}
	return sc
}

// Scope narrows a store's read to what a key may see: one workspace and, in
// it, the listed libraries (nil: all of them). A store leaves out what lies
// outside while reading exactly what it reads for a missing ID, so that an
// out-of-scope document's 404 is not slower than a missing one's.
type Scope struct {
	WorkspaceID string
	Libraries   []string
}

// Holds reports whether a document of the workspace and library is in scope.
func (sc *Scope) Holds(workspaceID, libraryID string) bool {
	return sc == nil || workspaceID == sc.WorkspaceID && (sc.Libraries == nil || slices.Contains(sc.Libraries, libraryID))
}

// SeesLibraryID reports whether a library ID of the principal's own workspace is in
// scope. Use it only where the workspace is known to match (edges never cross
// workspaces; the loader refuses such data).
func (p *Principal) SeesLibraryID(id string) bool { return p.AllLibraries || p.Libraries[id] }
