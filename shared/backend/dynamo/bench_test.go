package dynamo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// BenchmarkEndpoints: each endpoint through the whole handler (authentication
// included: 3 requests) on the demo set in dynalite, over loopback. It reports
// the p50 latency and the DynamoDB requests per API request.
func BenchmarkEndpoints(b *testing.B) {
	d, err := demo.Load()
	if err != nil {
		b.Fatal(err)
	}
	tbl := newTable(b)
	if _, err := tbl.Import(context.Background(), d, "bench", dynamo.ImportOptions{}); err != nil {
		b.Fatal(err)
	}
	ct := &countingTransport{next: http.DefaultTransport}
	srv := dynalitetest.Start(b)
	counted := &dynamo.Table{Name: tbl.Name, Client: srv.Client(b, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ct} })}
	h := httpapi.NewServer(httpapi.Config{Service: service.New(dynamo.NewStore(counted), nil)})
	for _, c := range []struct{ name, path string }{
		{"libraries", "/libraries"},
		{"library-by-slug", "/libraries/it-operations"},
		{"tags", "/libraries/lib_it/tags"},
		{"documents-page", "/libraries/lib_it/documents?pageSize=20"},
		{"documents-tag", "/libraries/lib_it/documents?tag=access"},
		{"documents-search", "/libraries/lib_it/documents?search=okta"},
		{"document", "/documents/doc_it_001"},
		{"graph", "/libraries/lib_it/graph"},
		{"traverse-depth-3", "/documents/doc_it_001/traverse?depth=3"},
		{"source-recordings", "/documents/doc_it_001/source-recordings"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			before := ct.n.Load()
			for b.Loop() {
				req := httptest.NewRequest("GET", c.path, nil)
				req.Header.Set("Authorization", "Bearer "+demo.Keys[0].Secret)
				rec := httptest.NewRecorder()
				start := time.Now()
				h.ServeHTTP(rec, req)
				lat = append(lat, time.Since(start))
				if rec.Code != 200 {
					b.Fatalf("%s: %d %s", c.path, rec.Code, rec.Body)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ct.n.Load()-before)/float64(len(lat)), "requests/op")
		})
	}
}
