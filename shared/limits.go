package doclib

import "time"

// The spec's limits (docs/api.md, "Limits"), declared once: the
// server enforces them, the clients and the stack describe or configure them.
const (
	// KeyLimit and IPLimit are the requests a key and a client IP address may
	// make per RateWindow (docs/api.md, "Limits", "Rate limits").
	KeyLimit   = 100
	IPLimit    = 300
	RateWindow = time.Minute

	// DefaultPageSize and MaxPageSize bound pageSize on paged endpoints; a larger
	// one is capped (docs/api.md, "Pagination", "Pagination").
	DefaultPageSize = 20
	MaxPageSize     = 100
	// MaxRecordingsPageSize is the pageSize cap of source recordings
	// (docs/api.md, "Limits").
	MaxRecordingsPageSize = 50

	// MinQueryLength and MaxQueryLength bound search's q, in characters after
	// trimming (docs/api.md, "Limits").
	MinQueryLength = 2
	MaxQueryLength = 512

	// MinDepth and MaxDepth bound a traversal's depth in hops, DefaultDepth
	// when none is asked (docs/api.md, "Limits" and traverse's parameters).
	MinDepth     = 1
	MaxDepth     = 3
	DefaultDepth = 1

	// GraphMaxDocuments and GraphMaxEdges cap a library graph, most active
	// first (docs/api.md, "Limits").
	GraphMaxDocuments = 2000
	GraphMaxEdges     = 5000
)
