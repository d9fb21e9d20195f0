package fakes3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// mpu is one multipart upload through the SDK, as s3blobs makes them.
type mpu struct {
	t      *testing.T
	c      *s3.Client
	id     *string
	parts  []types.CompletedPart
	noSums bool // leave the parts' checksums out of the complete request
}

func create(t *testing.T, c *s3.Client, alg types.ChecksumAlgorithm) *mpu {
	t.Helper()
	out, err := c.CreateMultipartUpload(context.Background(), &s3.CreateMultipartUploadInput{Bucket: aws.String("b"),
		Key: aws.String("k"), ChecksumAlgorithm: alg})
	if err != nil {
		t.Fatal(err)
	}
	return &mpu{t: t, c: c, id: out.UploadId}
}

func (u *mpu) part(data []byte) {
	u.t.Helper()
	n := int32(len(u.parts) + 1)
	out, err := u.c.UploadPart(context.Background(), &s3.UploadPartInput{Bucket: aws.String("b"), Key: aws.String("k"),
		UploadId: u.id, PartNumber: aws.Int32(n), Body: bytes.NewReader(data)})
	if err != nil {
		u.t.Fatal(err)
	}
	u.parts = append(u.parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
}

func (u *mpu) complete() (*s3.CompleteMultipartUploadOutput, error) {
	parts := u.parts
	if u.noSums {
		parts = nil
		for _, p := range u.parts {
			parts = append(parts, types.CompletedPart{PartNumber: p.PartNumber, ETag: p.ETag})
		}
	}
	return u.c.CompleteMultipartUpload(context.Background(), &s3.CompleteMultipartUploadInput{Bucket: aws.String("b"),
		Key: aws.String("k"), UploadId: u.id, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestMultipart: the SDK's multipart calls against what S3 refuses and
// keeps. The object a completed upload makes answers its composite
// checksum, not the CRC32 of the version before it (s3mem would carry that
// over), so that the SDK reads it back; an aborted upload is gone.
func TestMultipart(t *testing.T) {
	f := New()
	if err := f.CreateBucket("b", true); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(f)
	defer srv.Close()
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true, HTTPClient: srv.Client(),
		Credentials:                credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported})
	ctx := context.Background()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("k"), Body: strings.NewReader("old")}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte{'a'}, minPart)

	small := create(t, c, types.ChecksumAlgorithmCrc32)
	small.part([]byte("too small"))
	small.part([]byte("last"))
	if _, err := small.complete(); code(err) != "EntityTooSmall" {
		t.Errorf("a first part under 5 MiB: %v; want EntityTooSmall", err)
	}

	bare := create(t, c, types.ChecksumAlgorithmCrc32)
	bare.part(big)
	bare.noSums = true
	if _, err := bare.complete(); code(err) != "InvalidRequest" {
		t.Errorf("a complete request without the parts' CRC32s: %v; want InvalidRequest", err)
	}

	unnamed := create(t, c, "")
	unnamed.part(big) // the SDK adds its CRC32 all the same
	if _, err := unnamed.complete(); code(err) != "InvalidPart" {
		t.Errorf("checksummed parts of an upload created without an algorithm: %v; want InvalidPart", err)
	}

	good := create(t, c, types.ChecksumAlgorithmCrc32)
	good.part(big)
	good.part([]byte("tail"))
	out, err := good.complete()
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k"), VersionId: out.VersionId,
		ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(got.Body)
	got.Body.Close()
	if err != nil || len(body) != minPart+4 || !strings.HasSuffix(aws.ToString(got.ChecksumCRC32), "-2") ||
		got.ChecksumType != types.ChecksumTypeComposite {
		t.Errorf("read back %d bytes (%v), CRC32 %q type %q; want %d and a composite checksum of 2 parts",
			len(body), err, aws.ToString(got.ChecksumCRC32), got.ChecksumType, minPart+4)
	}

	for _, u := range []*mpu{small, bare, unnamed} {
		if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String("b"), Key: aws.String("k"), UploadId: u.id}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("b")})
	if err != nil || len(list.Uploads) != 0 || len(f.uploads.m) != 0 {
		t.Errorf("after aborting the rest: %d uploads listed (%v), %d held; want none", len(list.Uploads), err, len(f.uploads.m))
	}
}
