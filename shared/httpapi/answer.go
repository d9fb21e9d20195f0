package httpapi

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/xxh3"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/api"
)

// How a 200 is written (docs/design.md, "Conditional requests and
// compression"):
//
//   - The answer is encoded whole first, so that an encoding failure is still
//     a clean 500 and the ETag can be the hash of the bytes.
//   - Every 200 carries a strong ETag, the XXH3-128 of the JSON, with
//     Cache-Control "private, no-cache" and Vary: Accept-Encoding. A request
//     whose If-None-Match names it gets 304 with no body; the key's request
//     is given back (as GitHub does), the per-IP one is not. "*" matches
//     too, but gives nothing back: it proves the client holds no answer.
//   - Behind a gateway that compresses (Config.Uncompressed), the tag is
//     weak: the bytes the client gets may be the gateway's gzip of the JSON,
//     and a strong tag names exact bytes (RFC 9110, 8.8.1).
//   - Above MinCompressBytes the body is compressed for a client that accepts
//     zstd or gzip. A compressed representation's ETag is the JSON's with
//     "-zstd" or "-gzip" appended, and If-None-Match matches either form: the
//     content behind both is the same JSON.

// MinCompressBytes is the smallest body compressed: below it, the coding's
// own header and a client's decoder cost more than the bytes saved (API
// Gateway's MinimumCompressionSize was set to the same value).
const MinCompressBytes = 1024

// Cache-Control of every 200 and 304: a key's answers are its own (private:
// no shared cache may keep them) and a client may keep them only to
// revalidate (no-cache), since documents change without notice.
const cacheControl = "private, no-cache"

// answerBuf is a reusable buffer of an answer's bytes. Encoders append to
// it straight: an answer is neither copied nor grown twice, and in steady
// state it allocates nothing (a graph at its caps is 2.4 MB).
type answerBuf struct{ b []byte }

var bufPool = sync.Pool{New: func() any { return new(answerBuf) }}

// maxPooled is the largest buffer kept for reuse: a rare huge answer is not
// held alive between requests.
const maxPooled = 4 << 20

func getBuf() *answerBuf {
	b := bufPool.Get().(*answerBuf)
	b.b = b.b[:0]
	return b
}

func putBuf(b *answerBuf) {
	if cap(b.b) <= maxPooled {
		bufPool.Put(b)
	}
}

// Write lets encoding/json and gzip append to the buffer.
func (a *answerBuf) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// encode appends v's JSON, with a trailing newline, to dst.
func encode(dst *answerBuf, v any) error {
	if a, ok := v.(api.Appender); ok {
		dst.b = a.AppendJSON(dst.b)
		return nil
	}
	enc := json.NewEncoder(dst)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// etag is the strong entity tag of a JSON body: its 128-bit XXH3 in hex.
// XXH3 is not a cryptographic hash, nor needs to be: a tag only tells a
// client's copy from the current one, and 128 bits make two different
// answers with one tag as unlikely as anything in the system.
func etag(body []byte) string {
	sum := xxh3.Hash128(body).Bytes()
	var b [2 + 2*len(sum)]byte
	b[0] = '"'
	hex.Encode(b[1:], sum[:])
	b[len(b)-1] = '"'
	return string(b[:])
}

// codedTag is the entity tag of body's representation in coding: the JSON's
// tag with the coding appended inside the quotes.
func codedTag(tag, coding string) string {
	if coding == "" {
		return tag
	}
	return tag[:len(tag)-1] + "-" + coding + `"`
}

// notModified reports whether an If-None-Match header names the answer
// whose JSON has tag, in any of its codings, and whether it named it by a
// concrete tag (not "*", which matches any answer: the client may hold
// none). Comparison is weak, as RFC 9110 (13.1.2) wants for If-None-Match:
// W/ is ignored.
func notModified(values []string, tag string) (match, concrete bool) {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" {
				match = true
				continue
			}
			t = strings.TrimPrefix(t, "W/")
			if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
				continue
			}
			t = t[:len(t)-1]
			for _, c := range codings {
				t = strings.TrimSuffix(t, "-"+c)
			}
			if t+`"` == tag {
				return true, true
			}
		}
	}
	return match, false
}

// Content codings the API can answer with, in the order it prefers them
// when a client accepts both equally: zstd is smaller and faster.
const (
	codingZstd = "zstd"
	codingGzip = "gzip"
)

var codings = []string{codingZstd, codingGzip}

// negotiate picks the content coding for an Accept-Encoding header: the
// accepted coding with the highest q-value, zstd before gzip on a tie; ""
// for none (identity). "*" stands for any coding not named.
func negotiate(values []string) string {
	q := map[string]float64{}
	star, starSet := 0.0, false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			weight := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					weight = qvalue(strings.TrimSpace(val))
				}
			}
			if name == "x-gzip" {
				name = codingGzip
			}
			if name == "*" {
				star, starSet = weight, true
				continue
			}
			if _, seen := q[name]; !seen || weight > q[name] {
				q[name] = weight
			}
		}
	}
	best, bestQ := "", 0.0
	for _, c := range codings {
		w, ok := q[c]
		if !ok && starSet {
			w, ok = star, true
		}
		if ok && w > bestQ {
			best, bestQ = c, w
		}
	}
	return best
}

// qvalue reads a weight as RFC 9110 (12.4.2) writes it: 0 to 1 with at
// most three decimals ("0", "0.5", "1.000"). Anything else ("2", "Inf",
// "-1", "1e0") is no weight a client can mean, and counts as 0: the coding
// is not taken on a malformed word.
func qvalue(s string) float64 {
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 3 || (whole != "0" && whole != "1") {
		return 0
	}
	for _, c := range frac {
		if c < '0' || c > '9' || whole == "1" && c != '0' {
			return 0
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}

var (
	zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true))
	gzipPool = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		return w
	}}
)

// compress writes body in coding to dst. Both encoders are deterministic at
// their settings, so a coded ETag always names the same bytes.
func compress(dst *answerBuf, coding string, body []byte) {
	switch coding {
	case codingZstd:
		dst.b = zstdEncoder.EncodeAll(body, dst.b)
	case codingGzip:
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(dst)
		_, _ = zw.Write(body)
		_ = zw.Close()
		gzipPool.Put(zw)
	}
}

// writeAnswer writes v as the 200 of a GET or HEAD, or the 304 of a
// conditional one, and keeps it in the memo when the request has a slot
// there.
func (s *server) writeAnswer(w http.ResponseWriter, r *http.Request, v any) {
	buf := getBuf()
	defer putBuf(buf)
	if err := encode(buf, v); err != nil {
		s.writeError(w, r, fmt.Errorf("httpapi: encode %T: %w", v, err))
		return
	}
	tag := etag(buf.b)
	if slot, ok := r.Context().Value(memoKey).(*memoSlot); ok {
		s.memo.put(slot.version, slot.key, buf.b, tag)
	}
	s.sendAnswer(w, r, buf.b, tag)
}

// sendAnswer sends an answer's JSON, whose entity tag is tag: a 304 when
// If-None-Match names it, else the body, compressed when the client accepts
// a coding and it is worth it.
func (s *server) sendAnswer(w http.ResponseWriter, r *http.Request, body []byte, tag string) {
	h := w.Header()
	h.Set("Cache-Control", cacheControl)
	h.Set("Vary", "Accept-Encoding")
	coding := ""
	if !s.Uncompressed && len(body) >= MinCompressBytes {
		coding = negotiate(r.Header.Values("Accept-Encoding"))
	}
	// The tag of the representation a 200 sends now.
	sent := codedTag(tag, coding)
	if s.Uncompressed {
		sent = "W/" + sent
	}
	if match, concrete := notModified(r.Header.Values("If-None-Match"), tag); match {
		h.Set("ETag", sent)
		if concrete {
			s.giveBackKeyRequest(r.Context(), h)
		}
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if coding != "" {
		out := getBuf()
		defer putBuf(out)
		compress(out, coding, body)
		body = out.b
		h.Set("Content-Encoding", coding)
	}
	if s.MaxAnswerBytes > 0 && len(body) > s.MaxAnswerBytes {
		h.Del("Cache-Control")
		h.Del("Vary")
		h.Del("Content-Encoding")
		s.writeError(w, r, answerTooLarge(len(body), s.MaxAnswerBytes, coding))
		return
	}
	h.Set("ETag", sent)
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// answerTooLarge is the 400 of an answer that one response cannot carry
// through this deployment (Config.MaxAnswerBytes).
func answerTooLarge(size, limit int, coding string) error {
	ask := "Ask for it compressed (Accept-Encoding: gzip) or for less"
	if coding != "" {
		ask = "Ask for less"
	}
	return doclib.Errorf(doclib.EBadRequest,
		"The answer to this request is %s, more than the %s one answer can carry here. %s: a smaller depth, one direction or one label for a traversal; a smaller pageSize for a page.",
		megabytes(size), megabytes(limit), ask)
}

func megabytes(n int) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// keyTake is what the per-key limit took for a request, so that a 304 can
// give it back.
type keyTake struct {
	bucket string
	at     time.Time
	quota  doclib.Quota
}

// giveBackKeyRequest returns the key's request a 304 took, as GitHub does:
// a conditional request whose client already held the answer (it sent the
// answer's own tag, not "*") does not count against the key's limit. X-RateLimit-Remaining then says what is left after it. The
// per-IP limit keeps its count: it guards the service, and a 304 still cost
// the whole answer's work.
func (s *server) giveBackKeyRequest(ctx context.Context, h http.Header) {
	take, ok := ctx.Value(keyTakeKey).(*keyTake)
	if !ok || s.Limiter == nil {
		return
	}
	if err := s.Limiter.Release(ctx, take.bucket, s.Window, take.at); err != nil {
		s.Logger.WarnContext(ctx, "rate limiter: release of a 304's key quota failed", "error", err)
		return
	}
	h.Set("X-RateLimit-Remaining", strconv.Itoa(min(take.quota.Limit, max(take.quota.Remaining, 0)+1)))
}
