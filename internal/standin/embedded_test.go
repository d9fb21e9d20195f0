package standin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/doclib/doclib/internal/standin"
	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/internal/suites/apisuite"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
	"github.com/doclib/doclib/shared/settings"
)

// TestEmbeddedTier runs a stack synthesized with search=embedded, on an
// account with 10 concurrent executions: no
// OpenSearch anywhere; the indexer publishes the demo import as segments in
// the stack's bucket, through the checker, with the rights the template
// grants; the API suite passes on it, and the mcp function's search reads
// the same segments; a change written to the table reaches every
// search-function instance as a segment of its own; and a corrupt
// segment named by the manifest leaves the last good index in service.
func TestEmbeddedTier(t *testing.T) {
	if testing.Short() {
		t.Skip("the stand-in synthesizes and runs the whole stack; not in -short")
	}
	// On an account whose Lambda concurrency quota is 10, as new accounts'
	// often is: the tier for small customers must create and serve there,
	// so no function may reserve concurrency (Lambda refuses any
	// reservation on such an account; TestSmallAccountRefusesReservations).
	//
	// The search functions open every segment by range, whatever its size
	// (the demo's are under the 4 MiB from which a stack's are): the hot
	// parts at load, the cold parts as the suite's searches need them and
	// as the prefetch reads them, so that both runs of the suite below go
	// through ranged reads of the fake S3.
	ctx, s, logs, d := startVariantOn(t, 10, 4*time.Minute, "emb", map[string]string{"customer": "emb", "search": "embedded"},
		map[string]string{settings.EnvSearchRangeFromKB: "0"})
	t.Cleanup(func() {
		for _, d := range s.Checker.Denials() {
			t.Errorf("AWS denied a function's call: %+v", d)
		}
		if n := s.Failed(); n > 0 {
			t.Errorf("the indexer gave up on %d stream records", n)
		}
		if t.Failed() {
			t.Logf("stand-in logs (last lines):\n%s", tail(logs.String(), 80))
		}
	})
	if n := len(s.Template.OfType("AWS::OpenSearchService::Domain")); n != 0 {
		t.Fatalf("%d OpenSearch domains in an embedded stack", n)
	}
	if s.Bucket == "" {
		t.Fatal("no snapshot bucket in the embedded stack")
	}
	if n := len(s.Search.Requests()); n != 0 {
		t.Fatalf("the embedded stack sent %d requests to OpenSearch", n)
	}
	// The bucket answers at S3's speed, not loopback's: every request the
	// functions made so far (the indexer's writes, the search instances'
	// reads) waited at least S3's first byte.
	if got := s.S3.Speed(); got != fakes3.DefaultSpeed {
		t.Errorf("the stand-in's S3 answers at %+v, want fakes3.DefaultSpeed", got)
	}
	if rs := s.S3.Requests(); len(rs) == 0 {
		t.Error("the fake S3 logged no request of the import's indexing")
	} else {
		for _, r := range rs {
			if r.Wait < fakes3.DefaultSpeed.FirstByte {
				t.Errorf("%s %s/%s waited %s, under S3's first byte", r.Method, r.Bucket, r.Key, r.Wait)
				break
			}
		}
	}

	// The operator's view of the bucket, straight to the S3 engine.
	srv := httptest.NewServer(s.S3)
	defer srv.Close()
	blobs := s3blobs.New(s3.New(s3.Options{Region: standin.Region, BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		Credentials:                aws.AnonymousCredentials{}}), s.Bucket)
	p, _, err := snapshot.ReadManifest(ctx, blobs, "")
	if err != nil {
		t.Fatalf("no index published after the import: %v", err)
	}
	if p.Documents < len(d.Documents) || !strings.HasPrefix(p.Embedder, "bedrock") {
		t.Fatalf("the published manifest: %+v; want %d documents of the Bedrock embedder", p, len(d.Documents))
	}
	t.Logf("after the import: %d segments of %d documents in all", len(p.Segments), p.Documents)

	// The API suite on the segments of the import, before any merge. It
	// spends the demo keys' per-minute budgets: it runs again, after the
	// merges below, once a minute has passed.
	before := len(s.S3.Requests())
	t.Run("api suite before merges", func(t *testing.T) {
		apisuite.Run(t, apisuite.Target{Name: "stand-in, embedded tier", URL: s.URL, Client: clientFrom("127.0.0.21"), RoutesBeforeAuth: true})
	})
	// The search instances served it from segments opened by range: their
	// loads say so, and they read cold blocks (ranges past a segment's
	// start, its hot part) while it ran.
	if !regexp.MustCompile(`"snapshot: in service"[^\n]*"opened_by_range":[1-9]`).MatchString(logs.String()) {
		t.Errorf("no search instance put segments opened by range in service")
	}
	cold := 0
	for _, r := range s.S3.Requests()[before:] {
		if r.Method == "GET" && r.Ranged() && strings.HasPrefix(r.Key, snapshot.SegmentPrefix) && !strings.HasPrefix(r.Range, "bytes=0-") {
			cold++
		}
	}
	if cold == 0 {
		t.Errorf("no ranged GET of a segment's cold part while the suite ran")
	}
	t.Logf("while the suite ran: %d ranged GETs of cold parts", cold)
	// Its last request, a key's burst, may open a new minute window: the
	// second run waits a whole minute after it, not after the first request.
	suiteEnd := time.Now()

	// The mcp function searches the same segments, with the rights the
	// template gives its role (the cleanup fails on any denied call).
	resp, body := mcpPost(t, clientFrom("127.0.0.24"), s.URL, "dlk_demo_no_recordings",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"reset password"}}}`)
	var mcpSearch struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Hits []struct{ ID string } `json:"hits"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &mcpSearch); err != nil || resp.StatusCode != 200 || mcpSearch.Result.IsError || len(mcpSearch.Result.StructuredContent.Hits) == 0 {
		t.Fatalf("search_documents through /mcp on the embedded tier: %d %.500s (%v); want hits", resp.StatusCode, body, err)
	}

	search := func(c int, q string) []string {
		resp, body := get(t, clientFrom("127.0.0.22"), s.URL+"/search/documents?q="+url.QueryEscape(q), "dlk_demo_no_recordings") // a key the suite below barely uses, so its budget is whole
		if resp.StatusCode != 200 {
			t.Fatalf("search %q (client %d): %d %s", q, c, resp.StatusCode, body)
		}
		var out struct {
			Documents []struct {
				ID string `json:"id"`
			} `json:"documents"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(out.Documents))
		for i, h := range out.Documents {
			ids[i] = h.ID
		}
		return ids
	}
	// Two searches at once, so that two instances of the search function
	// have the snapshot in service.
	both := func(q string) [2][]string {
		var out [2][]string
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); out[i] = search(i, q) }()
		}
		wg.Wait()
		return out
	}
	// setTitle writes doc_it_001's title to the table as the product's
	// importer would, and waits for the stream to be drained.
	setTitle := func(title string) {
		t.Helper()
		_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.Table),
			Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "DOC#doc_it_001"}, "sk": &types.AttributeValueMemberS{Value: "A"}},
			UpdateExpression:          aws.String("SET title = :t"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: title}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Settle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const word = "zebrafish"
	for _, ids := range both(word) {
		if len(ids) != 0 && ids[0] == "doc_it_001" {
			t.Fatalf("doc_it_001 found for %q before the change", word)
		}
	}
	searchFn := s.Functions["doclib-emb-search"]
	if searchFn == nil {
		t.Fatalf("no function doclib-emb-search among %v", s.Functions)
	}
	if n := len(searchFn.ColdStarts()); n < 2 {
		t.Fatalf("the search function ran on %d instances; the test needs two", n)
	}

	// The change, written to the table as the product's importer would.
	setTitle("Reset a user's password in Okta for the zebrafish lab")
	p2, _, err := snapshot.ReadManifest(ctx, blobs, "")
	if err != nil || p2.Sequence <= p.Sequence {
		t.Fatalf("after the change the manifest is %+v (%v); want a sequence after %d", p2, err, p.Sequence)
	}
	// The change is a segment of its own: one document, not the index again.
	if last := p2.Segments[len(p2.Segments)-1]; last.Documents != 1 || last.Bytes > 64<<10 {
		t.Fatalf("the change was published as %+v; want a segment of the one document", last)
	}
	// Each instance looks for a newer snapshot at most every
	// DOCLIB_SNAPSHOT_POLL (5 s): within a few of those, both answer with it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := both(word)
		if len(got[0]) > 0 && got[0][0] == "doc_it_001" && len(got[1]) > 0 && got[1][0] == "doc_it_001" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the snapshot was published, searches for %q answer %v", word, got)
		}
		time.Sleep(1500 * time.Millisecond) // under the key's 100 searches a minute
	}
	// Every instance now serves it.
	for range 5 {
		for _, ids := range both(word) {
			if len(ids) == 0 || ids[0] != "doc_it_001" {
				t.Fatalf("an instance still serves the old snapshot: %v", ids)
			}
		}
	}

	// The title back as it was, through the same path, so that the suite
	// below finds the demo data.
	setTitle("Reset a user's password in Okta")
	deadline = time.Now().Add(30 * time.Second)
	for {
		// Vector neighbours still come back for any query; what matters is
		// that the word no longer puts doc_it_001 first.
		got := both(word)
		if len(got[0]) > 0 && got[0][0] != "doc_it_001" && len(got[1]) > 0 && got[1][0] != "doc_it_001" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the title was restored, searches for %q answer %v", word, got)
		}
		time.Sleep(1500 * time.Millisecond)
	}

	// More changes, each a segment, until the indexer merges: the merge
	// policy takes 10 segments of the lowest level at once.
	commits := len(p2.Segments) + 1
	for i := range 8 {
		title := "Reset a user's password in Okta"
		if i%2 == 0 {
			title += " (edited)"
		}
		setTitle(title)
		commits++
	}
	merged, _, err := snapshot.ReadManifest(ctx, blobs, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Segments) >= commits-5 {
		t.Fatalf("after %d commits, %d segments: the indexer merged none", commits, len(merged.Segments))
	}
	t.Logf("after %d commits: %d segments", commits, len(merged.Segments))
	deadline = time.Now().Add(30 * time.Second)
	for {
		got := both("reset password okta")
		if len(got[0]) > 0 && got[0][0] == "doc_it_001" && len(got[1]) > 0 && got[1][0] == "doc_it_001" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the merge, searches answer %v", got)
		}
		time.Sleep(1500 * time.Millisecond)
	}

	// A corrupt segment, named by a manifest as a broken writer could leave
	// it: searches keep answering from the last good index.
	man, obj, err := snapshot.ReadManifest(ctx, blobs, "")
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Repeat([]byte("not a segment "), 100)
	badKey := snapshot.SegmentPrefix + "corrupt.seg"
	if _, err := blobs.Put(ctx, badKey, bytes.NewReader(bad), int64(len(bad)), snapshot.Condition{}); err != nil {
		t.Fatal(err)
	}
	man.Sequence++
	man.Segments = append(man.Segments, snapshot.SegmentRef{Key: badKey, Bytes: int64(len(bad)), CRC32C: "00000000", Documents: 1})
	raw, _ := json.Marshal(man)
	if _, err := blobs.Put(ctx, snapshot.ManifestKey, bytes.NewReader(raw), int64(len(raw)), snapshot.Condition{IfMatch: obj.ETag}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // past the poll interval: the next searches read the bad pointer
	for range 3 {
		for _, ids := range both("reset password okta") {
			if len(ids) == 0 || ids[0] != "doc_it_001" {
				t.Fatalf("with a corrupt segment named, a search answered %v; want the last good index's answer", ids)
			}
		}
	}
	if !strings.Contains(logs.String(), "snapshot") {
		t.Errorf("the corrupt segment left no line in the logs")
	}

	// Last, the suite again, on the index after merges, with the corrupt
	// segment still named, once the demo keys' per-minute budgets are whole.
	time.Sleep(time.Until(suiteEnd.Add(61 * time.Second)))
	t.Run("api suite after merges", func(t *testing.T) { // from another address: the per-IP window is longer
		apisuite.Run(t, apisuite.Target{Name: "stand-in, embedded tier", URL: s.URL, Client: clientFrom("127.0.0.23"), RoutesBeforeAuth: true})
	})

}

// TestSmallAccountRefusesReservations: a stack that reserves concurrency
// cannot be created on an account whose quota is 10, as Lambda refuses to
// leave it fewer than 10 unreserved; the stand-in fails to start as
// CloudFormation would fail to create the stack.
func TestSmallAccountRefusesReservations(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesizes the stack; not in -short")
	}
	root, _ := filepath.Abs("../..")
	a, err := standin.Synth(root, t.TempDir(), map[string]string{"customer": "resv", "search": "embedded", "indexerReservedConcurrency": "1"})
	if err != nil {
		t.Fatal(err)
	}
	db := dynalitetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := standin.Start(ctx, standin.Options{Assembly: a, DynamoDB: db.Endpoint, Run: "resv", AccountConcurrency: 10})
	if err == nil {
		s.Close()
		t.Fatal("a stack reserving 1 of an account's 10 concurrent executions started")
	}
	if !strings.Contains(err.Error(), "below its minimum value of [10]") || !strings.Contains(err.Error(), "doclib-resv-indexer") {
		t.Fatalf("start failed with %v; want Lambda's refusal of the indexer's reservation", err)
	}
}
