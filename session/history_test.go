package session

import (
	"context"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/wire"
)

func callMsg(ids ...string) provider.Message {
	m := provider.Message{Role: provider.RoleAssistant}
	for _, id := range ids {
		m.Parts = append(m.Parts, provider.CallPart(provider.ToolCall{ID: id, Name: "read_files"}))
	}
	return m
}

func resultMsg(ids ...string) provider.Message {
	m := provider.Message{Role: provider.RoleTool}
	for _, id := range ids {
		m.Parts = append(m.Parts, provider.ResultPart(provider.ToolResult{CallID: id, Name: "read_files", Content: "ok"}))
	}
	return m
}

// TestRepairHistory: cut-off replies leave unanswered calls and stray
// results; the repaired history answers every call right after it.
func TestRepairHistory(t *testing.T) {
	cases := []struct {
		name string
		in   []provider.Message
	}{
		{"call cut off at the end", []provider.Message{provider.UserText("go"), callMsg("a")}},
		{"second parallel call unanswered", []provider.Message{provider.UserText("go"), callMsg("a", "b"), resultMsg("a"), provider.UserText("next")}},
		{"user turn right after the calls", []provider.Message{provider.UserText("go"), callMsg("a"), provider.UserText("next")}},
		{"result for no call", []provider.Message{provider.UserText("go"), resultMsg("z"), provider.UserText("next")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if historyIntact(c.in) {
				t.Fatalf("the broken history counts as intact")
			}
			out := repairHistory(c.in)
			if !historyIntact(out) {
				t.Fatalf("repaired history still broken: %+v", out)
			}
			if last := c.in[len(c.in)-1]; last.Role == provider.RoleUser && out[len(out)-1].Parts[0].Text != last.Parts[0].Text {
				t.Errorf("the last user message was lost")
			}
		})
	}
	good := []provider.Message{provider.UserText("go"), callMsg("a", "b"), resultMsg("b", "a"), provider.UserText("next")}
	if !historyIntact(good) {
		t.Errorf("an intact history counts as broken")
	}
	if out := repairHistory(good); len(out) != len(good) {
		t.Errorf("an intact history was changed")
	}
}

// TestRewind: rewinding to a turn drops it and everything after, the
// next prompt goes on from there, and the rewind is persisted.
func TestRewind(t *testing.T) {
	tr := &provider.Transcript{Replies: []provider.ReplayReply{
		{Events: []provider.ReplayEvent{{Text: "one"}}},
		{Events: []provider.ReplayEvent{{Text: "two"}}},
		{Expect: &provider.Expect{LastUserContains: "third"}, Events: []provider.ReplayEvent{{Text: "three"}}},
	}}
	prov, err := provider.New(provider.Config{Name: "replay", Replay: tr})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _ := newTestStore(t, StoreOptions{})
	log, err := st.Create(Meta{SessionID: "s-rewind", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{ID: "s-rewind", Mode: "act", Provider: prov, Log: log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s.Prompt(ctx, "first")
	s.Prompt(ctx, "second")
	if err := s.Rewind(1); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.History() {
		for _, p := range m.Parts {
			if strings.Contains(p.Text, "second") || p.Text == "two" {
				t.Errorf("the rewound turn is still in the history: %q", p.Text)
			}
		}
	}
	if _, err := s.Prompt(ctx, "third"); err != nil {
		t.Fatalf("prompt after the rewind: %v", err)
	}
	log.Close()
	meta, recs, err := st.Load("s-rewind")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range Resume(meta, recs).History {
		for _, p := range m.Parts {
			texts = append(texts, p.Text)
		}
	}
	if got := strings.Join(texts, "|"); strings.Contains(got, "second") || !strings.Contains(got, "first") || !strings.Contains(got, "third") {
		t.Errorf("resumed history after the rewind: %s", got)
	}
	// A replay (session/load) shows what the history holds: the turn the
	// rewind took back is not shown again.
	var shown []string
	r, err := New(Config{ID: "s-rewind", Mode: "act", Provider: prov, Host: testHost{update: func(u wire.SessionUpdate) {
		if c, ok := u.(wire.UserMessageChunk); ok {
			if b, ok := c.Content.(wire.TextBlock); ok {
				shown = append(shown, b.Text)
			}
		}
		if c, ok := u.(wire.AgentMessageChunk); ok {
			if b, ok := c.Content.(wire.TextBlock); ok {
				shown = append(shown, b.Text)
			}
		}
	}}}, Resume(meta, recs).History)
	if err != nil {
		t.Fatal(err)
	}
	r.Replay(recs)
	if got := strings.Join(shown, "|"); got != "first|one|third|three" {
		t.Errorf("replayed after the rewind: %q, want first|one|third|three", got)
	}
	if err := s.Rewind(9); err == nil {
		t.Errorf("rewinding to a turn that is not there was accepted")
	}
}
