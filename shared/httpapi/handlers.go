package httpapi

import (
	"net/http"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/service"
)

// Parameters each endpoint knows; others are ignored.
var (
	pageParams     = []string{"page", "pageSize"}
	documentParams = []string{"page", "pageSize", "category", "tag", "application", "search"}
	traverseParams = []string{"direction", "label", "depth"}
	searchParams   = []string{"q", "libraryId", "category", "tag", "application", "page", "pageSize"}
	noParams       []string
)

func (s *server) handleLibraries() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseQuery(r, noParams...); err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Libraries(r.Context(), PrincipalFrom(r.Context()))
		s.respond(w, r, out, err)
	})
}

func (s *server) handleLibrary() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseQuery(r, noParams...); err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Library(r.Context(), PrincipalFrom(r.Context()), r.PathValue("id"))
		s.respond(w, r, out, err)
	})
}

func (s *server) handleLabels(kind service.LabelKind) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseQuery(r, noParams...); err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Labels(r.Context(), PrincipalFrom(r.Context()), r.PathValue("id"), kind)
		s.respond(w, r, out, err)
	})
}

func (s *server) handleGraph() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseQuery(r, noParams...); err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Graph(r.Context(), PrincipalFrom(r.Context()), r.PathValue("id"))
		s.respond(w, r, out, err)
	})
}

func (s *server) handleDocuments() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r, documentParams...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		page, err := q.page(doclib.MaxPageSize)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f, err := q.filter()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Documents(r.Context(), PrincipalFrom(r.Context()), r.PathValue("id"), f, page)
		s.respond(w, r, out, err)
	})
}

func (s *server) handleDocument() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseQuery(r, noParams...); err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Document(r.Context(), PrincipalFrom(r.Context()), r.PathValue("id"))
		s.respond(w, r, out, err)
	})
}

func (s *server) handleTraverse() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r, traverseParams...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		tp, err := q.traverse()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Traverse(r.Context(), PrincipalFrom(r.Context()), r.PathValue("id"), tp)
		s.respond(w, r, out, err)
	})
}

func (s *server) handleSourceRecordings() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r, pageParams...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		page, err := q.page(doclib.MaxRecordingsPageSize)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.SourceRecordings(r.Context(), PrincipalFrom(r.Context()), r.PathValue("id"), page)
		s.respond(w, r, out, err)
	})
}

func (s *server) handleSearch() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r, searchParams...)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		sp, err := q.search()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out, err := s.Service.Search(r.Context(), PrincipalFrom(r.Context()), sp)
		s.respond(w, r, out, err)
	})
}

// respond writes out as 200, or err in the error shape.
func (s *server) respond(w http.ResponseWriter, r *http.Request, out any, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeAnswer(w, r, out)
}
