package rpc

import (
	"context"
	"slices"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// sessionHost is session.Host for one session of the connection. Each
// field is the function of the part of the server it goes to, given when
// the session opens (openSession): the host holds no Server.
type sessionHost struct {
	id    string
	files *delivery.Files
	// note records an update in the turn a stock client started (ls.noteUpdate).
	note         func(wire.SessionUpdate)
	send         func(id string, u wire.SessionUpdate)
	redact       func(string) string
	keyStart     func(string) int
	warn         func(msg string)
	extra        func() []tools.Tool
	instructions func() string
	environment  func(context.Context) prompt.Environment
	skills       func() []string
	// ask is nil for a client that cannot be asked (ACP, or no
	// cline/question nor window/showMessageRequest).
	ask func(ctx context.Context, id, question string, options []string) (string, bool, error)
	// spawn is nil for a session with no model or for a subagent.
	spawn  func(ctx context.Context, prompt string) (string, error)
	edited func(ctx context.Context, id string, f *delivery.Files, callID string, edits []tools.FileEdit)
	// checkpoint is nil for a subagent, whose calls the parent's
	// checkpoints cover.
	checkpoint func(id string, turn int, callID, title string)
}

var _ session.Host = (*sessionHost)(nil)

func (h *sessionHost) Update(u wire.SessionUpdate) {
	h.note(u)
	h.send(h.id, u)
}

func (h *sessionHost) Redact(text string) string { return h.redact(text) }
func (h *sessionHost) KeyStart(text string) int  { return h.keyStart(text) }
func (h *sessionHost) Warn(msg string)           { h.warn("cline-ls: " + msg) }

func (h *sessionHost) Extra() []tools.Tool {
	if h.extra == nil {
		return nil
	}
	return h.extra()
}

// OpenBuffers lists the open buffers as the user reads their paths,
// sorted: the turn's context block must not change with map order.
func (h *sessionHost) OpenBuffers() []string {
	var out []string
	for _, p := range h.files.OpenBuffers() {
		out = append(out, h.files.Display(p))
	}
	slices.Sort(out)
	return out
}

func (h *sessionHost) Instructions() string {
	if h.instructions == nil {
		return ""
	}
	return h.instructions()
}

func (h *sessionHost) Environment(ctx context.Context) prompt.Environment {
	if h.environment == nil {
		return prompt.Environment{}
	}
	return h.environment(ctx)
}

func (h *sessionHost) Skills() []string { return h.skills() }

func (h *sessionHost) Ask(ctx context.Context, question string, options []string) (string, bool, error) {
	if h.ask == nil {
		return "", false, session.ErrCannotAsk
	}
	return h.ask(ctx, h.id, question, options)
}

func (h *sessionHost) Spawn(ctx context.Context, prompt string) (string, error) {
	if h.spawn == nil {
		return "", session.ErrNoSubagents
	}
	return h.spawn(ctx, prompt)
}

func (h *sessionHost) Edited(callID string, edits []tools.FileEdit) {
	h.edited(context.Background(), h.id, h.files, callID, edits)
}

func (h *sessionHost) Checkpoint(turn int, callID, title string) {
	if h.checkpoint != nil {
		h.checkpoint(h.id, turn, callID, title)
	}
}
