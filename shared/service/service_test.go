package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	doclib "github.com/doclib/doclib/shared"
	"github.com/doclib/doclib/shared/backend/memory"
	"github.com/doclib/doclib/shared/data/demo"
	"github.com/doclib/doclib/shared/httpapi"
	"github.com/doclib/doclib/shared/service"
)

// workspaceStore is the demo data with one workspace's lookup replaced.
type workspaceStore struct {
	doclib.Store
	id  string
	err error
}

func (s workspaceStore) Workspace(ctx context.Context, id string) (*doclib.Workspace, error) {
	if id == s.id {
		return nil, s.err
	}
	return s.Store.Workspace(ctx, id)
}

// TestKeyOfAMissingWorkspace: a key that outlived its workspace can never
// work, so the local handler refuses it with 401 unauthorised in the error
// shape and logs why; a workspace that cannot be read is a failure to check
// (503), not a refusal.
func TestKeyOfAMissingWorkspace(t *testing.T) {
	d, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"gone", doclib.ErrNotFound, 401, doclib.EUnauthorised},
		{"unreadable", doclib.Unavailable(errors.New("dynamo: throttled")), 503, doclib.EUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			svc := service.New(workspaceStore{memory.New(d), "ws_acme", c.err}, nil, service.WithLogger(log))
			h := httpapi.NewServer(httpapi.Config{Service: svc, Limiter: memory.NewLimiter(), Logger: log})
			req := httptest.NewRequest(http.MethodGet, "/libraries", nil)
			req.Header.Set("Authorization", "Bearer dlk_demo_full_scope")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var body struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != c.status || body.Error.Code != c.code || body.Error.Message == "" {
				t.Fatalf("answer %d %s, want %d %s in the error shape", rec.Code, rec.Body.String(), c.status, c.code)
			}
			if rec.Header().Get("X-Request-Id") == "" || rec.Header().Get("X-RateLimit-Limit") != "" {
				t.Errorf("headers %v: want X-Request-Id and, for a refused key, no key quota", rec.Header())
			}
			if strings.Contains(body.Error.Message, "ws_acme") || strings.Contains(body.Error.Message, "dynamo") {
				t.Errorf("the message names internals: %q", body.Error.Message)
			}
			if c.status == 401 && (!strings.Contains(logs.String(), `"workspace_id":"ws_acme"`) || !strings.Contains(logs.String(), `"key_id":"key_full"`)) {
				t.Errorf("the cause is not logged with the key and the workspace:\n%s", logs.String())
			}
		})
	}
	// The service alone: the refusal is coded, so that callers (the
	// authorizer) treat it as one.
	svc := service.New(workspaceStore{memory.New(d), "ws_acme", doclib.ErrNotFound}, nil,
		service.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil))))
	if _, err := svc.Authenticate(context.Background(), "dlk_demo_full_scope"); doclib.ErrorCode(err) != doclib.EUnauthorised {
		t.Errorf("Authenticate: %v, want a coded unauthorised", err)
	}
	// Other workspaces' keys are untouched.
	if p, err := svc.Authenticate(context.Background(), "dlk_demo_individual_plan"); err != nil || p.WorkspaceID != "ws_solo" {
		t.Errorf("a key of another workspace: %+v, %v", p, err)
	}
}
