package client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// AcceptEncoding is what the client asks for: gzip first, then zstd. The
// API compresses answers of 1 KiB and more in either (docs/design.md,
// "Compression"), in the function, or, behind a buffered API Gateway
// integration (responseStreaming=false), in the gateway, which compresses
// only when the highest-priority coding asked for is one it supports (gzip,
// deflate). With "zstd, gzip" that was zstd, or a tie the gateway may read
// as zstd, and answers of up to 6 MB came uncompressed; gzip first is
// compressed by both, at the cost of the function's gzip where it preferred
// zstd on a tie.
const AcceptEncoding = "gzip, zstd;q=0.5"

var (
	errTooLarge      = errors.New("client: answer over MaxAnswerBytes")
	errUnknownCoding = errors.New("client: a Content-Encoding this client did not ask for")
)

// decodeBody reads an answer's body, undoing its Content-Encoding, and at
// most MaxAnswerBytes of it decoded.
func decodeBody(resp *http.Response) ([]byte, error) {
	var r io.Reader = resp.Body
	switch coding := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); coding {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("client: gzip answer: %w", err)
		}
		defer zr.Close()
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(resp.Body, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxAnswerBytes+1))
		if err != nil {
			return nil, fmt.Errorf("client: zstd answer: %w", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("%w: %q", errUnknownCoding, coding)
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxAnswerBytes {
		return nil, errTooLarge
	}
	return b, nil
}
