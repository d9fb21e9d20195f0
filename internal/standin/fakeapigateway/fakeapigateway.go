// Package fakeapigateway is Amazon API Gateway's control plane for API keys
// and usage plans, in memory: an http.Handler speaking the REST wire format
// of the SDK's apigateway client (aws-sdk-go-v2/service/apigateway), with
// API Gateway's status codes and error shape (the error type in
// x-amzn-ErrorType, a JSON body with a message).
//
// doclib's indexer keeps API keys in step with doclib's keys through it
// (shared/aws/usageplan), and the stand-in's REST API asks it for the key that a
// request's usageIdentifierKey names (KeyByValue), as API Gateway does for a
// stage whose apiKeySource is AUTHORIZER.
//
// It serves these operations (the names Fail and Request use):
//
//	GetApiKeys          GET    /apikeys?name=&customerId=&includeValues=&limit=&position=
//	GetApiKey           GET    /apikeys/{apiKey}?includeValue=
//	CreateApiKey        POST   /apikeys
//	UpdateApiKey        PATCH  /apikeys/{apiKey}
//	DeleteApiKey        DELETE /apikeys/{apiKey}
//	GetUsagePlans       GET    /usageplans?keyId=&limit=&position=
//	GetUsagePlan        GET    /usageplans/{usagePlanId}
//	GetUsagePlanKeys    GET    /usageplans/{usagePlanId}/keys?name=&limit=&position=
//	GetUsagePlanKey     GET    /usageplans/{usagePlanId}/keys/{keyId}
//	CreateUsagePlanKey  POST   /usageplans/{usagePlanId}/keys
//	DeleteUsagePlanKey  DELETE /usageplans/{usagePlanId}/keys/{keyId}
//	GetTags             GET    /tags/{resourceArn}
//	TagResource         PUT    /tags/{resourceArn}
//	UntagResource       DELETE /tags/{resourceArn}?tagKeys=
//
// Anything else is answered 404 UnknownOperationException and logged with
// an empty Op, so that a test sees a call the fake does not know.
//
// It does not authenticate or authorise: in the stand-in an IAM checker in
// front of it has done both. Tags gives such a checker the tags of an API key
// for aws:ResourceTag conditions, and Refuse lets it answer a refused call in
// API Gateway's shape and have it logged with the others.
//
// Usage plans are only IDs, given to New: they have no stages, throttles or
// quotas. All of them are taken to serve one API stage, as doclib's do, so
// like API Gateway the fake refuses a key in two of them. Tags are kept for
// API keys only.
package fakeapigateway

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Key is an API key as the fake holds it, with the usage plans it is in.
type Key struct {
	ID          string
	Name        string
	Value       string
	Description string
	CustomerID  string
	Enabled     bool
	Tags        map[string]string
	// UsagePlans are the IDs of the usage plans the key is in, sorted.
	UsagePlans []string
}

// Request is one request the fake answered, for tests to inspect.
type Request struct {
	// Op is the operation (GetApiKeys, CreateUsagePlanKey, ...), "" for a
	// request the fake does not know.
	Op     string
	Method string
	// Path is the request's path, unescaped.
	Path   string
	Query  url.Values
	Status int
}

// Error is an error answer of API Gateway: its HTTP status, its type (the
// SDK's exception name: NotFoundException, ConflictException, ...) and
// message. Queued with Fail and Applied, the operation takes effect anyway and
// only its answer is lost, as when a response never reaches the client.
type Error struct {
	Status  int
	Type    string
	Message string
	Applied bool
}

func (e Error) Error() string { return e.Type + ": " + e.Message }

// Fake is an in-memory API Gateway control plane; build it with New. It is
// safe for concurrent use.
type Fake struct {
	mux *http.ServeMux
	ops map[string]string // mux pattern → operation, for Refuse

	mu       sync.Mutex
	region   string
	pageSize int
	keys     []*apiKey // in creation order, which is also ID order
	plans    []string  // usage plan IDs in the order given
	members  map[string]map[string]bool
	nextID   int
	nextReq  int
	log      []Request
	failures map[string][]Error
}

// apiKey is a stored key; its usage plans are in Fake.members.
type apiKey struct {
	Key
	created, updated time.Time
}

// New returns a fake with the usage plans of the given IDs and no API keys.
func New(usagePlanIDs ...string) *Fake {
	f := &Fake{members: map[string]map[string]bool{}, failures: map[string][]Error{}}
	for _, id := range usagePlanIDs {
		f.addPlan(id)
	}
	f.routes()
	return f
}

// SetRegion makes the fake refuse resource ARNs of other Regions, as the
// control plane of region does; without it any Region is accepted.
func (f *Fake) SetRegion(region string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.region = region
}

// SetPageSize caps the pages of GetApiKeys, GetUsagePlans and
// GetUsagePlanKeys at n items whatever limit the client asks for (0: no cap
// beyond the limit). API Gateway may return fewer items than the limit, and a
// small cap makes a client's paging run in a test with a few keys.
func (f *Fake) SetPageSize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pageSize = n
}

// AddUsagePlan adds a usage plan, as another stack of the account would have
// made it. Adding one that exists changes nothing.
func (f *Fake) AddUsagePlan(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addPlan(id)
}

func (f *Fake) addPlan(id string) {
	if _, ok := f.members[id]; !ok {
		f.plans = append(f.plans, id)
		f.members[id] = map[string]bool{}
	}
}

// AddKey puts a key straight into the state, as an earlier run or a person
// left it, and returns it with its ID. Unlike CreateApiKey and
// CreateUsagePlanKey it checks little, so that a test can set up what API
// Gateway would refuse to make (a key in two plans, a short value): only that
// k.ID is empty (the fake numbers its keys) and that k.UsagePlans exist. An
// empty value is generated.
func (f *Fake) AddKey(k Key) (Key, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k.ID != "" {
		return Key{}, fmt.Errorf("fakeapigateway: AddKey with ID %q: the fake assigns IDs", k.ID)
	}
	for _, p := range k.UsagePlans {
		if _, ok := f.members[p]; !ok {
			return Key{}, fmt.Errorf("fakeapigateway: AddKey: no usage plan %q", p)
		}
	}
	if k.Value == "" {
		k.Value = generateValue()
	}
	stored := f.newKey(k)
	for _, p := range k.UsagePlans {
		f.members[p][stored.ID] = true
	}
	return f.export(stored), nil
}

// Key returns the key of ID id.
func (f *Fake) Key(id string) (Key, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k := f.keyByID(id); k != nil {
		return f.export(k), true
	}
	return Key{}, false
}

// KeyByValue returns the key whose value is value (values are unique). The
// REST API of a stage with apiKeySource AUTHORIZER admits a request whose
// usageIdentifierKey is the value of an enabled key in one of the stage's
// usage plans.
func (f *Fake) KeyByValue(value string) (Key, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.keys {
		if k.Value == value {
			return f.export(k), true
		}
	}
	return Key{}, false
}

// Keys returns every key, in creation order.
func (f *Fake) Keys() []Key {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Key, 0, len(f.keys))
	for _, k := range f.keys {
		out = append(out, f.export(k))
	}
	return out
}

// Tags returns the tags of the API key of resourceARN,
// arn:<partition>:apigateway:<region>::/apikeys/<id>, or nil when there is
// no such key: an IAM checker evaluates aws:ResourceTag conditions with them.
func (f *Fake) Tags(resourceARN string) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, err := f.keyByARN(resourceARN)
	if err != nil {
		return nil
	}
	return maps.Clone(k.Tags)
}

// Fail queues error answers for the next requests of op, one per request.
func (f *Fake) Fail(op string, errs ...Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[op] = append(f.failures[op], errs...)
}

// TakeRequests returns the requests answered since the last call, oldest
// first, and forgets them.
func (f *Fake) TakeRequests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	log := f.log
	f.log = nil
	return log
}

// Refuse answers r with e, in API Gateway's shape, without touching the
// state, and logs it under r's operation. It is for a layer in front of the
// fake (an IAM check) that refuses a request: the log then shows every
// request a client made, refused or not.
func (f *Fake) Refuse(w http.ResponseWriter, r *http.Request, e Error) {
	_, pattern := f.mux.Handler(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer(w, r, f.ops[pattern], 0, nil, e)
}

// ServeHTTP answers one control-plane request.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.mux.ServeHTTP(w, r) }

// routes lists every operation the fake serves, with its success status.
func (f *Fake) routes() {
	f.mux = http.NewServeMux()
	f.ops = map[string]string{}
	for _, rt := range []struct {
		pattern, op string
		status      int
		h           func(*http.Request) (any, error)
	}{
		{"GET /apikeys", "GetApiKeys", http.StatusOK, f.getAPIKeys},
		{"GET /apikeys/{apiKey}", "GetApiKey", http.StatusOK, f.getAPIKey},
		{"POST /apikeys", "CreateApiKey", http.StatusCreated, f.createAPIKey},
		{"PATCH /apikeys/{apiKey}", "UpdateApiKey", http.StatusOK, f.updateAPIKey},
		{"DELETE /apikeys/{apiKey}", "DeleteApiKey", http.StatusAccepted, f.deleteAPIKey},
		{"GET /usageplans", "GetUsagePlans", http.StatusOK, f.getUsagePlans},
		{"GET /usageplans/{usagePlanId}", "GetUsagePlan", http.StatusOK, f.getUsagePlan},
		{"GET /usageplans/{usagePlanId}/keys", "GetUsagePlanKeys", http.StatusOK, f.getUsagePlanKeys},
		{"GET /usageplans/{usagePlanId}/keys/{keyId}", "GetUsagePlanKey", http.StatusOK, f.getUsagePlanKey},
		{"POST /usageplans/{usagePlanId}/keys", "CreateUsagePlanKey", http.StatusCreated, f.createUsagePlanKey},
		{"DELETE /usageplans/{usagePlanId}/keys/{keyId}", "DeleteUsagePlanKey", http.StatusAccepted, f.deleteUsagePlanKey},
		{"GET /tags/{resourceArn...}", "GetTags", http.StatusOK, f.getTags},
		{"PUT /tags/{resourceArn...}", "TagResource", http.StatusNoContent, f.tagResource},
		{"DELETE /tags/{resourceArn...}", "UntagResource", http.StatusNoContent, f.untagResource},
	} {
		f.mux.HandleFunc(rt.pattern, f.route(rt.op, rt.status, rt.h))
		f.ops[rt.pattern] = rt.op
	}
	f.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.answer(w, r, "", 0, nil, Error{Status: http.StatusNotFound, Type: "UnknownOperationException",
			Message: "fakeapigateway: no operation " + r.Method + " " + r.URL.Path})
	})
}

// route answers a request with op's handler, or with the failure queued for
// op. A handler returns the response body (nil for none) or an Error; it runs
// under f.mu, so that every operation is atomic.
func (f *Fake) route(op string, okStatus int, h func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var queued *Error
		if q := f.failures[op]; len(q) > 0 {
			queued, f.failures[op] = &q[0], q[1:]
		}
		var body any
		var err error
		if queued == nil || queued.Applied {
			body, err = h(r)
		}
		if queued != nil {
			err = *queued
		}
		f.answer(w, r, op, okStatus, body, err)
	}
}

// answer writes the response, as API Gateway does, and logs the request.
// Callers hold f.mu.
func (f *Fake) answer(w http.ResponseWriter, r *http.Request, op string, status int, body any, err error) {
	f.nextReq++
	w.Header().Set("x-amzn-RequestId", fmt.Sprintf("00000000-0000-4000-8000-%012d", f.nextReq))
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		e, ok := err.(Error)
		if !ok {
			e = Error{Status: http.StatusInternalServerError, Type: "InternalFailure", Message: err.Error()}
		}
		status = e.Status
		typ := e.Type
		// The control plane names its errors with their Coral namespace;
		// IAM's refusal comes from the authorisation layer, without one.
		if typ != "AccessDeniedException" {
			typ += ":http://internal.amazon.com/coral/com.amazonaws.backplane.controlplane/"
		}
		w.Header().Set("x-amzn-ErrorType", typ)
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": e.Message})
	} else {
		w.WriteHeader(status)
		if body != nil {
			_ = json.NewEncoder(w).Encode(body)
		}
	}
	f.log = append(f.log, Request{Op: op, Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Status: status})
}

func notFound(msg string) Error {
	return Error{Status: http.StatusNotFound, Type: "NotFoundException", Message: msg}
}

func badRequest(msg string) Error {
	return Error{Status: http.StatusBadRequest, Type: "BadRequestException", Message: msg}
}

func conflict(msg string) Error {
	return Error{Status: http.StatusConflict, Type: "ConflictException", Message: msg}
}

const (
	noSuchKey  = "Invalid API Key identifier specified"
	noSuchPlan = "Invalid Usage Plan ID specified"
)

// decode reads a JSON request body into v.
func decode(r *http.Request, v any) error {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		return badRequest("Could not parse request body into json: " + err.Error())
	}
	return nil
}

// newKey stores k under a new ID. Callers hold f.mu.
func (f *Fake) newKey(k Key) *apiKey {
	f.nextID++
	now := time.Now()
	// Ten characters, as API Gateway's IDs have; zero-padded so that IDs
	// sort in creation order, which paging relies on.
	k.ID = fmt.Sprintf("k%09d", f.nextID)
	k.Tags = maps.Clone(k.Tags)
	k.UsagePlans = nil
	stored := &apiKey{Key: k, created: now, updated: now}
	f.keys = append(f.keys, stored)
	return stored
}

// export copies k for a caller outside the lock. Callers hold f.mu.
func (f *Fake) export(k *apiKey) Key {
	out := k.Key
	out.Tags = maps.Clone(k.Tags)
	out.UsagePlans = f.plansOf(k.ID)
	return out
}

// plansOf lists the usage plans key id is in, sorted. Callers hold f.mu.
func (f *Fake) plansOf(id string) []string {
	var ps []string
	for _, p := range f.plans {
		if f.members[p][id] {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

func (f *Fake) keyByID(id string) *apiKey {
	for _, k := range f.keys {
		if k.ID == id {
			return k
		}
	}
	return nil
}

// keyByARN finds the API key of arn:<partition>:apigateway:<region>::/apikeys/<id>.
func (f *Fake) keyByARN(arn string) (*apiKey, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "apigateway" || parts[4] != "" ||
		!strings.HasPrefix(parts[5], "/apikeys/") || (f.region != "" && parts[3] != f.region) {
		return nil, badRequest("Invalid resource ARN " + arn + ": the fake keeps tags of API keys only (arn:aws:apigateway:<region>::/apikeys/<id>)")
	}
	k := f.keyByID(strings.TrimPrefix(parts[5], "/apikeys/"))
	if k == nil {
		return nil, notFound(noSuchKey)
	}
	return k, nil
}

// apiKeyJSON is the ApiKey shape of the REST API.
func apiKeyJSON(k *apiKey, withValue bool) map[string]any {
	m := map[string]any{
		"id":              k.ID,
		"name":            k.Name,
		"enabled":         k.Enabled,
		"createdDate":     k.created.Unix(),
		"lastUpdatedDate": k.updated.Unix(),
		"stageKeys":       []string{},
	}
	if k.Description != "" {
		m["description"] = k.Description
	}
	if k.CustomerID != "" {
		m["customerId"] = k.CustomerID
	}
	if len(k.Tags) > 0 {
		m["tags"] = k.Tags
	}
	if withValue {
		m["value"] = k.Value
	}
	return m
}

// page cuts one page out of n items at position, as the list operations do:
// limit defaults to 25 and is at most 500, as documented (other values are
// taken as those), and SetPageSize may cap it further. The position is an
// opaque token, here the ID of the page's first item, so that items deleted
// between two pages do not shift the next one. It returns the items' range
// and the next position, "" at the end.
func (f *Fake) page(q url.Values, ids []string) (start, end int, next string, err error) {
	limit := 25
	if l, perr := strconv.Atoi(q.Get("limit")); perr == nil && l > 0 {
		limit = min(l, 500)
	}
	if f.pageSize > 0 {
		limit = min(limit, f.pageSize)
	}
	if p := q.Get("position"); p != "" {
		raw, derr := base64.RawURLEncoding.DecodeString(p)
		if derr != nil || len(raw) == 0 {
			return 0, 0, "", badRequest("Invalid position parameter")
		}
		start, _ = slices.BinarySearch(ids, string(raw))
	}
	end = min(start+limit, len(ids))
	if end < len(ids) {
		next = base64.RawURLEncoding.EncodeToString([]byte(ids[end]))
	}
	return start, end, next, nil
}

// getAPIKeys: the name query is a prefix match, customerId an exact one.
func (f *Fake) getAPIKeys(r *http.Request) (any, error) {
	q := r.URL.Query()
	var match []*apiKey
	var ids []string
	for _, k := range f.keys {
		if strings.HasPrefix(k.Name, q.Get("name")) && (q.Get("customerId") == "" || k.CustomerID == q.Get("customerId")) {
			match = append(match, k)
			ids = append(ids, k.ID)
		}
	}
	start, end, next, err := f.page(q, ids)
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, k := range match[start:end] {
		items = append(items, apiKeyJSON(k, q.Get("includeValues") == "true"))
	}
	return listing(items, next), nil
}

func (f *Fake) getAPIKey(r *http.Request) (any, error) {
	k := f.keyByID(r.PathValue("apiKey"))
	if k == nil {
		return nil, notFound(noSuchKey)
	}
	return apiKeyJSON(k, r.URL.Query().Get("includeValue") == "true"), nil
}

// createAPIKey: values are 20 to 128 characters and unique in the account
// and Region; API Gateway generates one when none is given. An empty value
// is taken as given, and too short.
func (f *Fake) createAPIKey(r *http.Request) (any, error) {
	var in struct {
		Name, Description, CustomerID string
		Value                         *string
		Enabled                       bool
		Tags                          map[string]string
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	value := generateValue()
	if in.Value != nil {
		value = *in.Value
	}
	switch {
	case len(value) < 20:
		return nil, badRequest("API Key value should be at least 20 characters")
	case len(value) > 128:
		return nil, badRequest("API Key value should be at most 128 characters")
	}
	for _, k := range f.keys {
		if k.Value == value {
			return nil, conflict("API Key already exists")
		}
	}
	k := f.newKey(Key{Name: in.Name, Value: value, Description: in.Description,
		CustomerID: in.CustomerID, Enabled: in.Enabled, Tags: in.Tags})
	return apiKeyJSON(k, true), nil
}

// updateAPIKey applies patch operations all or none: each is checked before
// any is applied.
func (f *Fake) updateAPIKey(r *http.Request) (any, error) {
	k := f.keyByID(r.PathValue("apiKey"))
	if k == nil {
		return nil, notFound(noSuchKey)
	}
	var in struct {
		PatchOperations []struct{ Op, Path, Value string }
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	updated := k.Key
	for _, p := range in.PatchOperations {
		if p.Op != "replace" {
			return nil, badRequest(fmt.Sprintf("Invalid patch operation specified. Must be 'replace' for %s", p.Path))
		}
		switch p.Path {
		case "/enabled":
			enabled, err := strconv.ParseBool(p.Value)
			if err != nil {
				return nil, badRequest(fmt.Sprintf("Invalid value %q for /enabled: must be true or false", p.Value))
			}
			updated.Enabled = enabled
		case "/description":
			updated.Description = p.Value
		case "/name":
			updated.Name = p.Value
		case "/customerId":
			updated.CustomerID = p.Value
		default:
			return nil, badRequest(fmt.Sprintf("Invalid patch path %s", p.Path))
		}
	}
	k.Key = updated
	k.updated = time.Now()
	return apiKeyJSON(k, false), nil
}

// deleteAPIKey: the key leaves its usage plans too.
func (f *Fake) deleteAPIKey(r *http.Request) (any, error) {
	id := r.PathValue("apiKey")
	i := slices.IndexFunc(f.keys, func(k *apiKey) bool { return k.ID == id })
	if i < 0 {
		return nil, notFound(noSuchKey)
	}
	f.keys = slices.Delete(f.keys, i, i+1)
	for _, members := range f.members {
		delete(members, id)
	}
	return nil, nil
}

func usagePlanJSON(id string) map[string]any {
	return map[string]any{"id": id, "name": id}
}

// getUsagePlans lists the plans by ID; with keyId, the plans that key is in.
func (f *Fake) getUsagePlans(r *http.Request) (any, error) {
	q := r.URL.Query()
	var ids []string
	for _, p := range f.plans {
		if q.Get("keyId") == "" || f.members[p][q.Get("keyId")] {
			ids = append(ids, p)
		}
	}
	slices.Sort(ids) // page finds a position by binary search
	start, end, next, err := f.page(q, ids)
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, id := range ids[start:end] {
		items = append(items, usagePlanJSON(id))
	}
	return listing(items, next), nil
}

func (f *Fake) getUsagePlan(r *http.Request) (any, error) {
	id := r.PathValue("usagePlanId")
	if _, ok := f.members[id]; !ok {
		return nil, notFound(noSuchPlan)
	}
	return usagePlanJSON(id), nil
}

func usagePlanKeyJSON(k *apiKey) map[string]any {
	return map[string]any{"id": k.ID, "type": "API_KEY", "name": k.Name, "value": k.Value}
}

// getUsagePlanKeys lists a plan's keys; the name query is a prefix match.
func (f *Fake) getUsagePlanKeys(r *http.Request) (any, error) {
	members, ok := f.members[r.PathValue("usagePlanId")]
	if !ok {
		return nil, notFound(noSuchPlan)
	}
	q := r.URL.Query()
	var match []*apiKey
	var ids []string
	for _, k := range f.keys {
		if members[k.ID] && strings.HasPrefix(k.Name, q.Get("name")) {
			match = append(match, k)
			ids = append(ids, k.ID)
		}
	}
	start, end, next, err := f.page(q, ids)
	if err != nil {
		return nil, err
	}
	items := []map[string]any{}
	for _, k := range match[start:end] {
		items = append(items, usagePlanKeyJSON(k))
	}
	return listing(items, next), nil
}

// getUsagePlanKey answers NotFoundException for a key not in the plan:
// clients tell membership by it.
func (f *Fake) getUsagePlanKey(r *http.Request) (any, error) {
	members, ok := f.members[r.PathValue("usagePlanId")]
	if !ok {
		return nil, notFound(noSuchPlan)
	}
	k := f.keyByID(r.PathValue("keyId"))
	if k == nil || !members[k.ID] {
		return nil, notFound("Invalid Usage Plan Key identifier specified")
	}
	return usagePlanKeyJSON(k), nil
}

// createUsagePlanKey refuses a key already in another plan: all the fake's
// plans serve one stage, and API Gateway admits a key to one plan per stage.
func (f *Fake) createUsagePlanKey(r *http.Request) (any, error) {
	plan := r.PathValue("usagePlanId")
	members, ok := f.members[plan]
	if !ok {
		return nil, notFound(noSuchPlan)
	}
	var in struct{ KeyID, KeyType string }
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if in.KeyType != "API_KEY" {
		return nil, badRequest("Invalid key type specified: " + in.KeyType)
	}
	k := f.keyByID(in.KeyID)
	if k == nil {
		return nil, notFound(noSuchKey)
	}
	if members[k.ID] {
		return nil, conflict("Usage Plan Key already exists")
	}
	for _, other := range f.plans {
		if f.members[other][k.ID] {
			return nil, conflict(fmt.Sprintf("Usage Plan %s cannot be added because API Key %s cannot reference multiple Usage Plans with the same API Stage (in %s)", plan, k.ID, other))
		}
	}
	members[k.ID] = true
	return usagePlanKeyJSON(k), nil
}

func (f *Fake) deleteUsagePlanKey(r *http.Request) (any, error) {
	members, ok := f.members[r.PathValue("usagePlanId")]
	if !ok {
		return nil, notFound(noSuchPlan)
	}
	id := r.PathValue("keyId")
	if !members[id] {
		return nil, notFound("Invalid Usage Plan Key identifier specified")
	}
	delete(members, id)
	return nil, nil
}

func (f *Fake) getTags(r *http.Request) (any, error) {
	k, err := f.keyByARN(r.PathValue("resourceArn"))
	if err != nil {
		return nil, err
	}
	tags := k.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return map[string]any{"tags": tags}, nil
}

// tagResource adds or overwrites tags. Keys starting with aws: are AWS's own.
func (f *Fake) tagResource(r *http.Request) (any, error) {
	k, err := f.keyByARN(r.PathValue("resourceArn"))
	if err != nil {
		return nil, err
	}
	var in struct{ Tags map[string]string }
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	for t := range in.Tags {
		if strings.HasPrefix(strings.ToLower(t), "aws:") {
			return nil, badRequest("Tag keys may not start with aws: (" + t + ")")
		}
	}
	if k.Tags == nil {
		k.Tags = map[string]string{}
	}
	maps.Copy(k.Tags, in.Tags)
	return nil, nil
}

func (f *Fake) untagResource(r *http.Request) (any, error) {
	k, err := f.keyByARN(r.PathValue("resourceArn"))
	if err != nil {
		return nil, err
	}
	for _, t := range r.URL.Query()["tagKeys"] {
		delete(k.Tags, t)
	}
	return nil, nil
}

// generateValue makes a 40-character value, as API Gateway does for a key
// created without one.
func generateValue() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 40)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// listing is one page of a GET collection: its items, and the position of
// the next page when there is one.
func listing(items []map[string]any, next string) map[string]any {
	out := map[string]any{"item": items}
	if next != "" {
		out["position"] = next
	}
	return out
}
