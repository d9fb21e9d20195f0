// Package openapicheck checks real HTTP exchanges against the API's OpenAPI
// description, docs/openapi.yaml, so that the document and the server cannot
// drift apart unnoticed. It is meant for tests only:
//
//	v := openapicheck.Load(t)
//	rec := httptest.NewRecorder()
//	handler.ServeHTTP(rec, req)
//	v.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
//
// What Check validates:
//
//   - The request (path parameters, query parameters, the bearer credential)
//     only when the response status is 2xx. A request the API answers with 400
//     or 401 is expected to break the document's rules, so it is not checked.
//   - The response always: the status must be documented for the operation, the
//     documented headers must be present and well formed (X-Request-Id always;
//     X-RateLimit-* on 2xx and 429; Retry-After on 429), the Content-Type must be
//     a documented media type and the body must match its schema.
//   - HEAD: the status and headers are checked as for GET, the body is not (a
//     server discards it, and httptest.ResponseRecorder keeps whatever the
//     handler wrote).
//   - Answers that no operation describes: a 405 for a method other than GET or
//     HEAD on a known path, and a 404 for an unknown path (and the 401 or 429
//     that authentication or the rate limits give before routing) are checked
//     against the matching entry of components.responses (headers and the Error
//     body, whose code must fit the status). Any other status for such a request
//     is reported as undocumented.
//
// The validator is built once per test binary and is safe for parallel tests.
package openapicheck

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/responses"
	"github.com/pb33f/libopenapi-validator/router"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// DocumentPath is the OpenAPI document, relative to the module root.
const DocumentPath = "docs/openapi.yaml"

// Validator validates HTTP exchanges against docs/openapi.yaml.
type Validator struct {
	path   string
	lib    validator.Validator
	model  *v3.Document
	router router.Router
	// unrouted maps a status to the components.responses entry that describes it
	// for requests no operation matches (unknown path, or a method other than GET).
	unrouted map[int]*v3.Response

	mu sync.Mutex // serialises validation; the validator is shared by parallel tests
}

var (
	loadOnce sync.Once
	loaded   *Validator
	loadErr  error
)

// Load returns the validator for docs/openapi.yaml, found by walking up from the
// working directory to the module root (the directory holding go.mod). The
// document is read and compiled once per test binary; a document that cannot be
// read or built fails tb at once.
func Load(tb testing.TB) *Validator {
	tb.Helper()
	loadOnce.Do(func() { loaded, loadErr = load() })
	if loadErr != nil {
		tb.Fatalf("openapicheck: %v", loadErr)
	}
	return loaded
}

func load() (*Validator, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(root, filepath.FromSlash(DocumentPath))
	spec, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return newValidator(path, spec)
}

func newValidator(path string, spec []byte) (*Validator, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("%s: building the model: %w", path, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: not an OpenAPI 3 document", path)
	}
	model := &m.Model
	lib := validator.NewValidatorFromV3Model(model, config.WithFormatAssertions())
	lib.SetDocument(doc)

	v := &Validator{
		path:     path,
		lib:      lib,
		model:    model,
		router:   router.NewRouter(model, router.WithPathOnlyMatching()),
		unrouted: map[int]*v3.Response{},
	}
	for status, name := range map[int]string{
		http.StatusUnauthorized:        "Unauthorised",
		http.StatusNotFound:            "NotFound",
		http.StatusMethodNotAllowed:    "MethodNotAllowed",
		http.StatusTooManyRequests:     "RateLimited",
		http.StatusInternalServerError: "Internal",
		http.StatusServiceUnavailable:  "Unavailable",
	} {
		var r *v3.Response
		if model.Components != nil && model.Components.Responses != nil {
			r = model.Components.Responses.GetOrZero(name)
		}
		if r == nil {
			return nil, fmt.Errorf("%s: components.responses.%s is missing", path, name)
		}
		v.unrouted[status] = r
	}
	return v, nil
}

// moduleRoot walks up from the working directory to the directory with go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or any parent")
		}
		dir = parent
	}
}

// Check validates one exchange: req as sent (its URL may be relative, as from
// httptest.NewRequest, or absolute, as from an httptest.Server client), and the
// response's status, header and body. Every mismatch is reported with
// tb.Errorf; Check never stops the test. See the package documentation for what
// is validated when.
func (v *Validator) Check(tb testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	tb.Helper()
	for _, p := range v.problems(req, status, header, body) {
		tb.Errorf("%s", p)
	}
}

// CheckResponse is Check for a response from an http.Client, whose body the
// caller has already read into body. resp.Request must be set (the client sets it).
func (v *Validator) CheckResponse(tb testing.TB, resp *http.Response, body []byte) {
	tb.Helper()
	if resp == nil || resp.Request == nil {
		tb.Errorf("openapicheck: CheckResponse needs a response with its Request set")
		return
	}
	v.Check(tb, resp.Request, resp.StatusCode, resp.Header, body)
}

// problems returns one line per validation failure, each starting with the
// exchange ("GET /libraries -> 200: ...").
func (v *Validator) problems(req *http.Request, status int, header http.Header, body []byte) []string {
	if req == nil || req.URL == nil {
		return []string{"openapicheck: Check needs a request with a URL"}
	}
	v.mu.Lock()
	defer v.mu.Unlock()

	if header == nil {
		header = http.Header{}
	}
	prefix := fmt.Sprintf("openapi: %s %s -> %d", req.Method, req.URL.RequestURI(), status)
	// A compressed body is validated as what it decodes to.
	if coding := header.Get("Content-Encoding"); coding != "" && req.Method != http.MethodHead {
		plain, err := Decode(coding, body)
		if err != nil {
			return []string{fmt.Sprintf("%s: Content-Encoding %s, but the body does not decode: %v", prefix, coding, err)}
		}
		body = plain
	}
	resp := &http.Response{
		StatusCode: status,
		Status:     strconv.Itoa(status) + " " + http.StatusText(status),
		Header:     header.Clone(),
		Body:       io.NopCloser(bytes.NewReader(body)),
		Request:    req,
	}
	if req.Method == http.MethodHead {
		// libopenapi-validator skips the body of a HEAD response only when it is
		// http.NoBody; a recorder may hold what the handler wrote.
		resp.Body = http.NoBody
	}

	var errs []*liberrors.ValidationError
	var local []string
	route, routeErr := v.router.FindRoute(req)
	switch {
	case routeErr == nil && route != nil && route.Operation != nil:
		if status >= 200 && status < 300 {
			_, reqErrs := v.lib.ValidateHttpRequestSync(req)
			errs = append(errs, reqErrs...)
		}
		_, respErrs := v.lib.ValidateHttpResponse(req, resp)
		errs = append(errs, respErrs...)
		// libopenapi-validator lets an empty body pass; every documented
		// response of this API but 304 has a JSON body.
		if req.Method != http.MethodHead && status != http.StatusNotModified && len(bytes.TrimSpace(body)) == 0 {
			local = append(local, "the body is empty")
		}
	default:
		what := "the path is not in the document"
		if errors.Is(routeErr, router.ErrMethodNotAllowed) {
			what = "the method is not an operation of the path"
		}
		spec, ok := v.unrouted[status]
		if !ok {
			local = append(local, fmt.Sprintf("%s, and status %d is not one the API gives such a request (401, 404, 405, 429, 500, 503)", what, status))
			break
		}
		local, errs = v.checkUnrouted(req, resp, status, body, spec)
	}

	var out []string
	for _, l := range local {
		out = append(out, prefix+": "+l)
	}
	for _, e := range errs {
		out = append(out, prefix+": "+describe(e))
	}
	if len(out) > 0 && len(body) > 0 && req.Method != http.MethodHead {
		out = append(out, prefix+": body was: "+clip(body, 2000))
	}
	return out
}

// checkUnrouted validates a response to a request that no operation matches
// against the components.responses entry for its status.
func (v *Validator) checkUnrouted(req *http.Request, resp *http.Response, status int, body []byte, spec *v3.Response) ([]string, []*liberrors.ValidationError) {
	var local []string
	var errs []*liberrors.ValidationError
	code := strconv.Itoa(status)
	if spec.Headers != nil {
		_, hErrs := responses.ValidateResponseHeaders(req, resp, spec.Headers, req.URL.Path, code)
		errs = append(errs, hErrs...)
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		local = append(local, fmt.Sprintf("Content-Type %q is not application/json", ct))
	}
	if req.Method == http.MethodHead {
		return local, errs
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return append(local, "the body is empty"), errs
	}
	media := spec.Content.GetOrZero("application/json")
	if media == nil || media.Schema == nil {
		return append(local, "components.responses entry for "+code+" has no application/json schema"), errs
	}
	_, bErrs := responses.ValidateResponseSchema(&responses.ValidateResponseSchemaInput{
		Request:  req,
		Response: resp,
		Schema:   media.Schema.Schema(),
		Version:  3.1,
		Options:  []config.Option{config.WithFormatAssertions()},
	})
	return local, append(errs, bErrs...)
}

// describe renders a validation error with its reason and every schema failure.
func describe(e *liberrors.ValidationError) string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Reason != "" && e.Reason != e.Message {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	for _, f := range e.SchemaValidationErrors {
		b.WriteString("\n\t- ")
		where := f.FieldPath
		if where == "" && len(f.InstancePath) > 0 {
			where = "/" + strings.Join(f.InstancePath, "/")
		}
		if where != "" {
			b.WriteString(where)
			b.WriteString(": ")
		}
		b.WriteString(f.Reason)
		if f.KeywordLocation != "" {
			b.WriteString(" (schema ")
			b.WriteString(f.KeywordLocation)
			b.WriteString(")")
		}
	}
	return b.String()
}

func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// Decode undoes a content coding the API sends (gzip or zstd).
func Decode(coding string, body []byte) ([]byte, error) {
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	case "zstd":
		zr, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return zr.DecodeAll(body, nil)
	}
	return nil, fmt.Errorf("coding %q is not one the API sends", coding)
}
