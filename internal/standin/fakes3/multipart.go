package fakes3

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Multipart uploads. gofakes3 v1.2.0 implements CreateMultipartUpload,
// UploadPart, CompleteMultipartUpload (storing the result as a new version
// of a versioned bucket and answering its x-amz-version-id) and
// AbortMultipartUpload, but refuses less than S3 does. The Server checks
// in front of it what S3 checks:
//
//   - every part but the last of a completed upload is at least 5 MiB, or
//     S3 answers 400 EntityTooSmall ("Amazon S3 multipart upload limits",
//     https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html;
//     gofakes3 defines the limit and never applies it);
//   - checksums ("Checking object integrity in Amazon S3",
//     https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html):
//     a part's checksum header must match its bytes (BadDigest); S3
//     computes a part's checksum in the algorithm the upload was created
//     with and answers it in x-amz-checksum-<algorithm>; the complete
//     request of such an upload must repeat each part's checksum (400
//     InvalidRequest "The upload was created using a crc32 checksum. The
//     complete request must include the checksum for each part. It was
//     missing for part 1 in the request.", as S3 words it in
//     apache/opendal pull request 4580), and one of an upload created
//     without an algorithm whose parts carried checksums is refused
//     with 400 InvalidPart (aws/aws-sdk-go-v2 issue 3005: the SDK's default
//     CRC32 on UploadPart after a CreateMultipartUpload that named none);
//   - the object an upload with an algorithm completes has S3's composite
//     checksum, the checksum of the parts' checksums, "-" and the number of
//     parts (x-amz-checksum-type COMPOSITE), which GetObject answers and
//     the SDK does not check against the body (it skips any with "-").
//
// gofakes3 answers a completed upload's object with the MD5 of its bytes
// as ETag (S3: the CompleteMultipartUpload's "<digest>-<parts>"); nothing
// here compares the two.
type uploads struct {
	mu    sync.Mutex
	m     map[string]*mpUpload // by upload ID
	count int                  // uploads created, to name their markers
}

type mpUpload struct {
	algorithm string // x-amz-checksum-algorithm of the create, lower case ("" for none)
	marker    string // the value of markerHeader in the upload's metadata
	parts     map[int]part
	checksum  string // the composite checksum, once a complete request is accepted
}

// markerHeader is put in a create's headers, which gofakes3 keeps as the
// upload's metadata and hands the backend's PutObject at completion: that
// is how backend.PutObject knows the upload it stores (and removes it).
const markerHeader = "X-Amz-Fakes3-Upload"

type part struct {
	size     int64
	checksum string // the checksum S3 keeps for the part, base64; "" for none
	had      bool   // the UploadPart request carried a checksum
}

// minPart is S3's smallest part but the last.
const minPart = 5 << 20

// multipart handles the multipart calls; false for any other call.
func (s *Server) multipart(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	id := q.Get("uploadId")
	switch {
	case r.Method == http.MethodPost && q.Has("uploads"):
		s.createUpload(w, r)
	case r.Method == http.MethodPut && id != "" && r.Header.Get("X-Amz-Copy-Source") == "":
		s.uploadPart(w, r, id)
	case r.Method == http.MethodPost && id != "":
		s.completeUpload(w, r, id)
	case r.Method == http.MethodDelete && id != "":
		s.end(w, r, id, http.StatusNoContent)
	default:
		return false
	}
	return true
}

func (s *Server) createUpload(w http.ResponseWriter, r *http.Request) {
	s.uploads.mu.Lock()
	s.uploads.count++
	marker := strconv.Itoa(s.uploads.count)
	s.uploads.mu.Unlock()
	r.Header.Set(markerHeader, marker)
	rec := s.record(r)
	if rec.status == http.StatusOK {
		var out struct {
			UploadID string `xml:"UploadId"`
		}
		if err := xml.Unmarshal(rec.body.Bytes(), &out); err == nil && out.UploadID != "" {
			alg := strings.ToLower(r.Header.Get("X-Amz-Checksum-Algorithm"))
			s.uploads.mu.Lock()
			s.uploads.m[out.UploadID] = &mpUpload{algorithm: alg, marker: marker, parts: map[int]part{}}
			s.uploads.mu.Unlock()
			if alg != "" {
				rec.header.Set("X-Amz-Checksum-Algorithm", strings.ToUpper(alg))
			}
		}
	}
	rec.send(w)
}

func (s *Server) uploadPart(w http.ResponseWriter, r *http.Request, id string) {
	s.uploads.mu.Lock()
	up := s.uploads.m[id]
	alg := ""
	if up != nil {
		alg = up.algorithm
	}
	s.uploads.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, &s3Error{http.StatusBadRequest, "IncompleteBody", err.Error()})
		return
	}
	// Every checksum header is checked against the bytes; the one of the
	// upload's algorithm is kept (computed here when the request had none).
	sent := false
	for name, vs := range r.Header {
		name = strings.ToLower(name)
		if !strings.HasPrefix(name, "x-amz-checksum-") || name == "x-amz-checksum-algorithm" || name == "x-amz-checksum-type" {
			continue
		}
		sent = true
		if h := checksumHash(name); h != nil {
			h.Write(body)
			if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != vs[0] {
				writeError(w, &s3Error{http.StatusBadRequest, "BadDigest",
					fmt.Sprintf("The %s you specified did not match the calculated checksum.", strings.TrimPrefix(name, "x-amz-checksum-"))})
				return
			}
		}
	}
	sum := ""
	if alg != "" {
		if v := r.Header.Get("X-Amz-Checksum-" + alg); v != "" {
			sum = v
		} else if h := checksumHash("x-amz-checksum-" + alg); h != nil {
			h.Write(body)
			sum = base64.StdEncoding.EncodeToString(h.Sum(nil))
		}
	}
	n, _ := strconv.Atoi(r.URL.Query().Get("partNumber"))
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := s.record(r)
	if rec.status == http.StatusOK && up != nil {
		s.uploads.mu.Lock()
		up.parts[n] = part{size: int64(len(body)), checksum: sum, had: sent}
		s.uploads.mu.Unlock()
		if sum != "" {
			rec.header.Set("X-Amz-Checksum-"+strings.ToUpper(alg), sum)
		}
	}
	rec.send(w)
}

// completed is the body of CompleteMultipartUpload.
type completed struct {
	Parts []struct {
		PartNumber        int
		ETag              string
		ChecksumCRC32     string
		ChecksumCRC32C    string
		ChecksumCRC64NVME string
		ChecksumSHA1      string
		ChecksumSHA256    string
	} `xml:"Part"`
}

func (s *Server) completeUpload(w http.ResponseWriter, r *http.Request, id string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, &s3Error{http.StatusBadRequest, "IncompleteBody", err.Error()})
		return
	}
	var in completed
	if err := xml.Unmarshal(body, &in); err != nil {
		writeError(w, &s3Error{http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."})
		return
	}
	s.uploads.mu.Lock()
	up := s.uploads.m[id]
	var refusal *s3Error
	if up != nil {
		refusal = up.check(in)
	}
	s.uploads.mu.Unlock()
	if refusal != nil {
		writeError(w, refusal)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.end(w, r, id, http.StatusOK)
}

// end has gofakes3 complete or abort upload id, and forgets the upload if
// it answered ok.
func (s *Server) end(w http.ResponseWriter, r *http.Request, id string, ok int) {
	rec := s.record(r)
	if rec.status == ok {
		s.uploads.mu.Lock()
		delete(s.uploads.m, id)
		s.uploads.mu.Unlock()
	}
	rec.send(w)
}

// check is what S3 refuses in a complete request of up (see uploads).
func (up *mpUpload) check(in completed) *s3Error {
	for i, p := range in.Parts {
		got, ok := up.parts[p.PartNumber]
		if !ok {
			continue // gofakes3 answers InvalidPart
		}
		if i < len(in.Parts)-1 && got.size < minPart {
			return &s3Error{http.StatusBadRequest, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size."}
		}
		if up.algorithm == "" {
			if got.had {
				return &s3Error{http.StatusBadRequest, "InvalidPart", "One or more of the specified parts could not be found.  " +
					"The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."}
			}
			continue
		}
		named := map[string]string{"crc32": p.ChecksumCRC32, "crc32c": p.ChecksumCRC32C, "crc64nvme": p.ChecksumCRC64NVME,
			"sha1": p.ChecksumSHA1, "sha256": p.ChecksumSHA256}[up.algorithm]
		if named == "" {
			return &s3Error{http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("The upload was created using a %s checksum. "+
				"The complete request must include the checksum for each part. It was missing for part %d in the request.", up.algorithm, p.PartNumber)}
		}
		if got.checksum != "" && named != got.checksum {
			return &s3Error{http.StatusBadRequest, "BadDigest", fmt.Sprintf("The %s you specified for part %d did not match what was received.", up.algorithm, p.PartNumber)}
		}
	}
	if h := checksumHash("x-amz-checksum-" + up.algorithm); h != nil {
		for _, p := range in.Parts {
			raw, _ := base64.StdEncoding.DecodeString(up.parts[p.PartNumber].checksum)
			h.Write(raw)
		}
		up.checksum = fmt.Sprintf("%s-%d", base64.StdEncoding.EncodeToString(h.Sum(nil)), len(in.Parts))
	}
	return nil
}

// backend is the s3mem backend gofakes3 stores through. Its PutObject
// stores what S3 would as the object's checksum headers: s3mem carries
// over every metadata key of the current version that the new one lacks
// (gofakes3.MergeMetadata), which S3 never does, so that a multipart
// upload over an object put with a CRC32 would answer that stale CRC32
// and the SDK refuse the body. Keys the new version lacks are set empty
// (Server.ServeHTTP drops empty checksum headers from its answers), and a
// completed upload's object gets its composite checksum.
type backend struct {
	*s3mem.Backend
	s *Server
}

// checksumKeys are the metadata keys of S3's checksum headers, as gofakes3
// keeps them (canonical header names).
var checksumKeys = []string{"X-Amz-Checksum-Crc32", "X-Amz-Checksum-Crc32c", "X-Amz-Checksum-Crc64nvme",
	"X-Amz-Checksum-Sha1", "X-Amz-Checksum-Sha256", "X-Amz-Checksum-Type"}

func (b *backend) PutObject(bucket, key string, meta map[string]string, input io.Reader, size int64,
	cond *gofakes3.PutConditions) (gofakes3.PutObjectResult, error) {
	if marker, ok := meta[markerHeader]; ok {
		delete(meta, markerHeader)
		b.s.uploads.mu.Lock()
		for _, up := range b.s.uploads.m {
			if up.marker == marker && up.checksum != "" {
				meta["X-Amz-Checksum-"+cases(up.algorithm)] = up.checksum
				meta["X-Amz-Checksum-Type"] = "COMPOSITE"
			}
		}
		b.s.uploads.mu.Unlock()
	}
	for _, k := range checksumKeys {
		if _, ok := meta[k]; !ok {
			meta[k] = ""
		}
	}
	return b.Backend.PutObject(bucket, key, meta, input, size, cond)
}

// cases is an algorithm's name as it ends a canonical header name.
func cases(alg string) string { return strings.ToUpper(alg[:1]) + alg[1:] }

// dropEmpty passes an answer on without the empty checksum headers that
// backend.PutObject stores.
type dropEmpty struct {
	http.ResponseWriter
	sent bool
}

func (d *dropEmpty) WriteHeader(status int) {
	if !d.sent {
		d.sent = true
		for _, k := range checksumKeys {
			if v, ok := d.Header()[k]; ok && len(v) == 1 && v[0] == "" {
				delete(d.Header(), k)
			}
		}
	}
	d.ResponseWriter.WriteHeader(status)
}

func (d *dropEmpty) Write(p []byte) (int, error) {
	if !d.sent {
		d.WriteHeader(http.StatusOK)
	}
	return d.ResponseWriter.Write(p)
}

// record has gofakes3 answer r, and holds the answer.
func (s *Server) record(r *http.Request) *recorder {
	rec := &recorder{header: http.Header{}}
	s.handler.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK // it wrote nothing: net/http answers 200
	}
	return rec
}

// recorder holds gofakes3's answer so that the Server can read it before
// passing it on.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// send passes the answer on.
func (r *recorder) send(w http.ResponseWriter) {
	for k, vs := range r.header {
		w.Header()[k] = vs
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}
