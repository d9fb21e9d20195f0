package fakebedrock

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/doclib/doclib/shared/backend/bedrock"
)

// start serves s and returns the SDK's client for it, configured as in
// production but for the endpoint and a retryer that does not wait.
func start(t *testing.T, s *Server) (*bedrockruntime.Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return bedrockruntime.New(bedrockruntime.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			o.RateLimiter = ratelimit.None
		}),
	}), srv
}

// answer is Titan V2's response body.
type answer struct {
	Embedding           []float64            `json:"embedding"`
	InputTextTokenCount int                  `json:"inputTextTokenCount"`
	EmbeddingsByType    map[string][]float64 `json:"embeddingsByType"`
}

func invoke(t *testing.T, c *bedrockruntime.Client, model string, body any) (*bedrockruntime.InvokeModelOutput, error) {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	return c.InvokeModel(context.Background(), &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(model), ContentType: aws.String("application/json"), Accept: aws.String("application/json"), Body: raw,
	})
}

func decodeAnswer(t *testing.T, out *bedrockruntime.InvokeModelOutput) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal(out.Body, &a); err != nil {
		t.Fatalf("answer %s: %v", out.Body, err)
	}
	return a
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func TestInvokeModelAnswers(t *testing.T) {
	s := New()
	c, _ := start(t, s)
	text := "How do I reset my password?"

	out, err := invoke(t, c, ModelID, map[string]any{"inputText": text})
	if err != nil {
		t.Fatal(err)
	}
	a := decodeAnswer(t, out)
	if len(a.Embedding) != DefaultDimensions || math.Abs(norm(a.Embedding)-1) > 1e-5 {
		t.Errorf("default answer: %d dimensions, norm %f; want %d, unit length", len(a.Embedding), norm(a.Embedding), DefaultDimensions)
	}
	if a.InputTextTokenCount != TokenCount(text) || a.InputTextTokenCount == 0 {
		t.Errorf("inputTextTokenCount %d, want %d", a.InputTextTokenCount, TokenCount(text))
	}
	// embeddingsByType is always there, float when no type was asked for.
	if len(a.EmbeddingsByType) != 1 || !slices.Equal(a.EmbeddingsByType["float"], a.Embedding) {
		t.Errorf("embeddingsByType %v, want only float, equal to embedding", keys(a.EmbeddingsByType))
	}
	if aws.ToString(out.ContentType) != "application/json" {
		t.Errorf("content type %q", aws.ToString(out.ContentType))
	}

	// The same text, the same vector; at 256 dimensions, the one Embedding gives.
	for range 2 {
		out, err := invoke(t, c, ModelID, map[string]any{"inputText": text, "dimensions": 256, "normalize": true})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := s.Embedding(text, 256)
		got := decodeAnswer(t, out).Embedding
		if len(got) != 256 {
			t.Fatalf("%d dimensions, want 256", len(got))
		}
		for i := range got {
			if math.Abs(got[i]-float64(want[i])) > 1e-6 {
				t.Fatalf("component %d: %f, want %f", i, got[i], want[i])
			}
		}
	}

	// Not normalised: longer than one, same direction.
	out, err = invoke(t, c, ModelID, map[string]any{"inputText": text, "dimensions": 512, "normalize": false})
	if err != nil {
		t.Fatal(err)
	}
	raw := decodeAnswer(t, out).Embedding
	unit, _ := s.Embedding(text, 512)
	if n := norm(raw); n <= 1.01 || math.Abs(raw[0]/n-float64(unit[0])) > 1e-5 {
		t.Errorf("normalize false: norm %f, first component %f; want longer than 1, direction of %f", n, raw[0]/n, unit[0])
	}

	// Both types: binary is the sign of each float component.
	out, err = invoke(t, c, ModelID, map[string]any{"inputText": text, "dimensions": 256, "embeddingTypes": []string{"binary", "float"}})
	if err != nil {
		t.Fatal(err)
	}
	a = decodeAnswer(t, out)
	bits, floats := a.EmbeddingsByType["binary"], a.EmbeddingsByType["float"]
	if len(bits) != 256 || !slices.Equal(floats, a.Embedding) {
		t.Fatalf("embeddingsByType %v: want binary and float of 256", keys(a.EmbeddingsByType))
	}
	for i, b := range bits {
		if want := map[bool]float64{true: 1, false: 0}[floats[i] > 0]; b != want {
			t.Fatalf("binary[%d] = %v for float %f", i, b, floats[i])
		}
	}

	// A foundation-model ARN names the model too.
	if _, err := invoke(t, c, "arn:aws:bedrock:eu-west-1::foundation-model/"+ModelID, map[string]any{"inputText": text}); err != nil {
		t.Errorf("by ARN: %v", err)
	}
	if n := s.Calls(); n != 6 {
		t.Errorf("Calls = %d, want 6", n)
	}
}

func keys(m map[string][]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// The project's Embedder works against the fake as against Bedrock, and the
// vectors carry enough meaning for tests: shared words and synonyms rank
// above unrelated text.
func TestWithTheProjectsEmbedder(t *testing.T) {
	s := New()
	c, _ := start(t, s)
	e, err := bedrock.New(bedrock.Config{Client: c, Dimensions: 512, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"reset a forgotten password", "how to reset my password", "quarterly invoice payment terms"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	dot := func(a, b []float32) (d float64) {
		for i := range a {
			d += float64(a[i]) * float64(b[i])
		}
		return d
	}
	if near, far := dot(vs[0], vs[1]), dot(vs[0], vs[2]); near <= far+0.2 {
		t.Errorf("similarity of related texts %.3f, of unrelated %.3f: want the related clearly closer", near, far)
	}

	// A dense text under the character limit but over the token limit: the
	// Embedder reads the fake's refusal, cuts the text and succeeds.
	before := s.Calls()
	digits := strings.Repeat("1234567890 ", 40000/11)
	if TokenCount(digits) <= MaxInputTokens {
		t.Fatalf("test text has %d tokens, want more than %d", TokenCount(digits), MaxInputTokens)
	}
	if _, err := e.Embed(context.Background(), []string{digits}); err != nil {
		t.Errorf("Embed of a text over the token limit: %v", err)
	}
	if n := s.Calls() - before; n < 2 {
		t.Errorf("%d calls for a text over the token limit, want the refusal and a shorter try", n)
	}
}

func TestInvokeModelRefusals(t *testing.T) {
	s := New()
	c, srv := start(t, s)
	ok := map[string]any{"inputText": "hello"}
	for _, tc := range []struct {
		name   string
		model  string
		body   any
		status int
		code   string
		msg    string
	}{
		{"unknown model", "amazon.titan-embed-text-v9:0", ok, 400, "ValidationException", "The provided model identifier is invalid."},
		{"another model's ARN", "arn:aws:bedrock:eu-west-1::foundation-model/amazon.titan-embed-text-v1", ok, 400, "ValidationException", "The provided model identifier is invalid."},
		{"missing provisioned model", "arn:aws:bedrock:eu-west-1:123456789012:provisioned-model/abc123def456", ok, 404, "ResourceNotFoundException", "The specified resource ARN was not found."},
		{"bad dimensions", ModelID, map[string]any{"inputText": "hello", "dimensions": 768}, 400, "ValidationException",
			"Malformed input request: 768 is not a valid enum value, please reformat your input and try again."},
		{"dimensions as a string", ModelID, map[string]any{"inputText": "hello", "dimensions": "512"}, 400, "ValidationException", "512 is not a valid enum value"},
		{"empty inputText", ModelID, map[string]any{"inputText": ""}, 400, "ValidationException",
			"Malformed input request: expected minLength: 1, actual: 0, please reformat your input and try again."},
		{"no inputText", ModelID, map[string]any{"dimensions": 256}, 400, "ValidationException", "required key [inputText] not found"},
		{"inputText not a string", ModelID, map[string]any{"inputText": 42}, 400, "ValidationException", "expected type: String, found: Integer"},
		{"extra field", ModelID, map[string]any{"inputText": "hello", "texts": []string{"hello"}}, 400, "ValidationException",
			"Malformed input request: extraneous key [texts] is not permitted, please reformat your input and try again."},
		{"normalize not a bool", ModelID, map[string]any{"inputText": "hello", "normalize": "yes"}, 400, "ValidationException", "expected type: Boolean, found: String"},
		{"unknown embedding type", ModelID, map[string]any{"inputText": "hello", "embeddingTypes": []string{"int8"}}, 400, "ValidationException", "int8 is not a valid enum value"},
		{"two violations", ModelID, map[string]any{"inputText": "", "dimensions": 1}, 400, "ValidationException",
			"Malformed input request: 2 schema violations found, please reformat your input and try again."},
		{"too many characters", ModelID, map[string]any{"inputText": strings.Repeat("a ", 25000) + "b"}, 400, "ValidationException",
			"Malformed input request: expected maxLength: 50000, actual: 50001, please reformat your input and try again."},
		{"too many tokens", ModelID, map[string]any{"inputText": strings.Repeat("1234567890 ", 4000)}, 400, "ValidationException",
			"400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 16000 "},
		{"not JSON", ModelID, []byte("inputText=hello"), 400, "ValidationException", "Malformed input request, please reformat your input and try again."},
		{"not an object", ModelID, []byte(`["hello"]`), 400, "ValidationException", "expected type: JSONObject, found: JSONArray"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := invoke(t, c, tc.model, tc.body)
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tc.code || !strings.Contains(apiErr.ErrorMessage(), tc.msg) {
				t.Fatalf("error %v, want %s %q", err, tc.code, tc.msg)
			}
			var re interface{ HTTPStatusCode() int }
			if !errors.As(err, &re) || re.HTTPStatusCode() != tc.status {
				t.Errorf("status of %v, want %d", err, tc.status)
			}
		})
	}
	// The typed exceptions the project's client tells apart.
	_, err := invoke(t, c, "nope.model-v1:0", ok)
	if ve := (*brtypes.ValidationException)(nil); !errors.As(err, &ve) {
		t.Errorf("unknown model: %v, want a *types.ValidationException", err)
	}
	_, err = invoke(t, c, "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/x", ok)
	if nf := (*brtypes.ResourceNotFoundException)(nil); !errors.As(err, &nf) {
		t.Errorf("missing inference profile: %v, want a *types.ResourceNotFoundException", err)
	}

	// The wire shape of a refusal, and of a content type the model does not take.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/model/"+ModelID+"/invoke", strings.NewReader(`{"inputText":"hello"}`))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var msg struct{ Message string }
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-ErrorType") != "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" ||
		resp.Header.Get("X-Amzn-Requestid") == "" || json.Unmarshal(body, &msg) != nil ||
		msg.Message != "The provided Content Type is invalid or not supported for this model" {
		t.Errorf("text/plain: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	// Only InvokeModel is served.
	_, err = c.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(ModelID)})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "UnknownOperationException" {
		t.Errorf("Converse: %v, want UnknownOperationException", err)
	}
}

func TestFailures(t *testing.T) {
	s := New()
	c, _ := start(t, s)
	ok := map[string]any{"inputText": "hello"}

	// A throttled call is retried by the SDK and then answered.
	s.Fail(Throttling)
	if _, err := invoke(t, c, ModelID, ok); err != nil {
		t.Errorf("after one throttle: %v", err)
	}
	if n := s.Calls(); n != 2 {
		t.Errorf("Calls = %d, want 2 (throttled, then answered)", n)
	}

	// Throttled for good: the SDK gives up with the ThrottlingException.
	s.FailAlways(Throttling)
	_, err := invoke(t, c, ModelID, ok)
	var te *brtypes.ThrottlingException
	if !errors.As(err, &te) || !strings.Contains(te.ErrorMessage(), "Too many requests") {
		t.Errorf("always throttled: %v, want ThrottlingException", err)
	}
	// Queued failures come first.
	s.Fail(Failure{Status: 400, Code: "ServiceQuotaExceededException", Message: "over quota"})
	_, err = invoke(t, c, ModelID, ok)
	if qe := (*brtypes.ServiceQuotaExceededException)(nil); !errors.As(err, &qe) {
		t.Errorf("queued failure: %v, want ServiceQuotaExceededException", err)
	}
	s.ClearFailures()
	if _, err := invoke(t, c, ModelID, ok); err != nil {
		t.Errorf("after ClearFailures: %v", err)
	}

	// A 500 that outlasts the SDK's retries.
	s.Fail(InternalServer, InternalServer, InternalServer)
	_, err = invoke(t, c, ModelID, ok)
	var ie *brtypes.InternalServerException
	if !errors.As(err, &ie) {
		t.Errorf("three 500s: %v, want InternalServerException", err)
	}
}

func TestLatency(t *testing.T) {
	s := New()
	c, srv := start(t, s)
	ok := map[string]any{"inputText": "hello"}
	call := func(timeout time.Duration) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		body, _ := json.Marshal(ok)
		begin := time.Now()
		_, err := c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(ModelID), ContentType: aws.String("application/json"), Body: body})
		return time.Since(begin), err
	}

	// One slow call, then fast ones again.
	s.Fail(Delay(150 * time.Millisecond))
	if took, err := call(5 * time.Second); err != nil || took < 150*time.Millisecond {
		t.Errorf("delayed call took %v, %v; want at least 150ms and an answer", took, err)
	}
	if took, err := call(5 * time.Second); err != nil || took > time.Second {
		t.Errorf("next call took %v, %v; want a quick answer", took, err)
	}

	// Slower than the caller's deadline: the caller's timeout, not an answer.
	s.SetLatency(2 * time.Second)
	took, err := call(100 * time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || took > time.Second {
		t.Errorf("slow call: %v after %v, want the caller's deadline at 100ms", err, took)
	}
	s.SetLatency(0)
	if _, err := call(5 * time.Second); err != nil {
		t.Errorf("after SetLatency(0): %v", err)
	}
	// The slow call's handler saw the caller go: nothing holds the server.
	begin := time.Now()
	srv.Close()
	if took := time.Since(begin); took > time.Second {
		t.Errorf("closing the server took %v: a handler outlived its caller", took)
	}
}

func TestTokenCount(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello", 1},
		{"  hello   world  ", 2},
		{"internationalization", 4},
		{"hello, world!", 4},
		{"1234567", 3},
		{"日本語", 3},
		{"Привет", 2},
		{"café", 1},
	} {
		if got := TokenCount(tc.text); got != tc.want {
			t.Errorf("TokenCount(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	// English prose: 30,000 characters fit the token limit, 50,000 do not.
	p := "The quick brown fox jumps over the lazy dog. Search finds documents by their words and by their meaning. "
	for n, fits := range map[int]bool{30000: true, 50000: false} {
		text := strings.Repeat(p, n/len(p))
		if got := TokenCount(text) <= MaxInputTokens; got != fits {
			t.Errorf("%d characters of prose: %d tokens, fits %v, want %v", len(text), TokenCount(text), got, fits)
		}
	}
}

// Every valid length gives a vector; a text the hashing embedder sees no
// word in still gets a non-zero one.
func TestEmbeddingNeverZero(t *testing.T) {
	s := New()
	for _, d := range []int{256, 512, 1024} {
		v, err := s.Embedding("?!", d)
		if err != nil || len(v) != d {
			t.Fatalf("Embedding(?!, %d) = %d dimensions, %v", d, len(v), err)
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-6 {
			t.Errorf("Embedding(?!, %d) has squared norm %f, want 1", d, n)
		}
	}
	if _, err := s.Embedding("x", 300); err == nil || !strings.Contains(err.Error(), strconv.Itoa(300)) {
		t.Errorf("Embedding at 300 dimensions: %v", err)
	}
}
