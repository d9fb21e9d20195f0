// Package s3blobs is snapshot.Blobs over an S3 bucket (versioning on): the
// embedded search tier's snapshots and their pointer live there.
package s3blobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/doclib/doclib/shared/backend/snapshot"
)

// Blobs reads and writes the objects of one bucket. It is safe for
// concurrent use.
type Blobs struct {
	client *s3.Client
	bucket string
}

var _ snapshot.Blobs = (*Blobs)(nil)

// New uses client for bucket.
func New(client *s3.Client, bucket string) *Blobs {
	return &Blobs{client: client, bucket: bucket}
}

// Connect builds the client of bucket from the standard AWS configuration
// (AWS_REGION, credentials, AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_S3), with
// the SDK's standard retries: 5 attempts, exponential backoff with jitter on
// throttling and 5xx. With a custom endpoint (the local stand-in,
// https://127.0.0.1:port) it addresses the bucket in the path, since such
// an endpoint has no bucket subdomains; in AWS, as a subdomain as usual.
// Build it once per process.
func Connect(ctx context.Context, bucket string) (*Blobs, error) {
	if bucket == "" {
		return nil, errors.New("no snapshot bucket name")
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRetryMaxAttempts(5))
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set AWS_REGION")
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		// BaseEndpoint is set by now from AWS_ENDPOINT_URL(_S3) or the
		// shared config's endpoint_url, if any.
		o.UsePathStyle = o.BaseEndpoint != nil
	})
	return New(client, bucket), nil
}

// Bucket is the bucket's name.
func (b *Blobs) Bucket() string { return b.bucket }

// Get reads key's current version, or opt.Version.
func (b *Blobs) Get(ctx context.Context, key string, opt snapshot.GetOptions) (io.ReadCloser, snapshot.Object, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)}
	if opt.Version != "" {
		in.VersionId = aws.String(opt.Version)
	}
	if opt.IfNoneMatch != "" {
		in.IfNoneMatch = aws.String(opt.IfNoneMatch)
	}
	if opt.Length > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", opt.Offset, opt.Offset+opt.Length-1))
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil {
		what := "reading " + b.name(key)
		if opt.Version != "" {
			what += " version " + opt.Version
		}
		if opt.Length > 0 {
			what += fmt.Sprintf(" bytes %d to %d", opt.Offset, opt.Offset+opt.Length-1)
		}
		return nil, snapshot.Object{}, b.fail(what, err)
	}
	obj := snapshot.Object{ETag: aws.ToString(out.ETag), Version: aws.ToString(out.VersionId), Size: aws.ToInt64(out.ContentLength)}
	if opt.Length <= 0 {
		return out.Body, obj, nil
	}
	// A 206 says the whole size in Content-Range ("bytes 0-9/10"); a server
	// that ignored the range sent the whole object, of which the range is
	// cut here.
	if cr := aws.ToString(out.ContentRange); cr != "" {
		first, total, ok := contentRange(cr)
		if !ok || first != opt.Offset {
			out.Body.Close()
			return nil, snapshot.Object{}, fmt.Errorf("reading %s: asked for bytes from %d, answered %q", b.name(key), opt.Offset, cr)
		}
		obj.Size = total
		return out.Body, obj, nil
	}
	if _, err := io.CopyN(io.Discard, out.Body, opt.Offset); err != nil {
		out.Body.Close()
		return nil, snapshot.Object{}, fmt.Errorf("reading %s up to byte %d: %w", b.name(key), opt.Offset, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(out.Body, opt.Length), out.Body}, obj, nil
}

// contentRange reads "bytes first-last/total".
func contentRange(s string) (first, total int64, ok bool) {
	var last int64
	if _, err := fmt.Sscanf(s, "bytes %d-%d/%d", &first, &last, &total); err != nil || first > last || last >= total {
		return 0, 0, false
	}
	return first, total, true
}

// Put writes body, size bytes, as key's new current version if cond holds.
// The body is sent with its length, and the SDK adds its default checksum
// (a CRC trailer over HTTPS, a header over HTTP), which S3 verifies.
func (b *Blobs) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, cond snapshot.Condition) (snapshot.Object, error) {
	in := &s3.PutObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key), Body: body,
		ContentLength: aws.Int64(size)}
	if cond.IfMatch != "" {
		in.IfMatch = aws.String(cond.IfMatch)
	}
	if cond.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := b.client.PutObject(ctx, in)
	if err != nil {
		return snapshot.Object{}, b.fail("writing "+b.name(key), err)
	}
	return snapshot.Object{ETag: aws.ToString(out.ETag), Version: aws.ToString(out.VersionId), Size: size}, nil
}

// Delete deletes key (DeleteObject, s3:DeleteObject): in the versioned
// bucket, a delete marker, whose versions the lifecycle removes. S3 answers
// a missing key with success.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)}); err != nil {
		return b.fail("deleting "+b.name(key), err)
	}
	return nil
}

// PutStream writes what write writes as key's new current version: in one
// PutObject if it is under one part (snapshot.PartSize), else as a
// multipart upload whose parts go as write fills them, so that nothing
// but one part is held, in memory, and nothing touches the disk. S3 asks
// s3:PutObject of CreateMultipartUpload, UploadPart and
// CompleteMultipartUpload, and s3:AbortMultipartUpload of the abort a
// failed upload ends with ("Multipart upload and permissions",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/mpuoverview.html#mpuAndPermissions).
//
// Each part carries a CRC32, as the SDK's upload manager sends them: the
// upload is created with ChecksumAlgorithm CRC32 and the complete request
// repeats every part's checksum, which S3 requires of an upload created
// with one. An upload created without an algorithm whose parts carry the
// SDK's default CRC32 anyway is refused at CompleteMultipartUpload
// (InvalidPart; aws/aws-sdk-go-v2 issue 3005), so the algorithm is named.
func (b *Blobs) PutStream(ctx context.Context, key string, write func(io.Writer) error) (snapshot.Object, error) {
	return snapshot.UploadParts(ctx, &multipart{b: b, key: key}, snapshot.PartSize, write)
}

// multipart is one streamed upload (snapshot.Multipart).
type multipart struct {
	b     *Blobs
	key   string
	id    *string
	parts []types.CompletedPart
}

func (u *multipart) PutWhole(ctx context.Context, data []byte) (snapshot.Object, error) {
	return u.b.Put(ctx, u.key, bytes.NewReader(data), int64(len(data)), snapshot.Condition{})
}

func (u *multipart) Create(ctx context.Context) error {
	out, err := u.b.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(u.b.bucket),
		Key: aws.String(u.key), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		return u.b.fail("starting a multipart upload of "+u.b.name(u.key), err)
	}
	u.id = out.UploadId
	return nil
}

func (u *multipart) UploadPart(ctx context.Context, n int, data []byte) error {
	out, err := u.b.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(u.b.bucket), Key: aws.String(u.key),
		UploadId: u.id, PartNumber: aws.Int32(int32(n)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err != nil {
		return u.b.fail(fmt.Sprintf("uploading part %d of %s", n, u.b.name(u.key)), err)
	}
	u.parts = append(u.parts, types.CompletedPart{PartNumber: aws.Int32(int32(n)), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
	return nil
}

func (u *multipart) Complete(ctx context.Context) (snapshot.Object, error) {
	out, err := u.b.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(u.b.bucket),
		Key: aws.String(u.key), UploadId: u.id, MultipartUpload: &types.CompletedMultipartUpload{Parts: u.parts}})
	if err != nil {
		return snapshot.Object{}, u.b.fail(fmt.Sprintf("completing the upload of %s (%d parts)", u.b.name(u.key), len(u.parts)), err)
	}
	return snapshot.Object{ETag: aws.ToString(out.ETag), Version: aws.ToString(out.VersionId)}, nil
}

func (u *multipart) Abort(ctx context.Context) error {
	_, err := u.b.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(u.b.bucket),
		Key: aws.String(u.key), UploadId: u.id})
	if err != nil {
		return u.b.fail("aborting the upload of "+u.b.name(u.key), err)
	}
	return nil
}

func (b *Blobs) name(key string) string { return "s3://" + b.bucket + "/" + key }

// fail maps S3's answers to snapshot's errors, keeping the SDK's error in
// the chain for errors.As.
func (b *Blobs) fail(what string, err error) error {
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	switch {
	case status == http.StatusNotModified || code == "NotModified":
		return &mapped{what: what, is: snapshot.ErrNotModified, cause: err}
	case code == "NoSuchKey" || code == "NoSuchVersion" || code == "NotFound" || status == http.StatusNotFound && code != "NoSuchBucket":
		return &mapped{what: what, is: snapshot.ErrNotFound, cause: err}
	case status == http.StatusPreconditionFailed || code == "PreconditionFailed" ||
		code == "ConditionalRequestConflict":
		return &mapped{what: what, is: snapshot.ErrConflict, cause: err}
	case status == http.StatusRequestedRangeNotSatisfiable || code == "InvalidRange":
		return &mapped{what: what, is: snapshot.ErrRange, cause: err}
	case code == "NoSuchBucket":
		return fmt.Errorf("%s: the bucket %s does not exist: %w", what, b.bucket, err)
	case code == "AccessDenied":
		return fmt.Errorf("%s: access denied (the role lacks the right, or the bucket policy refuses it): %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// mapped is one of snapshot's errors for a call, with S3's error as its
// cause: errors.Is finds the former, errors.As the latter.
type mapped struct {
	what  string
	is    error
	cause error
}

func (e *mapped) Error() string {
	switch e.is {
	case snapshot.ErrNotFound:
		return e.what + ": no such object"
	case snapshot.ErrNotModified:
		return e.what + ": not modified"
	case snapshot.ErrRange:
		return e.what + ": the range starts past the object's end"
	default:
		return e.what + ": the object changed since it was read (precondition failed)"
	}
}

func (e *mapped) Unwrap() []error { return []error{e.is, e.cause} }
