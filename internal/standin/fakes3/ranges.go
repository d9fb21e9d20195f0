package fakes3

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/johannesboyne/gofakes3"
)

// Ranged GETs. gofakes3 v1.2.0 serves "Range: bytes=first-last", "first-"
// and "-suffix" with 206 and Content-Range, but differs from S3 where a
// reader of byte ranges notices:
//
//   - S3 ignores a Range header it cannot parse, or that names several
//     ranges, or whose last byte is before its first, and answers 200 with
//     the whole object (RFC 9110, section 14.2: a server ignores an invalid
//     Range; S3 serves one range per GET, "GetObject" in S3's API
//     reference); gofakes3 answers 416, or 501 for several ranges.
//   - A suffix longer than the object is the whole object, 206 (RFC 9110,
//     14.1.3); gofakes3 answers 416.
//   - An unsatisfiable range (its first byte at or past the end, any range
//     of an empty object, a suffix of 0) is 416 InvalidRange with
//     Content-Range "bytes */size", which gofakes3 leaves out.
//   - A ranged answer carries no x-amz-checksum-* header: the checksums
//     S3 keeps are of the whole object (or of a part), which the SDK would
//     check against the range and refuse; gofakes3 sends the whole object's.
//
// serveRange answers a ranged GET or HEAD that gofakes3 would answer
// otherwise, or hands it gofakes3 with the Range rewritten as the one
// satisfiable byte range S3 would serve; it reports whether it answered.
// Only Range semantics live here: conditions, versions and errors stay
// gofakes3's.
func (s *Server) serveRange(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, bool) {
	spec := r.Header.Get("Range")
	if spec == "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return w, r, false
	}
	bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if !ok || key == "" {
		return w, r, false
	}
	var obj *gofakes3.Object
	var err error
	if v := r.URL.Query().Get("versionId"); v != "" {
		obj, err = s.Backend.HeadObjectVersion(bucket, key, gofakes3.VersionID(v))
	} else {
		obj, err = s.Backend.HeadObject(bucket, key)
	}
	if err != nil || obj.IsDeleteMarker {
		return w, r, false // gofakes3 answers the missing key or version
	}
	size := obj.Size
	first, last, valid := parseRange(spec, size)
	r2 := r.Clone(r.Context())
	switch {
	case !valid:
		r2.Header.Del("Range") // ignored: the whole object, 200
		return w, r2, false
	case first < 0 && !conditional(r):
		// A condition (If-None-Match, ...) is answered before the range
		// (RFC 9110, 13.2.2), which gofakes3 does; without one, 416.
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
		writeError(w, &s3Error{http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable"})
		return w, r, true
	case first < 0:
		r2.Header.Del("Range")
		return w, r2, false
	}
	r2.Header.Set("Range", "bytes="+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10))
	return &noChecksums{ResponseWriter: w}, r2, false
}

// parseRange reads a Range header as S3 does for an object of size bytes:
// valid is false when it is to be ignored; first is -1 when it cannot be
// satisfied; otherwise [first, last] are the bytes to serve.
func parseRange(spec string, size int64) (first, last int64, valid bool) {
	unit, set, ok := strings.Cut(spec, "=")
	if !ok || strings.TrimSpace(unit) != "bytes" || strings.Contains(set, ",") {
		return 0, 0, false
	}
	from, to, ok := strings.Cut(strings.TrimSpace(set), "-")
	if !ok {
		return 0, 0, false
	}
	from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	digits := func(s string) (int64, bool) {
		if s == "" || strings.TrimLeft(s, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	if from == "" { // the last bytes
		n, ok := digits(to)
		if !ok {
			return 0, 0, false
		}
		if n == 0 || size == 0 {
			return -1, 0, true
		}
		return max(size-n, 0), size - 1, true
	}
	a, ok := digits(from)
	if !ok {
		return 0, 0, false
	}
	b := int64(-1)
	if to != "" {
		if b, ok = digits(to); !ok || b < a {
			return 0, 0, false
		}
	}
	if a >= size {
		return -1, 0, true
	}
	if b < 0 || b >= size {
		b = size - 1
	}
	return a, b, true
}

// conditional says whether r carries a precondition.
func conditional(r *http.Request) bool {
	for _, h := range []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if r.Header.Get(h) != "" {
			return true
		}
	}
	return false
}

// noChecksums passes a ranged answer on without the whole object's
// checksum headers, as S3 sends it.
type noChecksums struct {
	http.ResponseWriter
	sent bool
}

func (n *noChecksums) WriteHeader(status int) {
	if !n.sent {
		n.sent = true
		if status == http.StatusPartialContent {
			for k := range n.Header() {
				if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
					delete(n.Header(), k)
				}
			}
		}
	}
	n.ResponseWriter.WriteHeader(status)
}

func (n *noChecksums) Write(p []byte) (int, error) {
	if !n.sent {
		n.WriteHeader(http.StatusOK)
	}
	return n.ResponseWriter.Write(p)
}
