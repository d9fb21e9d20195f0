package dynamo_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/standin/faultproxy"
	"github.com/doclib/doclib/internal/suites/fixture"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// behind returns a Table that reaches tbl's table through a fault proxy.
func behind(t *testing.T, tbl *dynamo.Table) (*dynamo.Table, *faultproxy.Proxy) {
	t.Helper()
	srv := dynalitetest.Start(t)
	p := faultproxy.New(srv.Endpoint)
	t.Cleanup(p.Close)
	c := srv.Client(t, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(p.URL())
		// The SDK's standard retries, with short waits so that the test measures
		// behaviour, not sleep.
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 3
			so.MaxBackoff = 20 * time.Millisecond
		})
	})
	return &dynamo.Table{Client: c, Name: tbl.Name, Timeout: 10 * time.Second}, p
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+fixture.KeyFull)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// TestFaultsAreRetriedAndNeverLeak: throttling and 500s are retried by the SDK;
// when DynamoDB keeps failing, the API answers 503 in the error shape with no
// AWS text.
func TestFaultsAreRetriedAndNeverLeak(t *testing.T) {
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	tbl, proxy := behind(t, imported(t, d))
	h := httpapi.NewServer(httpapi.Config{Service: service.New(dynamo.NewStore(tbl), nil), Limiter: dynamo.NewLimiter(tbl)})

	for _, f := range []faultproxy.Fault{faultproxy.Throttle, faultproxy.ProvisionedThroughputExceeded, faultproxy.InternalError, faultproxy.Drop} {
		proxy.Clear()
		before := proxy.Injected("")
		proxy.Fail(faultproxy.Rule{Fault: f, Next: 2})
		if code, body := get(t, h, "/documents/doc_a1_1"); code != 200 || !strings.Contains(body, "Reset a user's password") {
			t.Errorf("%v twice, then fine: %d %.200s", f, code, body)
		}
		if n := proxy.Injected("") - before; n != 2 {
			t.Errorf("%v: injected %d, want 2", f, n)
		}
	}
	proxy.Clear()
	for _, f := range []faultproxy.Fault{faultproxy.Throttle, faultproxy.InternalError} {
		proxy.Fail(faultproxy.Rule{Fault: f}) // every request, for good
		for _, path := range []string{"/documents/doc_a1_1", "/libraries", "/libraries/ops/documents?tag=security", "/documents/doc_a1_1/traverse?depth=2"} {
			code, body := get(t, h, path)
			var e struct {
				Error struct{ Code, Message string }
			}
			if code != 503 || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "unavailable" {
				t.Errorf("%v on %s: %d %s; want 503 unavailable", f, path, code, body)
			}
			for _, leak := range []string{"Throttling", "InternalServerError", "DynamoDB", "dynamodb", "api error", "StatusCode", "RequestID", "amazon", tbl.Name} {
				if strings.Contains(body, leak) {
					t.Errorf("%v on %s: the body leaks %q: %s", f, path, leak, body)
				}
			}
		}
		proxy.Clear()
	}
}

// dump reads a whole table as sorted JSON lines: two tables are the same when
// their dumps are.
func dump(t *testing.T, tbl *dynamo.Table) []string {
	t.Helper()
	var out []string
	err := tbl.Scan(context.Background(), 2, func(it map[string]types.AttributeValue) error {
		var plain map[string]any
		if err := attributevalue.UnmarshalMap(it, &plain); err != nil {
			return err
		}
		b, err := json.Marshal(plain)
		if err != nil {
			return err
		}
		out = append(out, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestInterruptedImportConverges: an import cut off half way (and slowed by
// throttling) and then run again leaves the table exactly as one uninterrupted
// import does.
func TestInterruptedImportConverges(t *testing.T) {
	var buf strings.Builder
	if err := demo.Encode(&buf, demo.Generate(demo.Options{Documents: 600})); err != nil {
		t.Fatal(err)
	}
	raw := []byte(buf.String())
	d, err := dataset.Load(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	gen := dynamo.Generation(raw)
	ctx := context.Background()

	clean := newTable(t)
	if _, err := clean.Import(ctx, d, gen, dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	want := dump(t, clean)

	tbl, proxy := behind(t, newTable(t))
	proxy.Fail(faultproxy.Rule{Op: "BatchWriteItem", Rate: 0.2, Seed: 7, Fault: faultproxy.Throttle})
	cut, cancel := context.WithCancel(ctx)
	proxy.AfterN(60, cancel) // about half of the writes
	if _, err := tbl.Import(cut, d, gen, dynamo.ImportOptions{}); err == nil {
		t.Fatal("the interrupted import reported success")
	}
	half := dump(t, tbl)
	if len(half) == 0 || len(half) >= len(want) {
		t.Fatalf("the interruption left %d of %d items; the test interrupts nothing", len(half), len(want))
	}
	res, err := tbl.Import(ctx, d, gen, dynamo.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if proxy.Injected("BatchWriteItem") == 0 {
		t.Error("no throttling was injected; the test proves less than it says")
	}
	got := dump(t, tbl)
	if !slices.Equal(got, want) {
		t.Fatalf("after the re-run: %d items, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	if res.Items != len(want)-len(d.Workspaces) { // credit items are written apart
		t.Errorf("summary counts %d items, the table holds %d besides credit", res.Items, len(want)-len(d.Workspaces))
	}
	// And a second full import of the same file changes nothing.
	if _, err := tbl.Import(ctx, d, gen, dynamo.ImportOptions{Prune: true}); err != nil {
		t.Fatal(err)
	}
	if again := dump(t, tbl); !slices.Equal(again, want) {
		t.Error("importing the same file again changed the table")
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
