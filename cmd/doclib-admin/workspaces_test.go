package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
)

// fixtureFile writes the fixture's data set, changed by edit, and returns
// its path.
func fixtureFile(t *testing.T, edit func(f *dataset.File)) string {
	t.Helper()
	f := fixture.File()
	if edit != nil {
		edit(f)
	}
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// importedTable is a table on dynalite holding the fixture.
func importedTable(t *testing.T) (string, *dynamo.Table) {
	t.Helper()
	table, tbl := env(t)
	if code, _, errs := admin(t, "create-table", "--table", table); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := admin(t, "import", "--data", fixtureFile(t, nil), "--table", table); code != 0 {
		t.Fatal(errs)
	}
	return table, tbl
}

func mustAdmin(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := admin(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
	}
	return out
}

func TestWorkspacesCommands(t *testing.T) {
	table, tbl := importedTable(t)
	ctx := context.Background()
	ledger := dynamo.NewLedger(tbl)
	balance := func(ws string) int64 {
		t.Helper()
		n, err := ledger.Balance(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	out := mustAdmin(t, "workspaces", "list", "--table", table)
	for _, want := range []string{"ID", "AI CREDIT", "ws_a", "Acme", "team", "ws_b", "enterprise", "ws_i", "individual", "active"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	var listed []dynamo.WorkspaceInfo
	if err := json.Unmarshal([]byte(mustAdmin(t, "workspaces", "list", "--table", table, "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 3 || listed[0].ID != "ws_a" || listed[0].AICredit != 100 || !listed[0].HasCredit || listed[2].ID != "ws_i" || listed[2].AICredit != 10 {
		t.Errorf("list --json: %+v", listed)
	}

	out = mustAdmin(t, "workspaces", "set-credit", "--table", table, "--workspace", "ws_a", "--credit", "500")
	if !strings.Contains(out, "now 500") || balance("ws_a") != 500 {
		t.Errorf("set-credit: %q, balance %d", out, balance("ws_a"))
	}
	out = mustAdmin(t, "workspaces", "add-credit", "--table", table, "--workspace", "ws_a", "--credit", "25")
	if !strings.Contains(out, "now 525") || balance("ws_a") != 525 {
		t.Errorf("add-credit: %q, balance %d", out, balance("ws_a"))
	}
	mustAdmin(t, "workspaces", "set-plan", "--table", table, "--workspace", "ws_a", "--plan", "enterprise")
	mustAdmin(t, "workspaces", "set-subscription", "--table", table, "--workspace", "ws_a", "--subscription", "suspended")
	var shown dynamo.WorkspaceInfo
	if err := json.Unmarshal([]byte(mustAdmin(t, "workspaces", "show", "--table", table, "--workspace", "ws_a", "--json")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown != (dynamo.WorkspaceInfo{ID: "ws_a", Name: "Acme", Plan: "enterprise", Subscription: "suspended", AICredit: 525, HasCredit: true}) {
		t.Errorf("show --json: %+v", shown)
	}
	out = mustAdmin(t, "workspaces", "show", "--table", table, "--workspace", "ws_a")
	if !strings.Contains(out, "enterprise") || !strings.Contains(out, "suspended") || !strings.Contains(out, "525") {
		t.Errorf("show:\n%s", out)
	}
	// The service reads the change at the next request: nothing to restart.
	svc := service.New(dynamo.NewStore(tbl), nil)
	p, err := svc.Authenticate(ctx, fixture.KeyFull)
	if err != nil || p.Plan != doclib.PlanEnterprise || !p.Suspended {
		t.Errorf("principal after set-plan and set-subscription: %+v %v", p, err)
	}

	// Re-importing never touches credit; the file's plan and subscription
	// are written again (docs/dynamodb.md).
	mustAdmin(t, "import", "--data", fixtureFile(t, func(f *dataset.File) { f.Workspaces[0].AICredit = 7 }), "--table", table)
	if n := balance("ws_a"); n != 525 {
		t.Errorf("credit after a re-import: %d, want 525", n)
	}

	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"set-plan", "--workspace", "ws_a", "--plan", "gold"}, 2, `--plan "gold" is not a plan: give one of individual, team, enterprise`},
		{[]string{"set-subscription", "--workspace", "ws_a", "--subscription", "paused"}, 2, "give one of active, suspended"},
		{[]string{"set-credit", "--workspace", "ws_a", "--credit", "-1"}, 2, `--credit "-1" is not a whole number from 0`},
		{[]string{"set-credit", "--workspace", "ws_a", "--credit", "lots"}, 2, `--credit "lots" is not a whole number`},
		{[]string{"add-credit", "--workspace", "ws_a", "--credit", "0"}, 2, "from 1 to"},
		{[]string{"add-credit", "--workspace", "ws_a"}, 2, "--credit N"},
		{[]string{"set-credit", "--credit", "5"}, 2, "--workspace ws_ID"},
		{[]string{"add-credit", "--workspace", "ws_x", "--credit", "5"}, 1,
			"no workspace ws_x in table " + table + "; `doclib-admin workspaces list --table " + table + "` lists them"},
		{[]string{"set-plan", "--workspace", "ws_x", "--plan", "team"}, 1, "no workspace ws_x in table " + table},
		{[]string{"show", "--workspace", "ws_x"}, 1, "no workspace ws_x in table " + table},
	}
	for _, c := range cases {
		code, out, errs := admin(t, append(append([]string{"workspaces"}, c.args...), "--table", table)...)
		if code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s%s", c.args, code, c.code, c.says, out, errs)
		}
	}
	if n := balance("ws_a"); n != 525 {
		t.Errorf("refused commands changed the credit: %d", n)
	}
	// An unknown workspace gets no credit item from add-credit.
	if n, err := ledger.Balance(ctx, "ws_x"); err != nil || n != 0 {
		t.Errorf("ws_x has credit %d %v", n, err)
	}
}

// TestAddCreditIsAtomic: searches spend while operators add credit; every
// spend and every addition counts, so the balance ends exact.
func TestAddCreditIsAtomic(t *testing.T) {
	table, tbl := importedTable(t)
	ctx := context.Background()
	ledger := dynamo.NewLedger(tbl)
	mustAdmin(t, "workspaces", "set-credit", "--table", table, "--workspace", "ws_b", "--credit", "40")
	const spends, adds, each = 150, 6, 20
	var spent atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, spends+adds)
	for range spends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := ledger.Spend(ctx, "ws_b"); err {
			case nil:
				spent.Add(1)
			case doclib.ErrNoCredit:
			default:
				errs <- err
			}
		}()
	}
	for range adds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, out, e := admin(t, "workspaces", "add-credit", "--table", table, "--workspace", "ws_b", "--credit", fmt.Sprint(each)); code != 0 {
				errs <- fmt.Errorf("add-credit: %d %s %s", code, out, e)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := ledger.Balance(ctx, "ws_b")
	if err != nil {
		t.Fatal(err)
	}
	if want := 40 + adds*each - spent.Load(); got != want || got < 0 {
		t.Errorf("balance %d after %d spends and %d additions of %d, want %d", got, spent.Load(), adds, each, want)
	}
	if spent.Load() < 40 {
		t.Errorf("only %d spends of %d succeeded with at least 40 credits", spent.Load(), spends)
	}
}

// TestRunningHandlerSeesCreditAndSubscription: a handler over the table,
// built once, answers 402 while the workspace has no credit and 200 once an
// operator adds some; a suspension and its end take effect the same way.
func TestRunningHandlerSeesCreditAndSubscription(t *testing.T) {
	table, tbl := importedTable(t)
	ctx := context.Background()
	d, err := dataset.Load(bytes.NewReader(mustRead(t, fixtureFile(t, nil))))
	if err != nil {
		t.Fatal(err)
	}
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := localsearch.Build(ctx, d, e, localsearch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	searcher := &search.Searcher{Backend: search.Local{Retriever: idx}, Embedder: search.Cached(e, 0), Rules: search.DefaultRules(e.ID())}
	svc := service.New(dynamo.NewStore(tbl), nil, service.WithSearch(searcher, dynamo.NewLedger(tbl)))
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{Service: svc}))
	defer srv.Close()
	get := func() (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/search/documents?q=password", nil)
		req.Header.Set("Authorization", "Bearer "+fixture.KeyFull)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct {
			Error struct{ Code string }
		}
		json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body.Error.Code
	}

	steps := []struct {
		command, flag, value string // a workspaces command on ws_a, then a search
		status               int
		code                 string
	}{
		{"set-credit", "--credit", "0", 402, doclib.EInsufficientCredit},
		{"add-credit", "--credit", "1", 200, ""},
		{"", "", "", 402, doclib.EInsufficientCredit}, // the added credit is spent
		{"add-credit", "--credit", "10", 200, ""},
		{"set-subscription", "--subscription", "suspended", 402, doclib.ESubscriptionSuspend},
		{"set-subscription", "--subscription", "active", 200, ""},
	}
	for _, st := range steps {
		if st.command != "" {
			mustAdmin(t, "workspaces", st.command, "--table", table, "--workspace", "ws_a", st.flag, st.value)
		}
		if status, code := get(); status != st.status || code != st.code {
			t.Fatalf("after %s %s: %d %s, want %d %s", st.command, st.value, status, code, st.status, st.code)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// dropDocAndKey removes document doc (with its edges and its mentions in
// recordings) and key key from a data set.
func dropDocAndKey(doc, key string) func(f *dataset.File) {
	return func(f *dataset.File) {
		f.Documents = slices.DeleteFunc(f.Documents, func(d dataset.Document) bool { return d.ID == doc })
		f.Edges = slices.DeleteFunc(f.Edges, func(e dataset.Edge) bool { return e.SourceDocumentID == doc || e.TargetDocumentID == doc })
		for i := range f.Recordings {
			f.Recordings[i].DocumentIDs = slices.DeleteFunc(f.Recordings[i].DocumentIDs, func(id string) bool { return id == doc })
		}
		f.Recordings = slices.DeleteFunc(f.Recordings, func(r dataset.Recording) bool { return len(r.DocumentIDs) == 0 })
		f.APIKeys = slices.DeleteFunc(f.APIKeys, func(k dataset.APIKey) bool { return k.ID == key })
	}
}

// TestImportSaysWhatItKeeps: a re-import without --prune warns about what the
// file dropped, a removed key by ID (never its secret), and the key keeps
// working; --dry-run lists what --prune would delete and writes nothing.
func TestImportSaysWhatItKeeps(t *testing.T) {
	table, tbl := importedTable(t)
	ctx := context.Background()
	svc := service.New(dynamo.NewStore(tbl), func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) })
	smaller := fixtureFile(t, dropDocAndKey("doc_a1_1", "key_future"))

	for _, args := range [][]string{{"--dry-run"}, {"--dry-run", "--prune"}} {
		code, out, errs := admin(t, append([]string{"import", "--data", smaller, "--table", table}, args...)...)
		if code != 0 || !strings.Contains(out, "nothing was written") || !strings.Contains(out, "keys (1): key_future") ||
			!strings.Contains(out, "documents (1): doc_a1_1") || !strings.Contains(out, "--prune would delete") {
			t.Errorf("import %v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if _, err := svc.Authenticate(ctx, fixture.KeyFuture); err != nil {
		t.Errorf("a dry run removed key_future: %v", err)
	}
	if docs, err := dynamo.NewStore(tbl).Documents(ctx, []string{"doc_a1_1"}); err != nil || docs["doc_a1_1"] == nil {
		t.Errorf("a dry run removed doc_a1_1: %v", err)
	}

	code, out, errs := admin(t, "import", "--data", smaller, "--table", table)
	if code != 0 || !strings.Contains(errs, "WARNING") || !strings.Contains(errs, "KEPT") || !strings.Contains(errs, "STILL WORK") ||
		!strings.Contains(errs, "keys (1): key_future") || !strings.Contains(errs, "documents (1): doc_a1_1") ||
		!strings.Contains(errs, "--prune") || strings.Contains(out+errs, fixture.KeyFuture) {
		t.Errorf("import without --prune: exit %d\n%s%s", code, out, errs)
	}
	if _, err := svc.Authenticate(ctx, fixture.KeyFuture); err != nil {
		t.Errorf("the dropped key stopped working without --prune: %v", err)
	}

	mustAdmin(t, "import", "--data", smaller, "--table", table, "--prune")
	if _, err := svc.Authenticate(ctx, fixture.KeyFuture); doclib.ErrorCode(err) != doclib.EUnauthorised {
		t.Errorf("the dropped key works after --prune: %v", err)
	}
	out = mustAdmin(t, "import", "--data", smaller, "--table", table, "--dry-run")
	if !strings.Contains(out, "--prune would delete nothing") {
		t.Errorf("dry run after the prune:\n%s", out)
	}
	if _, _, errs := admin(t, "import", "--data", smaller, "--table", table); strings.Contains(errs, "WARNING") {
		t.Errorf("a warning with nothing kept:\n%s", errs)
	}
}

// TestImportRefusesDemoKeys: the demo secrets are public; a data set that
// uses one is imported into a table elsewhere than on this machine only
// with --allow-demo-keys.
func TestImportRefusesDemoKeys(t *testing.T) {
	table, tbl := env(t)
	mustAdmin(t, "create-table", "--table", table)
	file := workspaceFile(t, "ws_d", "key_d", "dlk_demo_full_scope", "lib_d", "d")
	svc := service.New(dynamo.NewStore(tbl), nil)

	// admin's getenv is empty: the endpoint is AWS's own, a deployed table.
	code, out, errs := admin(t, "import", "--data", file, "--table", table)
	if code != 1 || !strings.Contains(errs, "--allow-demo-keys") || !strings.Contains(errs, "key_d") || strings.Contains(errs, "dlk_demo_full_scope") {
		t.Errorf("demo keys into a deployed table: exit %d\n%s%s", code, out, errs)
	}
	if _, err := svc.Authenticate(context.Background(), "dlk_demo_full_scope"); doclib.ErrorCode(err) != doclib.EUnauthorised {
		t.Errorf("the refused import wrote the key: %v", err)
	}

	// On this machine (dynalite), the demo is what the README runs.
	local := func(k string) string { return os.Getenv(k) }
	var o, e bytes.Buffer
	if code := run(context.Background(), []string{"import", "--data", file, "--table", table}, local, &o, &e, false); code != 0 {
		t.Errorf("demo keys into a local table: exit %d\n%s%s", code, o.String(), e.String())
	}

	table2, tbl2 := env(t)
	mustAdmin(t, "create-table", "--table", table2)
	mustAdmin(t, "import", "--data", file, "--table", table2, "--allow-demo-keys")
	svc2 := service.New(dynamo.NewStore(tbl2), nil)
	if p, err := svc2.Authenticate(context.Background(), "dlk_demo_full_scope"); err != nil || p.WorkspaceID != "ws_d" {
		t.Errorf("--allow-demo-keys: %+v %v", p, err)
	}
}

// TestErrorsInUserTerms: whatever goes wrong, doclib-admin answers with a
// sentence and a next step, never the SDK's or the flag parser's text.
func TestErrorsInUserTerms(t *testing.T) {
	table, _ := env(t)
	mustAdmin(t, "create-table", "--table", table)
	internals := []string{"operation error", "api error", "https response error", "StatusCode:", "RequestID:",
		"strconv.", "types.", "*dynamodb", "exceeded maximum number of attempts", "dial tcp", "smithy", "unavailable: dynamo"}
	check := func(name string, wantCode int, says string, args ...string) {
		t.Helper()
		code, out, errs := admin(t, args...)
		if code != wantCode || !strings.Contains(errs, says) {
			t.Errorf("%s: exit %d, want %d saying %q:\n%s%s", name, code, wantCode, says, out, errs)
		}
		for _, bad := range internals {
			if strings.Contains(out+errs, bad) {
				t.Errorf("%s: the message shows %q:\n%s", name, bad, errs)
			}
		}
	}
	check("unknown table, list", 1, "table nope does not exist", "workspaces", "list", "--table", "nope")
	check("unknown table, keys", 1, "create-table --table nope", "keys", "list", "--table", "nope", "--workspace", "ws_a")
	check("unknown table, set-credit", 1, "table nope does not exist", "workspaces", "set-credit", "--table", "nope", "--workspace", "ws_a", "--credit", "3")
	check("bad worker count", 2, `--workers "many" is not a whole number`, "import", "--workers", "many", "--data", "x", "--table", table)
	check("bad bool", 2, `--prune "maybe" is not true or false`, "import", "--prune=maybe", "--data", "x", "--table", table)
	check("bad credit", 2, `--credit "1e3" is not a whole number`, "workspaces", "add-credit", "--table", table, "--workspace", "ws_a", "--credit", "1e3")

	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:1")
	check("unreachable", 1, "cannot reach DynamoDB", "workspaces", "list", "--table", table)
	check("unreachable import", 1, "cannot reach DynamoDB", "import", "--data", fixtureFile(t, nil), "--table", table)

	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	check("no credentials", 1, "no AWS credentials found", "workspaces", "show", "--table", table, "--workspace", "ws_a")
}
