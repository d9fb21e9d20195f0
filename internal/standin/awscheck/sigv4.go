package awscheck

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/smithy-go/encoding/httpbinding"
)

// authHeader is a parsed SigV4 Authorization header.
type authHeader struct {
	accessKey, date, region, service string
	signedHeaders                    []string
	signature                        string
}

// authError is an authentication failure; code is AWS's error code without
// the "Exception" suffix (UnrecognizedClient, InvalidSignature, ...).
type authError struct {
	code, msg string
}

const (
	sigAlgorithm = "AWS4-HMAC-SHA256"
	amzDateForm  = "20060102T150405Z"
	// maxSkew is how far X-Amz-Date may be from the clock, as AWS allows.
	maxSkew = 15 * time.Minute

	msgBadToken     = "The security token included in the request is invalid."
	msgBadSignature = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
)

// parseAuthorization reads "AWS4-HMAC-SHA256 Credential=AKID/20250101/us-east-1/dynamodb/aws4_request,
// SignedHeaders=host;x-amz-date, Signature=hex".
func parseAuthorization(h string) (authHeader, *authError) {
	var a authHeader
	alg, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	if alg != sigAlgorithm {
		return a, &authError{"IncompleteSignature", fmt.Sprintf("Unsupported AWS 'algorithm': '%s'.", alg)}
	}
	var cred, signed string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			signed = v
		case "Signature":
			a.signature = v
		}
	}
	var missing []string
	for _, p := range []struct{ name, v string }{{"Credential", cred}, {"Signature", a.signature}, {"SignedHeaders", signed}} {
		if p.v == "" {
			missing = append(missing, fmt.Sprintf("Authorization header requires '%s' parameter.", p.name))
		}
	}
	if len(missing) > 0 {
		return a, &authError{"IncompleteSignature", strings.Join(missing, " ") + " Authorization=" + h}
	}
	parts := strings.Split(cred, "/")
	if len(parts) != 5 {
		return a, &authError{"IncompleteSignature", "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '" + cred + "'"}
	}
	if parts[4] != "aws4_request" {
		return a, &authError{"InvalidSignature", "Credential should be scoped with a valid terminator: 'aws4_request', not '" + parts[4] + "'."}
	}
	a.accessKey, a.date, a.region, a.service = parts[0], parts[1], parts[2], parts[3]
	a.signedHeaders = strings.Split(signed, ";")
	return a, nil
}

// verify authenticates a signed call: a known key with its session token,
// a date within the allowed skew, the checker's region, and a signature
// recomputed over the request as it arrived.
func (c *Checker) verify(r *http.Request, body []byte, a authHeader) (*session, *authError) {
	c.mu.Lock()
	s := c.sessions[a.accessKey]
	c.mu.Unlock()
	if s == nil || r.Header.Get("X-Amz-Security-Token") != s.token {
		return nil, &authError{"UnrecognizedClient", msgBadToken}
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse(amzDateForm, amzDate)
	if err != nil {
		return s, &authError{"IncompleteSignature", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=" + r.Header.Get("Authorization")}
	}
	if a.date != amzDate[:8] {
		return s, &authError{"InvalidSignature", fmt.Sprintf("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'.", a.date, amzDate[:8], amzDate)}
	}
	if a.region != c.cfg.Region {
		return s, &authError{"InvalidSignature", "Credential should be scoped to a valid region."}
	}
	now := c.now().UTC()
	if t.Before(now.Add(-maxSkew)) {
		return s, &authError{"InvalidSignature", fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)",
			amzDate, now.Add(-maxSkew).Format(amzDateForm), now.Format(amzDateForm))}
	}
	if t.After(now.Add(maxSkew)) {
		return s, &authError{"InvalidSignature", fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + 15 min.)",
			amzDate, now.Add(maxSkew).Format(amzDateForm), now.Format(amzDateForm))}
	}
	hasHost := false
	for _, h := range a.signedHeaders {
		hasHost = hasHost || h == "host"
	}
	if !hasHost {
		return s, &authError{"InvalidSignature", "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization."}
	}

	payload, perr := payloadHash(r, body, a.service)
	if perr != nil {
		return s, perr
	}
	canonical := canonicalRequest(r, a.signedHeaders, payload, a.service != "s3")
	scope := a.date + "/" + a.region + "/" + a.service + "/aws4_request"
	crHash := sha256.Sum256([]byte(canonical))
	toSign := sigAlgorithm + "\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(crHash[:])
	key := hmacSHA256([]byte("AWS4"+s.secret), a.date)
	for _, p := range []string{a.region, a.service, "aws4_request"} {
		key = hmacSHA256(key, p)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if !hmac.Equal([]byte(want), []byte(a.signature)) {
		return s, &authError{"InvalidSignature", msgBadSignature}
	}
	return s, nil
}

// payloadHash is the hash the canonical request ends with. For every
// service but S3 it is the body's SHA-256 (x-amz-content-sha256, when sent,
// must be it). S3 requires the header and takes it as the payload's hash:
// the body's SHA-256 in hex, which must match the body, or one of the
// literal values the SDK sends over HTTPS, UNSIGNED-PAYLOAD and (for an
// aws-chunked upload with a checksum trailer) STREAMING-UNSIGNED-PAYLOAD-
// TRAILER, which S3 accepts without hashing the body. Signed streaming
// (chunk signatures) is refused: the checker does not verify them.
func payloadHash(r *http.Request, body []byte, service string) (string, *authError) {
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	h := r.Header.Get("X-Amz-Content-Sha256")
	if service != "s3" {
		if h != "" && h != payload {
			// The header is what the client signed; a body that does not
			// hash to it was changed on the way (or was never hashed).
			return "", &authError{"InvalidSignature", "The provided 'x-amz-content-sha256' header does not match what was computed."}
		}
		return payload, nil
	}
	switch {
	case h == "":
		return "", &authError{"InvalidRequest", "Missing required header for this request: x-amz-content-sha256"}
	case h == "UNSIGNED-PAYLOAD":
		return h, nil
	case h == "STREAMING-UNSIGNED-PAYLOAD-TRAILER":
		if !strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
			return "", &authError{"InvalidRequest", "x-amz-content-sha256 STREAMING-UNSIGNED-PAYLOAD-TRAILER needs Content-Encoding: aws-chunked"}
		}
		return h, nil
	case strings.HasPrefix(h, "STREAMING-"):
		return "", &authError{"NotImplemented", "The local stand-in does not verify chunk signatures (x-amz-content-sha256 " + h + ")"}
	case len(h) == 64 && isHex(h):
		if h != payload {
			return "", &authError{"XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed."}
		}
		return payload, nil
	}
	return "", &authError{"InvalidArgument", "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER or a SHA-256 in hex"}
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// canonicalRequest builds SigV4's canonical request: the path as sent,
// URI-encoded once more when escapeTwice (every service but S3: the SDK's
// signer escapes the already-escaped path unless DisableURIPathEscaping,
// which only S3 sets), the query sorted and strictly encoded, the signed
// headers with their values trimmed, and the payload's hash.
func canonicalRequest(r *http.Request, signed []string, payload string, escapeTwice bool) string {
	path, _, _ := strings.Cut(r.RequestURI, "?")
	if path == "" || !strings.HasPrefix(path, "/") {
		path = r.URL.EscapedPath()
	}
	if path == "" {
		path = "/"
	}
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	if escapeTwice {
		path = httpbinding.EscapePath(path, false)
	}
	b.WriteString(path + "\n")
	b.WriteString(canonicalQuery(r.URL.RawQuery) + "\n")
	for _, h := range signed {
		b.WriteString(h + ":" + headerValue(r, h) + "\n")
	}
	b.WriteString("\n" + strings.Join(signed, ";") + "\n" + payload)
	return b.String()
}

func canonicalQuery(raw string) string {
	q, _ := url.ParseQuery(raw)
	type kv struct{ k, v string }
	var params []kv
	for k, vs := range q {
		for _, v := range vs {
			params = append(params, kv{escapeQuery(k), escapeQuery(v)})
		}
	}
	sort.Slice(params, func(i, j int) bool {
		if params[i].k != params[j].k {
			return params[i].k < params[j].k
		}
		return params[i].v < params[j].v
	})
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// escapeQuery encodes all but RFC 3986's unreserved characters, a space as
// %20, as SigV4 wants.
func escapeQuery(s string) string {
	return httpbinding.EscapePath(s, true)
}

// headerValue is a signed header's canonical value. Go's server moves Host
// and (on a body of known length) Content-Length out of the header map.
func headerValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		vals = r.Header.Values(name)
		if len(vals) == 0 && r.ContentLength >= 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	default:
		vals = r.Header.Values(name)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = stripSpaces(v)
	}
	return strings.Join(out, ",")
}

// stripSpaces trims a header value and collapses runs of spaces to one, as
// SigV4's canonical headers want (tabs and other whitespace stay).
func stripSpaces(v string) string {
	v = strings.Trim(v, " ")
	for strings.Contains(v, "  ") {
		v = strings.ReplaceAll(v, "  ", " ")
	}
	return v
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
