// Package demoapi serves the read API on the demo data inside a test, as
// doclib-server serves it: the real handler over the in-memory store and the
// embedded search with the offline embedder. The client, the CLI, the MCP
// server and the Lambda adapter test against it.
package demoapi

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/localsearch"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/backend/offline"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
	"github.com/doclib/doclib/shared/settings"
)

// Service returns the demo data and the service over it, with search. now
// may be nil (time.Now).
func Service(now func() time.Time) (*doclib.DataSet, *service.Service, error) {
	d, err := demo.Load()
	if err != nil {
		return nil, nil, err
	}
	svc, err := ServiceOf(d, now)
	return d, svc, err
}

// ServiceOf is the service, with search, over any data set d.
func ServiceOf(d *doclib.DataSet, now func() time.Time) (*service.Service, error) {
	searcher, err := Searcher(d)
	if err != nil {
		return nil, err
	}
	return service.New(memory.New(d), now, service.WithSearch(searcher, memory.NewLedger(d.Workspaces))), nil
}

// Searcher is the embedded search over d with the offline embedder, as
// doclib-server builds it by default.
func Searcher(d *doclib.DataSet) (*search.Searcher, error) {
	e, err := offline.NewHashing(0, nil)
	if err != nil {
		return nil, err
	}
	return localsearch.Searcher(context.Background(), d, e, settings.Rules{}, nil)
}

// Handler is the API's handler on the demo data, with cfg's settings (its
// Service is replaced).
func Handler(cfg httpapi.Config) (http.Handler, error) {
	_, svc, err := Service(cfg.Now)
	if err != nil {
		return nil, err
	}
	cfg.Service = svc
	return httpapi.NewServer(cfg), nil
}

// Server is the API on an httptest server that counts its requests.
type Server struct {
	*httptest.Server
	requests atomic.Int64
}

// NewServer serves Handler(cfg) until the test ends.
func NewServer(t testing.TB, cfg httpapi.Config) *Server {
	t.Helper()
	h, err := Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests is how many requests the server has had.
func (s *Server) Requests() int64 { return s.requests.Load() }

// SyncBuffer is a bytes.Buffer safe for writers on other goroutines (a
// server's logs) and a reader at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
