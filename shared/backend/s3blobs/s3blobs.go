// Package s3blobs is snapshot.Blobs over an S3 bucket (versioning on): the
// embedded search tier's snapshots and their pointer live there.
package s3blobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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
	out, err := b.client.GetObject(ctx, in)
	if err != nil {
		what := "reading " + b.name(key)
		if opt.Version != "" {
			what += " version " + opt.Version
		}
		return nil, snapshot.Object{}, b.fail(what, err)
	}
	return out.Body, snapshot.Object{ETag: aws.ToString(out.ETag), Version: aws.ToString(out.VersionId),
		Size: aws.ToInt64(out.ContentLength)}, nil
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
	default:
		return e.what + ": the object changed since it was read (precondition failed)"
	}
}

func (e *mapped) Unwrap() []error { return []error{e.is, e.cause} }
