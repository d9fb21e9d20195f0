package awscheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/internal/standin/iampolicy"
	"github.com/doclib/doclib/shared/backend/s3blobs"
	"github.com/doclib/doclib/shared/backend/snapshot"
)

const (
	bucket    = "doclib-demo-snapshots"
	bucketARN = "arn:aws:s3:::" + bucket
)

// bucketPolicy is what CDK writes for enforceSSL, plus an explicit Deny of
// reads for the Intruder role.
const bucketPolicy = `{"Version": "2012-10-17", "Statement": [
 {"Effect": "Deny", "Principal": {"AWS": "*"}, "Action": "s3:*",
  "Resource": ["` + bucketARN + `", "` + bucketARN + `/*"],
  "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
 {"Effect": "Deny", "Principal": {"AWS": "arn:aws:iam::123456789012:role/Doclib-demo-IntruderRole"},
  "Action": "s3:GetObject", "Resource": "` + bucketARN + `/*"}]}`

func s3Policy(actions ...string) string {
	var objs, bkt []string
	for _, a := range actions {
		if strings.HasPrefix(a, "s3:List") && a != "s3:ListMultipartUploadParts" { // that one is of objects
			bkt = append(bkt, `"`+a+`"`)
		} else {
			objs = append(objs, `"`+a+`"`)
		}
	}
	st := []string{`{"Effect": "Allow", "Action": [` + strings.Join(objs, ",") + `], "Resource": "` + bucketARN + `/*"}`}
	if len(bkt) > 0 {
		st = append(st, `{"Effect": "Allow", "Action": [`+strings.Join(bkt, ",")+`], "Resource": "`+bucketARN+`"}`)
	}
	return `{"Version": "2012-10-17", "Statement": [` + strings.Join(st, ",") + `]}`
}

type s3Env struct {
	*engines
	fake *fakes3.Server
}

// startS3 runs a checker in front of gofakes3 with a versioned bucket and
// bucketPolicy.
func startS3(t *testing.T) *s3Env {
	t.Helper()
	f := fakes3.New()
	if err := f.CreateBucket(bucket, true); err != nil {
		t.Fatal(err)
	}
	e := &engines{hits: map[string]int{}}
	c, err := Start(Config{Account: account, Region: region, S3: f,
		BucketPolicies: map[string]*iampolicy.Policy{bucket: parse(t, bucketPolicy)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e.checker = c
	return &s3Env{e, f}
}

// client is a function's S3 client as s3blobs.Connect builds it: path-style
// and the SDK's default checksums (a CRC32 trailer over HTTPS).
func (e *s3Env) client(t *testing.T, name string, actions ...string) *s3.Client {
	cfg := e.sdkConfig(t, e.checker.Credentials(role(t, name, s3Policy(actions...))))
	cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
	cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
}

func putObject(c *s3.Client, key, body string) (*s3.PutObjectOutput, error) {
	return c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: strings.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
}

func getObject(c *s3.Client, key, version string) (string, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if version != "" {
		in.VersionId = aws.String(version)
	}
	out, err := c.GetObject(context.Background(), in)
	if err != nil {
		return "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), err
}

const key = "snapshots/a key+with=odd chars.snap"

func TestS3AllowedCallsPassThrough(t *testing.T) {
	e := startS3(t)
	indexer := e.client(t, "IndexerRole", "s3:GetObject", "s3:PutObject", "s3:ListBucket")
	out, err := putObject(indexer, key, "the snapshot")
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	if aws.ToString(out.VersionId) == "" {
		t.Error("PutObject answered no version ID: the bucket is versioned")
	}
	obj, err := e.fake.Backend.GetObject(bucket, key, nil)
	if err != nil {
		t.Fatalf("the object did not reach gofakes3: %v", err)
	}
	stored, _ := io.ReadAll(obj.Contents)
	if string(stored) != "the snapshot" {
		t.Fatalf("gofakes3 stored %q", stored)
	}
	if got, err := getObject(indexer, key, ""); err != nil || got != "the snapshot" {
		t.Fatalf("GetObject: %q %v", got, err)
	}
	list, err := indexer.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("snapshots/")})
	if err != nil || len(list.Contents) != 1 {
		t.Fatalf("ListObjectsV2: %v %v", list, err)
	}
	// The bucket policy's Deny on aws:SecureTransport=false did not fire:
	// the checker is HTTPS.
	if d := e.denials(); len(d) != 0 {
		t.Errorf("denials %+v", d)
	}
}

func TestS3Denials(t *testing.T) {
	e := startS3(t)
	indexer := e.client(t, "IndexerRole", "s3:GetObject", "s3:PutObject", "s3:ListBucket")
	first, err := putObject(indexer, key, "first")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putObject(indexer, key, "second"); err != nil {
		t.Fatal(err)
	}

	// A reader may not write.
	reader := e.client(t, "SearchRole", "s3:GetObject", "s3:ListBucket")
	_, err = putObject(reader, key, "overwrite")
	code, msg, status := sdkError(t, err)
	if code != "AccessDenied" || status != 403 || !strings.Contains(msg, "s3:PutObject") || !strings.Contains(msg, bucketARN+"/"+key) {
		t.Errorf("PutObject without s3:PutObject: %d %s %s", status, code, msg)
	}
	// GetObjectVersion is its own action.
	if got, err := getObject(reader, key, ""); err != nil || got != "second" {
		t.Fatalf("GetObject: %q %v", got, err)
	}
	_, err = getObject(reader, key, aws.ToString(first.VersionId))
	if code, msg, status := sdkError(t, err); code != "AccessDenied" || status != 403 || !strings.Contains(msg, "s3:GetObjectVersion") {
		t.Errorf("GetObject by version without s3:GetObjectVersion: %d %s %s", status, code, msg)
	}
	versioned := e.client(t, "SearchRole", "s3:GetObject", "s3:GetObjectVersion", "s3:ListBucket")
	if got, err := getObject(versioned, key, aws.ToString(first.VersionId)); err != nil || got != "first" {
		t.Fatalf("GetObject by version: %q %v", got, err)
	}
	// The bucket policy's explicit Deny wins over the identity's Allow.
	intruder := e.client(t, "IntruderRole", "s3:GetObject", "s3:ListBucket")
	_, err = getObject(intruder, key, "")
	if code, _, status := sdkError(t, err); code != "AccessDenied" || status != 403 {
		t.Errorf("GetObject denied by the bucket policy: %d %s", status, code)
	}

	d := e.denials()
	if len(d) != 3 {
		t.Fatalf("denials %+v", d)
	}
	if d[0].Action != "s3:PutObject" || d[0].Resource != bucketARN+"/"+key || !strings.Contains(d[0].Principal, "assumed-role/Doclib-demo-SearchRole/") {
		t.Errorf("denial %+v", d[0])
	}
	if d[1].Action != "s3:GetObjectVersion" {
		t.Errorf("denial %+v", d[1])
	}
	if d[2].Action != "s3:GetObject" || !strings.Contains(d[2].Reason, "explicit deny") {
		t.Errorf("denial %+v", d[2])
	}
}

// A missing key is 404 NoSuchKey to a caller that may list the bucket and
// 403 AccessDenied to one that may not, as S3 answers.
func TestS3MissingKey(t *testing.T) {
	e := startS3(t)
	lister := e.client(t, "SearchRole", "s3:GetObject", "s3:ListBucket")
	blind := e.client(t, "BlindRole", "s3:GetObject")
	ctx := context.Background()
	head := func(c *s3.Client) error {
		_, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("snapshots/current.json")})
		return err
	}

	_, err := getObject(lister, "snapshots/current.json", "")
	if code, _, status := sdkError(t, err); code != "NoSuchKey" || status != 404 {
		t.Errorf("GetObject with s3:ListBucket: %d %s; want 404 NoSuchKey", status, code)
	}
	if _, _, status := sdkError(t, head(lister)); status != 404 {
		t.Errorf("HeadObject with s3:ListBucket: %d; want 404", status)
	}
	if d := e.denials(); len(d) != 0 {
		t.Fatalf("denials %+v", d)
	}
	_, err = getObject(blind, "snapshots/current.json", "")
	if code, msg, status := sdkError(t, err); code != "AccessDenied" || status != 403 || !strings.Contains(msg, "s3:ListBucket") {
		t.Errorf("GetObject without s3:ListBucket: %d %s %s; want 403 AccessDenied", status, code, msg)
	}
	if _, _, status := sdkError(t, head(blind)); status != 403 {
		t.Errorf("HeadObject without s3:ListBucket: %d; want 403", status)
	}
	if d := e.denials(); len(d) != 2 || d[0].Action != "s3:ListBucket" || d[0].Resource != bucketARN {
		t.Errorf("denials %+v", d)
	}
	// An object that exists is read without s3:ListBucket.
	if _, err := putObject(e.client(t, "IndexerRole", "s3:PutObject"), "k", "v"); err != nil {
		t.Fatal(err)
	}
	if got, err := getObject(blind, "k", ""); err != nil || got != "v" {
		t.Errorf("GetObject of an existing key without s3:ListBucket: %q %v", got, err)
	}
}

// signedPut sends a PutObject signed by hand with x-amz-content-sha256 the
// hex hash of signedBody, and sentBody as the body.
func signedPut(t *testing.T, e *s3Env, creds Credentials, signedBody, sentBody string) *http.Response {
	t.Helper()
	sum := sha256.Sum256([]byte(signedBody))
	hash := hex.EncodeToString(sum[:])
	req, _ := http.NewRequest(http.MethodPut, e.checker.URL()+"/"+bucket+"/hashed", bytes.NewReader([]byte(sentBody)))
	req.Header.Set("X-Amz-Content-Sha256", hash)
	req.Header.Set("X-Amz-Security-Token", creds.SessionToken)
	err := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }).SignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, SessionToken: creds.SessionToken},
		req, hash, "s3", region, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestS3PayloadHash(t *testing.T) {
	e := startS3(t)
	creds := e.checker.Credentials(role(t, "IndexerRole", s3Policy("s3:PutObject")))
	resp := signedPut(t, e, creds, "hashed body", "hashed body")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PutObject with a hex payload hash: %s", resp.Status)
	}
	resp = signedPut(t, e, creds, "hashed body", "another body")
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "<Code>XAmzContentSHA256Mismatch</Code>") {
		t.Fatalf("a body that does not match its hash: %s %s", resp.Status, msg)
	}
}

func TestS3UnknownOperations(t *testing.T) {
	e := startS3(t)
	c := e.client(t, "IndexerRole", "s3:*")
	_, err := c.ListBuckets(context.Background(), &s3.ListBucketsInput{})
	if code, _, status := sdkError(t, err); code != "NotImplemented" || status != 501 {
		t.Errorf("ListBuckets: %d %s", status, code)
	}
	_, err = c.GetObjectAcl(context.Background(), &s3.GetObjectAclInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if code, _, status := sdkError(t, err); code != "NotImplemented" || status != 501 {
		t.Errorf("GetObjectAcl: %d %s", status, code)
	}
	// Virtual-hosted addressing is refused, clearly.
	vh := s3.NewFromConfig(e.sdkConfig(t, e.checker.Credentials(role(t, "IndexerRole", s3Policy("s3:GetObject")))))
	_, err = vh.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err == nil {
		t.Error("a virtual-hosted GetObject succeeded")
	}
}

// TestS3Multipart: the multipart calls ask the actions S3 asks of them.
// s3:PutObject covers creating, uploading parts and completing; aborting
// is s3:AbortMultipartUpload and listing parts s3:ListMultipartUploadParts,
// so that a role with s3:PutObject alone can start an upload it cannot
// clean up after.
func TestS3Multipart(t *testing.T) {
	e := startS3(t)
	ctx := context.Background()
	// in creates an upload as s3blobs does and uploads its one part.
	in := func(c *s3.Client) (*string, types.CompletedPart, error) {
		out, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			return nil, types.CompletedPart{}, err
		}
		part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: out.UploadId,
			PartNumber: aws.Int32(1), Body: strings.NewReader("one part"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			return nil, types.CompletedPart{}, err
		}
		return out.UploadId, types.CompletedPart{PartNumber: aws.Int32(1), ETag: part.ETag, ChecksumCRC32: part.ChecksumCRC32}, nil
	}
	writer := e.client(t, "IndexerRole", "s3:PutObject")
	id, _, err := in(writer)
	if err != nil {
		t.Fatalf("create and upload a part with s3:PutObject: %v", err)
	}
	_, err = writer.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: id})
	if code, msg, status := sdkError(t, err); code != "AccessDenied" || status != 403 || !strings.Contains(msg, "s3:ListMultipartUploadParts") {
		t.Errorf("ListParts without s3:ListMultipartUploadParts: %d %s %s", status, code, msg)
	}
	_, err = writer.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: id})
	if code, msg, status := sdkError(t, err); code != "AccessDenied" || status != 403 || !strings.Contains(msg, "s3:AbortMultipartUpload") ||
		!strings.Contains(msg, bucketARN+"/"+key) {
		t.Errorf("AbortMultipartUpload without s3:AbortMultipartUpload: %d %s %s", status, code, msg)
	}
	_, err = writer.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if code, msg, status := sdkError(t, err); code != "AccessDenied" || status != 403 || !strings.Contains(msg, "s3:ListBucketMultipartUploads") {
		t.Errorf("ListMultipartUploads without s3:ListBucketMultipartUploads: %d %s %s", status, code, msg)
	}

	indexer := e.client(t, "IndexerRole", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")
	if _, err := indexer.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: id}); err != nil {
		t.Errorf("ListParts: %v", err)
	}
	if _, err := indexer.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: id}); err != nil {
		t.Errorf("AbortMultipartUpload: %v", err)
	}
	id, part, err := in(indexer)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := indexer.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: id})
	if err != nil || len(parts.Parts) != 1 {
		t.Fatalf("ListParts: %v %v", parts, err)
	}
	done, err := indexer.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{part}}})
	if err != nil || aws.ToString(done.VersionId) == "" {
		t.Fatalf("CompleteMultipartUpload with s3:PutObject: %v %v", done, err)
	}
	if d := e.denials(); len(d) != 3 || d[0].Action != "s3:ListMultipartUploadParts" || d[1].Action != "s3:AbortMultipartUpload" ||
		d[2].Action != "s3:ListBucketMultipartUploads" || d[2].Resource != bucketARN {
		t.Errorf("denials %+v", d)
	}
}

// TestS3StreamedSnapshot: the indexer's streamed snapshot (s3blobs.PutStream,
// a multipart upload of three parts) through the checker with the actions
// the stack grants it (infra/stack/snapshots.go). A failed write aborts its
// upload; without s3:AbortMultipartUpload the abort is denied and the
// upload's parts stay behind for the bucket's lifecycle rule.
func TestS3StreamedSnapshot(t *testing.T) {
	e := startS3(t)
	ctx := context.Background()
	granted := []string{"s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListBucket"}
	body := bytes.Repeat([]byte("snapshot"), (2*snapshot.PartSize+snapshot.PartSize/2)/8)
	write := func(fail error) func(io.Writer) error {
		return func(w io.Writer) error {
			if _, err := w.Write(body); err != nil {
				return err
			}
			return fail
		}
	}
	lister := e.client(t, "OperatorRole", "s3:GetObject", "s3:ListBucketMultipartUploads")
	open := func() int {
		out, err := lister.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}

	indexer := s3blobs.New(e.client(t, "IndexerRole", granted...), bucket)
	obj, err := indexer.PutStream(ctx, snapshot.SnapshotKey, write(nil))
	if err != nil || obj.Version == "" || !strings.HasSuffix(obj.ETag, `-3"`) {
		t.Fatalf("PutStream of %d bytes: %+v %v; want a new version of three parts", len(body), obj, err)
	}
	broken := errors.New("the encoder failed")
	if _, err := indexer.PutStream(ctx, snapshot.SnapshotKey, write(broken)); !errors.Is(err, broken) {
		t.Fatalf("a failed write: %v", err)
	}
	if n := open(); n != 0 {
		t.Errorf("%d uploads left after a failed write; want it aborted", n)
	}

	noAbort := s3blobs.New(e.client(t, "IndexerRole", "s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:ListBucket"), bucket)
	_, err = noAbort.PutStream(ctx, snapshot.SnapshotKey, write(broken))
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "s3:AbortMultipartUpload") {
		t.Errorf("a failed write without s3:AbortMultipartUpload: %v; want the abort's denial told", err)
	}
	if n := open(); n != 1 {
		t.Errorf("%d uploads left; want the one whose abort was denied", n)
	}
	if d := e.denials(); len(d) != 1 || d[0].Action != "s3:AbortMultipartUpload" {
		t.Errorf("denials %+v; want the one abort", d)
	}
}

// TestS3DeleteRetiredSegments: the indexer's delete right, as the stack
// grants it (s3:DeleteObject on snapshots/segments/* only), lets it delete a
// retired segment through s3blobs, and not the manifest.
func TestS3DeleteRetiredSegments(t *testing.T) {
	e := startS3(t)
	policy := `{"Version": "2012-10-17", "Statement": [
 {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": "` + bucketARN + `/snapshots/*"},
 {"Effect": "Allow", "Action": "s3:DeleteObject", "Resource": "` + bucketARN + `/snapshots/segments/*"},
 {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "` + bucketARN + `"}]}`
	cfg := e.sdkConfig(t, e.checker.Credentials(role(t, "IndexerRole", policy)))
	blobs := s3blobs.New(s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }), bucket)
	ctx := context.Background()
	for _, k := range []string{snapshot.SegmentPrefix + "a.seg", snapshot.ManifestKey} {
		if _, err := blobs.Put(ctx, k, strings.NewReader("x"), 1, snapshot.Condition{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := blobs.Delete(ctx, snapshot.SegmentPrefix+"a.seg"); err != nil {
		t.Fatalf("deleting a segment: %v", err)
	}
	if _, _, err := blobs.Get(ctx, snapshot.SegmentPrefix+"a.seg", snapshot.GetOptions{}); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("the deleted segment: %v; want ErrNotFound", err)
	}
	err := blobs.Delete(ctx, snapshot.ManifestKey)
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("deleting the manifest: %v; want AccessDenied", err)
	}
	if d := e.denials(); len(d) != 1 || d[0].Action != "s3:DeleteObject" || d[0].Resource != bucketARN+"/"+snapshot.ManifestKey {
		t.Fatalf("denials %+v", d)
	}
}
