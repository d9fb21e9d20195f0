// Package fakes3 is S3 in a test process: gofakes3 over its in-memory
// backend, with S3's decoding of aws-chunked uploads, S3's refusals of
// multipart uploads (multipart.go) and S3's answers to ranged GETs
// (ranges.go) in front of it, and, when set, a model of S3's speed that
// also logs every request with its bytes (speed.go).
//
// The AWS SDK for Go v2 sends PutObject's body over HTTPS as aws-chunked
// with x-amz-content-sha256 STREAMING-UNSIGNED-PAYLOAD-TRAILER and a CRC32
// trailer (its default checksum behaviour). gofakes3 v1.2.0 decodes only
// the signed variant (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) and would store
// the unsigned one's chunk framing and trailer as the object's bytes; the
// Handler decodes it first, checks the trailer's checksum and the decoded
// length as S3 does, and passes gofakes3 the plain body.
package fakes3

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is one fake S3: its buckets live in Backend, which tests may read
// or change behind the API's back.
type Server struct {
	Backend *s3mem.Backend
	Faker   *gofakes3.GoFakeS3
	handler http.Handler
	uploads uploads
	meter   meter // the speed model and the log of requests (speed.go)
}

// New starts an empty fake (no buckets).
func New() *Server {
	s := &Server{Backend: s3mem.New(), uploads: uploads{m: map[string]*mpUpload{}}}
	s.Faker = gofakes3.New(&backend{Backend: s.Backend, s: s})
	s.handler = s.Faker.Server()
	return s
}

// CreateBucket makes a bucket, with versioning on when versioned.
func (s *Server) CreateBucket(name string, versioned bool) error {
	if err := s.Backend.CreateBucket(name); err != nil {
		return fmt.Errorf("fakes3: creating bucket %s: %w", name, err)
	}
	if versioned {
		if err := s.Backend.SetVersioningConfiguration(name, gofakes3.VersioningConfiguration{Status: gofakes3.VersioningEnabled}); err != nil {
			return fmt.Errorf("fakes3: versioning bucket %s: %w", name, err)
		}
	}
	return nil
}

// ServeHTTP serves S3's REST API, path-style (/bucket/key).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := s.start(w, r)
	defer done()
	if isAWSChunked(r) && r.Header.Get("X-Amz-Content-Sha256") != "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" {
		r2, err := decodeChunked(r)
		if err != nil {
			var se *s3Error
			if !errors.As(err, &se) {
				se = &s3Error{http.StatusBadRequest, "IncompleteBody", err.Error()}
			}
			writeError(w, se)
			return
		}
		r = r2
	}
	if s.multipart(w, r) {
		return
	}
	w, r, answered := s.serveRange(w, r)
	if answered {
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		w = &dropEmpty{ResponseWriter: w}
	}
	s.handler.ServeHTTP(w, r)
}

func isAWSChunked(r *http.Request) bool {
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			if strings.TrimSpace(e) == "aws-chunked" {
				return true
			}
		}
	}
	return false
}

// s3Error is an error S3 answers in its XML format.
type s3Error struct {
	status        int
	code, message string
}

func (e *s3Error) Error() string { return e.code + ": " + e.message }

func writeError(w http.ResponseWriter, e *s3Error) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(e.status)
	io.WriteString(w, xml.Header)
	xml.NewEncoder(w).Encode(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}{Code: e.code, Message: e.message})
}

// decodeChunked reads an unsigned aws-chunked body: chunks of
// "<hex size>[;ext]\r\n<data>\r\n", a last chunk "0\r\n", then trailer
// lines "name:value\r\n" and an empty line. It returns the request with the
// decoded body, its length, the trailer's checksum as a header, and the
// aws-chunked headers removed, as S3 hands an upload on.
func decodeChunked(r *http.Request) (*http.Request, error) {
	br := bufio.NewReader(r.Body)
	var body bytes.Buffer
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, fmt.Errorf("aws-chunked body: reading a chunk header: %w", err)
		}
		sizeHex, _, _ := strings.Cut(line, ";")
		size, err := strconv.ParseInt(strings.TrimSpace(sizeHex), 16, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("aws-chunked body: bad chunk size %q", line)
		}
		if size == 0 {
			break
		}
		if _, err := io.CopyN(&body, br, size); err != nil {
			return nil, fmt.Errorf("aws-chunked body: a chunk of %d bytes is cut short: %w", size, err)
		}
		if end, err := readLine(br); err != nil || end != "" {
			return nil, errors.New("aws-chunked body: a chunk does not end with CRLF")
		}
	}
	trailers := map[string]string{}
	for {
		line, err := readLine(br)
		if err != nil {
			return nil, fmt.Errorf("aws-chunked body: reading the trailer: %w", err)
		}
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("aws-chunked body: bad trailer line %q", line)
		}
		trailers[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}

	if d := r.Header.Get("X-Amz-Decoded-Content-Length"); d != "" {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n != int64(body.Len()) {
			return nil, &s3Error{http.StatusBadRequest, "IncompleteBody",
				fmt.Sprintf("The request body holds %d bytes; x-amz-decoded-content-length says %s", body.Len(), d)}
		}
	} else {
		return nil, &s3Error{http.StatusLengthRequired, "MissingContentLength", "an aws-chunked upload needs x-amz-decoded-content-length"}
	}
	for _, name := range strings.Split(r.Header.Get("X-Amz-Trailer"), ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		v, ok := trailers[name]
		if !ok {
			return nil, &s3Error{http.StatusBadRequest, "MalformedTrailerError", "The request body lacks the trailer " + name + " that x-amz-trailer announces"}
		}
		if h := checksumHash(name); h != nil {
			h.Write(body.Bytes())
			if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != v {
				return nil, &s3Error{http.StatusBadRequest, "BadDigest",
					fmt.Sprintf("The %s you specified did not match the calculated checksum.", strings.TrimPrefix(name, "x-amz-checksum-"))}
			}
		}
	}

	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body.Bytes()))
	r2.ContentLength = int64(body.Len())
	r2.Header.Set("Content-Length", strconv.Itoa(body.Len()))
	var enc []string
	for _, v := range r.Header.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "aws-chunked" && e != "" {
				enc = append(enc, e)
			}
		}
	}
	r2.Header.Del("Content-Encoding")
	if len(enc) > 0 {
		r2.Header.Set("Content-Encoding", strings.Join(enc, ","))
	}
	r2.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	r2.Header.Del("X-Amz-Decoded-Content-Length")
	r2.Header.Del("X-Amz-Trailer")
	for name, v := range trailers {
		if strings.HasPrefix(name, "x-amz-checksum-") {
			r2.Header.Set(name, v)
		}
	}
	return r2, nil
}

// checksumHash is the hash of a checksum trailer S3 verifies, or nil for
// one it does not know here (CRC64NVME is passed on unchecked).
func checksumHash(name string) hash.Hash {
	switch name {
	case "x-amz-checksum-crc32":
		return crc32.NewIEEE()
	case "x-amz-checksum-crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "x-amz-checksum-sha1":
		return sha1.New()
	case "x-amz-checksum-sha256":
		return sha256.New()
	}
	return nil
}

// readLine reads one CRLF-terminated line, without its CRLF.
func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") {
		return "", errors.New("a line does not end with CRLF")
	}
	return strings.TrimSuffix(line, "\r\n"), nil
}
