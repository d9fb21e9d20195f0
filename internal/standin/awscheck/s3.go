package awscheck

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// s3Service checks calls to S3's REST API (signing name "s3"), path-style
// only: /bucket for the bucket, /bucket/key for an object. The resource is
// arn:aws:s3:::bucket or arn:aws:s3:::bucket/key, and the bucket's policy
// takes part as the resource-based policy, with aws:SecureTransport "true"
// (the checker is HTTPS).
type s3Service struct{ c *Checker }

// s3Query are the query parameters of the operations the checker knows:
// any other names a subresource (?acl, ?uploads, ?tagging, ...) and is
// refused as not implemented rather than guessed at.
var s3Query = map[string]bool{
	"x-id": true, "versionId": true, "list-type": true, "versions": true, "prefix": true,
	"delimiter": true, "max-keys": true, "continuation-token": true, "start-after": true,
	"fetch-owner": true, "encoding-type": true, "key-marker": true, "version-id-marker": true,
	// Multipart uploads.
	"uploads": true, "uploadId": true, "partNumber": true, "max-parts": true, "part-number-marker": true,
	"max-uploads": true, "upload-id-marker": true,
}

// isBucketPath tells whether an unsigned call names a bucket the stack has
// a policy for, so that it is refused in S3's format.
func (c *Checker) isBucketPath(r *http.Request) bool {
	bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	_, ok := c.cfg.BucketPolicies[bucket]
	return ok
}

func (s *s3Service) checks(_ context.Context, r *http.Request, _ []byte) ([]check, error) {
	if r.Host != s.c.host {
		return nil, &apiError{http.StatusBadRequest, "InvalidRequest", fmt.Sprintf(
			"The local stand-in's S3 serves path-style requests only (https://%s/bucket/key), not host %s: set the client's UsePathStyle", s.c.host, r.Host)}
	}
	raw := strings.TrimPrefix(r.URL.EscapedPath(), "/")
	rawBucket, rawKey, _ := strings.Cut(raw, "/")
	bucket, err1 := url.PathUnescape(rawBucket)
	key, err2 := url.PathUnescape(rawKey)
	if err1 != nil || err2 != nil {
		return nil, &apiError{http.StatusBadRequest, "InvalidURI", "Couldn't parse the specified URI."}
	}
	if bucket == "" {
		return nil, s3NotImplemented(r, "ListBuckets")
	}
	q := r.URL.Query()
	for name := range q {
		if !s3Query[name] && !strings.HasPrefix(name, "response-") {
			return nil, s3NotImplemented(r, "the subresource ?"+name)
		}
	}
	ctx := map[string][]string{}
	for _, k := range []string{"prefix", "delimiter", "max-keys"} {
		if q.Has(k) {
			ctx["s3:"+k] = []string{q.Get(k)}
		}
	}
	bucketARN := "arn:aws:s3:::" + bucket
	one := func(action, resource string) ([]check, error) {
		return []check{{action: action, resource: resource, context: ctx, resourcePolicy: s.c.cfg.BucketPolicies[bucket]}}, nil
	}
	version := q.Has("versionId")
	if version {
		ctx["s3:versionid"] = []string{q.Get("versionId")}
	}
	if key == "" {
		switch {
		case r.Method == http.MethodGet && q.Get("list-type") == "2":
			return one("s3:ListBucket", bucketARN)
		case r.Method == http.MethodGet && q.Has("versions"):
			return one("s3:ListBucketVersions", bucketARN)
		case r.Method == http.MethodGet && q.Has("uploads"):
			return one("s3:ListBucketMultipartUploads", bucketARN)
		}
		return nil, s3NotImplemented(r, r.Method+" on a bucket")
	}
	objectARN := bucketARN + "/" + key
	// Multipart uploads ("Multipart upload API and permissions",
	// https://docs.aws.amazon.com/AmazonS3/latest/userguide/mpuoverview.html#mpuAndPermissions):
	// creating one, uploading its parts and completing it ask s3:PutObject,
	// and aborting it and listing its parts have their own actions.
	if upload := q.Get("uploadId"); upload != "" || q.Has("uploads") {
		switch {
		case r.Method == http.MethodPost && q.Has("uploads") && upload == "",
			r.Method == http.MethodPut && upload != "" && q.Has("partNumber") && r.Header.Get("X-Amz-Copy-Source") == "",
			r.Method == http.MethodPost && upload != "":
			return one("s3:PutObject", objectARN)
		case r.Method == http.MethodDelete && upload != "":
			return one("s3:AbortMultipartUpload", objectARN)
		case r.Method == http.MethodGet && upload != "":
			return one("s3:ListMultipartUploadParts", objectARN)
		case r.Method == http.MethodPut && upload != "":
			return nil, s3NotImplemented(r, "UploadPartCopy")
		}
		return nil, s3NotImplemented(r, r.Method+" of a multipart upload")
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if q.Has("list-type") || q.Has("versions") {
			break
		}
		if version {
			return one("s3:GetObjectVersion", objectARN)
		}
		return one("s3:GetObject", objectARN)
	case http.MethodPut:
		if r.Header.Get("X-Amz-Copy-Source") != "" {
			return nil, s3NotImplemented(r, "CopyObject")
		}
		if version {
			break
		}
		return one("s3:PutObject", objectARN)
	case http.MethodDelete:
		if version {
			return one("s3:DeleteObjectVersion", objectARN)
		}
		return one("s3:DeleteObject", objectARN)
	}
	return nil, s3NotImplemented(r, r.Method+" on an object")
}

func s3NotImplemented(r *http.Request, what string) *apiError {
	return &apiError{http.StatusNotImplemented, "NotImplemented",
		"The local stand-in's S3 does not implement " + what + ": it knows GetObject, HeadObject, PutObject, DeleteObject, ListObjectsV2, ListObjectVersions and the multipart upload calls (CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload, ListParts, ListMultipartUploads)"}
}

// authCodes are S3's statuses and codes for the checker's authentication
// failures.
var authCodes = map[string]struct {
	status int
	code   string
}{
	"UnrecognizedClient":         {http.StatusForbidden, "InvalidAccessKeyId"},
	"IncompleteSignature":        {http.StatusBadRequest, "AuthorizationHeaderMalformed"},
	"InvalidSignature":           {http.StatusForbidden, "SignatureDoesNotMatch"},
	"MissingAuthenticationToken": {http.StatusForbidden, "AccessDenied"},
	"XAmzContentSHA256Mismatch":  {http.StatusBadRequest, "XAmzContentSHA256Mismatch"},
	"NotImplemented":             {http.StatusNotImplemented, "NotImplemented"},
}

func (s *s3Service) refuse(w http.ResponseWriter, e *authError) {
	st, ok := authCodes[e.code]
	if !ok {
		st.status, st.code = http.StatusBadRequest, e.code
	}
	if e.code == "InvalidSignature" && strings.HasPrefix(e.msg, "Signature") {
		st.code = "RequestTimeTooSkewed" // expired, or not yet current
	}
	writeS3Error(w, st.status, st.code, e.msg)
}

func (s *s3Service) deny(w http.ResponseWriter, c check, principal string, d iampolicy.Decision) {
	writeS3Error(w, http.StatusForbidden, "AccessDenied",
		fmt.Sprintf("User: %s is not authorized to perform: %s on resource: \"%s\" %s", principal, c.action, c.resource, d.Reason))
}

func (s *s3Service) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	forwardTo(s.c.cfg.S3, w, r, body)
}

// forwardAs forwards an allowed call. A GetObject or HeadObject of a
// missing key answers 403 AccessDenied instead of 404 NoSuchKey when the
// caller may not list the bucket, as S3 does, so that a role lacking
// s3:ListBucket fails where it would in AWS.
func (s *s3Service) forwardAs(w http.ResponseWriter, r *http.Request, body []byte, ck check, principal string, evaluate func(check) iampolicy.Decision) {
	if ck.action != "s3:GetObject" {
		s.forward(w, r, body)
		return
	}
	nf := &notFoundCatcher{ResponseWriter: w}
	s.forward(nf, r, body)
	if !nf.caught {
		return
	}
	bucket := strings.TrimPrefix(ck.resource, "arn:aws:s3:::")
	bucket, _, _ = strings.Cut(bucket, "/")
	list := check{action: "s3:ListBucket", resource: "arn:aws:s3:::" + bucket, resourcePolicy: ck.resourcePolicy}
	answer := nf.buf.Bytes()
	if r.Method == http.MethodHead {
		// A HEAD answer has no body to tell NoSuchKey from NoSuchBucket:
		// ask the engine the same as a GET.
		probe := r.Clone(r.Context())
		probe.Method = http.MethodGet
		rec := &notFoundCatcher{ResponseWriter: discard{}}
		s.forward(rec, probe, nil)
		answer = rec.buf.Bytes()
	}
	if !bytes.Contains(answer, []byte("<Code>NoSuchKey</Code>")) {
		nf.release()
		return
	}
	if d := evaluate(list); !d.Allowed {
		s.c.record(Denial{Principal: principal, Action: list.action, Resource: list.resource,
			Reason: d.Reason + " (S3 answers a missing key with 403, not 404, to a caller that may not list the bucket)"})
		h := w.Header()
		for k := range h {
			delete(h, k)
		}
		s.deny(w, list, principal, d)
		return
	}
	nf.release()
}

func (s *s3Service) fail(w http.ResponseWriter, e *apiError) {
	writeS3Error(w, e.status, e.code, e.msg)
}

// notFoundCatcher passes a response through unless its status is 404,
// which it holds back (the body in buf) until release.
type notFoundCatcher struct {
	http.ResponseWriter
	wrote, caught bool
	buf           bytes.Buffer
}

func (n *notFoundCatcher) WriteHeader(status int) {
	if n.wrote {
		return
	}
	n.wrote = true
	if status == http.StatusNotFound {
		n.caught = true
		return
	}
	n.ResponseWriter.WriteHeader(status)
}

func (n *notFoundCatcher) Write(p []byte) (int, error) {
	if !n.wrote {
		n.WriteHeader(http.StatusOK)
	}
	if n.caught {
		return n.buf.Write(p)
	}
	return n.ResponseWriter.Write(p)
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

// release sends the 404 held back.
func (n *notFoundCatcher) release() {
	n.ResponseWriter.WriteHeader(http.StatusNotFound)
	io.Copy(n.ResponseWriter, &n.buf)
}

// writeS3Error answers in S3's XML error format. A HEAD answer has no body,
// as S3's: the SDK reads the status alone.
func writeS3Error(w http.ResponseWriter, status int, code, msg string) {
	id := requestID()[:16]
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", id)
	w.WriteHeader(status)
	io.WriteString(w, xml.Header)
	xml.NewEncoder(w).Encode(struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string
		Message   string
		RequestID string `xml:"RequestId"`
		HostID    string `xml:"HostId"`
	}{Code: code, Message: msg, RequestID: id, HostID: randomString(56)})
}
