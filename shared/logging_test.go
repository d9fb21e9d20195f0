package doclib_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	doclib "github.com/doclib/doclib/shared"
)

func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	log := doclib.Logger(base)
	if doclib.Logger(log) != log {
		t.Error("wrapping a wrapped logger wraps it again")
	}
	if doclib.Logger(nil) != nil {
		t.Error("Logger(nil) is not nil")
	}
	ctx := doclib.WithRequestID(context.Background(), "req-1")
	log.With("component", "test").InfoContext(ctx, "with an ID")
	log.InfoContext(context.Background(), "without")
	log.DebugContext(ctx, "below the level")
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(got) != 2 || !strings.HasSuffix(got[0], "component=test request_id=req-1") ||
		strings.Contains(got[1], "request_id") {
		t.Errorf("lines:\n%s", buf.String())
	}
}
