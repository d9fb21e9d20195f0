package awscheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// apiGateway checks calls to API Gateway's control plane (signing name
// "apigateway"). IAM names its actions after HTTP methods (apigateway:POST)
// and its resources after paths, arn:aws:apigateway:<region>::/apikeys.
type apiGateway struct{ c *Checker }

func (g *apiGateway) checks(_ context.Context, r *http.Request, body []byte) ([]check, error) {
	// The path as sent: TagResource's /tags/{arn} carries the ARN escaped,
	// and IAM's resource for it is the escaped form too.
	path := r.URL.EscapedPath()
	resource := "arn:aws:apigateway:" + g.c.cfg.Region + "::" + path
	ctx := map[string][]string{}

	// Tags a call sets: CreateApiKey and the other creates take them in
	// "tags", TagResource too; UntagResource names keys in the query.
	var in struct {
		Tags map[string]string `json:"tags"`
	}
	if len(body) > 0 && json.Unmarshal(body, &in) == nil && len(in.Tags) > 0 {
		keys := sortedKeys(in.Tags)
		for _, k := range keys {
			ctx["aws:RequestTag/"+k] = []string{in.Tags[k]}
		}
		ctx["aws:TagKeys"] = keys
	}
	if rest, ok := strings.CutPrefix(path, "/tags/"); ok {
		if r.Method == http.MethodDelete {
			if keys := r.URL.Query()["tagKeys"]; len(keys) > 0 {
				ctx["aws:TagKeys"] = keys
			}
		}
		target, err := url.PathUnescape(rest)
		if err != nil {
			return nil, &apiError{http.StatusBadRequest, "BadRequestException", "Invalid resource ARN " + rest}
		}
		g.resourceTags(ctx, target)
	} else {
		g.resourceTags(ctx, resource)
	}
	return []check{{action: "apigateway:" + r.Method, resource: resource, context: ctx}}, nil
}

// resourceTags adds aws:ResourceTag/<key> for the tags the resource has.
func (g *apiGateway) resourceTags(ctx map[string][]string, arn string) {
	if g.c.cfg.ResourceTags == nil {
		return
	}
	for k, v := range g.c.cfg.ResourceTags(arn) {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
}

func (g *apiGateway) refuse(w http.ResponseWriter, e *authError) {
	writeRESTError(w, http.StatusForbidden, e.code+"Exception", "message", e.msg)
}

func (g *apiGateway) deny(w http.ResponseWriter, c check, principal string, d iampolicy.Decision) {
	writeRESTError(w, http.StatusForbidden, "AccessDeniedException", "message",
		fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", principal, c.action, c.resource, d.Reason))
}

func (g *apiGateway) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	forwardTo(g.c.cfg.APIGateway, w, r, body)
}

func (g *apiGateway) fail(w http.ResponseWriter, e *apiError) {
	writeRESTError(w, e.status, e.code, "message", e.msg)
}
