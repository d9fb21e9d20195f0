package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/doclib/doclib/internal/suites/fixture"
	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/service"
)

// callLog records each DynamoDB call the SDK sends: its operation and how
// many items came back.
type callLog struct {
	next  http.RoundTripper
	mu    sync.Mutex
	calls []string
}

func (c *callLog) RoundTrip(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var out struct {
		Count *int
		Item  map[string]any
	}
	_ = json.Unmarshal(body, &out)
	got := ""
	switch {
	case out.Count != nil:
		got = fmt.Sprintf(" %d items", *out.Count)
	case out.Item != nil:
		got = " an item"
	}
	c.mu.Lock()
	c.calls = append(c.calls, op+got)
	c.mu.Unlock()
	return resp, nil
}

// take returns the calls so far, sorted (parallel calls come in any order),
// and forgets them.
func (c *callLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	slices.Sort(out)
	return out
}

// A per-ID endpoint makes the same DynamoDB calls for an ID outside the key's
// scope as for a missing one, so that its 404 takes no longer. For documents
// the calls also return the same: nothing. For libraries the calls are the
// same but a GetItem of an existing library returns it (docs/dynamodb.md).
func TestOutOfScopeReadsAsMissing(t *testing.T) {
	log := &callLog{next: http.DefaultTransport}
	svc := serviceThrough(t, log)
	ctx := context.Background()
	principal := func(key string) *doclib.Principal {
		p, err := svc.Authenticate(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		log.take()
		return p
	}
	oneLibrary, otherWorkspace := principal(fixture.KeyOneLibrary), principal(fixture.KeyOtherWS)
	page := service.Page{Number: 1, Size: 20}
	endpoints := []struct {
		name string
		call func(p *doclib.Principal, id string) error
		// ids: a missing one, then ones outside the scope of oneLibrary and
		// of otherWorkspace.
		missing, outOfOne, outOfOther string
		sameAnswer                    bool
	}{
		{"GET /documents/{id}", func(p *doclib.Principal, id string) error { _, err := svc.Document(ctx, p, id); return err },
			"doc_zzz", "doc_a2_1", "doc_a1_1", true},
		{"GET /documents/{id}/traverse", func(p *doclib.Principal, id string) error {
			_, err := svc.Traverse(ctx, p, id, service.TraverseParams{Direction: service.DirectionBoth, Depth: 3})
			return err
		}, "doc_zzz", "doc_a2_1", "doc_a1_1", true},
		{"GET /documents/{id}/source-recordings", func(p *doclib.Principal, id string) error {
			_, err := svc.SourceRecordings(ctx, p, id, page)
			return err
		}, "doc_zzz", "doc_a2_1", "doc_a1_1", true},
		{"GET /libraries/{id}/graph by ID", func(p *doclib.Principal, id string) error { _, err := svc.Graph(ctx, p, id); return err },
			"lib_zzz", "lib_a2", "lib_a1", false},
		{"GET /libraries/{id}/graph by slug", func(p *doclib.Principal, id string) error { _, err := svc.Graph(ctx, p, id); return err },
			"nope", "finance", "ops", false},
	}
	for _, e := range endpoints {
		for _, c := range []struct {
			who     string
			p       *doclib.Principal
			outside string
		}{{"a key of one library", oneLibrary, e.outOfOne}, {"a key of another workspace", otherWorkspace, e.outOfOther}} {
			if c.p == otherWorkspace && strings.Contains(e.name, "slug") {
				continue // "ops" is a library of ws_b too: a slug resolves in the key's own workspace
			}
			reads := map[string][]string{}
			for _, id := range []string{e.missing, c.outside} {
				err := e.call(c.p, id)
				if doclib.ErrorCode(err) != doclib.ENotFound {
					t.Fatalf("%s, %s, %s: %v, want 404", e.name, c.who, id, err)
				}
				reads[id] = log.take()
			}
			missing, outside := reads[e.missing], reads[c.outside]
			if !e.sameAnswer { // compare the kinds of call only
				missing, outside = ops(missing), ops(outside)
			}
			t.Logf("%s, %s: missing %v, outside %v", e.name, c.who, reads[e.missing], reads[c.outside])
			if !slices.Equal(missing, outside) || len(missing) == 0 {
				t.Errorf("%s, %s: a missing ID reads %v, one outside the scope %v", e.name, c.who, reads[e.missing], reads[c.outside])
			}
		}
	}
}

func ops(calls []string) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}
