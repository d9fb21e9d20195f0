package usageplan

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"
)

// fakeAPIGateway is an in-memory API Gateway control plane speaking the REST
// wire format of the SDK's serializers and deserializers (apigateway v1.40.2):
// the operations the Syncer uses, with API Gateway's error shape (status,
// x-amzn-ErrorType header, JSON body with a message). All its usage plans are
// taken to serve one API stage, as doclib's do, so like API Gateway it refuses
// a key in two of them.
//
// A client made by clientAs(customer) is held to the indexer's IAM policy of
// that customer's stack (infra/stack grantUsageKeys): it may create keys only
// tagged TagCustomer=customer and with no other tag, tag resources only with
// that tag, and change or delete only keys that carry it.
type fakeAPIGateway struct {
	t        *testing.T
	pageSize int               // GetApiKeys page size, small to make the client page
	owners   map[string]string // access key ID → customer whose policy applies

	mu       sync.Mutex
	keys     []*fakeKey                 // in creation order, the order GetApiKeys lists
	plans    map[string]map[string]bool // usage plan ID → key IDs
	nextID   int
	log      []fakeRequest
	failures map[string][]fakeFailure // operation → failures for its next requests
}

type fakeKey struct {
	ID, Name, Value, Description string
	Enabled                      bool
	Tags                         map[string]string
}

type fakeRequest struct {
	Op, Method, Path string
	Query            url.Values
	Status           int
}

// fakeFailure is an error answer queued for an operation. With applied, the
// operation takes effect anyway and only its answer is lost, as when a
// response never reaches the client.
type fakeFailure struct {
	Status  int
	Type    string
	Message string
	Applied bool
}

func (e fakeFailure) Error() string { return e.Type + ": " + e.Message }

func newFake(t *testing.T, plans ...string) *fakeAPIGateway {
	f := &fakeAPIGateway{t: t, pageSize: 2, plans: map[string]map[string]bool{}, failures: map[string][]fakeFailure{}, owners: map[string]string{}}
	for _, p := range plans {
		f.plans[p] = map[string]bool{}
	}
	return f
}

// client returns an API Gateway client talking to f over HTTP, configured like
// a real one except for the endpoint and a retryer that does not wait.
func (f *fakeAPIGateway) client() *apigateway.Client {
	srv := httptest.NewServer(f.handler())
	f.t.Cleanup(srv.Close)
	return f.clientFor(srv.URL)
}

// clientAs returns a client held to customer's IAM policy.
func (f *fakeAPIGateway) clientAs(customer string) *apigateway.Client {
	srv := httptest.NewServer(f.handler())
	f.t.Cleanup(srv.Close)
	akid := "AKID" + strings.ToUpper(customer)
	f.mu.Lock()
	f.owners[akid] = customer
	f.mu.Unlock()
	return f.clientWith(srv.URL, akid)
}

func (f *fakeAPIGateway) clientFor(endpoint string) *apigateway.Client {
	return f.clientWith(endpoint, "AKIDEXAMPLE")
}

func (f *fakeAPIGateway) clientWith(endpoint, akid string) *apigateway.Client {
	return apigateway.New(apigateway.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(akid, "test-secret", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			o.RateLimiter = ratelimit.None
		}),
	})
}

// fail queues failures for the next requests of op.
func (f *fakeAPIGateway) fail(op string, errs ...fakeFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[op] = append(f.failures[op], errs...)
}

// addKey puts a key straight into the state, as an earlier run or a person
// left it. A name "name|customer" tags the key with that customer.
func (f *fakeAPIGateway) addKey(name, value string, enabled bool, plans ...string) *fakeKey {
	f.mu.Lock()
	defer f.mu.Unlock()
	name, customer, tagged := strings.Cut(name, "|")
	k := f.newKey(name, value, enabled)
	if tagged {
		k.Tags = map[string]string{TagCustomer: customer}
	}
	for _, p := range plans {
		f.plans[p][k.ID] = true
	}
	return k
}

func (f *fakeAPIGateway) newKey(name, value string, enabled bool) *fakeKey {
	f.nextID++
	k := &fakeKey{ID: fmt.Sprintf("k%05d", f.nextID), Name: name, Value: value, Enabled: enabled}
	f.keys = append(f.keys, k)
	return k
}

// named returns the keys named name.
func (f *fakeAPIGateway) named(name string) []fakeKey {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ks []fakeKey
	for _, k := range f.keys {
		if k.Name == name {
			ks = append(ks, *k)
		}
	}
	return ks
}

// plansOf returns the usage plans key ID is in, sorted.
func (f *fakeAPIGateway) plansOf(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ps []string
	for p, members := range f.plans {
		if members[id] {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// requests returns the request log and empties it.
func (f *fakeAPIGateway) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	log := f.log
	f.log = nil
	return log
}

func (f *fakeAPIGateway) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apikeys", f.route("GetApiKeys", http.StatusOK, f.getAPIKeys))
	mux.HandleFunc("POST /apikeys", f.route("CreateApiKey", http.StatusCreated, f.createAPIKey))
	mux.HandleFunc("PATCH /apikeys/{apiKey}", f.route("UpdateApiKey", http.StatusOK, f.updateAPIKey))
	mux.HandleFunc("DELETE /apikeys/{apiKey}", f.route("DeleteApiKey", http.StatusAccepted, f.deleteAPIKey))
	mux.HandleFunc("PUT /tags/{arn...}", f.route("TagResource", http.StatusNoContent, f.tagResource))
	mux.HandleFunc("GET /usageplans/{usagePlanId}/keys/{keyId}", f.route("GetUsagePlanKey", http.StatusOK, f.getUsagePlanKey))
	mux.HandleFunc("POST /usageplans/{usagePlanId}/keys", f.route("CreateUsagePlanKey", http.StatusCreated, f.createUsagePlanKey))
	mux.HandleFunc("DELETE /usageplans/{usagePlanId}/keys/{keyId}", f.route("DeleteUsagePlanKey", http.StatusAccepted, f.deleteUsagePlanKey))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.t.Errorf("fake API Gateway: unexpected %s %s", r.Method, r.URL)
		writeError(w, fakeFailure{http.StatusNotFound, "NotFoundException", "unknown resource", false})
	})
	return mux
}

// route logs a request, checks it is signed, and answers it with op's handler
// or a queued failure. A handler returns the response body or a fakeFailure.
func (f *fakeAPIGateway) route(op string, okStatus int, h func(*http.Request) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if auth := r.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
			f.t.Errorf("%s: request not SigV4-signed (Authorization %q)", op, auth)
		}
		var queued *fakeFailure
		if q := f.failures[op]; len(q) > 0 {
			queued, f.failures[op] = &q[0], q[1:]
		}
		var body any
		if queued == nil || queued.Applied {
			body = h(r)
		}
		if queued != nil {
			body = *queued
		}
		status := okStatus
		if e, ok := body.(fakeFailure); ok {
			status = e.Status
			writeError(w, e)
		} else {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			if body != nil {
				json.NewEncoder(w).Encode(body)
			}
		}
		f.log = append(f.log, fakeRequest{Op: op, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Status: status})
	}
}

// writeError answers as API Gateway does: the error type in x-amzn-ErrorType
// (with the Coral namespace its control plane appends, except for IAM's
// AccessDeniedException) and a JSON body with the message.
func writeError(w http.ResponseWriter, e fakeFailure) {
	typ := e.Type
	if typ != "AccessDeniedException" {
		typ += ":http://internal.amazon.com/coral/com.amazonaws.backplane.controlplane/"
	}
	w.Header().Set("x-amzn-ErrorType", typ)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(map[string]string{"message": e.Message})
}

func notFound(msg string) fakeFailure {
	return fakeFailure{http.StatusNotFound, "NotFoundException", msg, false}
}

func badRequest(msg string) fakeFailure {
	return fakeFailure{http.StatusBadRequest, "BadRequestException", msg, false}
}

func conflict(msg string) fakeFailure {
	return fakeFailure{http.StatusConflict, "ConflictException", msg, false}
}

func (f *fakeAPIGateway) keyByID(id string) *fakeKey {
	for _, k := range f.keys {
		if k.ID == id {
			return k
		}
	}
	return nil
}

func apiKeyJSON(k *fakeKey, withValue bool) map[string]any {
	m := map[string]any{"id": k.ID, "name": k.Name, "enabled": k.Enabled, "createdDate": 1.7e9}
	if k.Description != "" {
		m["description"] = k.Description
	}
	if len(k.Tags) > 0 {
		m["tags"] = k.Tags
	}
	if withValue {
		m["value"] = k.Value
	}
	return m
}

// getAPIKeys: GET /apikeys?name=&position=&limit=&includeValues=; name is a
// prefix match, position an opaque token.
func (f *fakeAPIGateway) getAPIKeys(r *http.Request) any {
	q := r.URL.Query()
	var match []*fakeKey
	for _, k := range f.keys {
		if strings.HasPrefix(k.Name, q.Get("name")) {
			match = append(match, k)
		}
	}
	start := 0
	if p := q.Get("position"); p != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(p, "pos-"))
		if err != nil || !strings.HasPrefix(p, "pos-") || n > len(match) {
			return badRequest("Invalid position parameter")
		}
		start = n
	}
	size := f.pageSize
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l < size {
		size = l
	}
	end := min(start+size, len(match))
	items := []map[string]any{}
	for _, k := range match[start:end] {
		items = append(items, apiKeyJSON(k, q.Get("includeValues") == "true"))
	}
	out := map[string]any{"item": items}
	if end < len(match) {
		out["position"] = fmt.Sprintf("pos-%d", end)
	}
	return out
}

// caller is the customer whose IAM policy binds r's signer, or "" for none.
func (f *fakeAPIGateway) caller(r *http.Request) string {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	akid, _, _ := strings.Cut(cred, "/")
	return f.owners[akid]
}

func denied(action string) fakeFailure {
	return fakeFailure{http.StatusForbidden, "AccessDeniedException",
		"User: arn:aws:sts::123456789012:assumed-role/indexer/x is not authorized to perform: " + action, false}
}

// mayTag is the policy's condition on creating and tagging: exactly the tag
// TagCustomer=<the caller's customer>.
func (f *fakeAPIGateway) mayTag(r *http.Request, tags map[string]string) bool {
	c := f.caller(r)
	return c == "" || (len(tags) == 1 && tags[TagCustomer] == c)
}

// mayChange is the policy's condition on changing or deleting a key: it is
// tagged TagCustomer=<the caller's customer>.
func (f *fakeAPIGateway) mayChange(r *http.Request, k *fakeKey) bool {
	c := f.caller(r)
	return c == "" || k.Tags[TagCustomer] == c
}

// createAPIKey: POST /apikeys {name, value, enabled, description, tags}. Values are unique.
func (f *fakeAPIGateway) createAPIKey(r *http.Request) any {
	var in struct {
		Name, Value, Description string
		Enabled                  bool
		Tags                     map[string]string
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return badRequest("Invalid JSON: " + err.Error())
	}
	if !f.mayTag(r, in.Tags) {
		return denied("apigateway:POST")
	}
	if len(in.Value) < 20 {
		return badRequest("API Key value should be at least 20 characters")
	}
	for _, k := range f.keys {
		if k.Value == in.Value {
			return conflict("API Key already exists")
		}
	}
	k := f.newKey(in.Name, in.Value, in.Enabled)
	k.Description = in.Description
	if len(in.Tags) > 0 {
		k.Tags = in.Tags
	}
	return apiKeyJSON(k, true)
}

// updateAPIKey: PATCH /apikeys/{apiKey} {patchOperations: [{op, path, value}]}.
func (f *fakeAPIGateway) updateAPIKey(r *http.Request) any {
	k := f.keyByID(r.PathValue("apiKey"))
	if k == nil {
		return notFound("Invalid API Key identifier specified")
	}
	if !f.mayChange(r, k) {
		return denied("apigateway:PATCH")
	}
	var in struct {
		PatchOperations []struct{ Op, Path, Value string }
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return badRequest("Invalid JSON: " + err.Error())
	}
	for _, p := range in.PatchOperations {
		switch {
		case p.Op == "replace" && p.Path == "/enabled":
			k.Enabled = p.Value == "true"
		case p.Op == "replace" && p.Path == "/description":
			k.Description = p.Value
		case p.Op == "replace" && p.Path == "/name":
			k.Name = p.Value
		default:
			return badRequest(fmt.Sprintf("Invalid patch operation specified: %s %s", p.Op, p.Path))
		}
	}
	return apiKeyJSON(k, false)
}

// deleteAPIKey: DELETE /apikeys/{apiKey}; the key leaves its usage plans too.
func (f *fakeAPIGateway) deleteAPIKey(r *http.Request) any {
	id := r.PathValue("apiKey")
	i := slices.IndexFunc(f.keys, func(k *fakeKey) bool { return k.ID == id })
	if i < 0 {
		return notFound("Invalid API Key identifier specified")
	}
	if !f.mayChange(r, f.keys[i]) {
		return denied("apigateway:DELETE")
	}
	f.keys = slices.Delete(f.keys, i, i+1)
	for _, members := range f.plans {
		delete(members, id)
	}
	return nil
}

func (f *fakeAPIGateway) usagePlanKeyJSON(k *fakeKey) map[string]any {
	return map[string]any{"id": k.ID, "type": "API_KEY", "name": k.Name, "value": k.Value}
}

// getUsagePlanKey: GET /usageplans/{usagePlanId}/keys/{keyId}.
func (f *fakeAPIGateway) getUsagePlanKey(r *http.Request) any {
	members, ok := f.plans[r.PathValue("usagePlanId")]
	if !ok {
		return notFound("Invalid Usage Plan ID specified")
	}
	k := f.keyByID(r.PathValue("keyId"))
	if k == nil || !members[k.ID] {
		return notFound("Invalid Usage Plan Key identifier specified")
	}
	return f.usagePlanKeyJSON(k)
}

// createUsagePlanKey: POST /usageplans/{usagePlanId}/keys {keyId, keyType}.
func (f *fakeAPIGateway) createUsagePlanKey(r *http.Request) any {
	plan := r.PathValue("usagePlanId")
	members, ok := f.plans[plan]
	if !ok {
		return notFound("Invalid Usage Plan ID specified")
	}
	var in struct{ KeyID, KeyType string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return badRequest("Invalid JSON: " + err.Error())
	}
	if in.KeyType != "API_KEY" {
		return badRequest("Invalid key type specified: " + in.KeyType)
	}
	k := f.keyByID(in.KeyID)
	if k == nil {
		return notFound("Invalid API Key identifier specified")
	}
	if members[k.ID] {
		return conflict("Usage Plan Key already exists")
	}
	for other, m := range f.plans {
		if m[k.ID] {
			return conflict(fmt.Sprintf("Usage Plan %s cannot be added because API Key %s cannot reference multiple Usage Plans with the same API Stage (in %s)", plan, k.ID, other))
		}
	}
	members[k.ID] = true
	return f.usagePlanKeyJSON(k)
}

// deleteUsagePlanKey: DELETE /usageplans/{usagePlanId}/keys/{keyId}.
func (f *fakeAPIGateway) deleteUsagePlanKey(r *http.Request) any {
	members, ok := f.plans[r.PathValue("usagePlanId")]
	if !ok {
		return notFound("Invalid Usage Plan ID specified")
	}
	id := r.PathValue("keyId")
	if !members[id] {
		return notFound("Invalid Usage Plan Key identifier specified")
	}
	delete(members, id)
	return nil
}

// tagResource: PUT /tags/{resource_arn} {tags}, for API keys only.
func (f *fakeAPIGateway) tagResource(r *http.Request) any {
	arn := r.PathValue("arn")
	if want := "arn:aws:apigateway:eu-west-1::/apikeys/"; !strings.HasPrefix(arn, want) {
		return badRequest("Invalid resource ARN " + arn + ", want " + want + "<id>")
	}
	k := f.keyByID(strings.TrimPrefix(arn, "arn:aws:apigateway:eu-west-1::/apikeys/"))
	if k == nil {
		return notFound("Invalid API Key identifier specified")
	}
	var in struct{ Tags map[string]string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return badRequest("Invalid JSON: " + err.Error())
	}
	if !f.mayTag(r, in.Tags) {
		return denied("apigateway:PUT")
	}
	if k.Tags == nil {
		k.Tags = map[string]string{}
	}
	for t, v := range in.Tags {
		k.Tags[t] = v
	}
	return nil
}

// key returns a copy of the key with ID id.
func (f *fakeAPIGateway) key(id string) fakeKey {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k := f.keyByID(id); k != nil {
		return *k
	}
	return fakeKey{}
}
