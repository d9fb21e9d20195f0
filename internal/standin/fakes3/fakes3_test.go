package fakes3

import (
	"encoding/base64"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// chunked is body as the SDK sends it over HTTPS, with crc as its trailer.
func chunked(body, crc string) string {
	return strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\nx-amz-checksum-crc32:" + crc + "\r\n\r\n"
}

func crc(s string) string {
	h := crc32.NewIEEE()
	h.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

func upload(t *testing.T, srv *httptest.Server, key, wire string, decoded int) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/b/"+key, strings.NewReader(wire))
	req.Header.Set("Content-Encoding", "aws-chunked")
	req.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
	req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(decoded))
	req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestChunkedUpload(t *testing.T) {
	f := New()
	if err := f.CreateBucket("b", true); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	defer srv.Close()

	resp := upload(t, srv, "good", chunked("hello world", crc("hello world")), 11)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upload: %s", resp.Status)
	}
	o, err := f.Backend.GetObject("b", "good", nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(o.Contents)
	if string(data) != "hello world" {
		t.Fatalf("stored %q", data)
	}

	resp = upload(t, srv, "bad", chunked("hello world", crc("something else")), 11)
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "<Code>BadDigest</Code>") {
		t.Fatalf("a wrong trailer checksum: %s %s; want 400 BadDigest", resp.Status, msg)
	}
	resp = upload(t, srv, "short", chunked("hello world", crc("hello world")), 12)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a wrong decoded length: %s; want 400", resp.Status)
	}
	if _, err := f.Backend.HeadObject("b", "bad"); err == nil {
		t.Error("the refused upload was stored")
	}
}
