package snapshot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// Follower is the search function's side of the embedded tier: a
// search.Backend over the snapshot the pointer names. Load, at init, loads
// it and builds the engine over it; then each search, at most once per
// Every, reads the pointer on condition that it changed (one small GET,
// answered "not modified" in the common case), and when it names another
// snapshot, loads and builds that one and swaps it in at once. A search
// always runs on one whole snapshot: the one in service when it started.
//
// The request that notices a new snapshot loads it itself, synchronously,
// rather than in a background goroutine. In Lambda, an instance serves one
// request at a time and is frozen between them: a background load would
// progress only while requests run, competing with them for the same CPU,
// and a download of hundreds of megabytes stalled across freezes is likely
// to be dropped by the object store and start over, so under light traffic
// it might never finish. Loaded in the request, it finishes, at the cost of
// one slow request per published snapshot per instance (bounded by the
// indexer committing once per batch, and by Every). Loads are single-flight
// all the same: where requests do run concurrently (a long-running server),
// the others keep searching the index in service while one loads.
//
// A snapshot that fails to load (unreadable, corrupt, of another embedder,
// or whose engine fails to build) is logged at error level and the last good
// index stays in service; the next check tries it again. With no good index
// at all (a refused snapshot at init), searches fail with doclib's
// unavailable error (503) saying what cures it, until a good one is
// published. When nothing was published yet, the index is empty.
type Follower struct {
	Blobs Blobs
	// Build builds the engine over a snapshot's documents.
	Build func(ctx context.Context, docs []search.IndexDoc) (search.Retriever, error)
	// Embedder and Dimensions are what the snapshot's vectors must be: the
	// ID and vector length of the embedder the queries are embedded with.
	Embedder   string
	Dimensions int
	// Every is the interval between pointer checks (settings.DefaultSnapshotPoll when 0).
	Every time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger gets the loads and their failures (slog.Default when nil).
	Logger *slog.Logger

	cur     atomic.Pointer[serving]
	checked atomic.Pointer[time.Time] // when the pointer was last checked; nil: never
	loading sync.Mutex                // held by the one request checking or loading
	warned  bool                      // "nothing published yet" was logged (under loading)
}

// State is what a Follower has in service.
type State struct {
	// Header is the snapshot's (zero when the index is empty), Version its
	// version of SnapshotKey.
	Header  Header
	Version string
	// Err is why there is no index in service, nil when there is one.
	Err error
}

type serving struct {
	State
	etag    string // the pointer's ETag
	backend search.Backend
}

var _ search.Backend = (*Follower)(nil)

// Current returns what is in service.
func (f *Follower) Current() State {
	if s := f.cur.Load(); s != nil {
		return s.State
	}
	return State{Err: errors.New("snapshot: the follower was not loaded")}
}

// Load loads the snapshot the pointer names, at init. A snapshot that is
// corrupt or of another embedder is not an error of Load: searches then
// fail with 503 until a good one is published. Other failures (the store
// unreachable) are returned, and searches fail with 503 until a check
// succeeds.
func (f *Follower) Load(ctx context.Context) error {
	f.loading.Lock()
	defer f.loading.Unlock()
	f.markChecked()
	err := f.refresh(ctx)
	if errors.Is(err, ErrIncompatible) || errors.Is(err, ErrCorrupt) {
		return nil
	}
	return err
}

// Refresh checks the pointer now, and loads the snapshot it names if it is
// not the one in service, whatever the time since the last check.
func (f *Follower) Refresh(ctx context.Context) error {
	f.loading.Lock()
	defer f.loading.Unlock()
	f.markChecked()
	return f.refresh(ctx)
}

// Match implements search.Backend.
func (f *Follower) Match(ctx context.Context, q *search.Query) (*search.Matches, error) {
	b, err := f.backend(ctx)
	if err != nil {
		return nil, err
	}
	return b.Match(ctx, q)
}

// MostActive implements search.Backend.
func (f *Follower) MostActive(ctx context.Context, q *search.Query, fl search.Filter) ([]search.Hit, int, error) {
	b, err := f.backend(ctx)
	if err != nil {
		return nil, 0, err
	}
	return b.MostActive(ctx, q, fl)
}

func (f *Follower) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Follower) every() time.Duration {
	if f.Every > 0 {
		return f.Every
	}
	return settings.DefaultSnapshotPoll
}

func (f *Follower) logger() *slog.Logger {
	if f.Logger != nil {
		return f.Logger
	}
	return slog.Default()
}

func (f *Follower) markChecked() {
	t := f.now()
	f.checked.Store(&t)
}

// backend checks the pointer if due, then returns the index in service.
func (f *Follower) backend(ctx context.Context) (search.Backend, error) {
	f.maybeRefresh(ctx)
	s := f.cur.Load()
	if s == nil {
		return nil, doclib.Unavailable(errors.New("snapshot: the follower was not loaded"))
	}
	if s.Err != nil {
		return nil, doclib.Unavailable(s.Err)
	}
	return s.backend, nil
}

func (f *Follower) maybeRefresh(ctx context.Context) {
	due := func() bool {
		last := f.checked.Load()
		return last == nil || f.now().Sub(*last) >= f.every()
	}
	if !due() || !f.loading.TryLock() {
		return // not due, or another request is checking: search what is in service
	}
	defer f.loading.Unlock()
	if !due() {
		return
	}
	f.markChecked()
	f.refresh(ctx) // logged; the index in service stays
}

// refresh reads the pointer and loads what it names unless it is in
// service. The caller holds f.loading.
func (f *Follower) refresh(ctx context.Context) error {
	cur := f.cur.Load()
	etag := ""
	if cur != nil && cur.Err == nil {
		etag = cur.etag // a failed one is tried again
	}
	p, obj, err := ReadPointer(ctx, f.Blobs, etag)
	switch {
	case errors.Is(err, ErrNotModified):
		return nil
	case errors.Is(err, ErrNotFound):
		if cur != nil && cur.Err == nil {
			f.logger().Warn("snapshot: the pointer is gone; the index in service stays", "sequence", cur.Header.Sequence)
			return nil
		}
		if !f.warned {
			f.logger().Warn("snapshot: nothing was published yet: searches find nothing until the indexer publishes a snapshot", "key", PointerKey)
			f.warned = true
		}
		f.cur.Store(&serving{backend: empty{}})
		return nil
	case err != nil:
		return f.failed(cur, Pointer{}, fmt.Errorf("snapshot: read the pointer: %w", err))
	}
	if cur != nil && cur.Err == nil && cur.Version == p.Version && cur.Header.Sequence == p.Sequence {
		f.cur.Store(&serving{State: cur.State, etag: obj.ETag, backend: cur.backend})
		return nil
	}
	start := time.Now()
	h, docs, err := LoadSnapshot(ctx, f.Blobs, p, Expect{Embedder: f.Embedder, Dimensions: f.Dimensions})
	if err != nil {
		return f.failed(cur, p, err)
	}
	loaded := time.Since(start)
	r, err := f.Build(ctx, docs)
	if err != nil {
		return f.failed(cur, p, fmt.Errorf("snapshot: build the index of snapshot %d: %w", p.Sequence, err))
	}
	f.cur.Store(&serving{State: State{Header: h, Version: p.Version}, etag: obj.ETag, backend: search.Local{Retriever: r}})
	f.logger().Info("snapshot: in service", "sequence", h.Sequence, "key", p.Key, "version", p.Version,
		"documents", h.Documents, "bytes", p.Bytes, "load", loaded, "build", time.Since(start)-loaded)
	return nil
}

// failed logs a failed check or load; with no good index in service, err
// becomes what searches answer.
func (f *Follower) failed(cur *serving, p Pointer, err error) error {
	args := []any{"key", p.Key, "version", p.Version, "sequence", p.Sequence, "error", err}
	if cur != nil && cur.Err == nil {
		f.logger().Error("snapshot: cannot load the snapshot the pointer names; the last good one stays in service",
			append(args, "in_service", cur.Header.Sequence)...)
		return err
	}
	f.logger().Error("snapshot: cannot load the snapshot the pointer names; searches fail until a good one is published", args...)
	f.cur.Store(&serving{State: State{Err: err}})
	return err
}

// empty is the index before anything was published.
type empty struct{}

func (empty) Match(_ context.Context, q *search.Query) (*search.Matches, error) {
	return search.Evaluate(nil, q), nil
}

func (empty) MostActive(context.Context, *search.Query, search.Filter) ([]search.Hit, int, error) {
	return nil, 0, nil
}
