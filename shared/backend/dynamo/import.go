package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	doclib "github.com/doclib/doclib/shared"
)

// Generation names an import: the first 16 hex digits of the SHA-256 of the
// data-set file. Importing the same file again writes items identical to the
// first time, so nothing changes; --prune removes items of other generations.
func Generation(file []byte) string {
	sum := sha256.Sum256(file)
	return hex.EncodeToString(sum[:8])
}

// ImportOptions tune an import.
type ImportOptions struct {
	// Prune deletes what the file's workspaces no longer contain: their items
	// of other generations.
	Prune bool
	// DryRun checks the file against the table and lists its leftovers
	// (ImportResult.Leftovers) but writes nothing.
	DryRun bool
	// Workers bounds the concurrent write requests (8 when 0).
	Workers int
	// Progress, when set, is told how far each phase is. Import calls it from
	// one goroutine at a time, so it needs no locking of its own.
	Progress func(Progress)
}

// Progress of an import phase.
type Progress struct {
	Phase       string // "checking", "writing", "credit", "pruning"
	Done, Total int
}

// ImportResult summarises an import.
type ImportResult struct {
	Generation                                                       string
	Workspaces, Libraries, Documents, Edges, Recordings, Keys, Items int
	// CreditsSet counts the workspaces whose credit was written: new ones only.
	CreditsSet int
	Deleted    int
	Duration   time.Duration
	// Leftovers are what earlier imports wrote for the file's workspaces and
	// the file no longer has, found before writing: deleted with Prune, kept
	// (and still served) without it.
	Leftovers *Leftovers
}

// Limits of DynamoDB that a data set must fit.
const (
	maxItemBytes    = 400 * 1024
	maxSortKeyBytes = 1024
	batchWriteLimit = 25
)

// Import writes a validated data set (the same dataset.Load as local mode, so a
// file that local mode refuses never reaches the table). Derived values (label
// lists and counts, each library's capped graph) are computed by the root
// package's code, as for the embedded store, so both backends answer alike.
// Before the first write, every item is checked against DynamoDB's limits and
// every globally keyed ID against the workspaces that hold it in the table;
// either refusal is a *doclib.DataSetError, like dataset.Load's, and
// writes nothing. Writes are batched,
// retried when unprocessed, and idempotent.
func (t *Table) Import(ctx context.Context, d *doclib.DataSet, gen string, opt ImportOptions) (*ImportResult, error) {
	start := time.Now()
	if p := opt.Progress; p != nil { // the writers report concurrently: serialise
		var mu sync.Mutex
		opt.Progress = func(pr Progress) {
			mu.Lock()
			defer mu.Unlock()
			p(pr)
		}
	}
	res := &ImportResult{Generation: gen, Workspaces: len(d.Workspaces), Libraries: len(d.Libraries),
		Documents: len(d.Documents), Edges: len(d.Edges), Recordings: len(d.Recordings), Keys: len(d.APIKeys)}
	graphs := make(map[string][]item, len(d.Libraries))
	docs, edges := byLibrary(d)
	for _, l := range d.Libraries {
		items, err := graphItems(l, docs[l.ID], edges[l.ID], gen)
		if err != nil {
			return nil, err
		}
		graphs[l.ID] = items
	}
	// First pass: count and check every item against DynamoDB's limits. A
	// document is stored twice and an edge at both ends: each is named once,
	// with the larger of its sizes.
	type problem struct {
		what, kind string
	}
	var order []problem
	sizes := map[problem]int{}
	note := func(p problem, n int) {
		if _, ok := sizes[p]; !ok {
			order = append(order, p)
		}
		sizes[p] = max(sizes[p], n)
	}
	total := 0
	err := emitItems(d, graphs, gen, func(it item, what string) error {
		total++
		if n := itemSize(it); n > maxItemBytes {
			note(problem{what, "size"}, n)
		}
		if sk := it[attrSK].(*types.AttributeValueMemberS).Value; len(sk) > maxSortKeyBytes {
			note(problem{what, "key"}, len(sk))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(order) > 0 {
		problems := make([]string, len(order))
		for i, p := range order {
			if p.kind == "size" {
				problems[i] = fmt.Sprintf("%s is %d KB stored, over DynamoDB's 400 KB item limit; shorten its content", p.what, sizes[p]/1024)
			} else {
				problems[i] = fmt.Sprintf("%s has a key of %d bytes, over DynamoDB's 1024; shorten the edge label", p.what, sizes[p])
			}
		}
		return nil, refused("the data set does not fit DynamoDB", problems)
	}
	// No ID of the file may belong to another workspace (a key sees only its
	// workspace): checked before the first write, so a refusal changes nothing.
	if err := t.checkOwnership(ctx, d, opt); err != nil {
		return nil, err
	}
	if res.Leftovers, err = t.leftovers(ctx, d, graphs, gen); err != nil {
		return nil, err
	}
	if opt.DryRun {
		res.Items = total
		res.Duration = time.Since(start)
		return res, nil
	}

	// Second pass: write.
	w := t.newWriter(ctx, opt, total)
	err = emitItems(d, graphs, gen, func(it item, _ string) error { return w.put(it) })
	if cerr := w.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("dynamo: import stopped; run it again to finish (it is idempotent): %w", err)
	}
	res.Items = total

	// Credit belongs to the ledger once written: only new workspaces get theirs.
	for i, ws := range d.Workspaces {
		set, err := t.putCreditIfAbsent(ctx, ws.ID, ws.AICredit)
		if err != nil {
			return nil, err
		}
		if set {
			res.CreditsSet++
		}
		report(opt, "credit", i+1, len(d.Workspaces))
	}
	if opt.Prune {
		n, err := t.prune(ctx, d, gen, opt)
		if err != nil {
			return nil, err
		}
		res.Deleted = n
	}
	res.Duration = time.Since(start)
	return res, nil
}

func report(opt ImportOptions, phase string, done, total int) {
	if opt.Progress != nil {
		opt.Progress(Progress{Phase: phase, Done: done, Total: total})
	}
}

// byLibrary groups the documents and the edges inside each library in the
// orders doclib.CapGraph takes.
func byLibrary(d *doclib.DataSet) (docs map[string][]*doclib.Document, edges map[string][]*doclib.Edge) {
	docs = make(map[string][]*doclib.Document, len(d.Libraries))
	edges = make(map[string][]*doclib.Edge, len(d.Libraries))
	for _, doc := range d.Documents {
		docs[doc.LibraryID] = append(docs[doc.LibraryID], doc)
	}
	for _, e := range d.Edges {
		if e.SourceLibraryID == e.TargetLibraryID {
			edges[e.SourceLibraryID] = append(edges[e.SourceLibraryID], e)
		}
	}
	for _, ds := range docs {
		slices.SortFunc(ds, func(a, b *doclib.Document) int { return doclib.CompareActivity(a.Activity(), b.Activity()) })
	}
	for _, es := range edges {
		slices.SortFunc(es, doclib.CompareEdges)
	}
	return docs, edges
}

// graphItems precomputes a library's capped graph, as every store caps it.
func graphItems(l *doclib.Library, byActivity []*doclib.Document, libEdges []*doclib.Edge, gen string) ([]item, error) {
	docs, edges, truncated := doclib.CapGraph(byActivity, libEdges, doclib.GraphMaxDocuments, doclib.GraphMaxEdges)
	b := base{PK: pkLibrary(l.ID), WS: l.WorkspaceID, Gen: gen}
	var chunks []graphChunk
	cur, size := graphChunk{}, 0
	const chunkBytes = 300 * 1024
	flush := func() {
		if len(cur.Documents) > 0 || len(cur.Edges) > 0 {
			chunks = append(chunks, cur)
		}
		cur, size = graphChunk{}, 0
	}
	for _, d := range docs {
		gd := graphDoc{ID: d.ID, Title: d.Title, Category: d.Category, Tags: d.Tags, Applications: d.Applications,
			RecordingCount: d.RecordingCount, LastSeen: d.LastSeen}
		raw, _ := json.Marshal(gd)
		if size+len(raw) > chunkBytes {
			flush()
		}
		cur.Documents = append(cur.Documents, gd)
		size += len(raw)
	}
	for _, e := range edges {
		ge := graphEdge{SourceID: e.SourceID, SourceTitle: e.SourceTitle, TargetID: e.TargetID, TargetTitle: e.TargetTitle,
			Label: e.Label, Type: e.Type, RecordingCount: e.RecordingCount, Support: e.Support}
		raw, _ := json.Marshal(ge)
		if size+len(raw) > chunkBytes {
			flush()
		}
		cur.Edges = append(cur.Edges, ge)
		size += len(raw)
	}
	flush()
	var out []item
	meta := graphMetaItem{base: b, Chunks: len(chunks), MaxDocs: doclib.GraphMaxDocuments, MaxEdges: doclib.GraphMaxEdges, Truncated: truncated}
	meta.SK = skGraphMeta
	it, err := attributevalue.MarshalMap(meta)
	if err != nil {
		return nil, fmt.Errorf("dynamo: graph of %s: %w", l.ID, err)
	}
	out = append(out, it)
	for i, c := range chunks {
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("dynamo: graph of %s: %w", l.ID, err)
		}
		ci := graphChunkItem{base: b, Data: string(raw)}
		ci.SK = skGraphChunk(i)
		it, err := attributevalue.MarshalMap(ci)
		if err != nil {
			return nil, fmt.Errorf("dynamo: graph of %s: %w", l.ID, err)
		}
		out = append(out, it)
	}
	return out, nil
}

// emitItems calls emit with every item of the data set, in a fixed order; what
// names the item for messages.
func emitItems(d *doclib.DataSet, graphs map[string][]item, gen string, emit func(it item, what string) error) error {
	put := func(v any, what string) error {
		it, err := attributevalue.MarshalMap(v)
		if err != nil {
			return fmt.Errorf("dynamo: encode %s: %w", what, err)
		}
		return emit(it, what)
	}
	for _, w := range d.Workspaces {
		if err := put(workspaceItem{base: base{PK: pkWorkspace(w.ID), SK: skWorkspace, WS: w.ID, Gen: gen}, ID: w.ID, Name: w.Name,
			Plan: string(w.Plan), Subscription: w.Subscription, OwnProviderKey: w.OwnProviderKey}, "workspace "+w.ID); err != nil {
			return err
		}
	}
	for _, dv := range d.Devices {
		if err := put(deviceItem{base: base{PK: pkWorkspace(dv.WorkspaceID), SK: skDevice(dv.ID), WS: dv.WorkspaceID, Gen: gen},
			ID: dv.ID, Status: dv.Status}, "device "+dv.ID); err != nil {
			return err
		}
	}
	for _, k := range d.APIKeys {
		ki := keyItem{ID: k.ID, WorkspaceID: k.WorkspaceID, DeviceID: k.DeviceID, Hash: k.Hash.String(),
			AllLibraries: k.AllLibraries, Libraries: k.Libraries, RecordingDetails: k.RecordingDetails}
		if !k.ExpiresAt.IsZero() {
			ki.ExpiresAt = k.ExpiresAt.UTC().Format(time.RFC3339)
		}
		ki.base = base{PK: pkKey(k.Hash), SK: skKey, WS: k.WorkspaceID, Gen: gen}
		if err := put(ki, "key "+k.ID); err != nil {
			return err
		}
		ki.base = base{PK: pkWorkspace(k.WorkspaceID), SK: skKeyRef(k.ID), WS: k.WorkspaceID, Gen: gen}
		if err := put(ki, "key "+k.ID); err != nil {
			return err
		}
	}
	for _, l := range d.Libraries {
		schema, _ := json.Marshal(l.Schema)
		cats, _ := json.Marshal(l.Categories)
		tags, _ := json.Marshal(l.Tags)
		apps, _ := json.Marshal(l.Applications)
		li := libraryItem{base: base{PK: pkWorkspace(l.WorkspaceID), SK: skLibrary(l.ID), WS: l.WorkspaceID, Gen: gen},
			ID: l.ID, Name: l.Name, Slug: l.Slug, PreviousSlugs: l.PreviousSlugs, Description: l.Description,
			CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, Schema: string(schema), Categories: string(cats),
			Tags: string(tags), Applications: string(apps), DocumentCount: l.DocumentCount, EdgeCount: l.EdgeCount}
		if err := put(li, "library "+l.ID); err != nil {
			return err
		}
		for _, slug := range append([]string{l.Slug}, l.PreviousSlugs...) {
			if err := put(slugItem{base: base{PK: pkWorkspace(l.WorkspaceID), SK: skSlug(slug), WS: l.WorkspaceID, Gen: gen},
				LibraryID: l.ID}, "slug "+slug); err != nil {
				return err
			}
		}
		for _, it := range graphs[l.ID] {
			if err := emit(it, "the graph of "+l.ID); err != nil {
				return err
			}
		}
	}
	for _, doc := range d.Documents {
		di := documentItem{base: base{PK: pkDocument(doc.ID), SK: skDocument, WS: doc.WorkspaceID, Gen: gen},
			ID: doc.ID, LibraryID: doc.LibraryID, WorkspaceID: doc.WorkspaceID, Slug: doc.Slug, Title: doc.Title,
			Category: doc.Category, Tags: nonNil(doc.Tags), Applications: nonNil(doc.Applications), DeviceCount: doc.DeviceCount,
			RecordingCount: doc.RecordingCount, SharedRecordingCount: doc.SharedRecordingCount, FirstSeen: doc.FirstSeen,
			LastSeen: doc.LastSeen, CreatedAt: doc.CreatedAt, UpdatedAt: doc.UpdatedAt, Content: string(doc.Content)}
		if err := put(di, "document "+doc.ID); err != nil {
			return err
		}
		di.base = base{PK: pkLibrary(doc.LibraryID), SK: skListed(doc.ID), WS: doc.WorkspaceID, Gen: gen}
		di.Ord = ordListed(doc.UpdatedAt, doc.ID)
		if err := put(di, "document "+doc.ID); err != nil {
			return err
		}
	}
	wsOf := make(map[string]string, len(d.Documents))
	for _, doc := range d.Documents {
		wsOf[doc.ID] = doc.WorkspaceID
	}
	for _, e := range d.Edges {
		ei := edgeItem{SourceID: e.SourceID, SourceTitle: e.SourceTitle, SourceLibraryID: e.SourceLibraryID,
			TargetID: e.TargetID, TargetTitle: e.TargetTitle, TargetLibraryID: e.TargetLibraryID, Label: e.Label,
			Type: e.Type, RecordingCount: e.RecordingCount, Support: e.Support}
		what := fmt.Sprintf("edge %s -> %s (%s)", e.SourceID, e.TargetID, shorten(e.Label, 40))
		ei.base = base{PK: pkDocument(e.SourceID), SK: skOut(e.TargetID, e.Label), WS: wsOf[e.SourceID], Gen: gen}
		if err := put(ei, what); err != nil {
			return err
		}
		ei.base = base{PK: pkDocument(e.TargetID), SK: skIn(e.SourceID, e.Label), WS: wsOf[e.TargetID], Gen: gen}
		if err := put(ei, what); err != nil {
			return err
		}
	}
	for _, r := range d.Recordings {
		qs, _ := json.Marshal(r.Questions)
		ri := recordingItem{ID: r.ID, DocumentIDs: r.DocumentIDs, Title: r.Title, Status: r.Status, Shared: r.Shared,
			ClientCreatedAt: r.ClientCreatedAt, Questions: string(qs), Steps: nonNil(r.Steps),
			Ord: ordRecording(r.Shared, r.ClientCreatedAt, r.ID)}
		for _, docID := range r.DocumentIDs {
			ri.base = base{PK: pkDocument(docID), SK: skRecording(r.ID), WS: wsOf[docID], Gen: gen}
			if err := put(ri, "recording "+r.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// shorten cuts s to n runes for a message: a label too long for DynamoDB
// would otherwise fill the screen of the error that names it.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// itemSize approximates DynamoDB's item size: names plus values.
func itemSize(it item) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, x := range v.Value {
			n += 1 + valueSize(x)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, x := range v.Value {
			n += 1 + len(k) + valueSize(x)
		}
		return n
	}
	return 1
}

// writer batches puts into BatchWriteItem requests on a few goroutines and
// retries what DynamoDB leaves unprocessed. The first failure cancels the rest.
type writer struct {
	t       *Table
	opt     ImportOptions
	total   int
	done    atomic.Int64
	batches chan []types.WriteRequest // workers hold it; closed once by close
	once    sync.Once
	cur     []types.WriteRequest
	g       *errgroup.Group
	ctx     context.Context
}

func (t *Table) newWriter(ctx context.Context, opt ImportOptions, total int) *writer {
	workers := opt.Workers
	if workers <= 0 {
		workers = 8
	}
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan []types.WriteRequest)
	w := &writer{t: t, opt: opt, total: total, batches: batches, g: g, ctx: gctx}
	for range workers {
		g.Go(func() error {
			for batch := range batches {
				if err := w.write(gctx, batch); err != nil {
					go func() { // let the producer's last sends through
						for range batches {
						}
					}()
					return err
				}
				report(opt, "writing", int(w.done.Add(int64(len(batch)))), w.total)
			}
			return nil
		})
	}
	return w
}

func (w *writer) put(it item) error {
	w.cur = append(w.cur, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	if len(w.cur) < batchWriteLimit {
		return nil
	}
	return w.flush()
}

func (w *writer) flush() error {
	if len(w.cur) == 0 {
		return nil
	}
	select {
	case w.batches <- w.cur:
		w.cur = nil
		return nil
	case <-w.ctx.Done():
		return context.Cause(w.ctx)
	}
}

// close sends what is left, waits for the workers and returns the first error.
func (w *writer) close() error {
	flushErr := w.flush()
	w.once.Do(func() { close(w.batches) })
	if err := w.g.Wait(); err != nil {
		return err
	}
	return flushErr
}

// maxWriteAttempts bounds the attempts at unprocessed items; with the backoff
// it gives DynamoDB about half a minute to absorb a burst.
const maxWriteAttempts = 20

func (w *writer) write(ctx context.Context, batch []types.WriteRequest) error {
	pending := map[string][]types.WriteRequest{w.t.Name: batch}
	for attempt := 0; len(pending[w.t.Name]) > 0; attempt++ {
		if attempt > 0 {
			if attempt >= maxWriteAttempts {
				return fmt.Errorf("dynamo: import: %d items still unprocessed after %d attempts", len(pending[w.t.Name]), attempt)
			}
			if err := backoff(ctx, attempt); err != nil {
				return fmt.Errorf("dynamo: import: %w", err)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := w.t.Client.BatchWriteItem(cctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		cancel()
		var tired *retry.MaxAttemptsError
		switch {
		case errors.As(err, &tired) && ctx.Err() == nil:
			// The SDK's retries of a throttled or failing request ran out; a bulk
			// load can afford to wait longer than a request can.
			continue
		case err != nil:
			return fmt.Errorf("dynamo: import: write a batch of %d items: %w", len(pending[w.t.Name]), err)
		}
		pending = res.UnprocessedItems
	}
	return nil
}

// putCreditIfAbsent writes a workspace's starting credit unless it has one.
func (t *Table) putCreditIfAbsent(ctx context.Context, ws string, credit int64) (bool, error) {
	it, err := attributevalue.MarshalMap(creditItem{base: base{PK: pkWorkspace(ws), SK: skCredit}, Credit: credit})
	if err != nil {
		return false, err
	}
	cctx, cancel := t.call(ctx)
	defer cancel()
	_, err = t.Client.PutItem(cctx, &dynamodb.PutItemInput{TableName: aws.String(t.Name), Item: it,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	switch {
	case conditionFailed(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("dynamo: import: credit of %s: %w", ws, err)
	}
	return true, nil
}

// prune deletes the items of the file's workspaces that this generation did not
// write. The workspace index is eventually consistent, so each delete is
// conditional on the item still being of another generation: an item rewritten
// a moment ago is never lost.
func (t *Table) prune(ctx context.Context, d *doclib.DataSet, gen string, opt ImportOptions) (int, error) {
	type stale struct{ pk, sk string }
	var candidates []stale
	for _, w := range d.Workspaces {
		in := &dynamodb.QueryInput{TableName: aws.String(t.Name), IndexName: aws.String(IndexWorkspace),
			KeyConditionExpression: aws.String("ws = :ws"), ExpressionAttributeValues: item{":ws": str(w.ID), ":gen": str(gen)},
			FilterExpression: aws.String("gen <> :gen")}
		err := t.query(ctx, "prune: list "+w.ID, in, func(it item) bool {
			candidates = append(candidates, stale{it[attrPK].(*types.AttributeValueMemberS).Value, it[attrSK].(*types.AttributeValueMemberS).Value})
			return true
		})
		if err != nil {
			return 0, err
		}
	}
	sort.Slice(candidates, func(i, j int) bool {
		if candidates[i].pk != candidates[j].pk {
			return candidates[i].pk < candidates[j].pk
		}
		return candidates[i].sk < candidates[j].sk
	})
	workers := opt.Workers
	if workers <= 0 {
		workers = 8
	}
	var deleted, done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, c := range candidates {
		g.Go(func() error {
			cctx, cancel := t.call(gctx)
			defer cancel()
			_, err := t.Client.DeleteItem(cctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.Name), Key: key(c.pk, c.sk),
				ConditionExpression:       aws.String("attribute_exists(pk) AND gen <> :gen"),
				ExpressionAttributeValues: item{":gen": str(gen)}})
			switch {
			case err == nil:
				deleted.Add(1)
			case conditionFailed(err):
			default:
				return fmt.Errorf("dynamo: prune %s %s: %w", c.pk, c.sk, err)
			}
			report(opt, "pruning", int(done.Add(1)), len(candidates))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return int(deleted.Load()), err
	}
	return int(deleted.Load()), nil
}

// ErrTableMissing is what operators get when the table does not exist yet.
var ErrTableMissing = errors.New("the table does not exist; create it with doclib-admin create-table (local) or deploy the stack")
