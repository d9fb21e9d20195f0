package doclib

import (
	"context"
	"log/slog"
)

// LogRequestID is the key LogHandler adds to every record of a request. Log keys
// are snake_case everywhere (docs/design.md lists them), so that one query finds
// a request's lines whichever package wrote them.
const LogRequestID = "request_id"

type requestIDKey struct{}

// WithRequestID returns a context that carries the ID of the request it serves.
// Logging with it through a LogHandler puts the ID on the line.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request ID that WithRequestID put in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// LogHandler wraps h so that every record logged with a context carrying a
// request ID (slog's *Context methods) gets it as request_id: code that logs
// during a request passes its context and never names the ID. Wrapping a handler
// that is already wrapped returns it unchanged.
//
// The ID is added when the record is handled, so after WithGroup it sits inside
// the group; nothing here opens groups.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

// Logger returns l with its handler wrapped by LogHandler; nil stays nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	if _, ok := l.Handler().(requestIDHandler); ok {
		return l
	}
	return slog.New(LogHandler(l.Handler()))
}

type requestIDHandler struct{ next slog.Handler }

func (h requestIDHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		// r is this handler's copy, which the caller does not use again.
		r.AddAttrs(slog.String(LogRequestID, id))
	}
	return h.next.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.next.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.next.WithGroup(name)}
}
