// Package indexer keeps the search index in step with the table: it reads the
// table's DynamoDB Stream (view type NEW_AND_OLD_IMAGES), works out which
// documents each record touches, and rewrites or deletes their index documents.
//
// It never builds an index document from a stream image. It re-reads each
// affected document, its workspace and its shared recordings from the table and
// indexes what it finds (or deletes the document when it is gone). That makes a
// record a mere "look at document d again": handling a record twice, out of
// order, or after a later one gives the same index, which is what Lambda's
// at-least-once, retry-from-the-failed-record delivery needs.
package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sync/errgroup"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
)

// Source is what the indexer reads from the table. *dynamo.Store implements it;
// tests use maps.
type Source interface {
	// Documents returns the documents of ids that exist, by ID; a missing ID is
	// left out, which is how the indexer learns that a document was deleted.
	Documents(ctx context.Context, ids []string) (map[string]*doclib.Document, error)
	// SharedRecordings pages through a document's shared recordings; there are
	// doc.SharedRecordingCount of them.
	SharedRecordings(ctx context.Context, doc *doclib.Document, offset, limit int) ([]*doclib.Recording, error)
	// Workspace returns a workspace, or doclib.ErrNotFound. Its plan decides
	// whether any recording may influence search.
	Workspace(ctx context.Context, id string) (*doclib.Workspace, error)
	// Libraries lists a workspace's libraries: the fan-out of a plan change.
	Libraries(ctx context.Context, workspaceID string) ([]*doclib.Library, error)
	// LibraryDocumentIDs lists the IDs of a library's documents: the fan-out of
	// a library change.
	LibraryDocumentIDs(ctx context.Context, libraryID string) ([]string, error)
}

// DefaultBatchSize is the number of documents per Upsert (and per Documents
// read) when Indexer.BatchSize is 0.
const DefaultBatchSize = 50

const (
	// recordingPage is how many shared recordings one SharedRecordings call asks for.
	recordingPage = 100
	// maxEmbedTexts bounds one Embed call. A document and its readable recordings
	// go in one call unless it has more recordings than this.
	maxEmbedTexts = 128
	// concurrency bounds the documents read and embedded at once.
	concurrency = 8
)

// Indexer turns DynamoDB Stream records into search index writes. Its fields are
// set once; Handle may then be called concurrently.
type Indexer struct {
	Source   Source
	Embedder search.Embedder
	Index    search.Index
	// Logger gets one line per poisoned record and per failed document; nil
	// means slog.Default(). Item contents are never logged, only keys and IDs.
	Logger *slog.Logger
	// BatchSize is the number of documents per Upsert; 0 means DefaultBatchSize.
	BatchSize int
	// Usage, with Keys, keeps API Gateway's usage plans in step with the
	// table's keys; nil when the API is not behind usage plans (tests, local).
	Usage UsageKeys
	Keys  KeySource

	// CheckIndex, when set, checks that the index behind the alias holds this
	// embedder's vectors in this mapping version (opensearch's EnsureIndex).
	// A warm function checked it at its cold start, but a reindex may since
	// have swapped the alias to an index of another embedder, and writing this
	// embedder's vectors there would mix two models. So it is called again
	// before documents are embedded and written, at most once per
	// Recheck.Every while it passes and once per batch while it fails. When it
	// fails, every document the batch would write fails (their records come
	// back); deletions go ahead, as they write no vector.
	CheckIndex func(context.Context) error
	// Recheck spaces the checks out (its zero value:
	// search.IndexCheckEvery).
	Recheck search.Recheck
}

// Change is what one stream record asks the indexer to look at again. Affected
// reports it without reading the table; Handle expands libraries and workspaces
// into their documents.
type Change struct {
	// Documents are re-read and re-indexed, or deleted from the index when gone.
	Documents []string
	// Libraries stand for every document they list.
	Libraries []string
	// Workspaces stand for every document of every library they hold, and,
	// with usage sync on, for every key of the workspace (its tier changed).
	Workspaces []string
	// Keys are keys whose usage registration is looked at again (usage sync
	// on only).
	Keys []doclib.KeyHash
}

// Empty reports whether the record touches nothing the index or the usage
// plans hold.
func (c Change) Empty() bool {
	return len(c.Documents) == 0 && len(c.Libraries) == 0 && len(c.Workspaces) == 0 && len(c.Keys) == 0
}

// Attribute names of the table (shared/backend/dynamo/items.go).
const (
	attrPK   = "pk"
	attrSK   = "sk"
	attrGen  = "gen"
	attrPlan = "plan"
)

// Affected reports which documents a stream record touches, from its keys and,
// where needed, its images:
//
//   - DOC#<d> with sk A (the document) or R#<r> (a recording behind it): d.
//     O#… and I#… (edges) touch nothing: edges are not in the search index.
//   - WS#<ws> with sk LIB#<l> (a library) touches nothing: the index holds no
//     field of a library (see the case below).
//   - WS#<ws> with sk WS: every document of the workspace, but only when plan
//     differs between OldImage and NewImage (an INSERT or REMOVE counts as a
//     change from or to no plan): recording readability depends on the plan.
//   - KEY#<hash> with sk KEY (a key): with usage sync on (Usage set), that key's
//     usage registration; otherwise nothing.
//   - Everything else touches nothing: LIB#<l> items (D#<d>, the list copy of a
//     document whose own A item always changes with it, and G#… graphs),
//     RL#…, and WS# items CREDIT, DEV#…, KEY#…, SLUG#….
//
// D# copies are left out on purpose: they live in another partition, so their
// records may reach another shard and race the A item's record, re-reading the
// document before its A item is written and overwriting the newer index entry.
// The A item's own records are ordered with every other change of the document.
//
// A MODIFY whose images differ only in gen (an import of another file that left
// the item as it was) touches nothing: it would re-embed the whole table on
// every import. Missing images are taken as a change.
//
// An error means a poisoned record: no string pk and sk, a key of a known kind
// with an empty ID or a malformed hash, or an unknown eventName.
func (x *Indexer) Affected(rec events.DynamoDBEventRecord) (Change, error) {
	switch rec.EventName {
	case string(events.DynamoDBOperationTypeInsert), string(events.DynamoDBOperationTypeModify),
		string(events.DynamoDBOperationTypeRemove):
	default:
		return Change{}, fmt.Errorf("unknown eventName %q", rec.EventName)
	}
	pk, err := stringKey(rec.Change.Keys, attrPK)
	if err != nil {
		return Change{}, err
	}
	sk, err := stringKey(rec.Change.Keys, attrSK)
	if err != nil {
		return Change{}, err
	}
	kind, id, _ := strings.Cut(pk, "#")
	switch kind + "#" {
	case "KEY#":
		if x.Usage == nil || sk != "KEY" || !contentChanged(rec) {
			return Change{}, nil
		}
		h, err := doclib.ParseKeyHash(id)
		if err != nil {
			return Change{}, fmt.Errorf("pk %q: %w", pk, err)
		}
		return Change{Keys: []doclib.KeyHash{h}}, nil
	case "DOC#":
		if id == "" {
			return Change{}, fmt.Errorf("pk %q: no document ID", pk)
		}
		if strings.HasPrefix(sk, "O#") || strings.HasPrefix(sk, "I#") || !contentChanged(rec) {
			return Change{}, nil
		}
		return Change{Documents: []string{id}}, nil
	case "WS#":
		if id == "" {
			return Change{}, fmt.Errorf("pk %q: no workspace ID", pk)
		}
		switch {
		case sk == "WS":
			changed, err := planChanged(rec)
			if err != nil || !changed {
				return Change{}, err
			}
			return Change{Workspaces: []string{id}}, nil
		case strings.HasPrefix(sk, "LIB#"):
			lib := strings.TrimPrefix(sk, "LIB#")
			if lib == "" {
				return Change{}, fmt.Errorf("sk %q: no library ID", sk)
			}
			// The index holds no field of a library, only each document's
			// libraryId, which never changes: no library change can make an
			// indexed document stale, and a removed library's documents leave
			// through their own records. Every import that changes a document
			// also rewrites its library's counts, so re-indexing the library here
			// would re-embed it whole on every such import.
			return Change{}, nil
		}
	}
	return Change{}, nil
}

func stringKey(keys map[string]events.DynamoDBAttributeValue, name string) (string, error) {
	v, ok := keys[name]
	if !ok {
		return "", fmt.Errorf("no %s in Keys", name)
	}
	if v.DataType() != events.DataTypeString {
		return "", fmt.Errorf("%s in Keys is not a string", name)
	}
	if v.String() == "" {
		return "", fmt.Errorf("%s in Keys is empty", name)
	}
	return v.String(), nil
}

// contentChanged reports whether a record changed anything but gen. Only a
// MODIFY with both images can be found unchanged.
func contentChanged(rec events.DynamoDBEventRecord) bool {
	if rec.EventName != string(events.DynamoDBOperationTypeModify) ||
		rec.Change.OldImage == nil || rec.Change.NewImage == nil {
		return true
	}
	old, err1 := imageJSON(rec.Change.OldImage)
	cur, err2 := imageJSON(rec.Change.NewImage)
	return err1 != nil || err2 != nil || !bytes.Equal(old, cur)
}

// imageJSON is an image without gen, in a canonical form (json.Marshal sorts
// map keys).
func imageJSON(img map[string]events.DynamoDBAttributeValue) ([]byte, error) {
	m := maps.Clone(img)
	delete(m, attrGen)
	return json.Marshal(m)
}

// planChanged compares the plan of a workspace item's two images. A missing
// image is no plan, so an INSERT or REMOVE is a change; a MODIFY without its
// images (a stream of another view type) is taken as a change too.
func planChanged(rec events.DynamoDBEventRecord) (bool, error) {
	if rec.EventName == string(events.DynamoDBOperationTypeModify) &&
		(rec.Change.OldImage == nil || rec.Change.NewImage == nil) {
		return true, nil
	}
	old, err := plan(rec.Change.OldImage)
	if err != nil {
		return false, err
	}
	cur, err := plan(rec.Change.NewImage)
	if err != nil {
		return false, err
	}
	return old != cur, nil
}

func plan(img map[string]events.DynamoDBAttributeValue) (string, error) {
	v, ok := img[attrPlan]
	if !ok || v.IsNull() {
		return "", nil
	}
	if v.DataType() != events.DataTypeString {
		return "", errors.New("plan is not a string")
	}
	return v.String(), nil
}

// Handle is the Lambda handler body for a batch of stream records, with the
// event source mapping's ReportBatchItemFailures on.
//
// Partial failures: every record whose work failed is reported by its
// SequenceNumber, and only those. A record fails when it is poisoned (Affected
// refuses it), when its library or workspace cannot be listed, or when any
// document it touches could not be read, embedded or written. Records that
// touch the same document fail together. Lambda checkpoints before the lowest
// sequence number reported and retries every record from there, so the
// successful records after a failed one are handled again; reporting them too
// would change nothing, and reporting exactly the failed ones keeps the log
// and the metrics honest. A poisoned record fails on every retry, so the
// mapping needs MaximumRetryAttempts and an on-failure destination to move on.
//
// The error is non-nil only when a failed record has no SequenceNumber: it
// cannot be named, and an empty itemIdentifier would fail the whole batch
// anyway, so the whole batch is failed openly.
func (x *Indexer) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	log := x.logger()
	failed := make([]bool, len(ev.Records))
	docRecords := map[string][]int{} // document ID -> indices of the records touching it
	libDocs := map[string][]string{}
	libErrs := map[string]error{}
	wsDocs := map[string][]string{}
	wsErrs := map[string]error{}
	keyRecords := map[doclib.KeyHash][]int{}
	addKey := func(h doclib.KeyHash, i int) {
		if rs := keyRecords[h]; len(rs) == 0 || rs[len(rs)-1] != i {
			keyRecords[h] = append(rs, i)
		}
	}

	for i, rec := range ev.Records {
		c, err := x.Affected(rec)
		if err != nil {
			log.Error("indexer: poisoned stream record", "event_id", rec.EventID,
				"sequence_number", rec.Change.SequenceNumber, "error", err)
			failed[i] = true
			continue
		}
		ids := slices.Clone(c.Documents)
		for _, lib := range c.Libraries {
			docs, err := x.libraryDocuments(ctx, lib, libDocs, libErrs)
			if err != nil {
				log.Error("indexer: list library documents", "library", lib,
					"sequence_number", rec.Change.SequenceNumber, "error", err)
				failed[i] = true
			}
			ids = append(ids, docs...)
		}
		for _, ws := range c.Workspaces {
			docs, err := x.workspaceDocuments(ctx, ws, libDocs, libErrs, wsDocs, wsErrs)
			if err != nil {
				log.Error("indexer: list workspace documents", "workspace", ws,
					"sequence_number", rec.Change.SequenceNumber, "error", err)
				failed[i] = true
			}
			ids = append(ids, docs...)
			if x.Usage != nil { // the workspace's tier changed: move its keys
				hashes, err := x.Keys.WorkspaceKeyHashes(ctx, ws)
				if err != nil {
					log.Error("indexer: list workspace keys", "workspace", ws,
						"sequence_number", rec.Change.SequenceNumber, "error", err)
					failed[i] = true
				}
				for _, h := range hashes {
					addKey(h, i)
				}
			}
		}
		for _, h := range c.Keys {
			addKey(h, i)
		}
		for _, id := range ids {
			if rs := docRecords[id]; len(rs) == 0 || rs[len(rs)-1] != i {
				docRecords[id] = append(rs, i)
			}
		}
	}

	failedDocs := x.indexAndCommit(ctx, slices.Sorted(maps.Keys(docRecords)))
	for id := range failedDocs {
		for _, i := range docRecords[id] {
			failed[i] = true
		}
	}
	if len(keyRecords) > 0 {
		hashes := slices.SortedFunc(maps.Keys(keyRecords), func(a, b doclib.KeyHash) int { return bytes.Compare(a[:], b[:]) })
		for h := range x.syncKeys(ctx, hashes) {
			for _, i := range keyRecords[h] {
				failed[i] = true
			}
		}
	}

	var resp events.DynamoDBEventResponse
	for i, rec := range ev.Records {
		if !failed[i] {
			continue
		}
		if rec.Change.SequenceNumber == "" {
			return events.DynamoDBEventResponse{}, fmt.Errorf("indexer: record %d (eventID %q) failed and has no SequenceNumber to report", i, rec.EventID)
		}
		resp.BatchItemFailures = append(resp.BatchItemFailures,
			events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
	}
	return resp, nil
}

func (x *Indexer) logger() *slog.Logger {
	if x.Logger != nil {
		return x.Logger
	}
	return slog.Default()
}

func (x *Indexer) batchSize() int {
	if x.BatchSize > 0 {
		return x.BatchSize
	}
	return DefaultBatchSize
}

// libraryDocuments lists a library's documents once per batch.
func (x *Indexer) libraryDocuments(ctx context.Context, lib string, docs map[string][]string, errs map[string]error) ([]string, error) {
	if ids, ok := docs[lib]; ok {
		return ids, nil
	}
	if err, ok := errs[lib]; ok {
		return nil, err
	}
	ids, err := x.Source.LibraryDocumentIDs(ctx, lib)
	if err != nil {
		errs[lib] = err
		return nil, err
	}
	docs[lib] = ids
	return ids, nil
}

// workspaceDocuments lists the documents of a workspace's libraries once per
// batch. On an error it returns what it could list, to be indexed anyway: the
// record fails and comes back, and indexing twice is harmless.
func (x *Indexer) workspaceDocuments(ctx context.Context, ws string, libDocs map[string][]string, libErrs map[string]error,
	docs map[string][]string, errs map[string]error) ([]string, error) {
	if ids, ok := docs[ws]; ok {
		return ids, errs[ws]
	}
	libs, err := x.Source.Libraries(ctx, ws)
	if err != nil {
		docs[ws], errs[ws] = nil, err
		return nil, err
	}
	var ids []string
	var firstErr error
	for _, l := range libs {
		got, err := x.libraryDocuments(ctx, l.ID, libDocs, libErrs)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("library %s: %w", l.ID, err)
		}
		ids = append(ids, got...)
	}
	docs[ws], errs[ws] = ids, firstErr
	return ids, firstErr
}

// index re-indexes ids, BatchSize at a time, and returns the IDs it failed.
// CommitAttempts bounds how often a batch is indexed again after its commit
// lost a race with another writer (search.ErrCommitConflict).
const CommitAttempts = 4

// indexAndCommit indexes the documents ids and, for an index that holds its
// writes (search.Committer), commits them. A commit another writer overtook
// is redone here, reading the documents again, rather than failed: several
// indexers may run at once (a stream mapping runs one batch per shard), and
// failing the batch would spend one of the mapping's few retries on a race
// that is nobody's fault. After CommitAttempts, or on any other commit error,
// every document fails and the stream delivers their records again.
func (x *Indexer) indexAndCommit(ctx context.Context, ids []string) map[string]bool {
	c, commits := x.Index.(search.Committer)
	for attempt := 1; ; attempt++ {
		failed := x.index(ctx, ids)
		if !commits || len(ids) == 0 {
			return failed
		}
		err := c.Commit(ctx)
		if err == nil {
			return failed
		}
		if errors.Is(err, search.ErrCommitConflict) && attempt < CommitAttempts && ctx.Err() == nil {
			x.logger().Warn("indexer: another writer published first; indexing the batch again over its snapshot",
				"documents", len(ids), "attempt", attempt, "error", err)
			continue
		}
		x.logger().Error("indexer: commit the batch's index writes", "documents", len(ids), "attempts", attempt, "error", err)
		for _, id := range ids {
			failed[id] = true
		}
		return failed
	}
}

func (x *Indexer) index(ctx context.Context, ids []string) map[string]bool {
	failed := map[string]bool{}
	ws := &workspaces{src: x.Source, m: map[string]*wsEntry{}}
	check := x.indexCheck()
	for chunk := range slices.Chunk(ids, x.batchSize()) {
		for _, id := range x.indexChunk(ctx, chunk, ws, check) {
			failed[id] = true
		}
	}
	return failed
}

// indexCheck returns the CheckIndex of one batch: run when first needed, and
// not again in the batch.
func (x *Indexer) indexCheck() func(context.Context) error {
	var (
		done bool
		err  error
	)
	return func(ctx context.Context) error {
		if !done {
			done, err = true, x.checkIndex(ctx)
			if err != nil {
				x.logger().Error("indexer: the index check failed; this batch embeds and writes no document",
					"embedder", x.Embedder.ID(), "error", err)
			}
		}
		return err
	}
}

// checkIndex calls CheckIndex unless it passed less than Recheck.Every ago.
func (x *Indexer) checkIndex(ctx context.Context) error {
	if x.CheckIndex == nil {
		return nil
	}
	if err := x.Recheck.Do(ctx, x.CheckIndex); err != nil {
		return fmt.Errorf("indexer: check the index: %w", err)
	}
	return nil
}

func (x *Indexer) indexChunk(ctx context.Context, ids []string, ws *workspaces, check func(context.Context) error) (failed []string) {
	log := x.logger()
	docs, err := x.Source.Documents(ctx, ids)
	if err != nil {
		log.Error("indexer: read documents", "documents", len(ids), "first", ids[0], "error", err)
		return ids
	}
	// Nothing is embedded for an index that cannot take the vectors.
	blocked := len(docs) > 0 && check(ctx) != nil
	built := make([]*search.IndexDoc, len(ids))
	errs := make([]error, len(ids))
	var gone []string
	var g errgroup.Group // each document's error is its own (errs), not the batch's
	g.SetLimit(concurrency)
	for i, id := range ids {
		doc, ok := docs[id]
		switch {
		case !ok:
			gone = append(gone, id)
			continue
		case blocked:
			failed = append(failed, id)
			continue
		}
		g.Go(func() error {
			built[i], errs[i] = x.build(ctx, doc, ws)
			return nil
		})
	}
	_ = g.Wait() // every func returns nil

	var up []search.IndexDoc
	var upIDs []string
	for i, id := range ids {
		switch {
		case errs[i] != nil:
			log.Error("indexer: build index document", "document", id,
				"retryable", errors.Is(errs[i], search.ErrEmbedder), "error", errs[i])
			failed = append(failed, id)
		case built[i] != nil:
			up = append(up, *built[i])
			upIDs = append(upIDs, id)
		}
	}
	if len(up) > 0 {
		if err := x.Index.Upsert(ctx, up); err != nil {
			log.Error("indexer: upsert", "documents", len(up), "first", upIDs[0], "error", err)
			failed = append(failed, upIDs...)
		}
	}
	if len(gone) > 0 {
		if err := x.Index.Delete(ctx, gone); err != nil {
			log.Error("indexer: delete", "documents", len(gone), "first", gone[0], "error", err)
			failed = append(failed, gone...)
		}
	}
	return failed
}

// build makes a document's index document: its readable recordings, and the
// vectors of its text and theirs.
func (x *Indexer) build(ctx context.Context, doc *doclib.Document, ws *workspaces) (*search.IndexDoc, error) {
	w, err := ws.get(ctx, doc.WorkspaceID)
	var recs []*doclib.Recording
	switch {
	case errors.Is(err, doclib.ErrNotFound):
		// No workspace, no plan: no recording can be shown to be readable, so
		// none is indexed (privacy first). Its INSERT re-indexes the documents.
		x.logger().Warn("indexer: document of a missing workspace; indexed without recordings",
			"document", doc.ID, "workspace", doc.WorkspaceID)
	case err != nil:
		return nil, fmt.Errorf("workspace %s: %w", doc.WorkspaceID, err)
	case w.Plan != doclib.PlanIndividual:
		if recs, err = x.readable(ctx, doc, w.Plan); err != nil {
			return nil, err
		}
	}
	texts := make([]string, 0, 1+len(recs))
	texts = append(texts, search.DocumentText(doc))
	for _, r := range recs {
		texts = append(texts, search.RecordingText(r))
	}
	vecs := make([][]float32, 0, len(texts))
	for chunk := range slices.Chunk(texts, maxEmbedTexts) {
		vs, err := x.Embedder.Embed(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		if err := search.CheckVectors(vs, len(chunk), x.Embedder.Dimensions()); err != nil {
			return nil, err
		}
		vecs = append(vecs, vs...)
	}
	d := search.NewIndexDoc(doc, vecs[0], recs, vecs[1:])
	return &d, nil
}

// readable pages through a document's shared recordings and keeps those that
// may influence search.
func (x *Indexer) readable(ctx context.Context, doc *doclib.Document, plan doclib.Plan) ([]*doclib.Recording, error) {
	var out []*doclib.Recording
	for offset := 0; offset < doc.SharedRecordingCount; offset += recordingPage {
		page, err := x.Source.SharedRecordings(ctx, doc, offset, recordingPage)
		if err != nil {
			return nil, fmt.Errorf("recordings: %w", err)
		}
		for _, r := range page {
			if search.Readable(r, plan) {
				out = append(out, r)
			}
		}
		if len(page) < recordingPage {
			break
		}
	}
	return out, nil
}

// workspaces reads each workspace once per batch, errors included: a
// workspace that failed fails its documents in this batch, and they come back.
type workspaces struct {
	src Source
	mu  sync.Mutex
	m   map[string]*wsEntry
}

type wsEntry struct {
	once sync.Once
	w    *doclib.Workspace
	err  error
}

func (c *workspaces) get(ctx context.Context, id string) (*doclib.Workspace, error) {
	c.mu.Lock()
	e, ok := c.m[id]
	if !ok {
		e = &wsEntry{}
		c.m[id] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.w, e.err = c.src.Workspace(ctx, id) })
	return e.w, e.err
}
