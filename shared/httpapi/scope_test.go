package httpapi_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
)

// TestScopeNeverLeaks asks every endpoint about every ID of the fixture with the
// one-library key and asserts that no response names anything outside lib_a1.
func TestScopeNeverLeaks(t *testing.T) {
	s := newServer(t, options{keyLimit: 100000, ipLimit: 100000})
	libs := []string{"lib_a1", "lib_a2", "lib_a3", "lib_b1", "lib_i1", "ops", "operations", "it", "finance", "compliance", "freelance"}
	docs := []string{"doc_a1_1", "doc_a1_2", "doc_a1_3", "doc_a1_4", "doc_a1_5", "doc_a2_1", "doc_a2_2", "doc_a3_1", "doc_b1_1", "doc_i1_1"}
	var paths []string
	paths = append(paths, "/libraries")
	for _, l := range libs {
		for _, sub := range []string{"", "/tags", "/categories", "/applications", "/graph", "/documents", "/documents?search=o", "/documents?application=Okta"} {
			paths = append(paths, "/libraries/"+l+sub)
		}
	}
	for _, d := range docs {
		for _, sub := range []string{"", "/source-recordings"} {
			paths = append(paths, "/documents/"+d+sub)
		}
		for _, q := range []string{"", "?depth=3", "?depth=3&direction=outgoing", "?depth=3&direction=incoming", "?depth=3&label=often%20next"} {
			paths = append(paths, "/documents/"+d+"/traverse"+q)
		}
	}
	for _, q := range []string{"okta", "invoice", "approve%20invoice", "zzqx%20blorf", "reset%20password&category=Payables",
		"netsuite", "escrow%20ledger%20treasury", "quarterly%20access%20review", "okta&tag=quarterly", "month%20end%20close"} {
		paths = append(paths, "/search/documents?q="+q)
	}
	// Titles and names of what is outside scope must not leak either.
	secrets := append([]string{"Finance", "Compliance", "Approve a vendor invoice", "Close the month", "Quarterly access review", "Beta", "NetSuite", "Invoice approval"},
		fixture.OutsideOneLibrary...)
	ok := 0
	for _, p := range paths {
		r := s.get(t, fixture.KeyOneLibrary, p)
		if r.status == 200 {
			ok++
		}
		for _, secret := range secrets {
			if strings.Contains(string(r.body), secret) && !strings.Contains(p, secret) {
				t.Errorf("GET %s (%d) reveals %q: %s", p, r.status, secret, r.body)
			}
		}
	}
	if ok < 40 {
		t.Errorf("only %d of %d requests succeeded; the test would prove little", ok, len(paths))
	}
	// The other workspace's key sees nothing of ws_a, even by ID.
	for _, p := range []string{"/libraries/lib_a1", "/documents/doc_a1_1", "/documents/doc_a1_1/traverse", "/documents/doc_a1_1/source-recordings", "/libraries/operations"} {
		if r := s.get(t, fixture.KeyOtherWS, p); r.status != 404 || strings.Contains(string(r.body), "Operations") {
			t.Errorf("ws_b GET %s: %d %s", p, r.status, r.body)
		}
	}
}

// TestLimiterIsExactUnderConcurrency fires 150 requests at once with one key:
// exactly 100 succeed and 50 are refused.
func TestLimiterIsExactUnderConcurrency(t *testing.T) {
	s := newServer(t, options{}) // the spec's defaults: 100 per key, 300 per IP
	var okN, limited, other atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 150; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest("GET", s.URL+"/libraries", nil)
			req.Header.Set("Authorization", "Bearer "+fixture.KeyFull)
			resp, err := s.Client().Do(req)
			if err != nil {
				other.Add(1)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				okN.Add(1)
			case 429:
				limited.Add(1)
			default:
				other.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if okN.Load() != 100 || limited.Load() != 50 || other.Load() != 0 {
		t.Fatalf("ok %d, limited %d, other %d; want 100, 50, 0", okN.Load(), limited.Load(), other.Load())
	}
}
