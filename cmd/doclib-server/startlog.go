package main

import (
	"context"
	"log/slog"
)

// quietLogger is logger without its Info lines, for what runs before the
// banner: start-up tells a person what it did in sentences on stdout (the
// index line, the banner), and raw log lines above the banner only hid it.
// Warnings and errors still go to the log.
func quietLogger(logger *slog.Logger) *slog.Logger {
	return slog.New(minLevel{logger.Handler(), slog.LevelWarn})
}

// minLevel is a slog.Handler that drops the records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
