package rpc

import (
	"context"
	"fmt"
	"log/slog"
)

// redactingHandler passes every log record through the server's redaction
// (Server.redact) before its handler: the message and each attribute,
// those of groups and of WithAttrs included. A value that is not a string
// (an error, a slice, a struct) is logged as its text, redacted.
type redactingHandler struct {
	h      slog.Handler
	redact func(string) string
}

func (r redactingHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = r.attr(a)
	}
	return redactingHandler{h: r.h.WithAttrs(clean), redact: r.redact}
}

func (r redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h: r.h.WithGroup(name), redact: r.redact}
}

func (r redactingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = r.attr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, r.redact(err.Error()))
		}
		return slog.String(a.Key, r.redact(fmt.Sprintf("%+v", v.Any())))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
