// Package search holds the rules of GET /search/documents that every backend
// shares: which signals fire, how they blend into one score, the matched set and
// its facets, the filters, ranking, paging and the low-confidence fallback.
// Backends only retrieve candidates and per-signal evidence.
package search
