package wiring

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/embedcache"
	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/settings"
)

// embedderKey is where an index directory keeps a fitted embedder (the
// offline one learns from its corpus; queries must be embedded by it). The
// manifest names it with its size and digest (Manifest.EmbedderFile).
const embedderKey = "snapshots/embedder.bin"

// IndexDir is doclib-server's --index-dir: the embedded engine over d,
// kept in dir as the embedded tier keeps it in a bucket (segments and a
// manifest, snapshot.Dir), so that a restart over the same data reads the
// index rather than building it. The manifest records a digest of d and of
// e, and names every file read back with its size and digest (the
// segments, and the fitted embedder); an index of other data, or one that
// fails to read (a file changed, missing, or not a regular file; a fitted
// embedder whose content is not the one the index was built with), is
// built again and replaces it. It returns the searcher and whether the
// index was read. A model's vectors are kept in the directory too
// (modelVectors), so that a rebuild embeds only new texts.
func IndexDir(ctx context.Context, dir string, d *doclib.DataSet, e search.Embedder, r settings.Rules, log *slog.Logger,
	progress func(done, total int)) (*search.Searcher, bool, error) {
	blobs, err := snapshot.NewDir(dir)
	if err != nil {
		return nil, false, err
	}
	source, err := digest(d, e)
	if err != nil {
		return nil, false, err
	}
	m, _, err := snapshot.ReadManifest(ctx, blobs, "")
	switch {
	case err == nil && m.Source == source:
		s, err := readIndexDir(ctx, blobs, e, m, r, log)
		if err == nil {
			return s, true, nil
		}
		log.Warn("index directory: cannot read the index; building it again", "dir", dir, "error", err)
	case err == nil:
		log.Info("index directory: the index is of other data or another embedder; building it again", "dir", dir)
	case !errors.Is(err, snapshot.ErrNotFound):
		log.Warn("index directory: cannot read the manifest; building the index again", "dir", dir, "error", err)
	}

	build, report, done := modelVectors(dir, e, progress, log)
	defer done()
	docs, fitted, err := localsearch.IndexDocs(ctx, d, build, localsearch.Options{Progress: report, Fit: true})
	if err != nil {
		return nil, false, fmt.Errorf("build the search index: %w", err)
	}
	w := snapshot.NewWriter(blobs, fitted, log)
	w.Source = source
	if c, ok := fitted.(*offline.Corpus); ok {
		data, err := c.MarshalBinary()
		if err != nil {
			return nil, false, err
		}
		ref, err := snapshot.PutFile(ctx, blobs, embedderKey, data)
		if err != nil {
			return nil, false, fmt.Errorf("index directory %s: write the fitted embedder: %w", dir, err)
		}
		w.EmbedderFile = &ref
	}
	if err := w.Publish(ctx, docs); err != nil {
		return nil, false, fmt.Errorf("index directory %s: write the index: %w", dir, err)
	}
	m, _, err = snapshot.ReadManifest(ctx, blobs, "")
	if err != nil {
		return nil, false, err
	}
	s, err := readIndexDir(ctx, blobs, e, m, r, log)
	return s, false, err
}

// vectorsDir is where an index directory keeps a model's vectors
// (embedcache: one file per embedder ID).
const vectorsDir = "vectors"

// modelVectors is the embedder an index directory's build embeds with, and
// its progress: for a model (an embedder that does not fit itself to the
// corpus, as the offline one does in process), one that keeps the model's
// vectors in dir/vectors as each request answers, so that a build over
// changed data, or one cut short and started again, embeds only what it has
// not embedded before; and whose progress moves with every request. done
// closes the vector file. A file that cannot be opened is logged, and the
// build goes on without it.
func modelVectors(dir string, e search.Embedder, progress func(done, total int), log *slog.Logger) (search.Embedder, func(done, total int), func()) {
	if _, fits := e.(search.Fitter); fits {
		return e, progress, func() {}
	}
	var build search.Embedder = e
	done := func() {}
	if c, err := embedcache.Open(filepath.Join(dir, vectorsDir), e); err != nil {
		log.Warn("index directory: cannot keep the model's vectors; embedding every text", "dir", dir, "error", err)
	} else {
		build, done = c, func() { c.Close() }
	}
	m := embedcall.NewMeter(build, progress)
	return m, m.Report, done
}

// readIndexDir serves the index m names, with the embedder it was made
// with: for the offline embedder, the fitted one the manifest names, read
// only if its size and digest are the ones named, and named by the ID its
// content gives.
func readIndexDir(ctx context.Context, blobs *snapshot.Dir, e search.Embedder, m snapshot.Manifest, r settings.Rules, log *slog.Logger) (*search.Searcher, error) {
	qe := e
	if h, ok := e.(*offline.Hashing); ok {
		if m.EmbedderFile == nil {
			return nil, errors.New("the manifest names no fitted embedder (written by an earlier version)")
		}
		data, err := snapshot.ReadFile(ctx, blobs, *m.EmbedderFile)
		if err != nil {
			return nil, err
		}
		if qe, err = offline.UnmarshalCorpus(h, data); err != nil {
			return nil, err
		}
	}
	if qe.ID() != m.Embedder {
		return nil, fmt.Errorf("the index is of embedder %s, the queries would be embedded by %s", m.Embedder, qe.ID())
	}
	// The directory changes only when this function writes it: no polls.
	f := &snapshot.Follower{Blobs: blobs, Embedder: qe, Every: 24 * time.Hour, Logger: log}
	if err := f.Load(ctx); err != nil {
		return nil, err
	}
	if st := f.Current(); st.Err != nil {
		return nil, st.Err
	}
	return r.Searcher(f, qe)
}

// digest names d and the embedder: the index of the same data embedded the
// same way is the same.
func digest(d *doclib.DataSet, e search.Embedder) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00segment format %d\x00", e.ID(), localsearch.SegmentFormat)
	if err := json.NewEncoder(h).Encode(d); err != nil {
		return "", fmt.Errorf("index directory: digest the data: %w", err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
