package restapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// defaultStatus is each gateway response type's status when the API does
// not set one (API Gateway's documented defaults).
var defaultStatus = map[string]int{
	"ACCESS_DENIED":                  403,
	"API_CONFIGURATION_ERROR":        500,
	"AUTHORIZER_CONFIGURATION_ERROR": 500,
	"AUTHORIZER_FAILURE":             500,
	"BAD_REQUEST_PARAMETERS":         400,
	"BAD_REQUEST_BODY":               400,
	"EXPIRED_TOKEN":                  403,
	"INTEGRATION_FAILURE":            504,
	"INTEGRATION_TIMEOUT":            504,
	"INVALID_API_KEY":                403,
	"INVALID_SIGNATURE":              403,
	"MISSING_AUTHENTICATION_TOKEN":   403,
	"QUOTA_EXCEEDED":                 429,
	"REQUEST_TOO_LARGE":              413,
	"RESOURCE_NOT_FOUND":             404,
	"THROTTLED":                      429,
	"UNAUTHORIZED":                   401,
	"UNSUPPORTED_MEDIA_TYPE":         415,
	"WAF_FILTERED":                   403,
}

// templateVar is a $context variable reference in a mapping template,
// $context.a.b or ${context.a.b}.
var templateVar = regexp.MustCompile(`\$\{context\.([A-Za-z0-9_.]+)\}|\$context\.([A-Za-z0-9_.]+)`)

// checkTemplate refuses templates using more of VTL than variable
// references: the stand-in would render them wrongly.
func checkTemplate(t string) error {
	rest := templateVar.ReplaceAllString(t, "")
	if strings.Contains(rest, "$") || strings.Contains(rest, "#if") || strings.Contains(rest, "#set") || strings.Contains(rest, "#foreach") {
		return fmt.Errorf("template %q uses VTL beyond $context references; the stand-in renders only those", t)
	}
	return nil
}

// parameterSource checks a gateway response header's value: a 'literal',
// or context.<var>, method.request.header.<name>,
// method.request.querystring.<name>, method.request.path.<name>.
func parameterSource(v string) (string, error) {
	switch {
	case len(v) >= 2 && strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'"):
		return "literal", nil
	case strings.HasPrefix(v, "context."), strings.HasPrefix(v, "method.request.header."),
		strings.HasPrefix(v, "method.request.querystring."), strings.HasPrefix(v, "method.request.path."):
		return "variable", nil
	}
	return "", fmt.Errorf("value %q is neither a 'literal' nor a request or context variable", v)
}

// contextValue is one $context variable of the request.
func (g *Gateway) contextValue(c *call, name, responseType string) string {
	switch name {
	case "requestId":
		return c.requestID
	case "apiId":
		return g.api.ID
	case "stage":
		return g.api.Stage
	case "httpMethod":
		return c.r.Method
	case "identity.sourceIp":
		return c.sourceIP
	case "identity.apiKeyId":
		return c.apiKeyID
	case "error.message":
		return c.errMessage
	case "error.messageString":
		b, _ := json.Marshal(c.errMessage)
		return string(b)
	case "error.responseType":
		return responseType
	case "resourcePath":
		if c.resource != nil {
			return c.resource.res.Path
		}
		return ""
	}
	if key, ok := strings.CutPrefix(name, "authorizer."); ok {
		if v, ok := c.authorizer[key]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	g.opts.Logf("restapi: $context.%s is not emulated; rendered empty", name)
	return ""
}

func (g *Gateway) gatewayResponse(w http.ResponseWriter, c *call, typ string) {
	g.gatewayResponseStatus(w, c, typ, defaultStatus[typ])
}

// gatewayResponseStatus answers with the API's gateway response of typ:
// its own, else DEFAULT_4XX or DEFAULT_5XX by status, else API Gateway's
// default {"message": ...}. status is the type's status when the API's
// response does not set one.
func (g *Gateway) gatewayResponseStatus(w http.ResponseWriter, c *call, typ string, status int) {
	gr, ok := g.api.GatewayResponses[typ]
	if !ok {
		def := "DEFAULT_4XX"
		if status >= 500 {
			def = "DEFAULT_5XX"
		}
		gr, ok = g.api.GatewayResponses[def]
	}
	if ok && gr.Status != 0 {
		status = gr.Status
	}
	hdr := w.Header()
	hdr.Set("X-Amzn-ErrorType", errorType(typ))
	body := []byte(fmt.Sprintf(`{"message":%s}`, jsonOrNull(c.errMessage)))
	hdr.Set("Content-Type", "application/json")
	if ok {
		for k, v := range gr.Parameters {
			name := strings.TrimPrefix(k, "gatewayresponse.header.")
			hdr.Set(name, g.parameterValue(c, v, typ))
		}
		if t, found := gr.Templates["application/json"]; found {
			body = []byte(templateVar.ReplaceAllStringFunc(t, func(m string) string {
				sub := templateVar.FindStringSubmatch(m)
				name := sub[1]
				if name == "" {
					name = sub[2]
				}
				return g.contextValue(c, name, typ)
			}))
		}
	}
	g.write(w, c, status, body)
}

func (g *Gateway) parameterValue(c *call, v, typ string) string {
	switch {
	case strings.HasPrefix(v, "'"):
		return strings.Trim(v, "'")
	case strings.HasPrefix(v, "context."):
		return g.contextValue(c, strings.TrimPrefix(v, "context."), typ)
	case strings.HasPrefix(v, "method.request.header."):
		return c.r.Header.Get(strings.TrimPrefix(v, "method.request.header."))
	case strings.HasPrefix(v, "method.request.querystring."):
		return c.r.URL.Query().Get(strings.TrimPrefix(v, "method.request.querystring."))
	case strings.HasPrefix(v, "method.request.path."):
		return c.params[strings.TrimPrefix(v, "method.request.path.")]
	}
	return ""
}

func jsonOrNull(s string) string {
	if s == "null" || s == "" {
		return "null"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// errorType is the X-Amzn-ErrorType API Gateway sends with a gateway
// response.
func errorType(typ string) string {
	switch typ {
	case "UNAUTHORIZED", "MISSING_AUTHENTICATION_TOKEN", "ACCESS_DENIED", "INVALID_API_KEY", "WAF_FILTERED":
		if typ == "UNAUTHORIZED" {
			return "UnauthorizedException"
		}
		if typ == "MISSING_AUTHENTICATION_TOKEN" {
			return "MissingAuthenticationTokenException"
		}
		return "ForbiddenException"
	case "THROTTLED", "QUOTA_EXCEEDED":
		return "TooManyRequestsException"
	case "AUTHORIZER_CONFIGURATION_ERROR", "AUTHORIZER_FAILURE":
		return "AuthorizerConfigurationException"
	case "INTEGRATION_TIMEOUT":
		return "IntegrationTimeoutException"
	}
	return "InternalServerErrorException"
}
