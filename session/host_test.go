package session

import (
	"context"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// testHost is a Host whose methods the test sets; the ones it leaves nil
// are NopHost's.
type testHost struct {
	NopHost
	update       func(wire.SessionUpdate)
	extra        func() []tools.Tool
	instructions func() string
	environment  func(context.Context) prompt.Environment
	openBuffers  func() []string
	ask          func(ctx context.Context, question string, options []string) (string, bool, error)
	spawn        func(ctx context.Context, prompt string) (string, error)
}

func (h testHost) Update(u wire.SessionUpdate) {
	if h.update != nil {
		h.update(u)
	}
}

func (h testHost) Extra() []tools.Tool {
	if h.extra == nil {
		return nil
	}
	return h.extra()
}

func (h testHost) Instructions() string {
	if h.instructions == nil {
		return ""
	}
	return h.instructions()
}

func (h testHost) Environment(ctx context.Context) prompt.Environment {
	if h.environment == nil {
		return prompt.Environment{}
	}
	return h.environment(ctx)
}

func (h testHost) OpenBuffers() []string {
	if h.openBuffers == nil {
		return nil
	}
	return h.openBuffers()
}

func (h testHost) Ask(ctx context.Context, question string, options []string) (string, bool, error) {
	if h.ask == nil {
		return h.NopHost.Ask(ctx, question, options)
	}
	return h.ask(ctx, question, options)
}

func (h testHost) Spawn(ctx context.Context, prompt string) (string, error) {
	if h.spawn == nil {
		return h.NopHost.Spawn(ctx, prompt)
	}
	return h.spawn(ctx, prompt)
}

// TestNopHostAsksNoOneAndSpawnsNothing: with no host, a question goes out
// as message text and ends the turn, and spawn_agent says there are no
// subagents.
func TestNopHostAsksNoOneAndSpawnsNothing(t *testing.T) {
	s, err := New(Config{ID: "s-nop", Mode: "act"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ask(context.Background(), "Which one?", []string{"a", "b"})
	if err != nil || !res.EndsTurn {
		t.Fatalf("ask = %+v, %v; want the question shown and the turn ended", res, err)
	}
	build := s.ownTools()[tools.NameSpawnAgent]
	inv, err := build([]byte(`{"prompt":"look"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := inv.Execute(context.Background(), tools.ExecOptions{})
	if err != nil || !out.IsError || !strings.Contains(out.Content, "subagents are not available here") {
		t.Fatalf("spawn_agent = %+v, %v", out, err)
	}
}
