package bedrock

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/doclib/doclib/internal/suites/embedtest"
	"github.com/doclib/doclib/shared/search"
)

// The static credentials of the test clients; no error may quote them.
const (
	testAccessKey = "AKIDTESTKEY0000001"
	testSecretKey = "sEcReT/kEy+tEsT/value0001"
)

// wireRequest is the InvokeModel call as the server sees it. Dimensions and
// Normalize are pointers to tell "absent" from zero.
type wireRequest struct {
	Model       string // decoded from the path
	EscapedPath string
	ContentType string
	Accept      string
	Auth        string
	Keys        map[string]json.RawMessage

	InputText  string `json:"inputText"`
	Dimensions *int   `json:"dimensions"`
	Normalize  *bool  `json:"normalize"`
}

// fakeBedrock speaks InvokeModel's REST-JSON wire format
// (POST /model/{modelId}/invoke). It checks and records every request, counts
// those in flight, and hands each to handle, which writes the answer.
type fakeBedrock struct {
	*httptest.Server
	requests    atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	mu          sync.Mutex
	seen        []wireRequest
}

func newFakeBedrock(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, req wireRequest)) *fakeBedrock {
	t.Helper()
	return startFakeBedrock(t, httptest.NewServer, handle)
}

// startFakeBedrock is newFakeBedrock on a server that start starts, e.g.
// httptest.NewTLSServer.
func startFakeBedrock(t *testing.T, start func(http.Handler) *httptest.Server, handle func(w http.ResponseWriter, r *http.Request, req wireRequest)) *fakeBedrock {
	t.Helper()
	f := &fakeBedrock{}
	f.Server = start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for {
			m := f.maxInFlight.Load()
			if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}

		path := r.URL.EscapedPath()
		if r.Method != http.MethodPost || !strings.HasPrefix(path, "/model/") || !strings.HasSuffix(path, "/invoke") {
			t.Errorf("request %s %s, want POST /model/{modelId}/invoke", r.Method, path)
			http.NotFound(w, r)
			return
		}
		model, err := url.PathUnescape(strings.TrimSuffix(strings.TrimPrefix(path, "/model/"), "/invoke"))
		if err != nil {
			t.Errorf("model in path %q: %v", path, err)
		}
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request: %v", err)
			return
		}
		req := wireRequest{
			Model:       model,
			EscapedPath: path,
			ContentType: r.Header.Get("Content-Type"),
			Accept:      r.Header.Get("Accept"),
			Auth:        r.Header.Get("Authorization"),
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Errorf("request body %q: %v", raw, err)
			return
		}
		_ = json.Unmarshal(raw, &req.Keys)
		if strings.TrimSpace(req.InputText) == "" {
			t.Errorf("a blank text was sent")
		}
		f.mu.Lock()
		f.seen = append(f.seen, req)
		f.mu.Unlock()
		handle(w, r, req)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeBedrock) seenRequests() []wireRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// answer writes Titan V2's answer for req, with the embeddingsByType that
// the Embedder must ignore.
func answer(w http.ResponseWriter, req wireRequest) {
	dims := 1024
	if req.Dimensions != nil {
		dims = *req.Dimensions
	}
	v := embedtest.RawVector(req.InputText, dims)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "req-ok")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"embedding":           v,
		"inputTextTokenCount": len(strings.Fields(req.InputText)),
		"embeddingsByType":    map[string]any{"float": v},
	})
}

func ok(w http.ResponseWriter, _ *http.Request, req wireRequest) { answer(w, req) }

// writeAWSError answers as Bedrock does: the error code in X-Amzn-ErrorType
// (with the namespace suffix the service appends) and the message in the
// JSON body.
func writeAWSError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "req-"+code)
	if code != "" {
		w.Header().Set("X-Amzn-ErrorType", code+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

const throttleMsg = "Too many requests, please wait before trying again."

func throttle(w http.ResponseWriter) {
	writeAWSError(w, http.StatusTooManyRequests, "ThrottlingException", throttleMsg)
}

// noBackoff makes the SDK retry at once.
type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

// newClient is a real Bedrock runtime client aimed at url, with static
// credentials and an SDK retryer that makes sdkAttempts attempts per call
// without waiting. opts adjust it further.
func newClient(url string, sdkAttempts int, opts ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	o := bedrockruntime.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(url),
		HTTPClient:   readWholeBody{awshttp.NewBuildableClient()},
		Credentials:  credentials.NewStaticCredentialsProvider(testAccessKey, testSecretKey, ""),
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = sdkAttempts
			so.Backoff = noBackoff{}
			so.RateLimiter = ratelimit.None
		}),
	}
	ignoreAPIKey := func(o *bedrockruntime.Options) {
		// A Bedrock API key in the environment would replace the
		// static credentials.
		o.BearerAuthTokenProvider = nil
		o.AuthSchemePreference = nil
	}
	return bedrockruntime.New(o, append([]func(*bedrockruntime.Options){ignoreAPIKey, withRetryableCodes}, opts...)...)
}

// newTestEmbedder is New with the sleeps recorded, not slept, and the jitter
// fixed at half.
func newTestEmbedder(t *testing.T, cfg Config) (*Embedder, *embedtest.Sleeps) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s := &embedtest.Sleeps{}
	e.sleep = s.Sleep
	e.random = func() float64 { return 0.5 }
	return e, s
}

func checkVector(t *testing.T, i int, text string, got []float32, dims int) {
	t.Helper()
	if len(got) != dims {
		t.Fatalf("vector %d has %d dimensions, want %d", i, len(got), dims)
	}
	if strings.TrimSpace(text) == "" {
		if slices.ContainsFunc(got, func(x float32) bool { return x != 0 }) {
			t.Fatalf("vector %d of a blank text is not zero", i)
		}
		return
	}
	want := embedtest.Unit(text, dims)
	for j := range want {
		if math.Abs(float64(got[j]-want[j])) > 1e-5 {
			t.Fatalf("vector %d (%q) differs at %d: got %v, want %v", i, text, j, got[j], want[j])
		}
	}
	if math.Abs(embedtest.Norm(got)-1) > 1e-5 {
		t.Fatalf("vector %d has length %v", i, embedtest.Norm(got))
	}
}

func TestWireFormat(t *testing.T) {
	for _, tc := range []struct {
		name, model, wantModel, wantPath string
		dims                             int
	}{
		{"default model", "", DefaultModel, "/model/amazon.titan-embed-text-v2%3A0/invoke", 0},
		{"inference profile ARN", " arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.titan-embed-text-v2:0 ",
			"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.titan-embed-text-v2:0",
			"/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.amazon.titan-embed-text-v2%3A0/invoke", 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeBedrock(t, ok)
			e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 1), Model: tc.model, Dimensions: tc.dims})
			wantDims := cmpOr(tc.dims, 1024)
			if e.Dimensions() != wantDims || e.ID() != fmt.Sprintf("bedrock/%s/%d", tc.wantModel, wantDims) {
				t.Errorf("Dimensions() = %d, ID() = %q", e.Dimensions(), e.ID())
			}
			got, err := e.Embed(context.Background(), []string{"reset a password <now> & \"then\""})
			if err != nil {
				t.Fatal(err)
			}
			checkVector(t, 0, "reset a password <now> & \"then\"", got[0], wantDims)

			seen := srv.seenRequests()
			if len(seen) != 1 {
				t.Fatalf("%d requests, want 1", len(seen))
			}
			r := seen[0]
			if r.Model != tc.wantModel || r.EscapedPath != tc.wantPath {
				t.Errorf("model %q in path %q; want %q in %q", r.Model, r.EscapedPath, tc.wantModel, tc.wantPath)
			}
			if r.ContentType != "application/json" || r.Accept != "application/json" {
				t.Errorf("Content-Type %q, Accept %q; want application/json for both", r.ContentType, r.Accept)
			}
			if !strings.HasPrefix(r.Auth, "AWS4-HMAC-SHA256 Credential="+testAccessKey+"/") || !strings.Contains(r.Auth, "/us-east-1/bedrock/aws4_request") {
				t.Errorf("Authorization %q is not a SigV4 signature for bedrock in us-east-1", r.Auth)
			}
			keys := make([]string, 0, len(r.Keys))
			for k := range r.Keys {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"dimensions", "inputText", "normalize"}) {
				t.Errorf("body keys %v, want dimensions, inputText, normalize", keys)
			}
			if r.InputText != "reset a password <now> & \"then\"" {
				t.Errorf("inputText %q", r.InputText)
			}
			if r.Dimensions == nil || *r.Dimensions != wantDims {
				t.Errorf("dimensions %v, want %d", r.Dimensions, wantDims)
			}
			if r.Normalize == nil || !*r.Normalize {
				t.Errorf("normalize %v, want true", r.Normalize)
			}
		})
	}
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func TestOrderAndConcurrency(t *testing.T) {
	for _, tc := range []struct {
		concurrency, wantMax int
	}{{1, 1}, {3, 3}, {0, DefaultConcurrency}} {
		t.Run(fmt.Sprint("concurrency ", tc.concurrency), func(t *testing.T) {
			srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
				time.Sleep(time.Duration(rand.IntN(4000)) * time.Microsecond)
				answer(w, req)
			})
			e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 1), Dimensions: 256, Concurrency: tc.concurrency})
			in := embedtest.Texts(60)
			in[5], in[17], in[30] = "", "  \n\t", ""
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(in) {
				t.Fatalf("%d vectors for %d texts", len(got), len(in))
			}
			for i, text := range in {
				checkVector(t, i, text, got[i], 256)
			}
			if n := srv.requests.Load(); n != 57 {
				t.Errorf("%d requests, want 57 (blank texts are not sent)", n)
			}
			if m := srv.maxInFlight.Load(); m > int64(tc.wantMax) || (tc.wantMax > 1 && m < 2) {
				t.Errorf("%d requests in flight at most, want up to %d and some parallelism", m, tc.wantMax)
			}
		})
	}
}

func TestBlankTextsNotSent(t *testing.T) {
	srv := newFakeBedrock(t, ok)
	e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 1)})
	got, err := e.Embed(context.Background(), []string{"", " ", "\t\n"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		checkVector(t, i, "", v, 1024)
	}
	if got, err := e.Embed(context.Background(), nil); err != nil || len(got) != 0 {
		t.Errorf("Embed(nil) = %d vectors, %v", len(got), err)
	}
	if n := srv.requests.Load(); n != 0 {
		t.Errorf("%d requests for blank texts, want none", n)
	}
}

func TestLongInputCut(t *testing.T) {
	words := strings.Repeat("wörd ", 40) // 200 runes
	for _, tc := range []struct {
		name  string
		limit int
		text  string
		want  string // "" means: checked by the rules below only
	}{
		{"at the limit", 100, strings.Repeat("é", 100), strings.Repeat("é", 100)},
		{"two-byte runes, no space", 100, strings.Repeat("é", 150), strings.Repeat("é", 100)},
		{"cut at a word", 100, words, strings.Repeat("wörd ", 20)[:len(strings.Repeat("wörd ", 20))-1]},
		{"cut back to a word", 102, words, strings.Repeat("wörd ", 20)[:len(strings.Repeat("wörd ", 20))-1]},
		{"space too far back", 100, "ab " + strings.Repeat("x", 147), "ab " + strings.Repeat("x", 97)},
		{"surrogate pairs count two", 11, strings.Repeat("😀", 8), strings.Repeat("😀", 5)},
		{"invalid bytes count one", 100, strings.Repeat("\xff", 150), strings.Repeat("\uFFFD", 100)},
		{"default limit", 0, strings.Repeat("abcdefghi ", 6000), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeBedrock(t, ok)
			e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 1), MaxInputChars: tc.limit})
			if _, err := e.Embed(context.Background(), []string{tc.text}); err != nil {
				t.Fatal(err)
			}
			seen := srv.seenRequests()[0].InputText
			limit := cmpOr(tc.limit, DefaultMaxInputChars)
			if n := len(utf16.Encode([]rune(seen))); n > limit {
				t.Errorf("the server saw %d characters, over the limit %d", n, limit)
			}
			if tc.want != "" {
				if seen != tc.want {
					t.Errorf("the server saw %q, want %q", seen, tc.want)
				}
				return
			}
			if !strings.HasPrefix(tc.text, seen) || len(seen) < limit-maxCutLookback {
				t.Fatalf("the server saw %d bytes that are not a long prefix of the text", len(seen))
			}
			if r, _ := utf8.DecodeRuneInString(tc.text[len(seen):]); !unicode.IsSpace(r) {
				t.Errorf("the cut is inside a word")
			}
		})
	}
}

func TestRetryableErrorsThenSuccess(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(w http.ResponseWriter)
	}{
		{"429 ThrottlingException", throttle},
		{"400 ThrottlingException", func(w http.ResponseWriter) {
			writeAWSError(w, http.StatusBadRequest, "ThrottlingException", throttleMsg)
		}},
		{"code in the body only", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"__type":"ThrottlingException","message":"`+throttleMsg+`"}`)
		}},
		{"503 ServiceUnavailableException", func(w http.ResponseWriter) {
			writeAWSError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", "Bedrock is unable to process your request.")
		}},
		{"429 ModelNotReadyException", func(w http.ResponseWriter) {
			writeAWSError(w, http.StatusTooManyRequests, "ModelNotReadyException", "Model is not ready for inference.")
		}},
		{"408 ModelTimeoutException", func(w http.ResponseWriter) {
			writeAWSError(w, http.StatusRequestTimeout, "ModelTimeoutException", "Model has timed out in processing the request.")
		}},
		{"500 InternalServerException", func(w http.ResponseWriter) {
			writeAWSError(w, http.StatusInternalServerError, "InternalServerException", "An internal server error occurred.")
		}},
		{"502 HTML page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Five failures: the SDK's two attempts fail twice, and the
			// third call's second attempt passes.
			var calls atomic.Int64
			srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
				if calls.Add(1) <= 5 {
					tc.fail(w)
					return
				}
				answer(w, req)
			})
			e, slept := newTestEmbedder(t, Config{Client: newClient(srv.URL, 2), Dimensions: 256})
			got, err := e.Embed(context.Background(), []string{"a text"})
			if err != nil {
				t.Fatalf("not retried: %v", err)
			}
			checkVector(t, 0, "a text", got[0], 256)
			if n := srv.requests.Load(); n != 6 {
				t.Errorf("%d requests, want 6", n)
			}
			// Random is fixed at 0.5, so each wait is three quarters of
			// 1 s × 2^n.
			if s := slept.All(); !slices.Equal(s, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}) {
				t.Errorf("slept %v, want [750ms 1.5s]", s)
			}
		})
	}
}

func TestThrottledPastRetries(t *testing.T) {
	for _, tc := range []struct {
		maxRetries, wantRequests int
		wantSleeps               []time.Duration
	}{
		{2, 9, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}},
		{-1, 3, nil},
	} {
		t.Run(fmt.Sprint("MaxRetries ", tc.maxRetries), func(t *testing.T) {
			srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) { throttle(w) })
			e, slept := newTestEmbedder(t, Config{Client: newClient(srv.URL, 3), MaxRetries: tc.maxRetries})
			const secret = "the confidential text to embed"
			_, err := e.Embed(context.Background(), []string{"", secret})
			if !errors.Is(err, search.ErrEmbedder) {
				t.Fatalf("error %v does not wrap search.ErrEmbedder", err)
			}
			t.Log(err)
			var te *types.ThrottlingException
			if !errors.As(err, &te) {
				t.Errorf("error %v does not wrap the ThrottlingException", err)
			}
			for _, want := range []string{"bedrock: embed texts[1]: ", DefaultModel, "429 ThrottlingException", throttleMsg,
				fmt.Sprintf("after %d attempts", tc.wantRequests), "request ID req-ThrottlingException"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			checkNoLeak(t, err, secret)
			if n := srv.requests.Load(); n != int64(tc.wantRequests) {
				t.Errorf("%d requests, want %d", n, tc.wantRequests)
			}
			if s := slept.All(); !slices.Equal(s, tc.wantSleeps) {
				t.Errorf("slept %v, want %v", s, tc.wantSleeps)
			}
		})
	}
}

func checkNoLeak(t *testing.T, err error, text string) {
	t.Helper()
	for _, s := range []string{text, testAccessKey, testSecretKey} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q reveals %q", err, s)
		}
	}
}

func TestErrorsNotRetried(t *testing.T) {
	const secret = "the confidential text to embed"
	for _, tc := range []struct {
		status     int
		code, msg  string
		want       []string
		typedCheck func(error) bool
	}{
		{400, "ValidationException", "Malformed input request: " + secret + " is not valid",
			[]string{"Bedrock rejected the request", "400 ValidationException", "Malformed input request: [the text] is not valid"},
			func(err error) bool { var x *types.ValidationException; return errors.As(err, &x) }},
		{400, "ValidationException", "Malformed input request: expected maxLength: 50000, actual: 50001, please reformat your input and try again.",
			[]string{"Bedrock rejected the request", "400 ValidationException", "expected maxLength: 50000"},
			func(err error) bool { var x *types.ValidationException; return errors.As(err, &x) }},
		{403, "AccessDeniedException", "You don't have access to the model with the specified model ID.",
			[]string{"403 AccessDeniedException", "denied access", "enable model access", "Bedrock console in region us-east-1", "bedrock:InvokeModel"},
			func(err error) bool { var x *types.AccessDeniedException; return errors.As(err, &x) }},
		{404, "ResourceNotFoundException", "Model not found.",
			[]string{"404 ResourceNotFoundException", "not found in region us-east-1", "check the model ID"},
			func(err error) bool { var x *types.ResourceNotFoundException; return errors.As(err, &x) }},
		{400, "ServiceQuotaExceededException", "Your request exceeds the service quota for your account.",
			[]string{"400 ServiceQuotaExceededException", "quotas"},
			func(err error) bool { var x *types.ServiceQuotaExceededException; return errors.As(err, &x) }},
		{424, "ModelErrorException", "The model failed to process the request.",
			[]string{"InvokeModel", "424 ModelErrorException", "failed to process"},
			func(err error) bool { var x *types.ModelErrorException; return errors.As(err, &x) }},
	} {
		t.Run(tc.code, func(t *testing.T) {
			srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
				writeAWSError(w, tc.status, tc.code, tc.msg)
			})
			e, slept := newTestEmbedder(t, Config{Client: newClient(srv.URL, 3)})
			_, err := e.Embed(context.Background(), []string{secret})
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, want := range append(tc.want, "bedrock: embed texts[0]: ", `model "`+DefaultModel+`"`, "request ID req-"+tc.code) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			checkNoLeak(t, err, secret)
			if errors.Is(err, search.ErrEmbedder) {
				t.Errorf("a %s wraps ErrEmbedder", tc.code)
			}
			if !tc.typedCheck(err) {
				t.Errorf("error %v does not wrap the typed exception", err)
			}
			if n := srv.requests.Load(); n != 1 || len(slept.All()) != 0 {
				t.Errorf("%d requests and sleeps %v, want 1 and none", n, slept.All())
			}
		})
	}
}

func TestMalformedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"wrong length", `{"embedding":[1,2,3,4,5,6,7],"inputTextTokenCount":2}`, []string{"7 dimensions", "want 256"}},
		{"no embedding", `{"inputTextTokenCount":2}`, []string{"no embedding"}},
		{"empty embedding", `{"embedding":[]}`, []string{"no embedding"}},
		{"null number", `{"embedding":[1,null` + strings.Repeat(",1", 254) + `]}`, []string{"holds null at 1"}},
		{"overflow", `{"embedding":[1,1e999` + strings.Repeat(",1", 254) + `]}`, []string{"not a finite number"}},
		{"string", `{"embedding":"AACAPw=="}`, []string{"not a Titan embedding"}},
		{"not JSON", `<html>hello</html>`, []string{"not JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			})
			e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 1), Dimensions: 256})
			_, err := e.Embed(context.Background(), []string{"a"})
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, want := range append(tc.want, "bedrock: embed texts[0]: ") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if errors.Is(err, search.ErrEmbedder) {
				t.Errorf("a malformed answer wraps ErrEmbedder: %v", err)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	client := newClient("http://127.0.0.1:1", 1)
	e, err := New(Config{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	if e.model != DefaultModel || e.dims != 1024 || e.concurrency != 8 || e.maxInputChars != 50000 || e.maxRetries != 4 || e.region != "us-east-1" {
		t.Errorf("defaults: %+v", e)
	}
	if e.ID() != "bedrock/amazon.titan-embed-text-v2:0/1024" || e.Dimensions() != 1024 {
		t.Errorf("ID() %q, Dimensions() %d", e.ID(), e.Dimensions())
	}
	for _, d := range []int{256, 512, 1024} {
		if e, err := New(Config{Client: client, Dimensions: d}); err != nil || e.Dimensions() != d || !strings.HasSuffix(e.ID(), fmt.Sprintf("/%d", d)) {
			t.Errorf("Dimensions %d: %v", d, err)
		}
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Client: client, Dimensions: 300}, "Config.Dimensions is 300; Titan Text Embeddings V2 returns 256, 512 or 1024"},
		{Config{Client: client, Dimensions: -1}, "Config.Dimensions is -1"},
		{Config{Client: client, Dimensions: 1536}, "Config.Dimensions is 1536"},
		{Config{Client: client, Concurrency: -2}, "Config.Concurrency is -2"},
		{Config{Client: client, MaxInputChars: -5}, "Config.MaxInputChars is -5"},
		{Config{}, "Config.Client is nil"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	// NewFromAWS checks the settings before it looks for AWS.
	if _, err := NewFromAWS(context.Background(), "us-east-1", Config{Dimensions: 300}); err == nil || !strings.Contains(err.Error(), "300") {
		t.Errorf("NewFromAWS with 300 dimensions: %v", err)
	}
}

func TestFirstErrorStopsTheRest(t *testing.T) {
	var calls atomic.Int64
	srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		if calls.Add(1) == 2 {
			writeAWSError(w, http.StatusBadRequest, "ValidationException", "text two is bad")
			return
		}
		answer(w, req)
	})
	e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 1), Concurrency: 1})
	_, err := e.Embed(context.Background(), embedtest.Texts(10))
	if err == nil || !strings.Contains(err.Error(), "texts[1]") || !strings.Contains(err.Error(), "text two is bad") {
		t.Fatalf("error %v", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests, want 2: the texts after the failure must not be sent", n)
	}
}

func TestCancelStopsInFlight(t *testing.T) {
	var cancelled atomic.Int64
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newFakeBedrock(t, func(_ http.ResponseWriter, r *http.Request, _ wireRequest) {
		select {
		case <-r.Context().Done():
			cancelled.Add(1)
		case <-release:
		}
	})
	e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 3), Concurrency: 3})
	embedtest.CheckCancelStopsInFlight(t, e, srv.requests.Load, cancelled.Load)
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) { throttle(w) })
	// The real sleep, to check that it gives way to the context.
	e, err := New(Config{Client: newClient(srv.URL, 1)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = e.Embed(ctx, []string{"a"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, search.ErrEmbedder) {
		t.Fatalf("error %v, want context.DeadlineExceeded and not ErrEmbedder", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Embed took %s, the backoff ignored the context", d)
	}
}

func TestTimeoutsAndDroppedConnectionsRetried(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for _, tc := range []struct {
		name  string
		first func(w http.ResponseWriter, r *http.Request)
	}{
		{"attempt timeout", func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}},
		{"dropped connection", func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			srv := newFakeBedrock(t, func(w http.ResponseWriter, r *http.Request, req wireRequest) {
				if calls.Add(1) == 1 {
					tc.first(w, r)
					return
				}
				answer(w, req)
			})
			client := newClient(srv.URL, 1, func(o *bedrockruntime.Options) {
				o.HTTPClient = readWholeBody{awshttp.NewBuildableClient().WithTimeout(200 * time.Millisecond)}
			})
			e, slept := newTestEmbedder(t, Config{Client: client, Dimensions: 256})
			if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
				t.Fatalf("not retried: %v", err)
			}
			if n := calls.Load(); n != 2 || len(slept.All()) != 1 {
				t.Errorf("%d requests and sleeps %v, want 2 and one", n, slept.All())
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	e, slept := newTestEmbedder(t, Config{Client: newClient(down.URL, 2), MaxRetries: 1})
	_, err := e.Embed(context.Background(), []string{"a"})
	if !errors.Is(err, search.ErrEmbedder) {
		t.Fatalf("error %v does not wrap ErrEmbedder", err)
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "after 4 attempts") || !strings.Contains(err.Error(), "connect") {
		t.Errorf("error %q", err)
	}
	checkNoLeak(t, err, "\x00")
	if len(slept.All()) != 1 {
		t.Errorf("slept %v, want one backoff", slept.All())
	}
}

// awsEnv points the standard AWS configuration chain at a sandbox: no config
// files, no instance metadata, and the Bedrock runtime endpoint at endpoint.
func awsEnv(t *testing.T, endpoint string, withKeys bool) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE":                        filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE":            filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":              "true",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME":       endpoint,
		"AWS_ENDPOINT_URL":                       "",
		"AWS_PROFILE":                            "",
		"AWS_DEFAULT_PROFILE":                    "",
		"AWS_REGION":                             "",
		"AWS_DEFAULT_REGION":                     "",
		"AWS_ACCESS_KEY_ID":                      "",
		"AWS_SECRET_ACCESS_KEY":                  "",
		"AWS_SESSION_TOKEN":                      "",
		"AWS_WEB_IDENTITY_TOKEN_FILE":            "",
		"AWS_ROLE_ARN":                           "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI":     "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_MAX_ATTEMPTS":                       "",
		"AWS_RETRY_MODE":                         "",
		"AWS_BEARER_TOKEN_BEDROCK":               "",
	} {
		t.Setenv(k, v)
	}
	if withKeys {
		t.Setenv("AWS_ACCESS_KEY_ID", testAccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", testSecretKey)
	}
}

func TestNewFromAWS(t *testing.T) {
	srv := newFakeBedrock(t, ok)
	awsEnv(t, srv.URL, true)
	ctx := context.Background()
	e, err := NewFromAWS(ctx, "eu-west-1", Config{Dimensions: 256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(ctx, []string{"a text"}); err != nil {
		t.Fatal(err)
	}
	auth := srv.seenRequests()[0].Auth
	if !strings.Contains(auth, "Credential="+testAccessKey+"/") || !strings.Contains(auth, "/eu-west-1/bedrock/aws4_request") {
		t.Errorf("Authorization %q is not signed with the environment's key for eu-west-1", auth)
	}
	client, ok := e.client.(*bedrockruntime.Client)
	if !ok {
		t.Fatalf("client %T", e.client)
	}
	for _, code := range retryableCodes {
		err := &types.ModelNotReadyException{ErrorCodeOverride: aws.String(code)}
		if !client.Options().Retryer.IsErrorRetryable(err) {
			t.Errorf("the SDK's retryer does not retry %s", code)
		}
	}
	if e.region != "eu-west-1" {
		t.Errorf("region %q", e.region)
	}

	// The region may come from the environment instead.
	t.Setenv("AWS_REGION", "us-west-2")
	if e, err := NewFromAWS(ctx, "", Config{}); err != nil || e.region != "us-west-2" {
		t.Errorf("region from AWS_REGION: %v, %v", e, err)
	}
	// A given client is used as it is.
	given := newClient(srv.URL, 1)
	if e, err := NewFromAWS(ctx, "ap-south-1", Config{Client: given}); err != nil || e.client != given {
		t.Errorf("given client not used: %v", err)
	}
}

func TestNewFromAWSWithAPIKey(t *testing.T) {
	// The SDK sends a bearer token over HTTPS only.
	srv := startFakeBedrock(t, httptest.NewTLSServer, ok)
	awsEnv(t, srv.URL, false)
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(bundle, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", bundle)
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-test")
	ctx := context.Background()
	e, err := NewFromAWS(ctx, "us-east-1", Config{Dimensions: 256})
	if err != nil {
		t.Fatalf("a Bedrock API key without AWS credentials: %v", err)
	}
	if _, err := e.Embed(ctx, []string{"a text"}); err != nil {
		t.Fatal(err)
	}
	if auth := srv.seenRequests()[0].Auth; auth != "Bearer bedrock-api-key-test" {
		t.Errorf("Authorization %q, want the API key as a bearer token", auth)
	}
}

func TestNewFromAWSFailsEarly(t *testing.T) {
	awsEnv(t, "http://127.0.0.1:1", false)
	ctx := context.Background()
	if _, err := NewFromAWS(ctx, "", Config{}); err == nil || !strings.Contains(err.Error(), "no AWS region") {
		t.Errorf("without a region: %v", err)
	}
	if _, err := NewFromAWS(ctx, "us-east-1", Config{}); err == nil || !strings.Contains(err.Error(), "no usable AWS credentials") {
		t.Errorf("without credentials: %v", err)
	}
}

// TestLive runs against Amazon Bedrock with the credentials of the
// environment, e.g.
//
//	DOCLIB_TEST_BEDROCK_REGION=us-east-1 AWS_PROFILE=dev go test -run Live ./shared/backend/bedrock
func TestLive(t *testing.T) {
	region := os.Getenv("DOCLIB_TEST_BEDROCK_REGION")
	if region == "" {
		t.Skip("set DOCLIB_TEST_BEDROCK_REGION (and AWS credentials with access to " + DefaultModel + ") to test against Amazon Bedrock")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := NewFromAWS(ctx, region, Config{Model: os.Getenv("DOCLIB_TEST_BEDROCK_MODEL")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s in %s", e.ID(), region)
	embedtest.CheckLive(ctx, t, e)
}

func TestBrokenConnectionsAreRetryable(t *testing.T) {
	answered := func(status int, err error) error {
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err}
	}
	for _, err := range []error{answered(200, fmt.Errorf("read tcp: %w", net.ErrClosed)), answered(200, io.ErrUnexpectedEOF),
		answered(200, syscall.ECONNRESET), answered(503, errors.New("unavailable"))} {
		if !retryable(err) {
			t.Errorf("%v is not retried", err)
		}
	}
	if err := answered(200, errors.New("invalid character 'x' looking for beginning of value")); retryable(err) {
		t.Errorf("%v is retried: the same answer would come again", err)
	}
}

// tokenLimit is Titan V2's input limit in tokens, which the fake enforces.
const tokenLimit = 8192

// fakeTokens is the fake's token count: a token per 4 UTF-16 code units, about
// English's share.
func fakeTokens(text string) int { return (len(utf16.Encode([]rune(text))) + 3) / 4 }

// tooManyTokensMsg is Titan's message for a text over its token limit, as
// Bedrock words it (aws-samples/amazon-bedrock-workshop issue 136).
func tooManyTokensMsg(count int) string {
	return fmt.Sprintf("400 Bad Request: Too many input tokens. Max input tokens: %d, request input token count: %d ", tokenLimit, count)
}

// longEnglish is English-like text of about n characters, words of 2 to 9
// letters, opening with a phrase that errors must not quote.
func longEnglish(n int) string {
	var b strings.Builder
	b.WriteString("the confidential opening words")
	r := rand.New(rand.NewPCG(1, 2))
	for b.Len() < n {
		b.WriteByte(' ')
		for range 2 + r.IntN(8) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return b.String()
}

// checkWordCut checks that sent is a prefix of text, shorter than limit
// UTF-16 units, and ends where a word does.
func checkWordCut(t *testing.T, text, sent string, limit int) {
	t.Helper()
	if !strings.HasPrefix(text, sent) {
		t.Fatalf("the retried input (%d bytes) is not a prefix of the text", len(sent))
	}
	if n := len(utf16.Encode([]rune(sent))); n > limit {
		t.Errorf("the retried input has %d characters, want at most %d", n, limit)
	}
	if last, _ := utf8.DecodeLastRuneInString(sent); unicode.IsSpace(last) {
		t.Errorf("the retried input ends in a space")
	}
	if next, _ := utf8.DecodeRuneInString(text[len(sent):]); !unicode.IsSpace(next) {
		t.Errorf("the retried input ends inside a word")
	}
}

func TestTooManyTokensCutShorter(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  func(count int) string
		// wantLimit is the most characters the second request may have,
		// given the first's.
		wantLimit func(n, count int) int
	}{
		{"ratio from the message", tooManyTokensMsg, func(n, count int) int {
			return int(float64(n) * tokenLimit / float64(count) * 0.9)
		}},
		{"no numbers: halved", func(int) string { return "Too many input tokens." }, func(n, _ int) int { return n / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
				if n := fakeTokens(req.InputText); n > tokenLimit {
					writeAWSError(w, http.StatusBadRequest, "ValidationException", tc.msg(n))
					return
				}
				answer(w, req)
			})
			e, slept := newTestEmbedder(t, Config{Client: newClient(srv.URL, 3), Dimensions: 256})
			text := longEnglish(40000) // about 10,000 tokens, under 50,000 characters
			got, err := e.Embed(context.Background(), []string{"a short text", text})
			if err != nil {
				t.Fatalf("the long text was not cut to fit: %v", err)
			}
			seen := srv.seenRequests()
			if len(seen) != 3 {
				t.Fatalf("%d requests, want 3: the short text, then the long one twice", len(seen))
			}
			var long []string
			for _, r := range seen {
				if r.InputText != "a short text" {
					long = append(long, r.InputText)
				}
			}
			if len(long) != 2 || long[0] != text {
				t.Fatalf("the long text was sent %d times, first cut: %v", len(long), len(long) > 0 && long[0] != text)
			}
			n := len(utf16.Encode([]rune(text)))
			checkWordCut(t, text, long[1], tc.wantLimit(n, fakeTokens(text)))
			if len(long[1]) < n/3 {
				t.Errorf("the retried input has %d bytes of %d, cut far more than needed", len(long[1]), n)
			}
			checkVector(t, 1, long[1], got[1], 256)
			checkVector(t, 0, "a short text", got[0], 256)
			if s := slept.All(); len(s) != 0 {
				t.Errorf("slept %v before sending the shorter text, want no wait", s)
			}
		})
	}
}

func TestTooManyTokensPastCuts(t *testing.T) {
	// Every text is too long: the message even quotes the input, which
	// the error must not repeat.
	srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		writeAWSError(w, http.StatusBadRequest, "ValidationException",
			tooManyTokensMsg(2*tokenLimit)+"for input "+req.InputText)
	})
	e, slept := newTestEmbedder(t, Config{Client: newClient(srv.URL, 3)})
	text := longEnglish(45000)
	_, err := e.Embed(context.Background(), []string{text})
	if err == nil {
		t.Fatal("no error")
	}
	t.Log(err)
	for _, want := range []string{"bedrock: embed texts[0]: ", `model "` + DefaultModel + `"`, "too many tokens",
		"400 ValidationException", "Max input tokens: 8192", "after 2 shorter tries", "lower Config.MaxInputChars",
		"request ID req-ValidationException"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	checkNoLeak(t, err, "the confidential opening words")
	if len(err.Error()) > 1000 {
		t.Errorf("error of %d bytes", len(err.Error()))
	}
	var ve *types.ValidationException
	if !errors.As(err, &ve) || errors.Is(err, search.ErrEmbedder) {
		t.Errorf("error %v: want the ValidationException, not ErrEmbedder", err)
	}
	seen := srv.seenRequests()
	if len(seen) != 1+maxTokenCuts {
		t.Fatalf("%d requests, want %d: the text and %d shorter tries, then no more", len(seen), 1+maxTokenCuts, maxTokenCuts)
	}
	for i := 1; i < len(seen); i++ {
		prev := len(utf16.Encode([]rune(seen[i-1].InputText)))
		// 8192 of 16384 tokens, less a tenth: 45 % of the characters.
		checkWordCut(t, text, seen[i].InputText, prev*45/100)
	}
	if s := slept.All(); len(s) != 0 {
		t.Errorf("slept %v, want no wait", s)
	}
}

func TestTooManyTokensShortTextGivesUp(t *testing.T) {
	// A one-character text the model refuses cannot be cut shorter: it
	// fails at once rather than send nothing.
	srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, req wireRequest) {
		if req.InputText != "x" {
			t.Errorf("sent %q", req.InputText)
		}
		writeAWSError(w, http.StatusBadRequest, "ValidationException", "Too many input tokens.")
	})
	e, _ := newTestEmbedder(t, Config{Client: newClient(srv.URL, 1)})
	_, err := e.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "after 0 shorter tries") {
		t.Fatalf("error %v", err)
	}
	if n := srv.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOtherValidationNotCut(t *testing.T) {
	for _, msg := range []string{
		"Malformed input request: expected maxLength: 50000, actual: 50001, please reformat your input and try again.",
		"The provided model identifier is invalid.",
		"Invalid token in request body", // mentions a token, not too many
	} {
		t.Run(msg, func(t *testing.T) {
			srv := newFakeBedrock(t, func(w http.ResponseWriter, _ *http.Request, _ wireRequest) {
				writeAWSError(w, http.StatusBadRequest, "ValidationException", msg)
			})
			e, slept := newTestEmbedder(t, Config{Client: newClient(srv.URL, 3)})
			_, err := e.Embed(context.Background(), []string{longEnglish(40000)})
			if err == nil || !strings.Contains(err.Error(), "Bedrock rejected the request") || strings.Contains(err.Error(), "too many tokens") {
				t.Fatalf("error %v", err)
			}
			if n := srv.requests.Load(); n != 1 || len(slept.All()) != 0 {
				t.Errorf("%d requests and sleeps %v, want 1 and none", n, slept.All())
			}
		})
	}
}

func TestTooManyTokensParsing(t *testing.T) {
	validation := func(msg string) error {
		return &smithy.OperationError{ServiceID: "Bedrock Runtime", OperationName: "InvokeModel",
			Err: &types.ValidationException{Message: aws.String(msg)}}
	}
	for _, tc := range []struct {
		err           error
		maxTok, count int
		ok            bool
	}{
		{validation(tooManyTokensMsg(11203)), 8192, 11203, true},
		{validation("Too many input tokens. Max input tokens: 8192, request input token count: 9875"), 8192, 9875, true},
		{validation("too many tokens"), 0, 0, true},
		{validation("Malformed input request: expected maxLength: 50000, actual: 50001"), 0, 0, false},
		{&types.ThrottlingException{Message: aws.String("Too many input tokens per minute")}, 0, 0, false},
		{errors.New("Too many input tokens. Max input tokens: 8192, request input token count: 9875"), 0, 0, false},
	} {
		maxTok, count, ok := tooManyTokens(tc.err)
		if maxTok != tc.maxTok || count != tc.count || ok != tc.ok {
			t.Errorf("tooManyTokens(%v) = %d, %d, %v; want %d, %d, %v", tc.err, maxTok, count, ok, tc.maxTok, tc.count, tc.ok)
		}
	}
	for _, tc := range []struct{ n, maxTok, count, want int }{
		{40000, 8192, 10000, 29491},
		{40000, 0, 0, 20000},
		{40000, 8192, 8000, 20000}, // a count under the limit says nothing
		{10, 8192, 9000, 8},
		{1, 0, 0, 0},
	} {
		if got := shorterLimit(tc.n, tc.maxTok, tc.count); got != tc.want {
			t.Errorf("shorterLimit(%d, %d, %d) = %d, want %d", tc.n, tc.maxTok, tc.count, got, tc.want)
		}
	}
}
