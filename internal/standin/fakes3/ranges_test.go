package fakes3

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRangesAsS3 reads byte ranges of an object (uploaded with a CRC32
// trailer, as the SDK does, so that the fake keeps a whole-object
// checksum) and of an empty one, and gets what S3 answers: 206 with
// Content-Range and no whole-object checksum for a satisfiable range, the
// whole object with 200 for a Range S3 ignores, 416 InvalidRange with
// "bytes */size" for one it cannot satisfy, and the version asked for.
func TestRangesAsS3(t *testing.T) {
	f := New()
	if err := f.CreateBucket("b", true); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	const body = "0123456789"
	resp := upload(t, srv, "obj", chunked(body, crc(body)), len(body))
	resp.Body.Close()
	first := resp.Header.Get("X-Amz-Version-Id")
	resp = upload(t, srv, "obj", chunked("abcdefghij", crc("abcdefghij")), 10)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/b/empty", strings.NewReader(""))
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("put an empty object: %v %v", resp, err)
	}

	get := func(key, rng, method string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/b/"+key, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	for _, tc := range []struct {
		key, rng     string
		status       int
		body, crange string
	}{
		{"obj", "bytes=2-5", 206, "cdef", "bytes 2-5/10"},
		{"obj", "bytes=7-", 206, "hij", "bytes 7-9/10"},
		{"obj", "bytes=8-100", 206, "ij", "bytes 8-9/10"},
		{"obj", "bytes=-3", 206, "hij", "bytes 7-9/10"},
		{"obj", "bytes=-30", 206, "abcdefghij", "bytes 0-9/10"}, // a suffix longer than the object
		{"obj", "bytes=9-9", 206, "j", "bytes 9-9/10"},
		{"obj", "bytes=10-20", 416, "InvalidRange", "bytes */10"}, // past the end
		{"obj", "bytes=-0", 416, "InvalidRange", "bytes */10"},
		{"empty", "bytes=0-0", 416, "InvalidRange", "bytes */0"},
		{"obj", "bytes=5-3", 200, "abcdefghij", ""}, // ignored
		{"obj", "bytes=0-1,4-5", 200, "abcdefghij", ""},
		{"obj", "bytes=x-3", 200, "abcdefghij", ""},
		{"obj", "items=0-3", 200, "abcdefghij", ""},
		{"obj", "", 200, "abcdefghij", ""},
		{"obj?versionId=" + first, "bytes=2-5", 206, "2345", "bytes 2-5/10"},
	} {
		resp, data := get(tc.key, tc.rng, http.MethodGet)
		if resp.StatusCode != tc.status || !strings.Contains(data, tc.body) || resp.Header.Get("Content-Range") != tc.crange {
			t.Errorf("GET %s %q: %d %q Content-Range %q; want %d %q %q", tc.key, tc.rng, resp.StatusCode, data, resp.Header.Get("Content-Range"),
				tc.status, tc.body, tc.crange)
		}
		if tc.status == 206 && resp.Header.Get("Content-Length") != "" && resp.ContentLength != int64(len(tc.body)) {
			t.Errorf("GET %s %q: Content-Length %d", tc.key, tc.rng, resp.ContentLength)
		}
		for k := range resp.Header {
			if tc.status == 206 && strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
				t.Errorf("GET %s %q: a ranged answer carries %s", tc.key, tc.rng, k)
			}
		}
	}
	// The whole object keeps its checksum; a HEAD of a range is a 206 too.
	if resp, _ := get("obj", "", http.MethodGet); resp.Header.Get("X-Amz-Checksum-Crc32") != crc("abcdefghij") {
		t.Errorf("the whole object's checksum is %q", resp.Header.Get("X-Amz-Checksum-Crc32"))
	}
	if resp, _ := get("obj", "bytes=1-2", http.MethodHead); resp.StatusCode != 206 || resp.Header.Get("Content-Range") != "bytes 1-2/10" {
		t.Errorf("HEAD of a range: %d %q", resp.StatusCode, resp.Header.Get("Content-Range"))
	}
	if resp, _ := get("missing", "bytes=0-1", http.MethodGet); resp.StatusCode != 404 {
		t.Errorf("a range of a missing key: %d", resp.StatusCode)
	}
}
