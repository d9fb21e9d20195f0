package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/service"
)

// auditSecret is the secret both of the auditor's data sets give their key.
const auditSecret = "dlk_live_aaaaaaaaaaaa"

// workspaceSet is a one-workspace data set: a device, a key, a library and a
// document, with the IDs and secret given.
func workspaceSet(t *testing.T, ws, key, secret, lib, doc, title string) *doclib.DataSet {
	t.Helper()
	const ts = `"2026-01-01T00:00:00Z"`
	raw := fmt.Sprintf(`{
  "workspaces": [{"id": %[1]q, "name": "W", "plan": "team", "aiCredit": 5, "ownProviderKey": false, "subscription": "active"}],
  "devices": [{"id": "dev_1", "workspaceId": %[1]q, "status": "active"}],
  "apiKeys": [{"id": %[2]q, "workspaceId": %[1]q, "deviceId": "dev_1", "secret": %[3]q, "libraries": ["*"], "recordingDetails": true}],
  "libraries": [{"id": %[4]q, "workspaceId": %[1]q, "name": "L", "slug": "l", "description": "", "createdAt": %[7]s, "updatedAt": %[7]s,
                 "schema": {"version": 1, "sections": [{"key": "summary", "title": "S", "type": "text"}]}}],
  "documents": [{"id": %[5]q, "libraryId": %[4]q, "slug": "x", "title": %[6]q, "category": "c", "tags": [], "applications": [],
                 "deviceCount": 0, "firstSeen": %[7]s, "lastSeen": %[7]s, "createdAt": %[7]s, "updatedAt": %[7]s,
                 "content": {"summary": "s"}}]
}`, ws, key, secret, lib, doc, title, ts)
	d, err := dataset.Load(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// manyDocs is workspaceSet with n documents, doc_0 to doc_<n-1>.
func manyDocs(t *testing.T, n int, ws, key, secret, lib string) *doclib.DataSet {
	d := workspaceSet(t, ws, key, secret, lib, "doc_0", "D")
	for i := 1; i < n; i++ {
		doc := *d.Documents[0]
		doc.ID, doc.Slug = fmt.Sprintf("doc_%d", i), fmt.Sprintf("x%d", i)
		d.Documents = append(d.Documents, &doc)
	}
	return d
}

// TestImportRefusesAnotherWorkspacesIDs is the auditor's scenario: a second
// data set, for another workspace, reuses a document ID and a key secret. It
// is refused, the table is unchanged item for item, and the key still logs
// into its own workspace only.
func TestImportRefusesAnotherWorkspacesIDs(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t)
	a := workspaceSet(t, "ws_a", "key_a", auditSecret, "lib_a", "doc_1", "Reset a password")
	if _, err := tbl.Import(ctx, a, "gA", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := dump(t, tbl)

	b := workspaceSet(t, "ws_evil", "key_e", auditSecret, "lib_e", "doc_1", "HIJACKED")
	_, err := tbl.Import(ctx, b, "gB", dynamo.ImportOptions{Prune: true})
	var re *dataset.ValidationError
	if !errors.As(err, &re) {
		t.Fatalf("the import was not refused: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"nothing was written: 2 problems",
		"document doc_1 already belongs to workspace ws_a in table " + tbl.Name + "; IDs are global: rename it in the data set",
		"key key_e has the same secret as key key_a of workspace ws_a in table " + tbl.Name,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, auditSecret) || strings.Contains(msg, doclib.HashKey(auditSecret).String()) {
		t.Errorf("the message shows the secret or its hash:\n%s", msg)
	}
	if strings.Contains(msg, "dynamo:") || strings.Count(msg, "nothing was") != 1 {
		t.Errorf("the message stacks prefixes:\n%s", msg)
	}
	if after := dump(t, tbl); !slices.Equal(after, before) {
		t.Fatalf("a refused import changed the table: %d items, were %d (first difference at %d)", len(after), len(before), firstDiff(after, before))
	}
	svc := service.New(dynamo.NewStore(tbl), func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) })
	if p, err := svc.Authenticate(ctx, auditSecret); err != nil || p.WorkspaceID != "ws_a" || p.KeyID != "key_a" {
		t.Errorf("the key after the refused import: %+v %v", p, err)
	}
	if docs, err := dynamo.NewStore(tbl).Documents(ctx, []string{"doc_1"}); err != nil || docs["doc_1"].WorkspaceID != "ws_a" || docs["doc_1"].Title != "Reset a password" {
		t.Errorf("doc_1 after the refused import: %+v %v", docs["doc_1"], err)
	}
}

// TestImportRefusesAnotherWorkspacesLibrary: a library ID is global too (its
// list and graph live in LIB#<id>), so reusing one is refused.
func TestImportRefusesAnotherWorkspacesLibrary(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t)
	if _, err := tbl.Import(ctx, workspaceSet(t, "ws_a", "key_a", auditSecret, "lib_a", "doc_1", "A"), "gA", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := dump(t, tbl)
	_, err := tbl.Import(ctx, workspaceSet(t, "ws_b", "key_b", "dlk_live_bbbbbbbbbbbb", "lib_a", "doc_2", "B"), "gB", dynamo.ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "1 problem\n  - library lib_a already belongs to workspace ws_a") {
		t.Fatalf("error: %v", err)
	}
	if after := dump(t, tbl); !slices.Equal(after, before) {
		t.Error("a refused import changed the table")
	}
}

// TestImportRefusesASecretWithoutShowingIt: a key whose secret another
// workspace's key already uses is named by the two key IDs, never by the
// secret or its hash.
func TestImportRefusesASecretWithoutShowingIt(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t)
	if _, err := tbl.Import(ctx, workspaceSet(t, "ws_a", "key_a", auditSecret, "lib_a", "doc_1", "A"), "gA", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := tbl.Import(ctx, workspaceSet(t, "ws_b", "key_b", auditSecret, "lib_b", "doc_2", "B"), "gB", dynamo.ImportOptions{})
	if err == nil {
		t.Fatal("a reused secret was accepted")
	}
	msg := err.Error()
	want := "1 problem\n  - key key_b has the same secret as key key_a of workspace ws_a in table " + tbl.Name +
		"; secrets are global: give key key_b a new secret in the data set"
	if !strings.HasSuffix(msg, want) {
		t.Errorf("message:\n%s\nwant it to end with:\n%s", msg, want)
	}
	if strings.Contains(msg, "aaaaaaaaaaaa") || strings.Contains(msg, doclib.HashKey(auditSecret).String()[:12]) {
		t.Errorf("the message shows the secret or its hash:\n%s", msg)
	}
	// An operator's key (no ws, only workspaceId) is held by its workspace too.
	_, secret, err := tbl.CreateKey(ctx, dynamo.NewKey{WorkspaceID: "ws_a", Libraries: []string{"*"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Import(ctx, workspaceSet(t, "ws_b", "key_b", secret, "lib_b", "doc_2", "B"), "gB", dynamo.ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "of workspace ws_a") || strings.Contains(err.Error(), secret) {
		t.Errorf("an operator's secret reused: %v", err)
	}
}

// TestReimportOfTheSameWorkspace: a workspace's own items, of any earlier
// generation, are no conflict: a changed file imports, with and without
// --prune, and the IDs it dropped are free for another workspace afterwards.
// Moving an ID between two workspaces of one file is refused with a hint.
func TestReimportOfTheSameWorkspace(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t)
	if _, err := tbl.Import(ctx, workspaceSet(t, "ws_a", "key_a", auditSecret, "lib_a", "doc_1", "A"), "g1", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Import(ctx, workspaceSet(t, "ws_a", "key_a", auditSecret, "lib_a", "doc_1", "A, edited"), "g2", dynamo.ImportOptions{}); err != nil {
		t.Fatalf("re-import: %v", err)
	}
	// The key renamed and the document replaced, pruned: doc_1 leaves ws_a.
	res, err := tbl.Import(ctx, workspaceSet(t, "ws_a", "key_a2", auditSecret, "lib_a", "doc_9", "A9"), "g3", dynamo.ImportOptions{Prune: true})
	if err != nil || res.Deleted == 0 {
		t.Fatalf("re-import with --prune: %+v %v", res, err)
	}
	if _, err := tbl.Import(ctx, workspaceSet(t, "ws_b", "key_b", "dlk_live_bbbbbbbbbbbb", "lib_b", "doc_1", "B"), "gB", dynamo.ImportOptions{}); err != nil {
		t.Errorf("doc_1, pruned from ws_a, is not free: %v", err)
	}

	// One file with both workspaces, doc_9 moved from ws_a to ws_b.
	a := workspaceSet(t, "ws_a", "key_a2", auditSecret, "lib_a", "doc_8", "A8")
	b := workspaceSet(t, "ws_b", "key_b", "dlk_live_bbbbbbbbbbbb", "lib_b", "doc_9", "B9")
	both := &doclib.DataSet{Workspaces: append(a.Workspaces, b.Workspaces...), Devices: append(a.Devices, b.Devices...),
		APIKeys: append(a.APIKeys, b.APIKeys...), Libraries: append(a.Libraries, b.Libraries...), Documents: append(a.Documents, b.Documents...)}
	_, err = tbl.Import(ctx, both, "g4", dynamo.ImportOptions{Prune: true})
	if err == nil || !strings.Contains(err.Error(), "document doc_9 already belongs to workspace ws_a") || !strings.Contains(err.Error(), "to move it") {
		t.Errorf("a move between workspaces: %v", err)
	}
}

// TestConflictListIsCapped: a data set that clashes everywhere lists 20
// conflicts and counts the rest.
func TestConflictListIsCapped(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t)
	if _, err := tbl.Import(ctx, manyDocs(t, 30, "ws_a", "key_a", auditSecret, "lib_a"), "gA", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := tbl.Import(ctx, manyDocs(t, 30, "ws_b", "key_b", "dlk_live_bbbbbbbbbbbb", "lib_b"), "gB", dynamo.ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "30 problems") || strings.Count(err.Error(), "\n  - ") != 20 || !strings.HasSuffix(err.Error(), "... and 10 more") {
		t.Errorf("error: %v", err)
	}
}

// stingyClient answers every BatchGetItem of more than 10 keys for its first
// half only and hands the rest back as unprocessed, as DynamoDB may.
type stingyClient struct {
	dynamo.Client
	handedBack atomic.Int64
}

func (c *stingyClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	ask := map[string]types.KeysAndAttributes{}
	back := map[string]types.KeysAndAttributes{}
	for name, ka := range in.RequestItems {
		half := ka
		if n := len(ka.Keys); n > 10 {
			rest := ka
			half.Keys, rest.Keys = ka.Keys[:n/2], ka.Keys[n/2:]
			back[name] = rest
			c.handedBack.Add(int64(len(rest.Keys)))
		}
		ask[name] = half
	}
	out, err := c.Client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: ask}, opts...)
	if err == nil && len(back) > 0 {
		out.UnprocessedKeys = back
	}
	return out, err
}

// TestOwnershipCheckRetriesUnprocessedKeys: keys DynamoDB leaves unprocessed
// are asked again until answered, so no conflict slips through.
func TestOwnershipCheckRetriesUnprocessedKeys(t *testing.T) {
	ctx := context.Background()
	tbl := newTable(t)
	if _, err := tbl.Import(ctx, manyDocs(t, 250, "ws_a", "key_a", auditSecret, "lib_a"), "gA", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	sc := &stingyClient{Client: tbl.Client}
	stingy := &dynamo.Table{Client: sc, Name: tbl.Name}
	_, err := stingy.Import(ctx, manyDocs(t, 250, "ws_b", "key_b", "dlk_live_bbbbbbbbbbbb", "lib_b"), "gB", dynamo.ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "250 problems") {
		t.Errorf("error: %.300v", err)
	}
	if sc.handedBack.Load() == 0 {
		t.Error("no key was left unprocessed; the test proves less than it says")
	}
}
