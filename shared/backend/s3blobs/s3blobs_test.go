package s3blobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/shared/backend/snapshot"
)

const bucket = "doclib-snapshots"

// fake starts gofakes3 with a versioned bucket, over HTTPS when tls (the
// SDK then sends PutObject's body aws-chunked with a checksum trailer and
// x-amz-content-sha256 STREAMING-UNSIGNED-PAYLOAD-TRAILER) or plain HTTP
// (the body's SHA-256 in hex and a checksum header).
func fake(t *testing.T, tls bool) (*Blobs, *s3mem.Backend) {
	t.Helper()
	return fakeBehind(t, tls, nil)
}

// fakeBehind is fake with front, when not nil, answering every request
// before the fake does: true when it answered.
func fakeBehind(t *testing.T, tls bool, front func(http.ResponseWriter, *http.Request) bool) (*Blobs, *s3mem.Backend) {
	t.Helper()
	f := fakes3.New()
	if err := f.CreateBucket(bucket, true); err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if front == nil || !front(w, r) {
			f.ServeHTTP(w, r)
		}
	})
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	client := s3.New(s3.Options{
		Region: "us-east-1",
		// What config.LoadDefaultConfig gives by default: a CRC32 of every
		// upload, as a trailer over HTTPS.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported,
		BaseEndpoint:               aws.String(srv.URL),
		UsePathStyle:               true,
		HTTPClient:                 srv.Client(),
		Credentials:                credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	})
	return New(client, bucket), f.Backend
}

func put(t *testing.T, b *Blobs, key, body string, cond snapshot.Condition) snapshot.Object {
	t.Helper()
	o, err := b.Put(context.Background(), key, strings.NewReader(body), int64(len(body)), cond)
	if err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
	if o.ETag == "" || o.Version == "" || o.Size != int64(len(body)) {
		t.Fatalf("Put %s answered %+v: want an ETag, a version and size %d", key, o, len(body))
	}
	return o
}

func get(t *testing.T, b *Blobs, key string, opt snapshot.GetOptions) (string, snapshot.Object, error) {
	t.Helper()
	rc, o, err := b.Get(context.Background(), key, opt)
	if err != nil {
		return "", o, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return string(data), o, nil
}

func both(t *testing.T, f func(t *testing.T, tls bool)) {
	t.Run("https", func(t *testing.T) { f(t, true) })
	t.Run("http", func(t *testing.T) { f(t, false) })
}

func TestRoundTripAndVersions(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		first := put(t, b, "snapshots/index.snap", "first snapshot", snapshot.Condition{})
		second := put(t, b, "snapshots/index.snap", "second, longer snapshot", snapshot.Condition{})
		if first.Version == second.Version {
			t.Fatalf("two puts share version %s", first.Version)
		}
		body, o, err := get(t, b, "snapshots/index.snap", snapshot.GetOptions{})
		if err != nil || body != "second, longer snapshot" || o.ETag != second.ETag || o.Version != second.Version || o.Size != int64(len(body)) {
			t.Fatalf("current version: %q %+v %v; want the second put %+v", body, o, err, second)
		}
		body, o, err = get(t, b, "snapshots/index.snap", snapshot.GetOptions{Version: first.Version})
		if err != nil || body != "first snapshot" || o.Version != first.Version {
			t.Fatalf("version %s: %q %+v %v; want the first put's bytes", first.Version, body, o, err)
		}
	})
}

func TestLargeBody(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		data := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB, several chunks
		if _, err := b.Put(context.Background(), "big", bytes.NewReader(data), int64(len(data)), snapshot.Condition{}); err != nil {
			t.Fatal(err)
		}
		body, _, err := get(t, b, "big", snapshot.GetOptions{})
		if err != nil || body != string(data) {
			t.Fatalf("read back %d bytes, err %v; want the %d written", len(body), err, len(data))
		}
	})
}

func TestIfNoneMatch(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		o := put(t, b, "snapshots/current.json", `{"version":"1"}`, snapshot.Condition{IfNoneMatch: true})
		_, _, err := get(t, b, "snapshots/current.json", snapshot.GetOptions{IfNoneMatch: o.ETag})
		if !errors.Is(err, snapshot.ErrNotModified) {
			t.Fatalf("Get with the current ETag: %v; want ErrNotModified", err)
		}
		n := put(t, b, "snapshots/current.json", `{"version":"2"}`, snapshot.Condition{IfMatch: o.ETag})
		body, got, err := get(t, b, "snapshots/current.json", snapshot.GetOptions{IfNoneMatch: o.ETag})
		if err != nil || body != `{"version":"2"}` || got.ETag != n.ETag {
			t.Fatalf("Get with a stale ETag: %q %+v %v; want the new pointer", body, got, err)
		}
	})
}

func TestConditionalPuts(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		o := put(t, b, "snapshots/current.json", "one", snapshot.Condition{IfNoneMatch: true})
		put(t, b, "snapshots/current.json", "two", snapshot.Condition{IfMatch: o.ETag})

		_, err := b.Put(context.Background(), "snapshots/current.json", strings.NewReader("three"), 5, snapshot.Condition{IfMatch: o.ETag})
		if !errors.Is(err, snapshot.ErrConflict) {
			t.Fatalf("Put If-Match a stale ETag: %v; want ErrConflict", err)
		}
		_, err = b.Put(context.Background(), "snapshots/current.json", strings.NewReader("four"), 4, snapshot.Condition{IfNoneMatch: true})
		if !errors.Is(err, snapshot.ErrConflict) {
			t.Fatalf("Put If-None-Match * on an existing key: %v; want ErrConflict", err)
		}
		if !strings.Contains(err.Error(), "s3://"+bucket+"/snapshots/current.json") {
			t.Errorf("message %q does not name the object", err)
		}
		body, _, err := get(t, b, "snapshots/current.json", snapshot.GetOptions{})
		if err != nil || body != "two" {
			t.Fatalf("after the refused puts: %q %v; want the last accepted one", body, err)
		}
	})
}

func TestNotFound(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		_, _, err := get(t, b, "snapshots/current.json", snapshot.GetOptions{})
		if !errors.Is(err, snapshot.ErrNotFound) {
			t.Fatalf("missing key: %v; want ErrNotFound", err)
		}
		put(t, b, "snapshots/index.snap", "x", snapshot.Condition{})
		_, _, err = get(t, b, "snapshots/index.snap", snapshot.GetOptions{Version: "3HL4kqtJvjVBH40Nrjfkd"})
		if !errors.Is(err, snapshot.ErrNotFound) {
			t.Fatalf("missing version: %v; want ErrNotFound", err)
		}
	})
}

func TestOtherErrorsAreWrapped(t *testing.T) {
	b, _ := fake(t, false)
	other := New(b.client, "no-such-bucket")
	_, _, err := other.Get(context.Background(), "k", snapshot.GetOptions{})
	if err == nil || errors.Is(err, snapshot.ErrNotFound) || !strings.Contains(err.Error(), "no-such-bucket") {
		t.Fatalf("missing bucket: %v; want an error naming the bucket, not ErrNotFound", err)
	}
}

// TestStoredBytes reads what the fake stored behind the API: the upload's
// bytes, not the aws-chunked framing it travelled in.
func TestStoredBytes(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, backend := fake(t, tls)
		put(t, b, "k", "hello", snapshot.Condition{})
		o, err := backend.GetObject(bucket, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Contents.Close()
		data, _ := io.ReadAll(o.Contents)
		if string(data) != "hello" {
			t.Fatalf("stored %q; want %q", data, "hello")
		}
	})
}

// TestConnectPathStyle: with AWS_ENDPOINT_URL set, Connect addresses the
// bucket in the path, which a local endpoint needs (it has no bucket
// subdomains: virtual-hosted style would ask doclib-snapshots.127.0.0.1).
func TestConnectPathStyle(t *testing.T) {
	f := fakes3.New()
	if err := f.CreateBucket(bucket, true); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	b, err := Connect(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	if !b.client.Options().UsePathStyle {
		t.Error("Connect with AWS_ENDPOINT_URL did not choose path-style addressing")
	}
	put(t, b, "k", "v", snapshot.Condition{})
	if body, _, err := get(t, b, "k", snapshot.GetOptions{}); err != nil || body != "v" {
		t.Fatalf("read back %q %v", body, err)
	}

	t.Setenv("AWS_ENDPOINT_URL", "")
	os.Unsetenv("AWS_ENDPOINT_URL")
	b, err = Connect(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	if b.client.Options().UsePathStyle {
		t.Error("Connect without an endpoint chose path-style addressing; AWS wants virtual-hosted style")
	}
}

// stream writes data to w in pieces of odd sizes, as an encoder does.
func stream(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		for len(data) > 0 {
			n := min(len(data), 1<<20+17)
			if _, err := w.Write(data[:n]); err != nil {
				return err
			}
			data = data[n:]
		}
		return nil
	}
}

// openUploads lists the multipart uploads S3 still holds parts of.
func openUploads(t *testing.T, b *Blobs) int {
	t.Helper()
	out, err := b.client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Uploads)
}

// TestPutStream: a body over one part goes as a multipart upload (its ETag
// is S3's "<digest>-<parts>") that the fake's S3 checks accept: parts but
// the last of snapshot.PartSize, each part's CRC32 repeated in the
// complete request. It lands whole as a new version; a body under one
// part goes in one PutObject.
func TestPutStream(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		ctx := context.Background()
		data := bytes.Repeat([]byte("0123456789abcdef"), (2*snapshot.PartSize+snapshot.PartSize/2)/16)
		first := put(t, b, snapshot.SnapshotKey, "the old one", snapshot.Condition{})
		o, err := b.PutStream(ctx, snapshot.SnapshotKey, stream(data))
		if err != nil {
			t.Fatalf("PutStream of %d bytes: %v", len(data), err)
		}
		if !strings.HasSuffix(o.ETag, `-3"`) || o.Version == "" || o.Version == first.Version || o.Size != int64(len(data)) {
			t.Fatalf("PutStream answered %+v; want a 3-part ETag, a new version and size %d", o, len(data))
		}
		body, got, err := get(t, b, snapshot.SnapshotKey, snapshot.GetOptions{Version: o.Version})
		if err != nil || body != string(data) || got.Version != o.Version {
			t.Fatalf("read back %d bytes %+v %v; want the %d streamed", len(body), got, err, len(data))
		}
		if n := openUploads(t, b); n != 0 {
			t.Errorf("%d multipart uploads left open", n)
		}

		small, err := b.PutStream(ctx, snapshot.SnapshotKey, stream([]byte("a small snapshot")))
		if err != nil || strings.Contains(small.ETag, "-") || small.Size != 16 {
			t.Fatalf("PutStream of 16 bytes: %+v %v; want one PutObject's ETag", small, err)
		}
		if body, _, _ := get(t, b, snapshot.SnapshotKey, snapshot.GetOptions{}); body != "a small snapshot" {
			t.Fatalf("current version %q", body)
		}
	})
}

// TestPutStreamAborts: a write that fails after two parts were uploaded
// fails the PutStream with its error, aborts the upload (S3 holds no
// parts of it) and leaves the current version as it was.
func TestPutStreamAborts(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		ctx := context.Background()
		put(t, b, snapshot.SnapshotKey, "the last good one", snapshot.Condition{})
		broken := errors.New("the encoder failed")
		var parts int
		_, err := b.PutStream(ctx, snapshot.SnapshotKey, func(w io.Writer) error {
			if err := stream(bytes.Repeat([]byte{7}, 2*snapshot.PartSize+1))(w); err != nil {
				return err
			}
			// Two full parts went up when the third began; S3 holds them.
			parts = openUploads(t, b)
			return broken
		})
		if !errors.Is(err, broken) {
			t.Fatalf("PutStream: %v; want the write's error", err)
		}
		if parts != 1 {
			t.Fatalf("%d uploads open mid-write; want the one under way", parts)
		}
		if n := openUploads(t, b); n != 0 {
			t.Errorf("%d multipart uploads left after the failure: not aborted", n)
		}
		if body, _, _ := get(t, b, snapshot.SnapshotKey, snapshot.GetOptions{}); body != "the last good one" {
			t.Errorf("current version %q after a failed PutStream", body)
		}
	})
}

// TestPutStreamAbortsFailedPart: an UploadPart that S3 refuses fails the
// PutStream and aborts the upload: S3 lists none in progress afterwards.
func TestPutStreamAbortsFailedPart(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fakeBehind(t, tls, func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Query().Get("partNumber") != "2" {
				return false
			}
			_, _ = io.Copy(io.Discard, r.Body) // read it all, as S3 does before it answers
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `<Error><Code>AccessDenied</Code><Message>no</Message></Error>`)
			return true
		})
		put(t, b, snapshot.SnapshotKey, "the last good one", snapshot.Condition{})
		_, err := b.PutStream(context.Background(), snapshot.SnapshotKey, stream(bytes.Repeat([]byte{7}, 2*snapshot.PartSize+1)))
		if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
			t.Fatalf("PutStream with part 2 refused: %v; want AccessDenied", err)
		}
		if n := openUploads(t, b); n != 0 {
			t.Errorf("%d multipart uploads left after the refused part: not aborted", n)
		}
		if body, _, _ := get(t, b, snapshot.SnapshotKey, snapshot.GetOptions{}); body != "the last good one" {
			t.Errorf("current version %q after a failed PutStream", body)
		}
	})
}

// TestDelete: a deleted key is not found, its version is still readable by
// ID (a delete marker in the versioned bucket), and deleting a missing key
// succeeds, as S3 answers it.
func TestDelete(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		b, _ := fake(t, tls)
		ctx := context.Background()
		v := put(t, b, "snapshots/segments/a.seg", "a segment", snapshot.Condition{})
		if err := b.Delete(ctx, "snapshots/segments/a.seg"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := get(t, b, "snapshots/segments/a.seg", snapshot.GetOptions{}); !errors.Is(err, snapshot.ErrNotFound) {
			t.Fatalf("a deleted key: %v; want ErrNotFound", err)
		}
		if body, _, err := get(t, b, "snapshots/segments/a.seg", snapshot.GetOptions{Version: v.Version}); err != nil || body != "a segment" {
			t.Fatalf("the deleted key's version: %q %v", body, err)
		}
		if err := b.Delete(ctx, "snapshots/segments/never.seg"); err != nil {
			t.Fatalf("deleting a missing key: %v", err)
		}
	})
}

// TestRangedReads reads byte ranges through the SDK from the stand-in's
// S3, which serves Range as S3 does: the bytes asked for, fewer at the
// end, the whole object's size from Content-Range, a version's bytes after
// the key is deleted, ErrRange past the end; and the whole object is cut
// to the range if a server ignores it.
func TestRangedReads(t *testing.T) {
	both(t, func(t *testing.T, tls bool) {
		ignore, asked := false, ""
		b, _ := fakeBehind(t, tls, func(w http.ResponseWriter, r *http.Request) bool {
			asked = r.Header.Get("Range")
			if ignore {
				r.Header.Del("Range")
			}
			return false
		})
		body := strings.Repeat("0123456789", 1000)
		first := put(t, b, "snapshots/segments/s.seg", body, snapshot.Condition{})
		for _, tc := range []struct {
			offset, n int64
			want      string
		}{{3, 4, "3456"}, {9_998, 10, "89"}, {0, 1, "0"}} {
			for _, ignored := range []bool{false, true} {
				ignore = ignored
				got, o, err := get(t, b, "snapshots/segments/s.seg", snapshot.GetOptions{Offset: tc.offset, Length: tc.n})
				if err != nil || got != tc.want || o.Size != int64(len(body)) || o.Version != first.Version {
					t.Errorf("bytes %d+%d (range ignored %v): %q %+v %v; want %q of %d bytes", tc.offset, tc.n, ignored, got, o, err, tc.want, len(body))
				}
				if want := fmt.Sprintf("bytes=%d-%d", tc.offset, tc.offset+tc.n-1); asked != want {
					t.Errorf("asked for %q, want %q", asked, want)
				}
			}
		}
		ignore = false
		if _, _, err := get(t, b, "snapshots/segments/s.seg", snapshot.GetOptions{Offset: 10_000, Length: 1}); !errors.Is(err, snapshot.ErrRange) {
			t.Errorf("past the end: %v, want ErrRange", err)
		}
		if err := b.Delete(context.Background(), "snapshots/segments/s.seg"); err != nil {
			t.Fatal(err)
		}
		if got, _, err := get(t, b, "snapshots/segments/s.seg", snapshot.GetOptions{Version: first.Version, Offset: 5, Length: 2}); err != nil || got != "56" {
			t.Errorf("a version of a deleted key: %q %v", got, err)
		}
		if _, _, err := get(t, b, "snapshots/segments/s.seg", snapshot.GetOptions{Offset: 5, Length: 2}); !errors.Is(err, snapshot.ErrNotFound) {
			t.Errorf("the deleted key: %v, want ErrNotFound", err)
		}
	})
}
