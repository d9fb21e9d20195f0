package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/search"
	"github.com/doclib/doclib/shared/service"
)

// query holds a request's known parameters, each given at most once. Unknown
// parameters are ignored (docs/api.md); a known one given twice is a 400.
type query map[string]string

func parseQuery(r *http.Request, known ...string) (query, error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, doclib.Errorf(doclib.EBadRequest, "The query string is malformed (%s). Percent-encode special characters in parameter values.", queryProblem(err))
	}
	q := make(query, len(known))
	for _, k := range known {
		vs, ok := values[k]
		if !ok {
			continue
		}
		if len(vs) > 1 {
			return nil, doclib.Errorf(doclib.EBadRequest, "The parameter %s is given %d times; give it once.", k, len(vs))
		}
		if !utf8.ValidString(vs[0]) {
			return nil, doclib.Errorf(doclib.EBadRequest, "The parameter %s is not valid UTF-8.", k)
		}
		q[k] = vs[0]
	}
	return q, nil
}

func queryProblem(err error) string {
	var ee url.EscapeError
	if errors.As(err, &ee) {
		return "bad percent-escape " + strconv.Quote(string(ee))
	}
	if strings.Contains(err.Error(), "semicolon") {
		return "a semicolon separates parameters; use &"
	}
	return "it must read name=value&name=value"
}

// page reads page and pageSize. A pageSize above maxSize is capped, not refused.
func (q query) page(maxSize int) (service.Page, error) {
	p := service.Page{Number: 1, Size: doclib.DefaultPageSize}
	var err error
	if v, ok := q["page"]; ok {
		if p.Number, err = positive("page", v); err != nil {
			return p, err
		}
	}
	if v, ok := q["pageSize"]; ok {
		if p.Size, err = positive("pageSize", v); err != nil {
			return p, err
		}
	}
	p.Size = min(p.Size, maxSize)
	return p, nil
}

// maxWhole is the largest page echoed: 2^53 - 1, the largest integer every
// JSON reader holds exactly (JavaScript's Number.MAX_SAFE_INTEGER). Offsets
// computed from it stay far from overflowing an int.
const maxWhole = 1<<53 - 1

// positive parses a whole number of at least 1. A number above maxWhole
// saturates there: a page that far is past the end, and a pageSize that large
// is capped.
func positive(name, v string) (int, error) {
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		if n, err := strconv.Atoi(v); err == nil && n < 1 {
			return 0, doclib.Errorf(doclib.EBadRequest, "The parameter %s must be 1 or more; got %s.", name, v)
		}
		return 0, doclib.Errorf(doclib.EBadRequest, "The parameter %s must be a whole number of 1 or more; got %s.", name, doclib.Quote(v))
	}
	n, err := strconv.Atoi(v)
	if err != nil || n > maxWhole { // only digits, so the number is out of range
		return maxWhole, nil
	}
	if n < 1 {
		return 0, doclib.Errorf(doclib.EBadRequest, "The parameter %s must be 1 or more; got %s.", name, v)
	}
	return n, nil
}

// maxSearchLength bounds the documents filter's substring search.
const maxSearchLength = 512

func (q query) filter() (doclib.DocumentFilter, error) {
	f := doclib.DocumentFilter{Category: q["category"], Tag: q["tag"], Application: q["application"], Search: q["search"]}
	if n := utf8.RuneCountInString(f.Search); n > maxSearchLength {
		return f, doclib.Errorf(doclib.EBadRequest, "The parameter search is %d characters long; the most is %d.", n, maxSearchLength)
	}
	return f, nil
}

func (q query) traverse() (service.TraverseParams, error) {
	tp := service.TraverseParams{Direction: service.DirectionBoth, Depth: doclib.DefaultDepth, Label: q["label"]}
	if v, ok := q["direction"]; ok {
		switch v {
		case service.DirectionOutgoing, service.DirectionIncoming, service.DirectionBoth:
			tp.Direction = v
		default:
			return tp, doclib.Errorf(doclib.EBadRequest, "The parameter direction must be outgoing, incoming or both; got %s.", doclib.Quote(v))
		}
	}
	if v, ok := q["depth"]; ok {
		d, err := strconv.Atoi(v)
		// Digits only, as for page: strconv also takes "+2".
		if err != nil || strings.TrimLeft(v, "0123456789") != "" || d < doclib.MinDepth || d > doclib.MaxDepth {
			return tp, doclib.Errorf(doclib.EBadRequest, "The parameter depth must be a whole number from %d to %d; got %s.", doclib.MinDepth, doclib.MaxDepth, doclib.Quote(v))
		}
		tp.Depth = d
	}
	return tp, nil
}

// libraryIDPattern is the shape of a library ID; libraryId takes nothing else.
var libraryIDPattern = regexp.MustCompile(`^lib_[A-Za-z0-9_-]{1,64}$`)

func (q query) search() (service.SearchParams, error) {
	var sp service.SearchParams
	text, ok := q["q"]
	if !ok {
		return sp, doclib.Errorf(doclib.EBadRequest, "The parameter q is required: the words to search for, %d to %d characters, e.g. q=reset%%20password.", doclib.MinQueryLength, doclib.MaxQueryLength)
	}
	text = strings.TrimSpace(text)
	switch n := utf8.RuneCountInString(text); {
	case n < doclib.MinQueryLength:
		return sp, doclib.Errorf(doclib.EBadRequest, "The parameter q must be %d to %d characters after trimming spaces; got %d.", doclib.MinQueryLength, doclib.MaxQueryLength, n)
	case n > doclib.MaxQueryLength:
		return sp, doclib.Errorf(doclib.EBadRequest, "The parameter q must be %d to %d characters; got %d. Shorten the query.", doclib.MinQueryLength, doclib.MaxQueryLength, n)
	}
	sp.Query = text
	if id, ok := q["libraryId"]; ok && !libraryIDPattern.MatchString(id) {
		return sp, doclib.Errorf(doclib.EBadRequest, "The parameter libraryId must be a library ID such as lib_ops (from GET /libraries); slugs are not accepted here. Got %s.", doclib.Quote(id))
	}
	sp.Filter = search.Filter{LibraryID: q["libraryId"], Category: q["category"], Tag: q["tag"], Application: q["application"]}
	page, err := q.page(doclib.MaxPageSize)
	if err != nil {
		return sp, err
	}
	sp.Page = page
	return sp, nil
}
