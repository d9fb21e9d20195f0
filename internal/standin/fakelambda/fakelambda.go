// Package fakelambda is a fake of the Lambda API's event source mappings
// for tests: no Lambda runs here. It speaks the API's REST JSON wire format,
// so the real SDK client talks to it.
package fakelambda

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server speaks the Lambda API's REST JSON for event source mappings
// (ListEventSourceMappings, GetEventSourceMapping, UpdateEventSourceMapping)
// with their state changes: an update to disabled is Disabling until it has
// been looked at twice, as a batch in flight finishes first.
type Server struct {
	mu       sync.Mutex
	mappings []*Mapping // in list order
	// FailPut is a UUID whose updates fail (ResourceConflictException).
	FailPut string
	puts    []string // "UUID=enabled" or "UUID=disabled", in order
	// URL is the endpoint to give the SDK (BaseEndpoint, AWS_ENDPOINT_URL_LAMBDA).
	URL string
}

// Mapping is an event source mapping of the fake.
type Mapping struct {
	UUID           string
	State          string
	FunctionArn    string
	EventSourceArn string
	looks          int // GetEventSourceMapping calls since the last update
}

func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	const prefix = "/2015-03-31/event-source-mappings"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		http.Error(w, `{"message":"unknown path"}`, http.StatusNotFound)
		return
	}
	id := strings.Trim(strings.TrimPrefix(r.URL.Path, prefix), "/")
	write := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	config := func(m *Mapping) map[string]any {
		return map[string]any{"UUID": m.UUID, "State": m.State, "FunctionArn": m.FunctionArn, "EventSourceArn": m.EventSourceArn}
	}
	switch {
	case r.Method == http.MethodGet && id == "":
		// One mapping a page, so that Pause must follow NextMarker.
		arn, start := r.URL.Query().Get("EventSourceArn"), 0
		if m := r.URL.Query().Get("Marker"); m != "" {
			json.Unmarshal([]byte(m), &start)
		}
		var page []any
		next := ""
		for i := start; i < len(f.mappings); i++ {
			if f.mappings[i].EventSourceArn != arn {
				continue
			}
			if len(page) == 1 {
				next = strings.TrimSpace(string(must(json.Marshal(i))))
				break
			}
			page = append(page, config(f.mappings[i]))
		}
		out := map[string]any{"EventSourceMappings": page}
		if next != "" {
			out["NextMarker"] = next
		}
		write(http.StatusOK, out)
	case r.Method == http.MethodGet:
		m := f.find(id)
		if m == nil {
			write(http.StatusNotFound, map[string]any{"Type": "User", "message": "not found"})
			return
		}
		m.looks++
		switch {
		case m.State == "Disabling" && m.looks >= 2:
			m.State = "Disabled"
		case m.State == "Enabling":
			m.State = "Enabled"
		}
		write(http.StatusOK, config(m))
	case r.Method == http.MethodPut:
		m := f.find(id)
		var body struct{ Enabled *bool }
		if m == nil || json.NewDecoder(r.Body).Decode(&body) != nil || body.Enabled == nil {
			write(http.StatusBadRequest, map[string]any{"Type": "User", "message": "bad update"})
			return
		}
		f.puts = append(f.puts, id+"="+map[bool]string{true: "enabled", false: "disabled"}[*body.Enabled])
		if id == f.FailPut {
			w.Header().Set("X-Amzn-ErrorType", "ResourceConflictException")
			write(http.StatusConflict, map[string]any{"Type": "User", "message": "The operation cannot be performed at this time."})
			return
		}
		m.looks = 0
		if *body.Enabled {
			m.State = "Enabling"
		} else {
			m.State = "Disabling"
		}
		write(http.StatusAccepted, config(m))
	default:
		http.Error(w, `{"message":"unsupported"}`, http.StatusMethodNotAllowed)
	}
}

func (f *Server) find(id string) *Mapping {
	for _, m := range f.mappings {
		if m.UUID == id {
			return m
		}
	}
	return nil
}

// State is a mapping's state now.
func (f *Server) State(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.find(id).State
}

// Puts are the updates made, "UUID=enabled" or "UUID=disabled", in order.
func (f *Server) Puts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.puts...)
}

// SetFailPut makes the updates of one mapping fail.
func (f *Server) SetFailPut(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.FailPut = id
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Start serves a fake with these mappings until the test ends.
func Start(t testing.TB, mappings ...Mapping) *Server {
	f := &Server{}
	for i := range mappings {
		m := mappings[i]
		f.mappings = append(f.mappings, &m)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}
