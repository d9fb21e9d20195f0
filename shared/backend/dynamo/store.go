package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	doclib "github.com/doclib/doclib/shared"
)

// Store reads doclib's data from the table. It implements doclib.Store.
type Store struct{ t *Table }

var _ doclib.Store = (*Store)(nil)

// NewStore returns the read store of a table.
func NewStore(t *Table) *Store { return &Store{t: t} }

type item = map[string]types.AttributeValue

func key(pk, sk string) item {
	return item{attrPK: &types.AttributeValueMemberS{Value: pk}, attrSK: &types.AttributeValueMemberS{Value: sk}}
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// get reads one item into out; it reports false when there is none.
func (t *Table) get(ctx context.Context, op, pk, sk string, out any) (bool, error) {
	ctx, cancel := t.call(ctx)
	defer cancel()
	res, err := t.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.Name), Key: key(pk, sk),
		ConsistentRead: aws.Bool(t.ConsistentRead)})
	if err != nil {
		return false, unavailable(op, err)
	}
	if res.Item == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(res.Item, out); err != nil {
		return false, fmt.Errorf("dynamo: %s: decode: %w", op, err)
	}
	return true, nil
}

// getConsistent is get with a strongly consistent read, whatever the
// table's setting: for what must show a write made a moment ago. DynamoDB's
// eventually consistent reads "may not reflect the results of a recently
// completed write operation" ("DynamoDB read consistency", Amazon DynamoDB
// Developer Guide); a strongly consistent one costs twice as much.
func (t *Table) getConsistent(ctx context.Context, op, pk, sk string, out any) (bool, error) {
	strong := *t
	strong.ConsistentRead = true
	return strong.get(ctx, op, pk, sk, out)
}

// query runs a query to its end (or until each returns false), page by page.
func (t *Table) query(ctx context.Context, op string, in *dynamodb.QueryInput, each func(item) bool) error {
	in.TableName = aws.String(t.Name)
	if t.ConsistentRead && aws.ToString(in.IndexName) != IndexWorkspace { // global indexes read eventually only
		in.ConsistentRead = aws.Bool(true)
	}
	for {
		cctx, cancel := t.call(ctx)
		res, err := t.Client.Query(cctx, in)
		cancel()
		if err != nil {
			return unavailable(op, err)
		}
		for _, it := range res.Items {
			if !each(it) {
				return nil
			}
		}
		if res.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// APIKey implements doclib.Store. It reads strongly consistent, as do
// Workspace and Device: they decide whether a key is let in, and API
// Gateway caches a refusal for the authorizer's TTL, so a key used right
// after it was created must not read as missing.
func (s *Store) APIKey(ctx context.Context, hash doclib.KeyHash) (*doclib.APIKey, error) {
	var k keyItem
	ok, err := s.t.getConsistent(ctx, "get key", pkKey(hash), skKey, &k)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, doclib.ErrNotFound
	}
	return k.domain()
}

// Workspace implements doclib.Store. AICredit is not read: the ledger owns it.
func (s *Store) Workspace(ctx context.Context, id string) (*doclib.Workspace, error) {
	var w workspaceItem
	ok, err := s.t.getConsistent(ctx, "get workspace", pkWorkspace(id), skWorkspace, &w)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, doclib.ErrNotFound
	}
	return w.domain(0), nil
}

// Device implements doclib.Store.
func (s *Store) Device(ctx context.Context, workspaceID, id string) (*doclib.Device, error) {
	var d deviceItem
	ok, err := s.t.getConsistent(ctx, "get device", pkWorkspace(workspaceID), skDevice(id), &d)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, doclib.ErrNotFound
	}
	return &doclib.Device{ID: d.ID, WorkspaceID: workspaceID, Status: d.Status}, nil
}

// Libraries implements doclib.Store: one query of the workspace's partition.
func (s *Store) Libraries(ctx context.Context, workspaceID string) ([]*doclib.Library, error) {
	var out []*doclib.Library
	var decodeErr error
	err := s.t.query(ctx, "list libraries", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :lib)"),
		ExpressionAttributeValues: item{":pk": str(pkWorkspace(workspaceID)), ":lib": str("LIB#")},
	}, func(it item) bool {
		var l libraryItem
		if decodeErr = attributevalue.UnmarshalMap(it, &l); decodeErr != nil {
			return false
		}
		lib, err := l.domain()
		if err != nil {
			decodeErr = err
			return false
		}
		out = append(out, lib)
		return true
	})
	if err != nil {
		return nil, err
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("dynamo: list libraries of %s: %w", workspaceID, decodeErr)
	}
	slices.SortFunc(out, doclib.CompareLibraries)
	return out, nil
}

// Library implements doclib.Store: one read by ID, or two by slug (the slug's
// item names the library).
func (s *Store) Library(ctx context.Context, workspaceID, ref string) (*doclib.Library, error) {
	if len(ref) > maxRef {
		return nil, doclib.ErrNotFound
	}
	id := ref
	if !strings.HasPrefix(ref, "lib_") { // slugs never contain '_'
		var sl slugItem
		ok, err := s.t.get(ctx, "get slug", pkWorkspace(workspaceID), skSlug(ref), &sl)
		if err != nil {
			return nil, err
		}
		if ok {
			id = sl.LibraryID
		}
		// A missing slug still reads a library (one that cannot exist: IDs
		// start with lib_), so that it costs what a slug of a library outside
		// the key's scope does.
	}
	var l libraryItem
	ok, err := s.t.get(ctx, "get library", pkWorkspace(workspaceID), skLibrary(id), &l)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, doclib.ErrNotFound
	}
	return l.domain()
}

// ListDocuments implements doclib.Store. The library's list comes in order from
// the byOrder index, page by page. The total of an unfiltered or single-label
// list is the library's derived count, so reading stops with the page; other
// filters read the whole list once to count exactly.
func (s *Store) ListDocuments(ctx context.Context, lib *doclib.Library, f doclib.DocumentFilter, offset, limit int) ([]*doclib.Document, int, error) {
	needle := strings.ToLower(f.Search)
	total := -1
	labels := 0
	var count int
	for _, c := range []struct {
		v  string
		ls []doclib.Label
	}{{f.Category, lib.Categories}, {f.Tag, lib.Tags}, {f.Application, lib.Applications}} {
		if c.v == "" {
			continue
		}
		labels++
		i := slices.IndexFunc(c.ls, func(l doclib.Label) bool { return l.Name == c.v })
		if i < 0 {
			return []*doclib.Document{}, 0, nil // a value no document has
		}
		count = c.ls[i].DocumentCount
	}
	switch {
	case needle != "" || labels > 1:
	case labels == 1:
		total = count
	default:
		total = lib.DocumentCount
	}
	in := &dynamodb.QueryInput{IndexName: aws.String(IndexOrder), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: item{":pk": str(pkLibrary(lib.ID))}}
	var conds []string
	if f.Category != "" {
		conds = append(conds, "category = :c")
		in.ExpressionAttributeValues[":c"] = str(f.Category)
	}
	if f.Tag != "" {
		conds = append(conds, "contains(tags, :t)")
		in.ExpressionAttributeValues[":t"] = str(f.Tag)
	}
	if f.Application != "" {
		conds = append(conds, "contains(applications, :a)")
		in.ExpressionAttributeValues[":a"] = str(f.Application)
	}
	if len(conds) > 0 {
		in.FilterExpression = aws.String(strings.Join(conds, " AND "))
	}
	out := []*doclib.Document{}
	seen := 0
	var decodeErr error
	err := s.t.query(ctx, "list documents", in, func(it item) bool {
		var d documentItem
		if decodeErr = attributevalue.UnmarshalMap(it, &d); decodeErr != nil {
			return false
		}
		doc := d.domain()
		if needle != "" && !doclib.ContainsText(doc, needle) {
			return true
		}
		if seen >= offset && len(out) < limit {
			out = append(out, doc)
		}
		seen++
		return total < 0 || seen < offset+limit
	})
	if err != nil {
		return nil, 0, err
	}
	if decodeErr != nil {
		return nil, 0, fmt.Errorf("dynamo: list documents of %s: %w", lib.ID, decodeErr)
	}
	if total < 0 {
		total = seen
	}
	return out, total, nil
}

// maxRef is longer than any ID or slug the data set format allows. A longer
// one names nothing, and DynamoDB would refuse it as a key (over 1 KB of sort
// key, 2 KB of partition key) with an error instead of "no item": it is
// answered missing without a read. It cannot be in any key's scope, so this
// tells nothing about scope.
const maxRef = 256

// batchGetLimit is DynamoDB's most keys per BatchGetItem.
const batchGetLimit = 100

// Documents implements doclib.Store: BatchGetItem, 100 keys a request, the
// requests in parallel, unprocessed keys retried.
func (s *Store) Documents(ctx context.Context, ids []string) (map[string]*doclib.Document, error) {
	out := make(map[string]*doclib.Document, len(ids))
	keys := make([]item, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] && len(id) <= maxRef {
			seen[id] = true
			keys = append(keys, key(pkDocument(id), skDocument))
		}
	}
	items, err := s.t.batchGet(ctx, "get documents", keys)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		var d documentItem
		if err := attributevalue.UnmarshalMap(it, &d); err != nil {
			return nil, fmt.Errorf("dynamo: get documents: decode: %w", err)
		}
		out[d.ID] = d.domain()
	}
	return out, nil
}

func (t *Table) batchGet(ctx context.Context, op string, keys []item) ([]item, error) {
	var (
		out []item
		mu  sync.Mutex
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.concurrency())
	for start := 0; start < len(keys); start += batchGetLimit {
		chunk := keys[start:min(start+batchGetLimit, len(keys))]
		g.Go(func() error {
			pending := map[string]types.KeysAndAttributes{t.Name: {Keys: chunk, ConsistentRead: aws.Bool(t.ConsistentRead)}}
			// A call that returns items but leaves keys unprocessed met the
			// 16 MB a BatchGetItem answers (100 documents near the content
			// limit are 32 MB): the rest is asked for at once. Only calls
			// that return nothing (throttling) back off and count.
			for idle := 0; len(pending) > 0; {
				cctx, cancel := t.call(gctx)
				res, err := t.Client.BatchGetItem(cctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
				cancel()
				if err != nil {
					return unavailable(op, err)
				}
				got := res.Responses[t.Name]
				mu.Lock()
				out = append(out, got...)
				mu.Unlock()
				pending = res.UnprocessedKeys
				if len(pending) == 0 || len(got) > 0 {
					continue
				}
				if idle++; idle > maxUnprocessedRetries {
					return unavailable(op, fmt.Errorf("%d keys still unprocessed after %d calls that returned none", len(pending[t.Name].Keys), idle))
				}
				if err := backoff(gctx, idle); err != nil {
					return unavailable(op, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// maxUnprocessedRetries bounds the retries of unprocessed batch items, on top
// of the SDK's own retries of throttled requests.
const maxUnprocessedRetries = 8

// backoff waits before retry attempt n: 50 ms doubling, at most 2 s.
func backoff(ctx context.Context, n int) error {
	d := min(50*time.Millisecond<<min(n-1, 6), 2*time.Second)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// DocumentsWithEdges implements doclib.Store: one query per document (its
// partition holds the document and its edges), the queries in parallel.
// within becomes the queries' filter: DynamoDB reads the partition either
// way, but returns nothing of a document outside it, as for a missing one.
func (s *Store) DocumentsWithEdges(ctx context.Context, ids []string, within *doclib.Scope) (map[string]*doclib.Document, map[string]*doclib.DocumentEdges, error) {
	docs := make(map[string]*doclib.Document, len(ids))
	edges := map[string]*doclib.DocumentEdges{}
	type result struct {
		doc   *doclib.Document
		edges *doclib.DocumentEdges
	}
	results := make([]result, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.t.concurrency())
	for i, id := range ids {
		if len(id) > maxRef {
			continue
		}
		g.Go(func() error {
			var de doclib.DocumentEdges
			var doc *doclib.Document
			var decodeErr error
			in := &dynamodb.QueryInput{
				KeyConditionExpression:    aws.String("pk = :pk AND sk < :r"),
				ExpressionAttributeValues: item{":pk": str(pkDocument(id)), ":r": str("R")},
			}
			scopeFilter(in, id, within)
			err := s.t.query(gctx, "get document", in, func(it item) bool {
				sk := it[attrSK].(*types.AttributeValueMemberS).Value
				switch {
				case sk == skDocument:
					var d documentItem
					decodeErr = attributevalue.UnmarshalMap(it, &d)
					doc = d.domain()
				case strings.HasPrefix(sk, "O#"), strings.HasPrefix(sk, "I#"):
					var e edgeItem
					decodeErr = attributevalue.UnmarshalMap(it, &e)
					if sk[0] == 'O' {
						de.Outgoing = append(de.Outgoing, e.domain())
					} else {
						de.Incoming = append(de.Incoming, e.domain())
					}
				}
				return decodeErr == nil
			})
			if err != nil {
				return err
			}
			if decodeErr != nil {
				return fmt.Errorf("dynamo: get document %s: decode: %w", id, decodeErr)
			}
			if doc == nil {
				return nil
			}
			slices.SortFunc(de.Outgoing, doclib.CompareEdges)
			slices.SortFunc(de.Incoming, doclib.CompareEdges)
			results[i] = result{doc, &de}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for _, r := range results {
		if r.doc == nil {
			continue
		}
		docs[r.doc.ID] = r.doc
		if len(r.edges.Outgoing) > 0 || len(r.edges.Incoming) > 0 {
			edges[r.doc.ID] = r.edges
		}
	}
	return docs, edges, nil
}

// maxScopeLibraries is the most libraries scopeFilter names: DynamoDB's
// IN takes at most 100 values. A key that lists more is filtered by its
// workspace only, and the service drops the rest.
const maxScopeLibraries = 100

// scopeFilter limits a query of document id's partition to within: its
// workspace (every imported item carries ws) and, for a key that lists
// libraries, the document's own library, which its item holds as libraryId,
// an outgoing edge (src is the document) as srcLib and an incoming one as
// dstLib. A filter may not name the sort key, so src and dst tell the two
// kinds of edge apart.
func scopeFilter(in *dynamodb.QueryInput, id string, within *doclib.Scope) {
	if within == nil {
		return
	}
	expr := attrWS + " = :ws"
	in.ExpressionAttributeValues[":ws"] = str(within.WorkspaceID)
	if libs := within.Libraries; libs != nil && len(libs) <= maxScopeLibraries {
		names := make([]string, len(libs))
		for i, id := range libs {
			names[i] = fmt.Sprintf(":l%d", i)
			in.ExpressionAttributeValues[names[i]] = str(id)
		}
		set := "(" + strings.Join(names, ", ") + ")"
		if len(libs) == 0 {
			set = "(:none)" // IN needs a value; no library is named ""
			in.ExpressionAttributeValues[":none"] = str("")
		}
		in.ExpressionAttributeValues[":doc"] = str(id)
		expr += " AND (libraryId IN " + set + " OR (src = :doc AND srcLib IN " + set +
			") OR (dst = :doc AND dstLib IN " + set + "))"
	}
	in.FilterExpression = aws.String(expr)
}

// Graph implements doclib.Store: the import stores each library's capped graph,
// read back in one query (two when it passes 1 MB).
func (s *Store) Graph(ctx context.Context, libraryID string, maxDocs, maxEdges int) ([]*doclib.Document, []*doclib.Edge, bool, error) {
	var meta *graphMetaItem
	chunks := map[string]string{}
	var decodeErr error
	err := s.t.query(ctx, "get graph", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :g)"),
		ExpressionAttributeValues: item{":pk": str(pkLibrary(libraryID)), ":g": str("G#")},
	}, func(it item) bool {
		sk := it[attrSK].(*types.AttributeValueMemberS).Value
		if sk == skGraphMeta {
			meta = &graphMetaItem{}
			decodeErr = attributevalue.UnmarshalMap(it, meta)
		} else {
			var c graphChunkItem
			decodeErr = attributevalue.UnmarshalMap(it, &c)
			chunks[sk] = c.Data
		}
		return decodeErr == nil
	})
	if err != nil {
		return nil, nil, false, err
	}
	if decodeErr != nil {
		return nil, nil, false, fmt.Errorf("dynamo: graph of %s: decode: %w", libraryID, decodeErr)
	}
	if meta == nil {
		return nil, nil, false, doclib.ErrNotFound
	}
	if meta.MaxDocs != maxDocs || meta.MaxEdges != maxEdges {
		return nil, nil, false, fmt.Errorf("dynamo: graph of %s was imported for caps %d/%d, not %d/%d; re-import",
			libraryID, meta.MaxDocs, meta.MaxEdges, maxDocs, maxEdges)
	}
	docs := []*doclib.Document{}
	edges := []*doclib.Edge{}
	for i := range meta.Chunks { // chunks beyond meta.Chunks are left from a larger graph
		data, ok := chunks[skGraphChunk(i)]
		if !ok {
			return nil, nil, false, fmt.Errorf("dynamo: graph of %s: chunk %d of %d is missing", libraryID, i, meta.Chunks)
		}
		var c graphChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return nil, nil, false, fmt.Errorf("dynamo: graph of %s: chunk %d: %w", libraryID, i, err)
		}
		for _, d := range c.Documents {
			docs = append(docs, &doclib.Document{ID: d.ID, LibraryID: libraryID, Title: d.Title, Category: d.Category,
				Tags: nonNil(d.Tags), Applications: nonNil(d.Applications), RecordingCount: d.RecordingCount, LastSeen: d.LastSeen})
		}
		for _, e := range c.Edges {
			edges = append(edges, &doclib.Edge{SourceID: e.SourceID, SourceTitle: e.SourceTitle, SourceLibraryID: libraryID,
				TargetID: e.TargetID, TargetTitle: e.TargetTitle, TargetLibraryID: libraryID, Label: e.Label, Type: e.Type,
				RecordingCount: e.RecordingCount, Support: e.Support})
		}
	}
	return docs, edges, meta.Truncated, nil
}

// SharedRecordings implements doclib.Store: the document's shared recordings in
// order from the byOrder index, read to the end of the page only.
func (s *Store) SharedRecordings(ctx context.Context, doc *doclib.Document, offset, limit int) ([]*doclib.Recording, error) {
	out := []*doclib.Recording{}
	if offset >= doc.SharedRecordingCount {
		return out, nil
	}
	seen := 0
	var decodeErr error
	err := s.t.query(ctx, "list recordings", &dynamodb.QueryInput{IndexName: aws.String(IndexOrder),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(ord, :r)"),
		ExpressionAttributeValues: item{":pk": str(pkDocument(doc.ID)), ":r": str("R#")},
		Limit:                     aws.Int32(int32(min(offset+limit, 1000))),
	}, func(it item) bool {
		if seen >= offset {
			var r recordingItem
			if decodeErr = attributevalue.UnmarshalMap(it, &r); decodeErr != nil {
				return false
			}
			rec, err := r.domain()
			if err != nil {
				decodeErr = err
				return false
			}
			out = append(out, rec)
		}
		seen++
		return len(out) < limit
	})
	if err != nil {
		return nil, err
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("dynamo: recordings of %s: %w", doc.ID, decodeErr)
	}
	return out, nil
}

// LibraryDocumentIDs lists the IDs of a library's documents (its list items,
// keys only): what an indexer re-indexes when a library changes.
func (s *Store) LibraryDocumentIDs(ctx context.Context, libraryID string) ([]string, error) {
	var out []string
	err := s.t.query(ctx, "list document IDs", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :d)"),
		ExpressionAttributeValues: item{":pk": str(pkLibrary(libraryID)), ":d": str("D#")},
		ProjectionExpression:      aws.String("sk"),
	}, func(it item) bool {
		out = append(out, strings.TrimPrefix(it[attrSK].(*types.AttributeValueMemberS).Value, "D#"))
		return true
	})
	return out, err
}
