package opensearch

import (
	"context"
	"errors"
	"fmt"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
)

// Checked is the backend of a program that only searches (the search
// function): before its first search, and again at most every
// search.IndexCheckEvery (a reindex may swap the alias), it
// checks that the index behind the alias holds vectors of its embedder
// (CheckIndex, one GET of the mapping), so that it never compares one model's
// query vectors with another's document vectors. It never creates the index
// (the indexer does), and its start makes no call: a cold start pays only
// for what its first request needs.
//
// A failed check fails the search with doclib's unavailable error (503), and
// the next search checks again.
type Checked struct {
	*Backend
	// Recheck spaces the checks out (its zero value: search.IndexCheckEvery).
	Recheck search.Recheck
}

var _ search.Backend = (*Checked)(nil)

// Match checks the index if due, then matches.
func (c *Checked) Match(ctx context.Context, q *search.Query) (*search.Matches, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	return c.Backend.Match(ctx, q)
}

// MostActive checks the index if due, then lists.
func (c *Checked) MostActive(ctx context.Context, q *search.Query, f search.Filter) ([]search.Hit, int, error) {
	if err := c.check(ctx); err != nil {
		return nil, 0, err
	}
	return c.Backend.MostActive(ctx, q, f)
}

// Prepare implements search.Preparer: the check, before the searcher
// settles the rules, so that the index's calibration is known by then.
func (c *Checked) Prepare(ctx context.Context) error { return c.check(ctx) }

func (c *Checked) check(ctx context.Context) error {
	err := c.Recheck.Do(ctx, c.Backend.CheckIndex)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrIncompatible):
		return doclib.Unavailable(err) // ErrIncompatible says what cures it
	case errors.Is(err, ErrNoIndex):
		return doclib.Unavailable(fmt.Errorf("%w; the indexer creates it at its cold start", err))
	}
	return doclib.Unavailable(fmt.Errorf("opensearch: check the index: %w", err))
}
