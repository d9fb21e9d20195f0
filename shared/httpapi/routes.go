package httpapi

import (
	"net/http"

	"github.com/doclib/doclib/shared/service"
)

// routes lists every route of the API. Each path is registered for all methods so
// that a known path with another method answers 405 in the API's error shape,
// and "/" catches every unknown path with a 404 in the same shape.
func (s *server) routes() {
	s.mux.Handle("/libraries", get(s.handleLibraries()))
	s.mux.Handle("/libraries/{id}", get(s.handleLibrary()))
	s.mux.Handle("/libraries/{id}/tags", get(s.handleLabels(service.Tags)))
	s.mux.Handle("/libraries/{id}/categories", get(s.handleLabels(service.Categories)))
	s.mux.Handle("/libraries/{id}/applications", get(s.handleLabels(service.Applications)))
	s.mux.Handle("/libraries/{id}/graph", get(s.handleGraph()))
	s.mux.Handle("/libraries/{id}/documents", get(s.handleDocuments()))
	s.mux.Handle("/documents/{id}", get(s.handleDocument()))
	s.mux.Handle("/documents/{id}/traverse", get(s.handleTraverse()))
	s.mux.Handle("/documents/{id}/source-recordings", get(s.handleSourceRecordings()))
	s.mux.Handle("/search/documents", get(s.handleSearch()))
	s.mux.Handle("/", http.HandlerFunc(notFound))
}
