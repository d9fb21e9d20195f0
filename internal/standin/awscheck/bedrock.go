package awscheck

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// bedrock checks bedrock-runtime calls (signing name "bedrock").
type bedrock struct{ c *Checker }

// bedrockActions maps the last path element of /model/{modelId}/... to the
// action IAM evaluates: Converse needs InvokeModel's right and
// ConverseStream InvokeModelWithResponseStream's, as Bedrock documents.
var bedrockActions = map[string]string{
	"invoke":                      "bedrock:InvokeModel",
	"invoke-with-response-stream": "bedrock:InvokeModelWithResponseStream",
	"converse":                    "bedrock:InvokeModel",
	"converse-stream":             "bedrock:InvokeModelWithResponseStream",
}

// inferenceProfilePrefixes start the IDs of cross-region inference
// profiles, which are an account's resources rather than foundation models.
var inferenceProfilePrefixes = []string{"us.", "eu.", "apac.", "global.", "us-gov.", "ca.", "jp.", "au."}

func (b *bedrock) checks(_ context.Context, r *http.Request, _ []byte) ([]check, error) {
	// Split the path as sent: a model ID that is an ARN carries an escaped
	// "/" that the decoded path would split.
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if len(segs) != 3 || segs[0] != "model" || r.Method != http.MethodPost {
		return nil, &apiError{http.StatusNotFound, "UnknownOperationException", "The local stand-in's Bedrock knows only POST /model/{modelId}/invoke, invoke-with-response-stream, converse and converse-stream"}
	}
	action, ok := bedrockActions[segs[2]]
	if !ok {
		return nil, &apiError{http.StatusNotFound, "UnknownOperationException", "Unknown operation " + segs[2]}
	}
	id, err := url.PathUnescape(segs[1])
	if err != nil {
		return nil, &apiError{http.StatusBadRequest, "ValidationException", "model ID: " + err.Error()}
	}
	return []check{{action: action, resource: b.modelARN(id)}}, nil
}

// modelARN is the resource a model ID names: itself when an ARN, an
// inference profile of the account for a cross-region profile ID, a
// foundation model (with no account) otherwise.
func (b *bedrock) modelARN(id string) string {
	if strings.HasPrefix(id, "arn:") {
		return id
	}
	for _, p := range inferenceProfilePrefixes {
		if strings.HasPrefix(id, p) {
			return "arn:aws:bedrock:" + b.c.cfg.Region + ":" + b.c.cfg.Account + ":inference-profile/" + id
		}
	}
	return "arn:aws:bedrock:" + b.c.cfg.Region + "::foundation-model/" + id
}

func (b *bedrock) refuse(w http.ResponseWriter, e *authError) {
	writeRESTError(w, http.StatusForbidden, e.code+"Exception", "message", e.msg)
}

func (b *bedrock) deny(w http.ResponseWriter, c check, principal string, d iampolicy.Decision) {
	writeRESTError(w, http.StatusForbidden, "AccessDeniedException", "Message",
		fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", principal, c.action, c.resource, d.Reason))
}

func (b *bedrock) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	forwardTo(b.c.cfg.Bedrock, w, r, body)
}

func (b *bedrock) fail(w http.ResponseWriter, e *apiError) {
	writeRESTError(w, e.status, e.code, "message", e.msg)
}
