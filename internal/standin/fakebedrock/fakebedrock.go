// Package fakebedrock is Amazon Bedrock's runtime for one model, Titan Text
// Embeddings V2 (amazon.titan-embed-text-v2:0), in a test process: an
// http.Handler for InvokeModel (POST /model/{modelId}/invoke) that speaks its
// REST wire format and checks a request as Bedrock does, so that the
// stand-in's functions embed through the real SDK client and shared/bedrock.
//
// The request is Titan V2's: {"inputText": string, "dimensions": 256, 512 or
// 1024 (default 1024), "normalize": bool (default true), "embeddingTypes":
// a list of "float" and "binary" (default float)}, and nothing else. The
// answer is {"embedding": [...], "inputTextTokenCount": n,
// "embeddingsByType": {"float": [...], "binary": [...]}}: embedding is always
// the float vector, and embeddingsByType is always there, with the types asked
// for (float when none were).
//
// A request Bedrock would refuse is answered 400 ValidationException, with the
// error type in X-Amzn-ErrorType and {"message": ...} as the body: a content
// type other than application/json (or an Accept that excludes it); a body
// that breaks the model's JSON schema (an extra field, a missing or empty
// inputText, more than MaxInputChars characters, dimensions not 256, 512 or
// 1024, a wrong type), worded as Bedrock's schema validator words it
// ("Malformed input request: expected maxLength: 50000, actual: 50001,
// please reformat your input and try again."; several violations are
// counted, not listed); and a text of more than MaxInputTokens tokens ("400
// Bad Request: Too many input tokens. Max input tokens: 8192, request input
// token count: 9279 "). A model ID other than Titan V2's (its ID or its
// foundation-model ARN) is "The provided model identifier is invalid." (400
// ValidationException), except the ARN of an account's resource (a
// provisioned or custom model, an inference profile), which is 404
// ResourceNotFoundException, as Bedrock answers for an ARN it cannot find.
// The messages for the character and token limits, an extra field, the
// content type and the model identifier are Bedrock's as its users report
// them; the others follow the wording of the same schema validator, and the
// Accept one that of the content type.
//
// What differs from Bedrock: the vectors come from the project's offline
// hashing embedder (shared/backend/offline) at the requested dimensions, so they are
// deterministic and carry shared words, word forms, misspellings and the
// thesaurus's synonyms, not meaning; tokens are estimated (TokenCount), not
// counted by Titan's tokenizer; it neither authenticates nor authorises (the
// stand-in's IAM checker in front has done both); and it serves InvokeModel
// only (any other call is 404 UnknownOperationException).
//
// For the stand-in's timeout and retry tests it can be made slow (SetLatency)
// or made to fail (Fail, FailAlways), and it counts its calls (Calls).
package fakebedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/doclib/doclib/shared/analysis"
	"github.com/doclib/doclib/shared/backend/offline"
)

// Titan Text Embeddings V2's identity and limits.
const (
	// ModelID is the one model the fake serves.
	ModelID = "amazon.titan-embed-text-v2:0"
	// MaxInputChars is the longest inputText the model's schema admits, in
	// characters (Unicode code points, as JSON Schema's maxLength counts).
	MaxInputChars = 50000
	// MaxInputTokens is the most tokens the model takes.
	MaxInputTokens = 8192
	// DefaultDimensions is the vector length when a request gives none.
	DefaultDimensions = 1024
)

// dimensions are the vector lengths Titan V2 returns.
var dimensions = []int{256, 512, 1024}

// Failure is an answer forced on a call: after Delay, an error of Status
// with the error type Code and Message; or, when Status is 0, the normal
// answer after Delay (a slow call).
type Failure struct {
	Status  int
	Code    string
	Message string
	Delay   time.Duration
}

// Failures Bedrock answers under load or outage, in its words.
var (
	// Throttling is the answer to a call over the account's quota.
	Throttling = Failure{Status: http.StatusTooManyRequests, Code: "ThrottlingException",
		Message: "Too many requests, please wait before trying again."}
	// InternalServer is a failure of the service.
	InternalServer = Failure{Status: http.StatusInternalServerError, Code: "InternalServerException",
		Message: "An internal server error occurred. Retry your request."}
	// ServiceUnavailable is an outage.
	ServiceUnavailable = Failure{Status: http.StatusServiceUnavailable, Code: "ServiceUnavailableException",
		Message: "Bedrock is unable to process your request."}
	// ModelTimeout is a model that took too long.
	ModelTimeout = Failure{Status: http.StatusRequestTimeout, Code: "ModelTimeoutException",
		Message: "Model has timed out in processing the request. Try your request again."}
)

// Delay is a call answered normally after d.
func Delay(d time.Duration) Failure { return Failure{Delay: d} }

// Server is a fake Bedrock runtime; build it with New. It is safe for
// concurrent use.
type Server struct {
	mux       *http.ServeMux
	embedders map[int]*offline.Hashing // by dimensions
	calls     atomic.Int64
	requestID atomic.Int64

	mu      sync.Mutex
	latency time.Duration
	queue   []Failure
	always  *Failure
}

// New returns a fake that answers every valid call at once.
func New() *Server {
	s := &Server{embedders: map[int]*offline.Hashing{}, mux: http.NewServeMux()}
	a := analysis.New() // its stem cache serves all three lengths
	for _, d := range dimensions {
		h, err := offline.NewHashing(d, a)
		if err != nil {
			panic(err) // 256 to 1024 are within the embedder's range
		}
		s.embedders[d] = h
	}
	s.mux.HandleFunc("POST /model/{modelId}/invoke", s.invokeModel)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, s.nextRequestID(), http.StatusNotFound, "UnknownOperationException",
			"fakebedrock serves InvokeModel (POST /model/{modelId}/invoke) only, not "+r.Method+" "+r.URL.Path)
	})
	return s
}

// ServeHTTP answers one Bedrock runtime request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetLatency makes every call take d before it is answered, as a slow model
// or network would; a client that gives up sooner gets no answer.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// Fail forces fs on the next calls, one each, before any FailAlways.
func (s *Server) Fail(fs ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, fs...)
}

// FailAlways forces f on every call after those Fail queued, until
// ClearFailures.
func (s *Server) FailAlways(f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.always = &f
}

// ClearFailures forgets the failures that Fail and FailAlways forced.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.always = nil, nil
}

// Calls is the number of InvokeModel calls received so far, answered or
// refused.
func (s *Server) Calls() int { return int(s.calls.Load()) }

// Embedding is the vector the fake answers for text at dims dimensions,
// normalised, as a test may want to compare with what a client stored.
func (s *Server) Embedding(text string, dims int) ([]float32, error) {
	h, ok := s.embedders[dims]
	if !ok {
		return nil, fmt.Errorf("fakebedrock: %d dimensions; Titan V2 returns 256, 512 or 1024", dims)
	}
	return vector(h, text), nil
}

// next returns the failure forced on this call, if any.
func (s *Server) next() (Failure, time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.queue) > 0:
		f := s.queue[0]
		s.queue = s.queue[1:]
		return f, s.latency, true
	case s.always != nil:
		return *s.always, s.latency, true
	}
	return Failure{}, s.latency, false
}

func (s *Server) nextRequestID() string {
	return fmt.Sprintf("fakebedrock-%08d", s.requestID.Add(1))
}

// invokeModel answers InvokeModel: forced failure and latency first, then
// the checks in the order Bedrock makes them (model, content type, body,
// tokens), then the embedding.
func (s *Server) invokeModel(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	start := time.Now()
	id := s.nextRequestID()
	// The body is read before the wait: net/http notices a client that
	// hangs up (and cancels r's context) only once the body is consumed.
	// InvokeModel bodies are at most 25,000,000 bytes.
	raw, err := io.ReadAll(io.LimitReader(r.Body, 25_000_001))
	if err != nil {
		return
	}
	failure, latency, forced := s.next()
	if !wait(r.Context(), latency+failure.Delay) {
		return // the client gave up: nobody reads an answer
	}
	if forced && failure.Status != 0 {
		writeError(w, id, failure.Status, failure.Code, failure.Message)
		return
	}

	if status, code, msg := checkModel(r.PathValue("modelId")); status != 0 {
		writeError(w, id, status, code, msg)
		return
	}
	if !isJSON(r.Header.Get("Content-Type"), false) {
		writeError(w, id, http.StatusBadRequest, "ValidationException", "The provided Content Type is invalid or not supported for this model")
		return
	}
	if !isJSON(r.Header.Get("Accept"), true) {
		writeError(w, id, http.StatusBadRequest, "ValidationException", "The provided Accept Type is invalid or not supported for this model")
		return
	}
	req, violations := parse(raw)
	switch {
	case len(raw) > 25_000_000:
		writeError(w, id, http.StatusBadRequest, "ValidationException", "1 validation error detected: Value at 'body' failed to satisfy constraint: Member must have length less than or equal to 25000000")
		return
	case violations == nil && req == nil:
		writeError(w, id, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again.")
		return
	case len(violations) == 1:
		writeError(w, id, http.StatusBadRequest, "ValidationException", "Malformed input request: "+violations[0]+", please reformat your input and try again.")
		return
	case len(violations) > 1:
		writeError(w, id, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("Malformed input request: %d schema violations found, please reformat your input and try again.", len(violations)))
		return
	}
	tokens := TokenCount(req.InputText)
	if tokens > MaxInputTokens {
		// The trailing space is Bedrock's.
		writeError(w, id, http.StatusBadRequest, "ValidationException",
			fmt.Sprintf("400 Bad Request: Too many input tokens. Max input tokens: %d, request input token count: %d ", MaxInputTokens, tokens))
		return
	}

	v := vector(s.embedders[req.Dimensions], req.InputText)
	if !req.Normalize {
		// Titan's raw vectors are not unit length; a length that grows with
		// the text makes a client that forgets to ask for normalised vectors
		// see it, without changing their direction.
		scale := float32(1 + math.Log1p(float64(tokens)))
		for i := range v {
			v[i] *= scale
		}
	}
	byType := map[string]any{}
	for _, t := range req.EmbeddingTypes {
		switch t {
		case "float":
			byType["float"] = v
		case "binary":
			bits := make([]int, len(v))
			for i, x := range v {
				if x > 0 {
					bits[i] = 1
				}
			}
			byType["binary"] = bits
		}
	}
	body, err := json.Marshal(map[string]any{"embedding": v, "inputTextTokenCount": tokens, "embeddingsByType": byType})
	if err != nil {
		writeError(w, id, http.StatusInternalServerError, "InternalServerException", "fakebedrock: encode the answer: "+err.Error())
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Requestid", id)
	h.Set("X-Amzn-Bedrock-Input-Token-Count", strconv.Itoa(tokens))
	h.Set("X-Amzn-Bedrock-Invocation-Latency", strconv.FormatInt(time.Since(start).Milliseconds(), 10))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// wait sleeps for d, or until ctx ends; it reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// writeError answers as Bedrock does: the error type, with the namespace the
// service appends, in X-Amzn-ErrorType, and the message in a JSON body.
func writeError(w http.ResponseWriter, requestID string, status int, code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amzn-Requestid", requestID)
	h.Set("X-Amzn-ErrorType", code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

var (
	// foundationModelARN is a foundation model's ARN, which names no account.
	foundationModelARN = regexp.MustCompile(`^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]{1,20}::foundation-model/(.+)$`)
	// accountResourceARN is the ARN of a model or profile an account owns.
	accountResourceARN = regexp.MustCompile(`^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:[a-z-]+/.+$`)
)

// checkModel returns the error answer for a model ID the fake does not
// serve, or a zero status for Titan V2.
func checkModel(id string) (status int, code, msg string) {
	if m := foundationModelARN.FindStringSubmatch(id); m != nil {
		id = m[2]
	}
	switch {
	case id == ModelID:
		return 0, "", ""
	case accountResourceARN.MatchString(id):
		return http.StatusNotFound, "ResourceNotFoundException", "The specified resource ARN was not found."
	}
	return http.StatusBadRequest, "ValidationException", "The provided model identifier is invalid."
}

// isJSON reports whether a Content-Type (or, with accept, an Accept list)
// names JSON. A missing Accept means any type.
func isJSON(header string, accept bool) bool {
	if accept && strings.TrimSpace(header) == "" {
		return true
	}
	for part := range strings.SplitSeq(header, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if mt == "application/json" || accept && (mt == "*/*" || mt == "application/*") {
			return true
		}
	}
	return false
}

// request is a valid Titan V2 request, with the defaults filled in.
type request struct {
	InputText      string
	Dimensions     int
	Normalize      bool
	EmbeddingTypes []string
}

// parse checks raw against Titan V2's request schema. It returns the request,
// or the violations in the words of the schema validator Bedrock uses, or
// neither when raw is not JSON.
func parse(raw []byte) (*request, []string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil || dec.More() {
		return nil, nil
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return nil, []string{"expected type: JSONObject, found: " + typeName(body)}
	}
	var violations []string
	req := &request{Dimensions: DefaultDimensions, Normalize: true, EmbeddingTypes: []string{"float"}}
	var extra []string
	for k := range obj {
		if !slices.Contains([]string{"inputText", "dimensions", "normalize", "embeddingTypes"}, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		violations = append(violations, "extraneous key ["+k+"] is not permitted")
	}

	switch text, present := obj["inputText"]; {
	case !present:
		violations = append(violations, "required key [inputText] not found")
	case typeName(text) != "String":
		violations = append(violations, "expected type: String, found: "+typeName(text))
	default:
		req.InputText = text.(string)
		if n := utf8.RuneCountInString(req.InputText); n < 1 {
			violations = append(violations, "expected minLength: 1, actual: 0")
		} else if n > MaxInputChars {
			violations = append(violations, fmt.Sprintf("expected maxLength: %d, actual: %d", MaxInputChars, n))
		}
	}
	if d, present := obj["dimensions"]; present {
		n, err := strconv.Atoi(fmt.Sprint(d))
		if typeName(d) != "Integer" || err != nil || !slices.Contains(dimensions, n) {
			violations = append(violations, fmt.Sprintf("%v is not a valid enum value", d))
		} else {
			req.Dimensions = n
		}
	}
	if v, present := obj["normalize"]; present {
		if b, ok := v.(bool); ok {
			req.Normalize = b
		} else {
			violations = append(violations, "expected type: Boolean, found: "+typeName(v))
		}
	}
	if v, present := obj["embeddingTypes"]; present {
		list, ok := v.([]any)
		if !ok {
			violations = append(violations, "expected type: JSONArray, found: "+typeName(v))
		} else {
			var types []string
			for _, t := range list {
				if s, ok := t.(string); ok && (s == "float" || s == "binary") {
					types = append(types, s)
				} else {
					violations = append(violations, fmt.Sprintf("%v is not a valid enum value", t))
				}
			}
			if len(types) > 0 {
				req.EmbeddingTypes = types
			}
		}
	}
	if len(violations) > 0 {
		return nil, violations
	}
	return req, nil
}

// typeName names a JSON value's type as the schema validator does (after
// its Java classes).
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "Null"
	case string:
		return "String"
	case bool:
		return "Boolean"
	case []any:
		return "JSONArray"
	case map[string]any:
		return "JSONObject"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "Integer"
		}
		return "BigDecimal"
	}
	return fmt.Sprintf("%T", v)
}

// vector embeds text, unit length. A text with no word the hashing embedder
// counts (punctuation, only stop words) would get a zero vector, which no
// model returns and cosine similarity cannot use: it gets one dimension
// picked by a hash of the text instead.
func vector(h *offline.Hashing, text string) []float32 {
	v := h.Vector(text)
	for _, x := range v {
		if x != 0 {
			return v
		}
	}
	f := fnv.New64a()
	_, _ = f.Write([]byte(text))
	x := f.Sum64()
	v[x%uint64(len(v))] = 1
	if x>>63 == 1 {
		v[x%uint64(len(v))] = -1
	}
	return v
}

// TokenCount is the fake's estimate of Titan's token count for text, which
// it reports as inputTextTokenCount and holds to MaxInputTokens. Like a
// subword tokenizer it gives a short word one token and a long one several:
// a token per 5 Latin letters of a word, per 3 letters of other alphabets,
// per 3 digits of a number; each Chinese, Japanese or Korean character and
// each punctuation mark or symbol is a token, and spaces are free. English
// prose comes to about 4 characters a token, so that, as with Titan, a text
// of 50,000 characters is over the token limit while one of 30,000 is not,
// and dense text (code, digits, other scripts) reaches it sooner.
func TokenCount(text string) int {
	const (
		none = iota
		latin
		otherLetters
		digits
	)
	n, run, kind := 0, 0, none
	flush := func() {
		switch kind {
		case latin:
			n += (run + 4) / 5
		case otherLetters, digits:
			n += (run + 2) / 3
		}
		run, kind = 0, none
	}
	extend := func(k int) {
		if kind != k {
			flush()
			kind = k
		}
		run++
	}
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			flush()
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			n++
		case unicode.IsMark(r) && kind != none:
			// A combining accent belongs to its letter.
		case unicode.In(r, unicode.Latin):
			extend(latin)
		case unicode.IsLetter(r):
			extend(otherLetters)
		case unicode.IsDigit(r):
			extend(digits)
		default:
			flush()
			n++
		}
	}
	flush()
	return n
}
