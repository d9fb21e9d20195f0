package indexer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/indexer"
	"github.com/doclib/doclib/shared/search"
)

// The DynamoDB store is what production reads the table through.
var _ indexer.Source = (*dynamo.Store)(nil)

// fakeSource is the table after the stream's writes, as maps.
type fakeSource struct {
	mu         sync.Mutex
	docs       map[string]*doclib.Document
	recs       map[string][]*doclib.Recording // by document: what the R# listing returns
	workspaces map[string]*doclib.Workspace
	libraries  map[string][]*doclib.Library // by workspace
	libDocs    map[string][]string          // by library
	docsErr    error
	calls      []string
}

func (s *fakeSource) called(c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

func (s *fakeSource) Documents(_ context.Context, ids []string) (map[string]*doclib.Document, error) {
	s.called("Documents")
	if s.docsErr != nil {
		return nil, s.docsErr
	}
	out := map[string]*doclib.Document{}
	for _, id := range ids {
		if d, ok := s.docs[id]; ok {
			out[id] = d
		}
	}
	return out, nil
}

// SharedRecordings returns whatever is listed for the document, private ones
// included, so that the tests see the indexer's own Readable check.
func (s *fakeSource) SharedRecordings(_ context.Context, doc *doclib.Document, offset, limit int) ([]*doclib.Recording, error) {
	s.called("SharedRecordings")
	all := s.recs[doc.ID]
	if offset >= len(all) {
		return nil, nil
	}
	return all[offset:min(offset+limit, len(all))], nil
}

func (s *fakeSource) Workspace(_ context.Context, id string) (*doclib.Workspace, error) {
	s.called("Workspace")
	if w, ok := s.workspaces[id]; ok {
		return w, nil
	}
	return nil, doclib.ErrNotFound
}

func (s *fakeSource) Libraries(_ context.Context, ws string) ([]*doclib.Library, error) {
	s.called("Libraries")
	return s.libraries[ws], nil
}

func (s *fakeSource) LibraryDocumentIDs(_ context.Context, lib string) ([]string, error) {
	s.called("LibraryDocumentIDs")
	return s.libDocs[lib], nil
}

// fakeIndex records the calls and keeps the resulting state.
type fakeIndex struct {
	mu      sync.Mutex
	state   map[string]search.IndexDoc
	upserts [][]string
	deletes [][]string
	// failUpsert fails an Upsert holding this document.
	failUpsert string
}

func newFakeIndex() *fakeIndex { return &fakeIndex{state: map[string]search.IndexDoc{}} }

func (x *fakeIndex) Upsert(_ context.Context, docs []search.IndexDoc) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	x.upserts = append(x.upserts, ids)
	if x.failUpsert != "" && slices.Contains(ids, x.failUpsert) {
		return errors.New("index: 503")
	}
	for _, d := range docs {
		x.state[d.ID] = d
	}
	return nil
}

func (x *fakeIndex) Delete(_ context.Context, ids []string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deletes = append(x.deletes, slices.Clone(ids))
	for _, id := range ids {
		delete(x.state, id)
	}
	return nil
}

func (x *fakeIndex) upserted() []string {
	var out []string
	for _, ids := range x.upserts {
		out = append(out, ids...)
	}
	slices.Sort(out)
	return out
}

// failingEmbedder is the offline embedder, failing for texts that contain fail.
type failingEmbedder struct {
	search.Embedder
	fail string
}

func (e failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if e.fail != "" && strings.Contains(t, e.fail) {
			return nil, fmt.Errorf("provider: 429 after retries: %w", search.ErrEmbedder)
		}
	}
	return e.Embedder.Embed(ctx, texts)
}

func hashing(t *testing.T) search.Embedder {
	t.Helper()
	h, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func vector(t *testing.T, text string) []float32 {
	t.Helper()
	vs, err := hashing(t).Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

func document(id, lib, ws, title string, shared int) *doclib.Document {
	at := time.Date(2026, 1, 25, 0, 0, 38, 0, time.UTC)
	return &doclib.Document{ID: id, LibraryID: lib, WorkspaceID: ws, Title: title, Category: "Accounts & access",
		Tags: []string{"access"}, Applications: []string{"Okta"}, LastSeen: at, UpdatedAt: at,
		Content:        json.RawMessage(`{"summary":"` + title + ` in a few steps.","steps":["Open it.","Do it."]}`),
		RecordingCount: shared + 1, SharedRecordingCount: shared}
}

func recording(id string, shared bool) *doclib.Recording {
	return &doclib.Recording{ID: id, Title: "Recorded " + id, Shared: shared, Steps: []string{"Clicked " + id},
		Questions: []doclib.Question{{ID: "q_" + id, Question: "Why?", Response: "Because " + id}}}
}

// world is the table as it stands after the fixtures' writes: the title of
// doc_it_001 changed, rec_it_0001 private, doc_it_009 and doc_it_010 deleted.
func world() *fakeSource {
	s := &fakeSource{
		docs: map[string]*doclib.Document{},
		recs: map[string][]*doclib.Recording{},
		workspaces: map[string]*doclib.Workspace{
			"ws_acme": {ID: "ws_acme", Plan: doclib.PlanTeam},
			"ws_solo": {ID: "ws_solo", Plan: doclib.PlanIndividual},
		},
		libraries: map[string][]*doclib.Library{
			"ws_acme": {{ID: "lib_it", WorkspaceID: "ws_acme"}, {ID: "lib_finance", WorkspaceID: "ws_acme"}},
			"ws_solo": {{ID: "lib_solo", WorkspaceID: "ws_solo"}},
		},
		libDocs: map[string][]string{
			"lib_it":      {"doc_it_001", "doc_it_002", "doc_it_007"},
			"lib_finance": {"doc_fin_001"},
			"lib_solo":    {"doc_solo_001"},
		},
	}
	add := func(d *doclib.Document, recs ...*doclib.Recording) {
		s.docs[d.ID] = d
		s.recs[d.ID] = recs
	}
	add(document("doc_it_001", "lib_it", "ws_acme", "Reset a user's password and unlock the account in Okta", 2),
		recording("rec_it_0001", false), recording("rec_it_0003", true))
	add(document("doc_it_002", "lib_it", "ws_acme", "Onboard a new employee", 1), recording("rec_it_0020", true))
	add(document("doc_it_007", "lib_it", "ws_acme", "Rotate the VPN certificate", 2),
		recording("rec_it_0070", true), recording("rec_it_0071", false))
	add(document("doc_fin_001", "lib_finance", "ws_acme", "Close the month", 1), recording("rec_fin_0001", true))
	add(document("doc_solo_001", "lib_solo", "ws_solo", "Invoice a client", 1), recording("rec_solo_0001", true))
	return s
}

func newIndexer(t *testing.T, src indexer.Source, idx search.Index) *indexer.Indexer {
	return &indexer.Indexer{Source: src, Embedder: hashing(t), Index: idx,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
}

func load(t *testing.T, name string) events.DynamoDBEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

func handle(t *testing.T, x *indexer.Indexer, ev events.DynamoDBEvent) []string {
	t.Helper()
	resp, err := x.Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// wantIndexed checks a document's index entry: its vector, and exactly the
// recordings given, with theirs.
func wantIndexed(t *testing.T, idx *fakeIndex, src *fakeSource, id string, recIDs ...string) {
	t.Helper()
	got, ok := idx.state[id]
	if !ok {
		t.Fatalf("%s not indexed", id)
	}
	doc := src.docs[id]
	if got.Title != doc.Title || got.WorkspaceID != doc.WorkspaceID || got.LibraryID != doc.LibraryID {
		t.Errorf("%s: indexed %q in %s/%s", id, got.Title, got.WorkspaceID, got.LibraryID)
	}
	if !reflect.DeepEqual(got.Vector, vector(t, search.DocumentText(doc))) {
		t.Errorf("%s: the vector is not that of DocumentText", id)
	}
	var gotRecs []string
	for _, r := range got.Recordings {
		gotRecs = append(gotRecs, r.ID)
		for _, rec := range src.recs[id] {
			if rec.ID == r.ID && !reflect.DeepEqual(r.Vector, vector(t, search.RecordingText(rec))) {
				t.Errorf("%s: the vector of %s is not that of RecordingText", id, r.ID)
			}
		}
	}
	if !slices.Equal(gotRecs, recIDs) {
		t.Errorf("%s: recordings %v, want %v", id, gotRecs, recIDs)
	}
}

func TestEventFilesDecode(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "events", "dynamodb-*.json"))
	if err != nil || len(files) < 6 {
		t.Fatalf("event files: %v, %v", files, err)
	}
	for _, f := range files {
		ev := load(t, filepath.Base(f))
		if len(ev.Records) == 0 {
			t.Errorf("%s: no records", f)
		}
		for _, r := range ev.Records {
			if r.EventVersion != "1.1" || r.EventSource != "aws:dynamodb" || r.Change.SequenceNumber == "" ||
				r.Change.StreamViewType != "NEW_AND_OLD_IMAGES" {
				t.Errorf("%s: record %s is not a DynamoDB Streams record of this table", f, r.EventID)
			}
		}
	}
}

func TestInsertDocument(t *testing.T) {
	src, idx := world(), newFakeIndex()
	if failed := handle(t, newIndexer(t, src, idx), load(t, "dynamodb-insert-document.json")); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	if len(idx.upserts) != 1 || !slices.Equal(idx.upserts[0], []string{"doc_it_007"}) || len(idx.deletes) != 0 {
		t.Fatalf("upserts %v, deletes %v", idx.upserts, idx.deletes)
	}
	wantIndexed(t, idx, src, "doc_it_007", "rec_it_0070") // rec_it_0071 is private
}

func TestInsertIndividualPlan(t *testing.T) {
	src, idx := world(), newFakeIndex()
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("INSERT", "100", "DOC#doc_solo_001", "A", nil, image("title", "Invoice a client")),
	}}
	if failed := handle(t, newIndexer(t, src, idx), ev); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	wantIndexed(t, idx, src, "doc_solo_001") // shared, but on the Individual plan
	if slices.Contains(src.calls, "SharedRecordings") {
		t.Error("recordings read on the Individual plan")
	}
}

func TestModifyDocument(t *testing.T) {
	src, idx := world(), newFakeIndex()
	if failed := handle(t, newIndexer(t, src, idx), load(t, "dynamodb-modify-document.json")); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	if !slices.Equal(idx.upserted(), []string{"doc_it_001"}) {
		t.Fatalf("upserts %v", idx.upserts)
	}
	if got := idx.state["doc_it_001"].Title; got != "Reset a user's password and unlock the account in Okta" {
		t.Errorf("title %q", got)
	}
	wantIndexed(t, idx, src, "doc_it_001", "rec_it_0003")
}

func TestRecordingUnshared(t *testing.T) {
	src, idx := world(), newFakeIndex()
	x := newIndexer(t, src, idx)
	// Before: the recording was shared and indexed.
	src.recs["doc_it_001"][0] = recording("rec_it_0001", true)
	handle(t, x, load(t, "dynamodb-modify-document.json"))
	wantIndexed(t, idx, src, "doc_it_001", "rec_it_0001", "rec_it_0003")

	src.recs["doc_it_001"][0] = recording("rec_it_0001", false)
	if failed := handle(t, x, load(t, "dynamodb-modify-recording-unshared.json")); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	wantIndexed(t, idx, src, "doc_it_001", "rec_it_0003")
}

func TestRemoveDocument(t *testing.T) {
	src, idx := world(), newFakeIndex()
	idx.state["doc_it_009"] = search.IndexDoc{Doc: search.Doc{ID: "doc_it_009"}}
	if failed := handle(t, newIndexer(t, src, idx), load(t, "dynamodb-remove-document.json")); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	if len(idx.upserts) != 0 || !reflect.DeepEqual(idx.deletes, [][]string{{"doc_it_009"}}) {
		t.Fatalf("upserts %v, deletes %v", idx.upserts, idx.deletes)
	}
	if _, ok := idx.state["doc_it_009"]; ok {
		t.Error("doc_it_009 still indexed")
	}
}

func TestWorkspacePlanChange(t *testing.T) {
	src, idx := world(), newFakeIndex()
	x := newIndexer(t, src, idx)
	handle(t, x, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "1", "DOC#doc_it_007", "A", image("title", "a"), image("title", "b")),
	}})
	wantIndexed(t, idx, src, "doc_it_007", "rec_it_0070")
	idx.upserts = nil

	src.workspaces["ws_acme"].Plan = doclib.PlanIndividual // the table after the write
	if failed := handle(t, x, load(t, "dynamodb-modify-workspace-plan.json")); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	want := []string{"doc_fin_001", "doc_it_001", "doc_it_002", "doc_it_007"}
	if got := idx.upserted(); !slices.Equal(got, want) {
		t.Fatalf("upserted %v, want %v", got, want)
	}
	for _, id := range want {
		wantIndexed(t, idx, src, id)
	}
}

func TestPlanUnchanged(t *testing.T) {
	src, idx := world(), newFakeIndex()
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "1", "WS#ws_acme", "WS", image("plan", "team", "name", "Acme"), image("plan", "team", "name", "Acme Corp")),
	}}
	if failed := handle(t, newIndexer(t, src, idx), ev); failed != nil || len(src.calls) != 0 || len(idx.upserts) != 0 {
		t.Fatalf("failed %v, source calls %v, upserts %v", failed, src.calls, idx.upserts)
	}
}

// TestLibraryChangesTouchNothing: the index holds no field of a library, and
// every import that changes a document rewrites its library's counts;
// re-embedding the library on each would cost a whole library per edit.
func TestLibraryChangesTouchNothing(t *testing.T) {
	src, idx := world(), newFakeIndex()
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "1", "WS#ws_acme", "LIB#lib_finance", image("name", "Finance"), image("name", "Finance & Accounting")),
		record("MODIFY", "2", "WS#ws_acme", "LIB#lib_finance", image("documentCount", "50"), image("documentCount", "51")),
	}}
	if failed := handle(t, newIndexer(t, src, idx), ev); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	if len(idx.upserts) != 0 || len(idx.deletes) != 0 {
		t.Fatalf("a library change touched the index: %v %v", idx.upserts, idx.deletes)
	}
	// A malformed library key is still a poisoned record.
	if _, err := newIndexer(t, src, idx).Affected(record("MODIFY", "3", "WS#ws_acme", "LIB#", nil, nil)); err == nil {
		t.Error("a library record without an ID was accepted")
	}
}

func TestPoisonedRecord(t *testing.T) {
	src, idx := world(), newFakeIndex()
	ev := load(t, "dynamodb-batch-with-poisoned-record.json")
	failed := handle(t, newIndexer(t, src, idx), ev)
	if want := []string{ev.Records[1].Change.SequenceNumber}; !slices.Equal(failed, want) {
		t.Fatalf("failed %v, want %v", failed, want)
	}
	if !slices.Equal(idx.upserted(), []string{"doc_it_002"}) || !reflect.DeepEqual(idx.deletes, [][]string{{"doc_it_010"}}) {
		t.Fatalf("upserts %v, deletes %v", idx.upserts, idx.deletes)
	}
	wantIndexed(t, idx, src, "doc_it_002", "rec_it_0020")
}

func TestAffectedRefusesPoison(t *testing.T) {
	x := newIndexer(t, world(), newFakeIndex())
	for name, rec := range map[string]events.DynamoDBEventRecord{
		"no keys":       {EventName: "MODIFY"},
		"no sk":         {EventName: "MODIFY", Change: events.DynamoDBStreamRecord{Keys: image("pk", "DOC#d")}},
		"number pk":     {EventName: "MODIFY", Change: events.DynamoDBStreamRecord{Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewNumberAttribute("1"), "sk": events.NewStringAttribute("A")}}},
		"no doc ID":     record("INSERT", "1", "DOC#", "A", nil, nil),
		"no library ID": record("INSERT", "1", "WS#ws_acme", "LIB#", nil, nil),
		"unknown event": record("UPSERT", "1", "DOC#d", "A", nil, nil),
		"number plan":   record("MODIFY", "1", "WS#ws_acme", "WS", image("plan", "team"), map[string]events.DynamoDBAttributeValue{"plan": events.NewNumberAttribute("2")}),
	} {
		if c, err := x.Affected(rec); err == nil {
			t.Errorf("%s: no error, change %+v", name, c)
		}
	}
}

func TestIgnoredItems(t *testing.T) {
	src, idx := world(), newFakeIndex()
	x := newIndexer(t, src, idx)
	var recs []events.DynamoDBEventRecord
	for i, k := range [][2]string{
		{"KEY#9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "KEY"},
		{"RL#key:ws_a/key_full#1767225600", "RL"},
		{"WS#ws_acme", "CREDIT"}, {"WS#ws_acme", "DEV#dev_acme_laptop"}, {"WS#ws_acme", "KEY#key_full"},
		{"WS#ws_acme", "SLUG#it-operations"},
		{"LIB#lib_it", "G#META"}, {"LIB#lib_it", "G#0000"},
		{"LIB#lib_it", "D#doc_it_001"}, // the A item's own record re-indexes it
		{"DOC#doc_it_001", "O#doc_it_002#then"}, {"DOC#doc_it_002", "I#doc_it_001#then"},
		{"FUTURE#x", "Y"},
	} {
		recs = append(recs, record("MODIFY", fmt.Sprint(i+1), k[0], k[1], image("n", "1"), image("n", "2")))
	}
	// An import of another file rewrites unchanged items with a new gen only.
	recs = append(recs, record("MODIFY", "99", "DOC#doc_it_001", "A",
		image("title", "t", "gen", "3f9a1c0d5e7b2a64"), image("title", "t", "gen", "b71e04c9a2d85f30")))
	for _, r := range recs {
		if c, err := x.Affected(r); err != nil || !c.Empty() {
			t.Errorf("%s %s: %+v, %v", r.Change.Keys["pk"].String(), r.Change.Keys["sk"].String(), c, err)
		}
	}
	if failed := handle(t, x, events.DynamoDBEvent{Records: recs}); failed != nil {
		t.Fatalf("failed %v", failed)
	}
	if len(src.calls) != 0 || len(idx.upserts) != 0 || len(idx.deletes) != 0 {
		t.Fatalf("source calls %v, upserts %v, deletes %v", src.calls, idx.upserts, idx.deletes)
	}
}

func TestEmbedderFailure(t *testing.T) {
	src, idx := world(), newFakeIndex()
	x := newIndexer(t, src, idx)
	x.Embedder = failingEmbedder{Embedder: hashing(t), fail: "Onboard a new employee"}
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "10", "DOC#doc_it_001", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "11", "DOC#doc_it_002", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "12", "DOC#doc_it_007", "R#rec_it_0070", image("shared", "x"), image("shared", "y")),
		record("MODIFY", "13", "DOC#doc_it_002", "R#rec_it_0020", image("shared", "x"), image("shared", "y")),
	}}
	// Both records of doc_it_002 fail with it.
	if failed := handle(t, x, ev); !slices.Equal(failed, []string{"11", "13"}) {
		t.Fatalf("failed %v", failed)
	}
	if got := idx.upserted(); !slices.Equal(got, []string{"doc_it_001", "doc_it_007"}) {
		t.Fatalf("upserted %v", got)
	}
}

func TestUpsertFailure(t *testing.T) {
	src, idx := world(), newFakeIndex()
	idx.failUpsert = "doc_it_002"
	x := newIndexer(t, src, idx)
	x.BatchSize = 2 // doc_fin_001 and doc_it_001 in one Upsert, doc_it_002 and doc_it_007 in the other
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "20", "DOC#doc_it_007", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "21", "DOC#doc_it_001", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "22", "DOC#doc_fin_001", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "23", "DOC#doc_it_002", "A", image("title", "a"), image("title", "b")),
	}}
	if failed := handle(t, x, ev); !slices.Equal(failed, []string{"20", "23"}) {
		t.Fatalf("failed %v", failed)
	}
	if got := slices.Sorted(maps.Keys(idx.state)); !slices.Equal(got, []string{"doc_fin_001", "doc_it_001"}) {
		t.Fatalf("indexed %v", got)
	}
}

func TestSourceFailure(t *testing.T) {
	src, idx := world(), newFakeIndex()
	src.docsErr = doclib.Unavailable(errors.New("ProvisionedThroughputExceededException"))
	ev := load(t, "dynamodb-batch-with-poisoned-record.json")
	failed := handle(t, newIndexer(t, src, idx), ev)
	var want []string
	for _, r := range ev.Records {
		want = append(want, r.Change.SequenceNumber)
	}
	if !slices.Equal(failed, want) || len(idx.upserts)+len(idx.deletes) != 0 {
		t.Fatalf("failed %v, want %v; upserts %v, deletes %v", failed, want, idx.upserts, idx.deletes)
	}
}

func TestFailedRecordWithoutSequenceNumber(t *testing.T) {
	x := newIndexer(t, world(), newFakeIndex())
	_, err := x.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventName: "MODIFY"}}})
	if err == nil {
		t.Fatal("a failed record without a sequence number must fail the batch")
	}
}

func TestIdempotent(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "events", "dynamodb-*.json"))
	for _, f := range files {
		src, idx := world(), newFakeIndex()
		x := newIndexer(t, src, idx)
		ev := load(t, filepath.Base(f))
		first := handle(t, x, ev)
		once := maps.Clone(idx.state)
		second := handle(t, x, ev)
		if !reflect.DeepEqual(once, idx.state) || !slices.Equal(first, second) {
			t.Errorf("%s: handled twice, the index or the failures differ", f)
		}
	}
}

func record(name, seq, pk, sk string, old, new map[string]events.DynamoDBAttributeValue) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventID: "ev" + seq, EventName: name, EventVersion: "1.1", EventSource: "aws:dynamodb",
		Change: events.DynamoDBStreamRecord{SequenceNumber: seq, StreamViewType: "NEW_AND_OLD_IMAGES",
			Keys: image("pk", pk, "sk", sk), OldImage: old, NewImage: new}}
}

func image(kv ...string) map[string]events.DynamoDBAttributeValue {
	m := map[string]events.DynamoDBAttributeValue{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = events.NewStringAttribute(kv[i+1])
	}
	return m
}

// committingIndex is an Index that holds writes until Commit, as the
// embedded tier's snapshot writer does.
type committingIndex struct {
	*fakeIndex
	commits   int
	failNext  bool
	conflicts int      // the next commits that another writer overtakes
	dropped   int      // Upserts dropped by overtaken commits
	committed []string // the upserted IDs at the last successful commit
}

func (x *committingIndex) Commit(context.Context) error {
	x.commits++
	if x.conflicts > 0 {
		x.conflicts--
		// As the snapshot writer does, an overtaken commit drops what it held.
		x.dropped += len(x.upserts)
		x.upserts = nil
		return fmt.Errorf("%w: snapshot: put pointer: 412 PreconditionFailed", search.ErrCommitConflict)
	}
	if x.failNext {
		x.failNext = false
		return errors.New("snapshot: put: 503 SlowDown")
	}
	x.committed = x.upserted()
	return nil
}

// A commit that another writer overtook is redone within the invocation:
// the documents are read again and committed over the other's snapshot, and
// no record fails; only a writer that keeps losing fails the batch.
func TestCommitConflictIsRedone(t *testing.T) {
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "40", "DOC#doc_it_001", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "41", "DOC#doc_fin_001", "A", image("title", "a"), image("title", "b")),
	}}
	src, idx := world(), &committingIndex{fakeIndex: newFakeIndex()}
	x := newIndexer(t, src, idx)
	idx.conflicts = indexer.CommitAttempts - 1
	if failed := handle(t, x, ev); len(failed) != 0 {
		t.Fatalf("after %d lost races the batch failed %v; want it redone until it commits", indexer.CommitAttempts-1, failed)
	}
	if idx.commits != indexer.CommitAttempts || idx.dropped != indexer.CommitAttempts-1 || len(idx.upserts) != 1 {
		t.Fatalf("%d commits, %d upserts dropped, %d kept; want the batch indexed and committed %d times", idx.commits, idx.dropped, len(idx.upserts), indexer.CommitAttempts)
	}
	if !slices.Equal(idx.committed, []string{"doc_fin_001", "doc_it_001"}) {
		t.Fatalf("committed %v", idx.committed)
	}

	src, idx = world(), &committingIndex{fakeIndex: newFakeIndex()}
	x = newIndexer(t, src, idx)
	idx.conflicts = indexer.CommitAttempts
	if failed := handle(t, x, ev); !slices.Equal(failed, []string{"40", "41"}) {
		t.Fatalf("a writer that lost %d races failed %v; want both records back to the stream", indexer.CommitAttempts, failed)
	}
	if idx.commits != indexer.CommitAttempts {
		t.Fatalf("%d commits; want %d attempts, then give up", idx.commits, indexer.CommitAttempts)
	}
}

// A batch is committed once, however many documents and Upserts it holds; a
// failed commit fails every record that touched a document, and the retry
// commits.
func TestCommitOncePerBatch(t *testing.T) {
	src, idx := world(), &committingIndex{fakeIndex: newFakeIndex()}
	x := newIndexer(t, src, idx)
	x.BatchSize = 1 // one Upsert per document
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "30", "DOC#doc_it_001", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "31", "DOC#doc_it_002", "A", image("title", "a"), image("title", "b")),
		record("MODIFY", "32", "DOC#doc_fin_001", "A", image("title", "a"), image("title", "b")),
	}}
	idx.failNext = true
	if failed := handle(t, x, ev); !slices.Equal(failed, []string{"30", "31", "32"}) {
		t.Fatalf("a failed commit failed records %v; want all three", failed)
	}
	if idx.commits != 1 || len(idx.upserts) != 3 {
		t.Fatalf("%d commits over %d upserts; want 1 commit", idx.commits, len(idx.upserts))
	}
	if failed := handle(t, x, ev); len(failed) != 0 {
		t.Fatalf("the retry failed %v", failed)
	}
	if idx.commits != 2 || !slices.Equal(idx.committed, []string{"doc_fin_001", "doc_fin_001", "doc_it_001", "doc_it_001", "doc_it_002", "doc_it_002"}) {
		t.Fatalf("after the retry: %d commits, committed %v", idx.commits, idx.committed)
	}
	// A batch that touches no document commits nothing.
	none := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("MODIFY", "33", "WS#ws_x", "LIB#lib_x", image("name", "a"), image("name", "b")),
	}}
	handle(t, x, none)
	if idx.commits != 2 {
		t.Fatalf("a batch without documents committed (%d commits)", idx.commits)
	}
}
