package dynamo_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
	"github.com/doclib/doclib/shared/service"
)

// countingTransport counts the HTTP requests the SDK sends, retries included,
// and when each ran. Requests whose intervals overlap were in flight together:
// one round trip.
type countingTransport struct {
	next http.RoundTripper
	// latency is added to every request, as a network would: requests issued
	// together then surely overlap, even when the race detector and a busy
	// machine delay the goroutines that send them.
	latency time.Duration
	n       atomic.Int64
	mu      sync.Mutex
	spans   [][2]time.Time
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	start := time.Now()
	time.Sleep(c.latency)
	resp, err := c.next.RoundTrip(r)
	c.mu.Lock()
	c.spans = append(c.spans, [2]time.Time{start, time.Now()})
	c.mu.Unlock()
	return resp, err
}

// rounds merges overlapping requests and counts what is left.
func (c *countingTransport) rounds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	spans := slices.Clone(c.spans)
	slices.SortFunc(spans, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	n := 0
	var end time.Time
	for _, sp := range spans {
		if n == 0 || sp[0].After(end) {
			n++
			end = sp[1]
		} else if sp[1].After(end) {
			end = sp[1]
		}
	}
	return n
}

func (c *countingTransport) reset() { c.mu.Lock(); c.spans = nil; c.mu.Unlock() }

// serviceThrough is a service over the fixture imported into dynalite, whose
// DynamoDB requests go through rt.
func serviceThrough(t *testing.T, rt http.RoundTripper) *service.Service {
	t.Helper()
	d, err := dataset.Validate(fixture.File())
	if err != nil {
		t.Fatal(err)
	}
	tbl := imported(t, d)
	srv := dynalitetest.Start(t)
	traced := &dynamo.Table{Name: tbl.Name, Client: srv.Client(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: rt} })}
	return service.New(dynamo.NewStore(traced), func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) })
}

// TestRoundTripBudgets holds every endpoint to the round trips of
// docs/dynamodb.md on a real (local) DynamoDB, after authentication (which the
// authorizer does in production: 2 round trips, 3 requests).
func TestRoundTripBudgets(t *testing.T) {
	ct := &countingTransport{next: http.DefaultTransport, latency: 40 * time.Millisecond}
	svc := serviceThrough(t, ct)
	ctx := context.Background()

	p, err := svc.Authenticate(ctx, fixture.KeyFull)
	if err != nil {
		t.Fatal(err)
	}
	if r, n := ct.rounds(), ct.n.Load(); r != 2 || n != 3 {
		t.Errorf("authentication: %d round trips, %d requests; want 2 and 3", r, n)
	}
	page := service.Page{Number: 1, Size: 20}
	cases := []struct {
		name   string
		budget int
		call   func() error
	}{
		{"GET /libraries", 1, func() error { _, err := svc.Libraries(ctx, p); return err }},
		{"GET /libraries/{id} by ID", 1, func() error { _, err := svc.Library(ctx, p, "lib_a1"); return err }},
		{"GET /libraries/{id} by slug", 2, func() error { _, err := svc.Library(ctx, p, "ops"); return err }},
		{"GET /libraries/{id} by an earlier slug", 2, func() error { _, err := svc.Library(ctx, p, "operations"); return err }},
		{"GET /libraries/{id}/tags", 1, func() error { _, err := svc.Labels(ctx, p, "lib_a1", service.Tags); return err }},
		{"GET /libraries/{id}/documents", 2, func() error {
			_, err := svc.Documents(ctx, p, "lib_a1", doclib.DocumentFilter{}, page)
			return err
		}},
		{"GET /libraries/{id}/documents?tag=", 2, func() error {
			_, err := svc.Documents(ctx, p, "lib_a1", doclib.DocumentFilter{Tag: "security"}, page)
			return err
		}},
		{"GET /libraries/{id}/documents?tag=&application=&search=", 2, func() error {
			_, err := svc.Documents(ctx, p, "lib_a1", doclib.DocumentFilter{Tag: "security", Application: "Okta", Search: "reset"}, page)
			return err
		}},
		{"GET /documents/{id}", 2, func() error { _, err := svc.Document(ctx, p, "doc_a1_1"); return err }},
		{"GET /libraries/{id}/graph", 2, func() error { _, err := svc.Graph(ctx, p, "lib_a1"); return err }},
		{"GET /documents/{id}/source-recordings", 2, func() error { _, err := svc.SourceRecordings(ctx, p, "doc_a1_1", page); return err }},
	}
	for depth := 1; depth <= 3; depth++ {
		cases = append(cases, struct {
			name   string
			budget int
			call   func() error
		}{"GET /documents/{id}/traverse?depth=" + string(rune('0'+depth)), depth + 1, func() error {
			tr, err := svc.Traverse(ctx, p, "doc_a1_1", service.TraverseParams{Direction: service.DirectionBoth, Depth: depth})
			if err == nil && depth == 3 && len(tr.Nodes) < 6 {
				t.Errorf("depth 3 reached only %d nodes; the test walks too little", len(tr.Nodes))
			}
			return err
		}})
	}
	for _, c := range cases {
		ct.reset()
		before := ct.n.Load()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r, n := ct.rounds(), ct.n.Load()-before
		t.Logf("%-58s %d round trips, %2d requests (budget %d)", c.name, r, n, c.budget)
		if r > c.budget {
			t.Errorf("%s: %d round trips, budget %d", c.name, r, c.budget)
		}
	}
}
