package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
)

// Upsert implements search.Index: one bulk request that (re)writes the
// documents through the alias. Writing the same documents again changes
// nothing.
func (b *Backend) Upsert(ctx context.Context, docs []search.IndexDoc) error {
	return b.upsertInto(ctx, b.alias, docs, nil)
}

// upsertInto bulk-indexes docs into index (an alias or a concrete index).
func (b *Backend) upsertInto(ctx context.Context, index string, docs []search.IndexDoc, refresh url.Values) error {
	if len(docs) == 0 {
		return nil
	}
	var body bytes.Buffer
	for _, d := range docs {
		if len(d.Vector) != b.dims {
			return fmt.Errorf("opensearch: document %s has a vector of %d dimensions, the index %d", d.ID, len(d.Vector), b.dims)
		}
		body.Write(mustJSON(map[string]any{"index": map[string]any{"_index": index, "_id": d.ID}}))
		body.WriteByte('\n')
		body.Write(mustJSON(newSource(b.analyzer, d)))
		body.WriteByte('\n')
	}
	return b.bulk(ctx, body.Bytes(), refresh, false)
}

// Delete implements search.Index. A document already gone is not an error.
func (b *Backend) Delete(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	var body bytes.Buffer
	for _, id := range ids {
		body.Write(mustJSON(map[string]any{"delete": map[string]any{"_index": b.alias, "_id": id}}))
		body.WriteByte('\n')
	}
	return b.bulk(ctx, body.Bytes(), nil, true)
}

// bulkResponse names the items that failed.
type bulkResponse struct {
	Errors bool `json:"errors"`
	Items  []map[string]struct {
		ID     string `json:"_id"`
		Status int    `json:"status"`
		Error  *struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"error"`
	} `json:"items"`
}

func (b *Backend) bulk(ctx context.Context, body []byte, params url.Values, deleting bool) error {
	var resp bulkResponse
	if err := b.do(ctx, http.MethodPost, "/_bulk", params, body, &resp); err != nil {
		return err
	}
	if !resp.Errors {
		return nil
	}
	var problems []string
	retryable := false
	for _, it := range resp.Items {
		for _, r := range it {
			if r.Status/100 == 2 || (deleting && r.Status == http.StatusNotFound) {
				continue
			}
			reason := fmt.Sprint(r.Status)
			if r.Error != nil {
				reason = r.Error.Type + ": " + r.Error.Reason
			}
			if r.Status == 429 || r.Status >= 500 {
				retryable = true
			}
			if len(problems) < 5 {
				problems = append(problems, r.ID+" ("+reason+")")
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	err := fmt.Errorf("opensearch: bulk: items failed: %s", strings.Join(problems, "; "))
	if retryable {
		return doclib.Unavailable(err)
	}
	return err
}

// ErrIncompatible says the index behind the alias was built for another
// embedder or an older mapping: its vectors cannot be compared with this
// program's. Its text says what cures it, so that every program that checks
// the index (EnsureIndex, CheckIndex) reports it the same way.
var ErrIncompatible = errors.New("the index is incompatible: run doclib-admin reindex against this table and cluster with this program's embedder, or deploy (or run) this program with the embedder the index was built with")

// ErrNoIndex says there is no index behind the alias yet: the indexer
// creates it at its first cold start.
var ErrNoIndex = errors.New("there is no index behind the alias yet")

// CheckIndex reads the mapping of the index behind the alias (GET
// /<alias>/_mapping, nothing else) and checks that it was built for this
// backend's embedder and mapping version; the error wraps ErrIncompatible
// when not, ErrNoIndex when the alias does not exist.
func (b *Backend) CheckIndex(ctx context.Context) error {
	return b.checkMappings(ctx, b.alias)
}

// checkMappings checks the mapping version and embedder of the indexes behind
// target, an alias or an index.
func (b *Backend) checkMappings(ctx context.Context, target string) error {
	var mappings map[string]struct {
		Mappings struct {
			Meta struct {
				Embedder    string              `json:"embedder"`
				Schema      int                 `json:"schema"`
				Calibration *search.Calibration `json:"calibration"`
			} `json:"_meta"`
		} `json:"mappings"`
	}
	err := b.do(ctx, http.MethodGet, "/"+target+"/_mapping", nil, nil, &mappings)
	var se *StatusError
	switch {
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		return fmt.Errorf("opensearch: %s: %w", target, ErrNoIndex)
	case err != nil:
		return err
	}
	for name, m := range mappings {
		meta := m.Mappings.Meta
		if meta.Schema != schemaVersion {
			return fmt.Errorf("opensearch: index %s has mapping version %d, this program writes version %d: %w",
				name, meta.Schema, schemaVersion, ErrIncompatible)
		}
		if b.embedder != "" && meta.Embedder != b.embedder {
			return fmt.Errorf("opensearch: index %s holds vectors of embedder %q, this program embeds with %q: %w",
				name, meta.Embedder, b.embedder, ErrIncompatible)
		}
		if target == b.alias {
			b.cal.Store(meta.Calibration) // nil until a reindex calibrates it
		}
	}
	return nil
}

// Calibration implements search.Calibrated: the calibration in the _meta of
// the index behind the alias, as the last check read it (nil before one,
// and for an index no reindex calibrated).
func (b *Backend) Calibration() *search.Calibration { return b.cal.Load() }

// EnsureIndex creates an index behind the alias unless the alias exists, and
// reports whether it created one (then it is empty: load it with Reindex). An
// existing index must have been built for this backend's embedder and mapping
// version, or the error wraps ErrIncompatible.
func (b *Backend) EnsureIndex(ctx context.Context) (bool, error) {
	err := b.CheckIndex(ctx)
	if !errors.Is(err, ErrNoIndex) {
		return false, err
	}
	name := b.versionedName(time.Now())
	if err := b.createIndex(ctx, name); err != nil {
		return false, err
	}
	return true, b.do(ctx, http.MethodPost, "/_aliases", nil, mustJSON(map[string]any{"actions": []any{
		map[string]any{"add": map[string]any{"index": name, "alias": b.alias, "is_write_index": true}},
	}}), nil)
}

// createIndex creates the index name with this backend's mapping. The client
// retries a request that timed out, and a create that timed out may have
// succeeded: the name is this process's own (versioned to the microsecond),
// so finding it already there with this backend's mapping means an earlier
// attempt made it.
func (b *Backend) createIndex(ctx context.Context, name string) error {
	err := b.do(ctx, http.MethodPut, "/"+name, nil, mustJSON(Mapping(b.dims, b.embedder)), nil)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusBadRequest && strings.Contains(se.Body, "resource_already_exists_exception") {
		if cerr := b.checkMappings(ctx, name); cerr == nil {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("opensearch: create index %s: %w", name, err)
	}
	return nil
}

func (b *Backend) versionedName(t time.Time) string {
	return b.alias + "-" + strings.ToLower(t.UTC().Format("20060102t150405.000000"))
}

// ReindexProgress reports a reindex.
type ReindexProgress struct {
	Index       string
	Done, Total int
}

// Reindex builds a new index from docs and swaps it in behind the alias in one
// atomic alias action, then deletes the indexes it replaced: searches keep
// answering from the old index until the new one is complete. docs calls
// yield with each batch of documents; total is their number, for progress.
// With e, the embedder of the documents' vectors, the new index is
// calibrated (search.Calibrate, on a sample of the documents) before the
// swap, and the calibration kept in its _meta, where searchers read it.
func (b *Backend) Reindex(ctx context.Context, e search.Embedder, total int, docs func(yield func([]search.IndexDoc) error) error, progress func(ReindexProgress)) (string, error) {
	name := b.versionedName(time.Now())
	if err := b.createIndex(ctx, name); err != nil {
		return "", err
	}
	sample := search.NewSample(uint64(total))
	done := 0
	err := docs(func(batch []search.IndexDoc) error {
		if err := b.upsertInto(ctx, name, batch, nil); err != nil {
			return err
		}
		if e != nil {
			for _, d := range batch {
				sample.Add(d)
			}
		}
		done += len(batch)
		if progress != nil {
			progress(ReindexProgress{Index: name, Done: done, Total: total})
		}
		return nil
	})
	if err == nil && e != nil {
		err = b.calibrate(ctx, name, e, sample.Docs())
	}
	if err != nil {
		_ = b.do(context.WithoutCancel(ctx), http.MethodDelete, "/"+name, nil, nil, nil) // leave nothing half built
		return "", fmt.Errorf("opensearch: reindex into %s: %w", name, err)
	}
	if err := b.do(ctx, http.MethodPost, "/"+name+"/_refresh", nil, nil, nil); err != nil {
		return "", err
	}
	old, err := b.aliasIndexes(ctx)
	if err != nil {
		return "", err
	}
	actions := []any{map[string]any{"add": map[string]any{"index": name, "alias": b.alias, "is_write_index": true}}}
	for _, o := range old {
		actions = append(actions, map[string]any{"remove": map[string]any{"index": o, "alias": b.alias}})
	}
	if err := b.do(ctx, http.MethodPost, "/_aliases", nil, mustJSON(map[string]any{"actions": actions}), nil); err != nil {
		return "", fmt.Errorf("opensearch: swap the alias to %s: %w", name, err)
	}
	for _, o := range old {
		if err := b.do(ctx, http.MethodDelete, "/"+o, nil, nil, nil); err != nil {
			return name, fmt.Errorf("opensearch: the alias is on %s, but the old index %s could not be deleted: %w", name, o, err)
		}
	}
	return name, nil
}

// calibrate measures e's chance level on docs (a sample of the index's
// documents) and records it in the _meta of index name (PUT _mapping
// replaces the whole _meta: the embedder and schema are written again).
func (b *Backend) calibrate(ctx context.Context, name string, e search.Embedder, docs []search.IndexDoc) error {
	vocab := map[string]bool{}
	for _, d := range docs {
		for _, t := range b.analyzer.Terms(d.Title + " " + strings.Join(d.Body, " ") + " " + strings.Join(d.Labels, " ")) {
			vocab[t] = true
		}
	}
	known := func(word string) bool {
		for _, t := range b.analyzer.Terms(word) {
			if vocab[t] {
				return true
			}
		}
		return false
	}
	cal, err := search.Calibrate(ctx, e, docs, known)
	if err != nil && ctx.Err() == nil {
		// The index is whole without it: the searches keep the embedder's
		// default thresholds until the next reindex calibrates.
		slog.Default().Warn("opensearch: cannot calibrate the embedder; its default thresholds hold until the next reindex", "index", name, "error", err)
		return nil
	}
	if err != nil || cal == nil {
		return err
	}
	return b.do(ctx, http.MethodPut, "/"+name+"/_mapping", nil, mustJSON(map[string]any{
		"_meta": meta(b.embedder, cal),
	}), nil)
}

// aliasIndexes lists the indexes behind the alias (none when it does not exist).
func (b *Backend) aliasIndexes(ctx context.Context) ([]string, error) {
	var resp map[string]json.RawMessage
	err := b.do(ctx, http.MethodGet, "/_alias/"+b.alias, nil, nil, &resp)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(resp))
	for name := range resp {
		out = append(out, name)
	}
	return out, nil
}

// Refresh makes what was written searchable now (tests and reindex; the
// cluster refreshes by itself every second).
func (b *Backend) Refresh(ctx context.Context) error {
	return b.do(ctx, http.MethodPost, "/"+b.alias+"/_refresh", nil, nil, nil)
}

// ReindexData rebuilds the index from a data set embedded with e (see
// Reindex), reporting progress in documents.
func (b *Backend) ReindexData(ctx context.Context, d *doclib.DataSet, e search.Embedder, progress func(ReindexProgress)) (string, error) {
	if b.embedder != "" && e.ID() != b.embedder {
		return "", fmt.Errorf("opensearch: the backend is for embedder %q, not %q", b.embedder, e.ID())
	}
	return b.Reindex(ctx, e, len(d.Documents), func(yield func([]search.IndexDoc) error) error {
		return search.DocsFromData(ctx, d, e, 0, yield)
	}, progress)
}
