package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/doclib/doclib/shared/backend/embedcall"
	"github.com/doclib/doclib/shared/search"
)

const (
	jsonType = "application/json"
	// maxCutLookback is how far back from the limit a cut looks for a
	// whitespace before it cuts inside a word.
	maxCutLookback = 200
)

// titanRequest is the InvokeModel body for Titan Text Embeddings V2.
type titanRequest struct {
	InputText  string `json:"inputText"`
	Dimensions int    `json:"dimensions"`
	// Normalize is asked for although Embed normalises anyway: it is free,
	// and keeps the vectors unit length for anyone reading them raw.
	Normalize bool `json:"normalize"`
}

// titanResponse is the part of the answer we use; embeddingsByType, sent when
// the request asks for several types, is ignored. The numbers are json.Number
// so that a null (which would decode silently as 0 into a float) is caught.
type titanResponse struct {
	Embedding           []json.Number `json:"embedding"`
	InputTextTokenCount int           `json:"inputTextTokenCount"`
}

// apiError is a failed call described for people: its message names the
// model, the HTTP status, the error code and what to fix, without the text or
// the SDK's request dump. It wraps the SDK's error, so that errors.As finds
// the typed exception.
type apiError struct {
	msg string
	err error
}

func (a *apiError) Error() string { return a.msg }
func (a *apiError) Unwrap() error { return a.err }

// embedOne embeds one non-empty text, retrying what may pass on a later call,
// and returns its unit-length vector. A text the model finds too many tokens
// in is cut shorter and sent again, at most maxTokenCuts times. throttled is
// told when Bedrock throttles, before the backoff.
func (e *Embedder) embedOne(ctx context.Context, text string, throttled func()) ([]float32, error) {
	text = cut(text, e.maxInputChars)
	in := &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(e.model),
		ContentType: aws.String(jsonType),
		Accept:      aws.String(jsonType),
	}
	if err := e.setBody(in, text); err != nil {
		return nil, err
	}
	attempts, retries, cuts := 0, 0, 0
	for {
		out, err := e.client.InvokeModel(ctx, in)
		if err == nil {
			return e.decode(out.Body)
		}
		// A caller that gave up is not a provider outage.
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		attempts += sdkAttempts(err)
		if maxTokens, count, ok := tooManyTokens(err); ok {
			// The 50,000-character cut did not keep the text under the
			// model's 8,192 tokens: dense text (code, numbers, most
			// scripts other than Latin) has fewer characters per token.
			// The same text would fail again, so it is sent shorter, not
			// retried as it is.
			var shorter string
			if cuts < maxTokenCuts {
				shorter = cut(text, shorterLimit(utf16Count(text), maxTokens, count))
			}
			if strings.TrimSpace(shorter) == "" {
				return nil, e.stillTooManyTokens(err, text, cuts)
			}
			text, cuts = shorter, cuts+1
			if err := e.setBody(in, text); err != nil {
				return nil, err
			}
			continue
		}
		if !retryable(err) {
			return nil, e.fatal(err, text)
		}
		if isThrottling(err) {
			throttled()
		}
		if retries >= e.maxRetries {
			return nil, fmt.Errorf("%w: model %q still throttled or failing after %d attempts: %w",
				search.ErrEmbedder, e.model, attempts, &apiError{msg: e.describe(err, text), err: err})
		}
		if err := e.sleep(ctx, e.backoff(retries)); err != nil {
			return nil, err
		}
		retries++
	}
}

// setBody puts Titan V2's request for text into in.
func (e *Embedder) setBody(in *bedrockruntime.InvokeModelInput, text string) error {
	body, err := json.Marshal(titanRequest{InputText: text, Dimensions: e.dims, Normalize: true})
	if err != nil {
		return fmt.Errorf("encode the request: %w", err)
	}
	in.Body = body
	return nil
}

const (
	// maxTokenCuts is how many times embedOne cuts a text shorter after
	// the model said it holds too many tokens.
	maxTokenCuts = 2
	// tokenCutMargin scales the cut that the model's token counts suggest,
	// since tokens are not spread evenly through a text.
	tokenCutMargin = 0.9
)

var (
	// tooManyTokensRE recognises Titan's answer to a text over its token
	// limit: "400 Bad Request: Too many input tokens. Max input tokens:
	// 8192, request input token count: 9875" (a ValidationException).
	tooManyTokensRE = regexp.MustCompile(`(?i)too many (?:input )?tokens|max(?:imum)? input tokens`)
	maxTokensRE     = regexp.MustCompile(`(?i)max(?:imum)? input tokens\s*(?:is|:|=)?\s*(\d{1,9})\b`)
	tokenCountRE    = regexp.MustCompile(`(?i)input token count\s*(?:is|:|=)?\s*(\d{1,9})\b`)
)

// tooManyTokens tells whether err is the model's refusal of a text with too
// many tokens and, when its message says, the limit and the text's count
// (0 when it does not).
func tooManyTokens(err error) (maxTokens, count int, ok bool) {
	var validation *types.ValidationException
	if !errors.As(err, &validation) {
		return 0, 0, false
	}
	msg := validation.ErrorMessage()
	if !tooManyTokensRE.MatchString(msg) {
		return 0, 0, false
	}
	number := func(re *regexp.Regexp) int {
		if m := re.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		return 0
	}
	return number(maxTokensRE), number(tokenCountRE), true
}

// shorterLimit is the length, in UTF-16 code units, to cut a text of n units
// to after the model counted count tokens in it, over its limit of
// maxTokens: the same share of characters, less a margin; or half when the
// model did not give both numbers. It is always below n.
func shorterLimit(n, maxTokens, count int) int {
	limit := n / 2
	if maxTokens > 0 && count > maxTokens {
		limit = int(float64(n) * float64(maxTokens) / float64(count) * tokenCutMargin)
	}
	return max(min(limit, n-1), 0)
}

// stillTooManyTokens describes a text that the model still found too long
// after cuts cuts. Like every error here, it does not quote the text.
func (e *Embedder) stillTooManyTokens(err error, text string, cuts int) error {
	msg := fmt.Sprintf("Bedrock rejected the text for model %q as too many tokens (%s), still at %d characters after %d shorter tries; the model takes at most 8,192 tokens: lower Config.MaxInputChars or split the text",
		e.model, e.describe(err, text), utf16Count(text), cuts)
	return &apiError{msg: msg, err: err}
}

// sdkAttempts is the number of HTTP attempts the SDK made for one call that
// failed: its retryer reports them when it gives up, and a call it did not
// retry made one.
func sdkAttempts(err error) int {
	var m *retry.MaxAttemptsError
	if errors.As(err, &m) && m.Attempt > 0 {
		return m.Attempt
	}
	return 1
}

// retryable tells the failures another call may cure (throttling, a model
// still loading or timing out, 5xx answers, timeouts and dropped connections)
// from those it cannot.
func retryable(err error) bool {
	var (
		throttling  *types.ThrottlingException
		unavailable *types.ServiceUnavailableException
		notReady    *types.ModelNotReadyException
		timeout     *types.ModelTimeoutException
		internal    *types.InternalServerException
	)
	if errors.As(err, &throttling) || errors.As(err, &unavailable) || errors.As(err, &notReady) ||
		errors.As(err, &timeout) || errors.As(err, &internal) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if _, ok := retry.DefaultThrottleErrorCodes[api.ErrorCode()]; ok {
			return true
		}
	}
	// A connection that broke while the answer was being read: the SDK
	// reports the answer's status (often 200) with the read error, and a
	// new connection cures it (aws-sdk-go-v2 retries net.ErrClosed by default
	// for the same reason).
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	if status := httpStatus(err); status != 0 {
		return status == 408 || status == 429 || status >= 500
	}
	// No answer at all: the SDK's own judgement of connection errors and
	// timeouts (and not of a cancelled context, which it rules out).
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// isThrottling tells the failures that say Bedrock is busy: throttling,
// a service unavailable, a 429 or a 503. Fewer calls should go at once.
func isThrottling(err error) bool {
	var (
		throttling  *types.ThrottlingException
		unavailable *types.ServiceUnavailableException
	)
	if errors.As(err, &throttling) || errors.As(err, &unavailable) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		if _, ok := retry.DefaultThrottleErrorCodes[api.ErrorCode()]; ok {
			return true
		}
	}
	status := httpStatus(err)
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// httpStatus is the status of the service's answer, or 0 when there was none.
func httpStatus(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil && re.Response.Response != nil {
		return re.Response.StatusCode
	}
	return 0
}

// fatal describes a failure that retrying cannot cure, with the setting or
// permission to fix.
func (e *Embedder) fatal(err error, text string) error {
	desc := e.describe(err, text)
	var (
		denied     *types.AccessDeniedException
		notFound   *types.ResourceNotFoundException
		validation *types.ValidationException
		quota      *types.ServiceQuotaExceededException
		msg        string
	)
	switch {
	case errors.As(err, &denied):
		msg = fmt.Sprintf("Bedrock denied access to model %q (%s); enable model access for %q in the Bedrock console%s and check that the IAM identity has the permission bedrock:InvokeModel on it",
			e.model, desc, e.model, e.inRegion())
	case errors.As(err, &notFound):
		msg = fmt.Sprintf("model %q not found%s (%s); check the model ID (Config.Model) and the region", e.model, e.inRegion(), desc)
	case errors.As(err, &validation):
		msg = fmt.Sprintf("Bedrock rejected the request for model %q (%s)", e.model, desc)
		// The token limit in words other than those tooManyTokens knows.
		if m := strings.ToLower(validation.ErrorMessage()); strings.Contains(m, "token") &&
			(strings.Contains(m, "many") || strings.Contains(m, "max") || strings.Contains(m, "exceed") || strings.Contains(m, "long")) {
			msg += "; the text has too many tokens for the model (at most 8,192): lower Config.MaxInputChars"
		}
	case errors.As(err, &quota):
		msg = fmt.Sprintf("Bedrock refused model %q over a service quota (%s); check the account's Bedrock quotas%s", e.model, desc, e.inRegion())
	default:
		msg = fmt.Sprintf("InvokeModel on model %q failed (%s)", e.model, desc)
	}
	return &apiError{msg: msg, err: err}
}

func (e *Embedder) inRegion() string {
	if e.region == "" {
		return ""
	}
	return " in region " + e.region
}

// describe sums up a failed call as "<status> <code>: <message>, request ID
// <id>", or the SDK's own words when no answer came. The text is cut out of
// the service's message, in case it quotes the input.
func (e *Embedder) describe(err error, text string) string {
	var b strings.Builder
	var api smithy.APIError
	if !errors.As(err, &api) {
		// No error code: a dropped connection, a timeout, an answer that
		// did not parse.
		if status := httpStatus(err); status != 0 {
			fmt.Fprintf(&b, "HTTP %d: ", status)
		}
		var send *smithyhttp.RequestSendError
		if errors.As(err, &send) {
			b.WriteString("no answer: ")
		}
		b.WriteString(clean(cause(err).Error(), text))
		return b.String()
	}
	if status := httpStatus(err); status != 0 {
		fmt.Fprintf(&b, "%d ", status)
	}
	b.WriteString(api.ErrorCode())
	if msg := clean(api.ErrorMessage(), text); msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.ServiceRequestID() != "" {
		b.WriteString(", request ID ")
		b.WriteString(re.ServiceRequestID())
	}
	return b.String()
}

// cause strips the SDK's wrappers (operation, attempts, response), whose
// words add nothing to a message that names the model and the attempts.
func cause(err error) error {
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) && send.Err != nil {
		return send.Err
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) && resp.Err != nil {
		return resp.Err
	}
	var attempts *retry.MaxAttemptsError
	if errors.As(err, &attempts) && attempts.Err != nil {
		return attempts.Err
	}
	var op *smithy.OperationError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// clean makes a message fit one log line and removes the text it may quote
// (a text under 8 bytes is too likely to stand for other words as well).
func clean(msg, text string) string {
	if len(text) < 8 {
		text = ""
	}
	return embedcall.Clean(msg, text, "[the text]")
}

// decode parses and checks a successful answer and returns its vector,
// normalised.
func (e *Embedder) decode(data []byte) ([]float32, error) {
	var resp titanResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		if !json.Valid(data) {
			return nil, fmt.Errorf("the answer of model %q is not JSON; is it a Titan Text Embeddings V2 model?", e.model)
		}
		return nil, fmt.Errorf("the answer of model %q is not a Titan embedding: %w", e.model, err)
	}
	if len(resp.Embedding) == 0 {
		return nil, fmt.Errorf("the answer of model %q holds no embedding; is it a Titan Text Embeddings V2 model?", e.model)
	}
	if len(resp.Embedding) != e.dims {
		return nil, fmt.Errorf("model %q returned a vector of %d dimensions, want %d (Config.Dimensions)", e.model, len(resp.Embedding), e.dims)
	}
	v, err := embedcall.ParseVector(resp.Embedding, fmt.Sprintf("the embedding of model %q", e.model))
	if err != nil {
		return nil, err
	}
	if err := search.CheckVectors([][]float32{v}, 1, e.dims); err != nil {
		return nil, err
	}
	return v, nil
}

// cut shortens text to at most limit characters, counted in UTF-16 code units
// (a rune outside the Basic Multilingual Plane counts two), never splitting a
// rune. It prefers to end at a whitespace within maxCutLookback characters
// (a tenth of the limit for small limits) of the limit, so that the model does
// not see half a word.
func cut(text string, limit int) string {
	if len(text) <= limit {
		return text // no more runes, nor UTF-16 units, than bytes
	}
	n, end := 0, -1
	for i, r := range text {
		w := utf16Len(r)
		if n+w > limit {
			end = i
			break
		}
		n += w
	}
	if end < 0 {
		return text
	}
	head := text[:end]
	if r, _ := utf8.DecodeRuneInString(text[end:]); unicode.IsSpace(r) {
		// The limit falls between words already.
		if t := strings.TrimRightFunc(head, unicode.IsSpace); t != "" {
			return t
		}
		return head
	}
	lookback := min(maxCutLookback, limit/10)
	for i, k := len(head), 0; i > 0 && k < lookback; k++ {
		r, size := utf8.DecodeLastRuneInString(head[:i])
		if unicode.IsSpace(r) {
			if t := strings.TrimRightFunc(head[:i], unicode.IsSpace); t != "" {
				return t
			}
			break
		}
		i -= size
	}
	return head
}

// utf16Count is the length of text in UTF-16 code units, as cut counts.
func utf16Count(text string) int {
	n := 0
	for _, r := range text {
		n += utf16Len(r)
	}
	return n
}

func utf16Len(r rune) int {
	if r > 0xFFFF && r <= utf8.MaxRune {
		return 2
	}
	return 1
}
