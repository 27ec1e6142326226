package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/wire"
)

// TestReplayShowsWhatTheUserSaw: a replayed history shows the user's
// prompt as typed (a mention as @name, not the file; no hook's context)
// and, as the agent's text, what the session's own tools showed when
// they ran: a plan (plan_mode_respond) and a submitted summary
// (submit_and_exit), which the history keeps only as the calls'
// arguments.
func TestReplayShowsWhatTheUserSaw(t *testing.T) {
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	user := provider.Message{Role: provider.RoleUser, Parts: []provider.Part{
		provider.TextPart("fix @a.txt" + prompt.FileBlock("file:///w/a.txt", "SECRET-CONTENT")),
		provider.TextPart(hookContextPrefix + "from a hook"),
	}}
	agent := provider.Message{Role: provider.RoleAssistant, Parts: []provider.Part{
		provider.TextPart("Looking."),
		provider.CallPart(provider.ToolCall{ID: "p1", Name: "plan_mode_respond", Args: args(map[string]any{"response": "THE PLAN"})}),
		provider.CallPart(provider.ToolCall{ID: "s1", Name: "submit_and_exit", Args: args(map[string]any{"summary": "THE SUMMARY"})}),
	}}
	recs := []Record{{Type: RecordMessage, Message: &user}, {Type: RecordMessage, Message: &agent}}
	var users, agents []string
	s, err := New(Config{ID: "s-words", Mode: "act", Host: testHost{update: func(u wire.SessionUpdate) {
		switch c := u.(type) {
		case wire.UserMessageChunk:
			users = append(users, c.Content.(wire.TextBlock).Text)
		case wire.AgentMessageChunk:
			agents = append(agents, c.Content.(wire.TextBlock).Text)
		}
	}}}, []provider.Message{user, agent})
	if err != nil {
		t.Fatal(err)
	}
	s.Replay(recs)
	if got := strings.Join(users, "|"); got != "fix @a.txt" {
		t.Errorf("the user's prompt is replayed as %q", got)
	}
	if got := strings.Join(agents, "|"); got != "Looking.|THE PLAN|THE SUMMARY" {
		t.Errorf("the agent's text is replayed as %q", got)
	}
}
