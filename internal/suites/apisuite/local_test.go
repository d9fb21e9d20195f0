package apisuite_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/doclib/doclib/internal/suites/apisuite"
	"github.com/doclib/doclib/internal/suites/demoapi"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/httpapi"
)

// localServer serves what `go run ./cmd/doclib-server` serves with the given
// limits: the handler over the in-memory demo store, the embedded search with
// the offline (hash) embedder and the default rules, the in-memory ledger and
// the in-memory rate limiter.
func localServer(t *testing.T, keyLimit, ipLimit int, window time.Duration) *httptest.Server {
	t.Helper()
	h, err := demoapi.Handler(httpapi.Config{Limiter: memory.NewLimiter(), KeyLimit: keyLimit, IPLimit: ipLimit, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestLocal runs the suite against the local server with the spec's limits
// (the binary's defaults), the per-IP limit included.
func TestLocal(t *testing.T) {
	srv := localServer(t, doclib.KeyLimit, doclib.IPLimit, doclib.RateWindow)
	apisuite.Run(t, apisuite.Target{Name: "local", URL: srv.URL, Client: &http.Client{Timeout: time.Minute},
		CheckIPLimit: true})
}

// TestLocalHighLimits runs it again with limits raised as --key-limit and
// --ip-limit raise them, so that a key may spend a workspace's whole AI credit
// within one window.
func TestLocalHighLimits(t *testing.T) {
	srv := localServer(t, 200, 2000, doclib.RateWindow)
	apisuite.Run(t, apisuite.Target{Name: "local-high-limits", URL: srv.URL, Client: &http.Client{Timeout: time.Minute},
		KeyLimit: 200, IPLimit: 2000, SpendCredit: true})
}
