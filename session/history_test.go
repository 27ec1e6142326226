package session

import (
	"testing"

	"github.com/cline-ls/cline-ls/provider"
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
