package httpapi

import (
	"net/http"

	"github.com/doclib/doclib/shared/service"
)

// Groups of routes: each is served by one Lambda function in production.
const (
	GroupLibraries = "libraries"
	GroupDocuments = "documents"
	GroupSearch    = "search"
)

// Route is one path of the API (GET and HEAD) and the group that serves it.
type Route struct {
	Path  string // as net/http patterns and API Gateway resources write it: /libraries/{id}
	Group string
}

// Routes lists every route of the spec, in its order. The handler, the CDK app
// (one API Gateway resource per route) and the tests all read this list.
var Routes = []Route{
	{"/libraries", GroupLibraries},
	{"/libraries/{id}", GroupLibraries},
	{"/libraries/{id}/tags", GroupLibraries},
	{"/libraries/{id}/categories", GroupLibraries},
	{"/libraries/{id}/applications", GroupLibraries},
	{"/libraries/{id}/graph", GroupLibraries},
	{"/libraries/{id}/documents", GroupLibraries},
	{"/documents/{id}", GroupDocuments},
	{"/documents/{id}/traverse", GroupDocuments},
	{"/documents/{id}/source-recordings", GroupDocuments},
	{"/search/documents", GroupSearch},
}

// routes registers every route. Each path is registered for all methods so
// that a known path with another method answers 405 in the API's error shape,
// and "/" catches every unknown path with a 404 in the same shape.
func (s *server) routes() {
	handlers := map[string]http.Handler{
		"/libraries":                        s.handleLibraries(),
		"/libraries/{id}":                   s.handleLibrary(),
		"/libraries/{id}/tags":              s.handleLabels(service.Tags),
		"/libraries/{id}/categories":        s.handleLabels(service.Categories),
		"/libraries/{id}/applications":      s.handleLabels(service.Applications),
		"/libraries/{id}/graph":             s.handleGraph(),
		"/libraries/{id}/documents":         s.handleDocuments(),
		"/documents/{id}":                   s.handleDocument(),
		"/documents/{id}/traverse":          s.handleTraverse(),
		"/documents/{id}/source-recordings": s.handleSourceRecordings(),
		"/search/documents":                 s.handleSearch(),
	}
	for _, rt := range Routes {
		h, ok := handlers[rt.Path]
		if !ok {
			panic("httpapi: no handler for route " + rt.Path)
		}
		if rt.Group != GroupSearch { // a search spends credit: never kept
			h = s.memoized(h)
		}
		s.mux.Handle(rt.Path, get(h))
	}
	if len(handlers) != len(Routes) {
		panic("httpapi: a handler has no entry in Routes")
	}
	if s.mcp != nil {
		s.mux.Handle(MCPPath, post(s.mcp))
	}
	s.mux.Handle("/", http.HandlerFunc(notFound))
}
