package dynamo_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/standin/dynalitetest"
	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/dynamo"
	"github.com/doclib/doclib/shared/data/dataset"
)

// twoInstances returns two Tables on one table through two separate clients:
// two Lambda instances, or two servers, sharing it.
func twoInstances(t *testing.T, d *doclib.DataSet) (*dynamo.Table, *dynamo.Table) {
	t.Helper()
	a := newTable(t)
	if d != nil {
		if _, err := a.Import(context.Background(), d, "g1", dynamo.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	srv := dynalitetest.Start(t)
	return a, &dynamo.Table{Client: srv.Client(t), Name: a.Name}
}

func TestLimiterIsExactAcrossInstances(t *testing.T) {
	a, b := twoInstances(t, nil)
	limiters := []*dynamo.Limiter{dynamo.NewLimiter(a), dynamo.NewLimiter(b)}
	now := time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 150 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			q, err := limiters[i%2].Take(context.Background(), "key:k1", 100, time.Minute, now)
			switch {
			case err != nil:
				t.Error(err)
			case q.Allowed:
				ok.Add(1)
				if q.Remaining < 0 || q.Remaining > 99 || !q.Reset.Equal(now.Truncate(time.Minute).Add(time.Minute)) {
					t.Errorf("quota %+v", q)
				}
			default:
				refused.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if ok.Load() != 100 || refused.Load() != 50 {
		t.Fatalf("allowed %d, refused %d; want 100 and 50", ok.Load(), refused.Load())
	}
	// A refused take took nothing, a release gives one back, the next window is fresh.
	ctx := context.Background()
	if err := limiters[1].Release(ctx, "key:k1", time.Minute, now); err != nil {
		t.Fatal(err)
	}
	if q, _ := limiters[0].Take(ctx, "key:k1", 100, time.Minute, now); !q.Allowed || q.Remaining != 0 {
		t.Errorf("after a release: %+v", q)
	}
	if q, _ := limiters[0].Take(ctx, "key:k1", 100, time.Minute, now.Add(time.Minute)); !q.Allowed || q.Remaining != 99 {
		t.Errorf("next window: %+v", q)
	}
	if q, _ := limiters[1].Take(ctx, "ip:192.0.2.1", 100, time.Minute, now); !q.Allowed {
		t.Error("buckets are independent")
	}
	// Never below zero.
	for range 3 {
		limiters[0].Release(ctx, "ip:192.0.2.9", time.Minute, now)
	}
	if q, _ := limiters[0].Take(ctx, "ip:192.0.2.9", 1, time.Minute, now); !q.Allowed {
		t.Fatal("take after releases of nothing refused")
	}
	if q, _ := limiters[0].Take(ctx, "ip:192.0.2.9", 1, time.Minute, now); q.Allowed {
		t.Error("releases of nothing created quota")
	}
}

func TestLedgerIsExactAcrossInstances(t *testing.T) {
	f := fixture.File()
	f.Workspaces[0].AICredit = 10 // ws_a
	d, err := dataset.Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	a, b := twoInstances(t, d)
	ledgers := []*dynamo.Ledger{dynamo.NewLedger(a), dynamo.NewLedger(b)}
	var ok, broke atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			switch err := ledgers[i%2].Spend(context.Background(), "ws_a"); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, doclib.ErrNoCredit):
				broke.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	close(start)
	wg.Wait()
	ctx := context.Background()
	if n, _ := ledgers[0].Balance(ctx, "ws_a"); ok.Load() != 10 || broke.Load() != 30 || n != 0 {
		t.Fatalf("spent %d, refused %d, balance %d; want 10, 30, 0", ok.Load(), broke.Load(), n)
	}
	if err := ledgers[1].Refund(ctx, "ws_a"); err != nil {
		t.Fatal(err)
	}
	if err := ledgers[0].Spend(ctx, "ws_a"); err != nil {
		t.Errorf("spend after a refund: %v", err)
	}
	// A re-import never resets credit that was spent.
	if _, err := a.Import(ctx, d, "g1", dynamo.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, _ := ledgers[0].Balance(ctx, "ws_a"); n != 0 {
		t.Errorf("a re-import reset the credit to %d", n)
	}
	if n, _ := ledgers[0].Balance(ctx, "ws_b"); n != 100 {
		t.Errorf("ws_b's starting credit %d, want 100", n)
	}
}
