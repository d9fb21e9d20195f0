package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/doclib/doclib/shared/clients/client"
	"github.com/doclib/doclib/shared/clients/render"
)

// toolError turns a failed API call into the error a tool handler returns;
// the SDK makes it a tool result with isError set, whose text is this
// error's message. The text starts with the API's code so an agent (and a
// test) can tell not_found from forbidden, then the API's own sentence, then
// what to do about it. The key is never part of it: client errors carry the
// URL without the key, and the API never echoes it.
func (t *tools) toolError(ctx context.Context, tool string, err error) error {
	var apiErr *client.Error
	var netErr *client.NetworkError
	var msg string
	switch {
	case errors.As(err, &apiErr):
		msg = render.Clean(apiErr.Code) + ": " + render.CleanText(apiErr.Message)
		if h := hint(apiErr); h != "" {
			msg += "\n" + h
		}
		if apiErr.RequestID != "" {
			msg += "\n(request ID " + apiErr.RequestID + ", to quote if you report a problem)"
		}
		t.log.InfoContext(ctx, "mcp: tool call refused by the API", "tool", tool, "status", apiErr.Status,
			"code", apiErr.Code, "requestId", apiErr.RequestID)
	case errors.As(err, &netErr):
		msg = "api_unreachable: " + netErr.Error() + "." +
			"\nIs the doclib API running, and does DOCLIB_URL point at it? Retry once it is reachable."
		t.log.WarnContext(ctx, "mcp: API unreachable", "tool", tool, "error", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		msg = "cancelled: the call was cancelled or timed out before the API answered; call again if it is still needed"
	default:
		msg = "error: " + strings.TrimPrefix(err.Error(), "client: ")
		t.log.WarnContext(ctx, "mcp: tool call failed", "tool", tool, "error", err)
	}
	return &toolFailure{msg: msg}
}

// toolFailure is an error a tool handler returned, already written for the
// agent; any other error in a tool result comes from the SDK itself (see
// callErrors).
type toolFailure struct{ msg string }

func (e *toolFailure) Error() string { return e.msg }

// callErrors answers tool calls that cannot run with a tool error in the
// API's shape (a code, then what to do): every call while the server has no
// API key, and arguments that do not fit the tool's input schema, named in
// words before anything is sent. A refusal by the SDK itself (what the check
// here did not foresee) is reworded without the validator's internals.
func (t *tools) callErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, isCall := req.(*mcp.CallToolRequest)
		if isCall && call.Params != nil {
			if t.unavailable != "" {
				if _, known := t.inputs[call.Params.Name]; known {
					return errorResult(t.unavailable), nil
				}
			}
			if s := t.inputs[call.Params.Name]; s != nil {
				if probs := argumentProblems(s, call.Params.Arguments); len(probs) > 0 {
					t.log.InfoContext(ctx, "mcp: arguments refused", "tool", call.Params.Name, "problems", probs)
					return errorResult("bad_request: " + strings.Join(probs, "; ") +
						".\nFix the argument it names and call again; nothing was sent to the API."), nil
				}
			}
		}
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || r == nil || !r.IsError {
			return res, err
		}
		var tf *toolFailure
		if errors.As(r.GetError(), &tf) {
			return res, err
		}
		t.log.WarnContext(ctx, "mcp: the SDK refused a call", "method", method, "error", r.GetError())
		r.Content = []mcp.Content{&mcp.TextContent{Text: "bad_request: the arguments do not fit the tool's input schema; " +
			"compare them with its inputSchema (names, types and bounds) and call again. Nothing was sent to the API."}}
		return res, err
	}
}

// errorResult is a tool error with text for the agent.
func errorResult(text string) *mcp.CallToolResult {
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	r.SetError(&toolFailure{msg: text})
	return r
}

// hint says what an agent can do after an API error, where the code alone
// does not make it obvious.
func hint(e *client.Error) string {
	switch e.Code {
	case "not_found":
		return "IDs must be exact: documents by doc_… ID, libraries by lib_… ID (or a slug the user gave), as returned by list_libraries, search_documents or list_documents. Anything outside this key's scope is not found too."
	case "bad_request":
		return "Fix the argument the message names and call again."
	case "forbidden":
		return "This API key has no recording-details access, so source recordings cannot be read with it; the document's own content (get_document) is the authoritative account."
	case "insufficient_ai_credit":
		return "Search needs AI credit and the workspace has none left; it does not fall back to word match. Browse instead with list_libraries, list_documents (its search argument is a plain substring match that spends no credit) and get_document."
	case "subscription_suspended":
		return "The workspace's subscription is suspended, so search is unavailable; browse with list_libraries, list_documents and get_document."
	case "rate_limited":
		if e.RetryAfter > 0 {
			return fmt.Sprintf("Too many requests for this key: wait %s before calling again.", e.RetryAfter)
		}
		return "Too many requests for this key: wait a minute before calling again."
	case "unauthorised", "api_key_expired", "api_key_device_removed":
		return "The API key (DOCLIB_API_KEY) is not accepted; a person has to give the server a valid key. Retrying will not help."
	}
	return ""
}
