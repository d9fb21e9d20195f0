package main

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakelambda"
	"github.com/doclib/doclib/internal/standin/fakeopensearch"
	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/internal/suites/embedtest"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/service"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalitetest.Stop()
	os.Exit(code)
}

// env points the AWS configuration at dynalite and returns a fresh table name.
func env(t *testing.T) (string, *dynamo.Table) {
	t.Helper()
	srv := dynalitetest.Start(t)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", srv.Endpoint)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	name := srv.TableName(t)
	return name, &dynamo.Table{Client: srv.Client(t), Name: name}
}

func admin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, func(string) string { return "" }, &out, &errb, false)
	return code, out.String(), errb.String()
}

func TestImportAndKeys(t *testing.T) {
	table, tbl := env(t)
	if code, out, errs := admin(t, "create-table", "--table", table); code != 0 || !strings.Contains(out, "ready") {
		t.Fatalf("create-table: %d %s %s", code, out, errs)
	}
	file := fixtureFile(t, nil)
	code, out, errs := admin(t, "import", "--data", file, "--table", table)
	if code != 0 || !strings.Contains(out, "10 documents, 8 edges") || !strings.Contains(out, "credit set for 3 new workspaces") {
		t.Fatalf("import: %d\n%s\n%s", code, out, errs)
	}
	// Not a terminal: plain progress lines, ending at 100%.
	if !regexp.MustCompile(`writing: (\d+) of (\d+) \(100%\)`).MatchString(errs) {
		t.Errorf("no progress lines:\n%s", errs)
	}
	// The same file again: the same items, nothing deleted.
	code, out, _ = admin(t, "import", "--data", file, "--table", table, "--prune")
	if code != 0 || !strings.Contains(out, "0 items of earlier imports deleted") || !strings.Contains(out, "credit set for 0 new") {
		t.Errorf("second import: %d %s", code, out)
	}

	// A key: printed once, works, is listed without secret, is revoked.
	code, out, errs = admin(t, "keys", "create", "--table", table, "--workspace", "ws_a", "--libraries", "lib_a1", "--expires", "2099-01-01")
	secret := regexp.MustCompile(`dlk_live_[A-Za-z0-9]{40}`).FindString(out)
	id := regexp.MustCompile(`key_[a-z0-9]{16}`).FindString(out)
	if code != 0 || secret == "" || id == "" {
		t.Fatalf("keys create: %d %s %s", code, out, errs)
	}
	svc := service.New(dynamo.NewStore(tbl), func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) })
	p, err := svc.Authenticate(context.Background(), secret)
	if err != nil || p.KeyID != id || p.AllLibraries || !p.Libraries["lib_a1"] || p.RecordingDetails {
		t.Fatalf("the new key: %+v %v", p, err)
	}
	code, out, _ = admin(t, "keys", "list", "--table", table, "--workspace", "ws_a")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "operator") || strings.Contains(out, secret) || strings.Contains(out, "dlk_") {
		t.Errorf("keys list: %d\n%s", code, out)
	}
	code, out, _ = admin(t, "keys", "list", "--table", table, "--workspace", "ws_a", "--json")
	var listed []dynamo.KeyInfo
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 8 {
		t.Errorf("keys list --json: %d %d keys\n%s", code, len(listed), out)
	}
	if code, out, _ = admin(t, "keys", "revoke", "--table", table, "--workspace", "ws_a", id); code != 0 || !strings.Contains(out, "Revoked") {
		t.Fatalf("revoke: %d %s", code, out)
	}
	if _, err := svc.Authenticate(context.Background(), secret); doclib.ErrorCode(err) != doclib.EUnauthorised {
		t.Errorf("a revoked key still authenticates: %v", err)
	}
	// Operators' keys survive a pruning import.
	_, out, _ = admin(t, "keys", "create", "--table", table, "--workspace", "ws_a", "--libraries", "*")
	survivor := regexp.MustCompile(`dlk_live_[A-Za-z0-9]{40}`).FindString(out)
	admin(t, "import", "--data", file, "--table", table, "--prune")
	if _, err := svc.Authenticate(context.Background(), survivor); err != nil {
		t.Errorf("a pruning import removed an operator's key: %v", err)
	}
}

func TestErrors(t *testing.T) {
	table, _ := env(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"workspaces": [{"id": "ws_x", "name": "X", "plan": "gold", "subscription": "active"}]}`), 0o600)
	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"import", "--table", table}, 2, "--data FILE"},
		{[]string{"import", "--data", bad}, 2, "--table NAME"},
		{[]string{"import", "--data", bad, "--table", table}, 1, `plan "gold"`},
		{[]string{"import", "--data", "/nope.json", "--table", table}, 1, "no such file"},
		{[]string{"import", "--data", fixtureFile(t, nil), "--table", "not_created"}, 1, "create-table"},
		{[]string{"keys", "create", "--table", table, "--libraries", "*"}, 2, "--workspace"},
		{[]string{"keys", "create", "--table", table, "--workspace", "ws_a"}, 2, "--libraries"},
		{[]string{"keys", "create", "--table", table, "--workspace", "ws_a", "--libraries", "*", "--expires", "soon"}, 2, "2027-01-01"},
		{[]string{"keys", "revoke", "--table", table, "--workspace", "ws_a"}, 2, "ID of the key"},
		{[]string{"import", "--bogus"}, 2, "unknown flag"},
		{[]string{"create-table", "--table", table, "extra"}, 2, "no arguments"},
	}
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range cases {
		code, out, errs := admin(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.says) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s%s", c.args, code, c.code, c.says, out, errs)
		}
	}
	// A refused file wrote nothing.
	if _, out, _ := admin(t, "keys", "list", "--table", table, "--workspace", "ws_x"); strings.Contains(out, "key_") {
		t.Error("a refused import wrote keys")
	}
	if code, _, errs := admin(t, "keys", "create", "--table", table, "--workspace", "ws_nope", "--libraries", "*"); code != 1 || !strings.Contains(errs, "does not exist") {
		t.Errorf("a key for no workspace: %d %s", code, errs)
	}
}

// TestReindex: reindex loads the table into a new index behind the alias and
// deletes the index it replaces; a failure leaves the old index in place.
func TestReindex(t *testing.T) {
	table, _ := env(t)
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := admin(t, "import", "--data", fixtureFile(t, nil), "--table", table); code != 0 {
		t.Fatal(errs)
	}
	cluster := fakeopensearch.Start(t)
	cluster.CreateIndex("doclib-documents-old", "doclib-documents", map[string]any{"embedder": "openai/other", "schema": 1})

	// An unreachable cluster: an error that names it.
	code, _, errs := admin(t, "reindex", "--table", table, "--opensearch-url", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("unreachable cluster: exit %d\n%s", code, errs)
	}
	if code, _, errs := admin(t, "reindex", "--table", table); code != 2 || !strings.Contains(errs, "--opensearch-url") {
		t.Errorf("no URL: exit %d\n%s", code, errs)
	}
	if code, _, errs := admin(t, "reindex", "--table", table, "--opensearch-url", cluster.URL, "--embedder", "openai"); code != 2 || !strings.Contains(errs, "--embed-url") {
		t.Errorf("openai without its URL: exit %d\n%s", code, errs)
	}

	code, out, errs := admin(t, "reindex", "--table", table, "--opensearch-url", cluster.URL)
	if code != 0 || !strings.Contains(out, "10 documents") || !strings.Contains(out, "behind alias doclib-documents") {
		t.Fatalf("reindex: exit %d\n%s%s", code, out, errs)
	}
	if !regexp.MustCompile(`indexing: 10 of 10 \(100%\)`).MatchString(errs) {
		t.Errorf("no progress lines:\n%s", errs)
	}
	if got := cluster.Indexed("doclib-documents"); len(got) != 10 || got[0] != "doc_a1_1" {
		t.Errorf("indexed %v", got)
	}
	if !slices.Contains(cluster.Requests(), "DELETE /doclib-documents-old") {
		t.Errorf("the replaced index was not deleted: %v", cluster.Requests())
	}
}

// workspaceFile writes a one-workspace data set whose key has the secret given
// and whose one document is doc_1, with content of the size given.
func workspaceFile(t *testing.T, ws, key, secret, lib, summary string) string {
	t.Helper()
	const ts = "2026-01-01T00:00:00Z"
	f := map[string]any{
		"workspaces": []any{map[string]any{"id": ws, "name": "W", "plan": "team", "aiCredit": 5, "ownProviderKey": false, "subscription": "active"}},
		"devices":    []any{map[string]any{"id": "dev_1", "workspaceId": ws, "status": "active"}},
		"apiKeys": []any{map[string]any{"id": key, "workspaceId": ws, "deviceId": "dev_1", "secret": secret,
			"libraries": []string{"*"}, "recordingDetails": true}},
		"libraries": []any{map[string]any{"id": lib, "workspaceId": ws, "name": "L", "slug": "l", "description": "", "createdAt": ts, "updatedAt": ts,
			"schema": map[string]any{"version": 1, "sections": []any{map[string]any{"key": "summary", "title": "S", "type": "text"}}}}},
		"documents": []any{map[string]any{"id": "doc_1", "libraryId": lib, "slug": "x", "title": "T " + ws, "category": "c",
			"tags": []string{}, "applications": []string{}, "deviceCount": 0, "firstSeen": ts, "lastSeen": ts, "createdAt": ts, "updatedAt": ts,
			"content": map[string]any{"summary": summary}}},
	}
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ws+".json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImportRefusesAnotherWorkspacesIDs is the auditor's scenario through the
// command: the second data set reuses doc_1 and key_a's secret in another
// workspace. It is refused with exit 1, a message that names both conflicts and
// not the secret, and the key still logs into ws_a.
func TestImportRefusesAnotherWorkspacesIDs(t *testing.T) {
	table, tbl := env(t)
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	const secret = "dlk_live_aaaaaaaaaaaa"
	if code, out, errs := admin(t, "import", "--data", workspaceFile(t, "ws_a", "key_a", secret, "lib_a", "a"), "--table", table); code != 0 {
		t.Fatalf("import A: %d %s %s", code, out, errs)
	}
	b := workspaceFile(t, "ws_evil", "key_e", secret, "lib_e", "evil")
	code, out, errs := admin(t, "import", "--data", b, "--table", table, "--prune")
	want := "doclib-admin: " + b + ": the data set uses IDs or key secrets of other workspaces in table " + table + ", nothing was written: 2 problems\n" +
		"  - document doc_1 already belongs to workspace ws_a in table " + table + "; IDs are global: rename it in the data set\n" +
		"  - key key_e has the same secret as key key_a of workspace ws_a in table " + table + "; secrets are global: give key key_e a new secret in the data set\n"
	if code != 1 || out != "" || !strings.HasSuffix(errs, want) || strings.Contains(errs, secret) {
		t.Fatalf("import B: exit %d\nstdout: %s\nstderr:\n%s\nwant stderr to end with:\n%s", code, out, errs, want)
	}
	svc := service.New(dynamo.NewStore(tbl), func() time.Time { return time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) })
	if p, err := svc.Authenticate(context.Background(), secret); err != nil || p.WorkspaceID != "ws_a" {
		t.Errorf("key_a after the refused import: %+v %v", p, err)
	}
}

// TestImportTooLargeSaysItOnce: a document too large for DynamoDB (stored
// twice) is named once, under one prefix, whichever check refuses it: the
// loader's content cap or the import's item limit.
func TestImportTooLargeSaysItOnce(t *testing.T) {
	table, _ := env(t)
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	file := workspaceFile(t, "ws_a", "key_a", "dlk_live_aaaaaaaaaaaa", "lib_a", strings.Repeat("x", 1000*1024))
	code, _, errs := admin(t, "import", "--data", file, "--table", table)
	if code != 1 || !strings.HasPrefix(errs, "doclib-admin: "+file+": ") || strings.Count(errs, "doclib-admin:") != 1 ||
		strings.Count(errs, "nothing was") != 1 || strings.Count(errs, "doc_1") != 1 || !strings.Contains(errs, "1 problem\n  - ") {
		t.Errorf("exit %d\n%s", code, errs)
	}
}

// TestReindexPausesTheIndexer: with a stream on the table, reindex disables
// its Lambda triggers before it reads the table and enables them again after
// the swap, or after a failure, so that no indexer write lands in the index
// being replaced.
func TestReindexPausesTheIndexer(t *testing.T) {
	table, tbl := env(t)
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	// dynalite has no streams: a proxy in front of it describes the table
	// with one, as DynamoDB does for the CDK stack's table.
	const arn = "arn:aws:dynamodb:us-east-1:123456789012:table/doclib/stream/2026-11-01T00:00:00.000"
	withStream(t, arn)
	if got, err := tbl.StreamARN(context.Background()); err != nil || got != "" {
		t.Fatalf("dynalite itself has a stream %q (%v): drop the proxy", got, err)
	}
	if code, _, errs := admin(t, "import", "--data", fixtureFile(t, nil), "--table", table); code != 0 {
		t.Fatal(errs)
	}
	lambdaAPI := fakelambda.Start(t, fakelambda.Mapping{UUID: "u-indexer", State: "Enabled",
		FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:indexer", EventSourceArn: arn})
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", lambdaAPI.URL)
	cluster := fakeopensearch.Start(t)

	code, out, errs := admin(t, "reindex", "--table", table, "--opensearch-url", cluster.URL)
	if code != 0 || !strings.Contains(out, "10 documents") {
		t.Fatalf("reindex: exit %d\n%s%s", code, out, errs)
	}
	if got := strings.Join(lambdaAPI.Puts(), " "); got != "u-indexer=disabled u-indexer=enabled" {
		t.Errorf("trigger updates %q, want disabled then enabled", got)
	}
	if !strings.Contains(errs, "paused arn:aws:lambda:us-east-1:123456789012:function:indexer") || !strings.Contains(errs, "Enabled the indexer's triggers again") {
		t.Errorf("the pause is not reported:\n%s", errs)
	}

	// A reindex that fails once the trigger is paused (the cluster refuses
	// the new index's documents) enables it again too.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_bulk") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"type":"illegal_argument_exception","reason":"bulk refused"},"status":400}`))
			return
		}
		cluster.ServeHTTP(w, r)
	}))
	defer refusing.Close()
	code, _, errs = admin(t, "reindex", "--table", table, "--opensearch-url", refusing.URL)
	if code != 1 || lambdaAPI.State("u-indexer") == "Disabled" {
		t.Errorf("after a failed reindex: exit %d, trigger %s\n%s", code, lambdaAPI.State("u-indexer"), errs)
	}
	if got := strings.Join(lambdaAPI.Puts(), " "); got != "u-indexer=disabled u-indexer=enabled u-indexer=disabled u-indexer=enabled" {
		t.Errorf("trigger updates %q, want a second pause and resume", got)
	}
}

// withStream points AWS_ENDPOINT_URL_DYNAMODB at a proxy of the dynalite it
// points at now, which adds a stream to every DescribeTable answer.
func withStream(t *testing.T, arn string) {
	t.Helper()
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.Header.Get("X-Amz-Target") != "DynamoDB_20120810.DescribeTable" || r.StatusCode != http.StatusOK {
			return nil
		}
		var body map[string]map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return err
		}
		r.Body.Close()
		body["Table"]["StreamSpecification"] = map[string]any{"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}
		body["Table"]["LatestStreamArn"] = arn
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		r.ContentLength = int64(len(raw))
		r.Header.Set("Content-Length", strconv.Itoa(len(raw)))
		r.Header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(raw)), 10))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", srv.URL)
}

// TestReindexSnapshot: on the embedded tier, reindex writes the table's
// documents as one segment and publishes a manifest of it alone, replacing one of another
// embedder; a follower of the bucket then serves them. Neither or both of
// --opensearch-url and --snapshot-bucket is a usage error.
func TestReindexSnapshot(t *testing.T) {
	table, _ := env(t)
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := admin(t, "import", "--data", fixtureFile(t, nil), "--table", table); code != 0 {
		t.Fatal(errs)
	}
	s3 := fakes3.New()
	if err := s3.CreateBucket("snaps", true); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s3)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
	blobs, err := s3blobs.Connect(context.Background(), "snaps")
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot of another embedder is in service.
	other := &snapshot.Writer{Blobs: blobs, Embedder: embedtest.Named{Name: "openai/other", Dims: 3}}
	if err := other.Publish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	if code, _, errs := admin(t, "reindex", "--table", table, "--opensearch-url", "http://127.0.0.1:1", "--snapshot-bucket", "snaps"); code != 2 || !strings.Contains(errs, "not both") {
		t.Errorf("both targets: exit %d\n%s", code, errs)
	}
	if code, _, errs := admin(t, "reindex", "--table", table); code != 2 || !strings.Contains(errs, "--snapshot-bucket") {
		t.Errorf("no target: exit %d, want a message naming both flags\n%s", code, errs)
	}
	code, out, errs := admin(t, "reindex", "--table", table, "--snapshot-bucket", "snaps")
	if code != 0 || !strings.Contains(out, "10 documents") || !strings.Contains(out, "a new index (one segment) in bucket snaps") {
		t.Fatalf("reindex: exit %d\n%s%s", code, out, errs)
	}
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &snapshot.Follower{Blobs: blobs, Embedder: e}
	if err := f.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := f.Current()
	if st.Err != nil || st.Documents != 10 || st.Sequence != 2 || st.Segments != 1 {
		t.Fatalf("in service after reindex: %+v", st)
	}
}
