package session

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/toolspec"
	"github.com/cline-ls/cline-ls/wire"
)

// The builders below make the updates of a live session and of a
// replayed one alike: both go through them.

// toolCallStart is the tool_call update that announces a call, live or
// replayed: its first title, kind and arguments (redacted).
func (s *Session) toolCallStart(c provider.ToolCall) wire.ToolCall {
	return wire.ToolCall{
		ToolCallID: c.ID, Title: s.callTitle(c.Name, c.Args), Kind: wire.ToolKind(kindOf(s.registry, c.Name)),
		Status: wire.StatusPending, Locations: []wire.Location{}, RawInput: s.redactValue(ClientInput(c.Args)),
	}
}

// toolCallEnd is the tool_call_update that closes a call, live or
// replayed: its status, result text (redacted) and, in the ACP dialect,
// the diff of each file it changed.
func (s *Session) toolCallEnd(id, content string, isError bool, edits []tools.FileEdit) wire.ToolCallUpdate {
	status := wire.StatusCompleted
	if isError {
		status = wire.StatusFailed
	}
	items := []wire.ToolCallContent{wire.Text(s.cfg.Host.Redact(forUser(content)))}
	if s.cfg.ACP {
		items = append(items, s.diffItems(edits)...)
	}
	return wire.ToolCallUpdate{ToolCallID: id, Status: status, Content: items, RawOutput: &wire.ToolOutput{IsError: isError}}
}

// agentText is a part of the agent's reply (redacted).
func (s *Session) agentText(t string) wire.AgentMessageChunk {
	return wire.AgentMessageChunk{Content: wire.TextBlock{Text: s.cfg.Host.Redact(t)}}
}

// userText is a part of the user's prompt (redacted).
func (s *Session) userText(t string) wire.UserMessageChunk {
	return wire.UserMessageChunk{Content: wire.TextBlock{Text: s.cfg.Host.Redact(t)}}
}

// thought is a part of the model's reasoning (redacted).
func (s *Session) thought(t string) wire.AgentThoughtChunk {
	return wire.AgentThoughtChunk{Content: wire.TextBlock{Text: s.cfg.Host.Redact(t)}}
}

// modeUpdate says the session is in mode now.
func modeUpdate(mode string) wire.CurrentModeUpdate {
	return wire.CurrentModeUpdate{CurrentModeID: mode}
}

// Replay sends a loaded session's records to the client as the updates
// the live session sent, built by the same functions: its messages, tool
// calls with their titles and kinds, results, plans and mode changes,
// then the session's usage totals.
func (s *Session) Replay(recs []Record) {
	defer s.reportTotals()
	dropped := rewound(recs)
	for i, r := range recs {
		switch r.Type {
		case RecordMode:
			s.cfg.Host.Update(modeUpdate(r.Mode))
		case RecordPlan:
			s.cfg.Host.Update(planUpdate(r.Plan))
		case RecordCompaction:
			if r.Compaction != nil {
				s.cfg.Host.Update(r.Compaction.Update(s.cfg.ACP, s.historyFile()))
			}
		case RecordMessage:
			if r.Message != nil && !dropped[i] {
				s.replayMessage(*r.Message)
			}
		}
	}
}

// rewound returns the indices of the message records a later rewind took
// out of the conversation, so that a replay shows what the history holds
// (Resume's view), not the turns a restore took back. A rewind keeps the
// first Keep messages of the history as it stood, compaction applied: the
// messages it drops are the newest ones, counted from the end.
func rewound(recs []Record) map[int]bool {
	var dropped map[int]bool
	var history []provider.Message
	var shown []int // the record index of each message still shown, in order
	for i, r := range recs {
		switch r.Type {
		case RecordMessage:
			if r.Message != nil {
				history = append(history, *r.Message)
				shown = append(shown, i)
			}
		case RecordCompaction:
			if r.Compaction != nil {
				history = r.Compaction.apply(history)
			}
		case RecordRewind:
			if r.Keep >= len(history) {
				continue
			}
			n := min(len(history)-r.Keep, len(shown))
			history = history[:r.Keep]
			if dropped == nil {
				dropped = make(map[int]bool)
			}
			for _, j := range shown[len(shown)-n:] {
				dropped[j] = true
			}
			shown = shown[:len(shown)-n]
		}
	}
	return dropped
}

func (s *Session) replayMessage(m provider.Message) {
	for _, p := range m.Parts {
		switch {
		case p.Kind == provider.PartText && m.Role == provider.RoleUser && prompt.IsTurnContext(p.Text):
			// The turn's context block is for the model, not the user.
		case p.Kind == provider.PartText && m.Role == provider.RoleUser && strings.HasPrefix(p.Text, hookContextPrefix):
			// What a hook added to the prompt; the user did not type it.
		case p.Kind == provider.PartText && m.Role == provider.RoleUser:
			s.cfg.Host.Update(s.userText(prompt.UserWords(p.Text)))
		case p.Kind == provider.PartText:
			s.cfg.Host.Update(s.agentText(p.Text))
		case p.Kind == provider.PartThinking && p.Text != "":
			s.cfg.Host.Update(s.thought(p.Text))
		case p.Kind == provider.PartToolCall && p.Call != nil:
			s.cfg.Host.Update(s.toolCallStart(*p.Call))
			if t := s.callSays(*p.Call); t != "" {
				s.cfg.Host.Update(s.agentText(t))
			}
		case p.Kind == provider.PartToolResult && p.Result != nil:
			s.cfg.Host.Update(s.toolCallEnd(p.Result.CallID, p.Result.Content, p.Result.IsError, nil))
		}
	}
}

// callSays is what a call of the session's own tools said to the user as
// the agent's text when it ran (a plan, a submitted summary), shown again
// in a replay: the call's arguments are all that the history keeps of it.
func (s *Session) callSays(c provider.ToolCall) string {
	name := c.Name
	if t, ok := s.registry.Lookup(name, toolspec.FamilyGeneric); ok {
		name = t.Spec().ID
	}
	var a struct {
		Response string `json:"response"`
		Summary  string `json:"summary"`
	}
	switch name {
	case tools.NamePlanModeRespond:
		json.Unmarshal(c.Args, &a)
		return a.Response
	case tools.NameSubmitAndExit:
		json.Unmarshal(c.Args, &a)
		return a.Summary
	}
	return ""
}

// planUpdate is the plan update: the whole list each time.
func planUpdate(entries []PlanEntry) wire.Plan {
	return wire.Plan{Entries: entries}
}

// Rewind drops the conversation from a turn on: turn is the number of user
// messages before that turn's prompt, as checkpoints count it. The next
// request goes without the dropped turns, and a reloaded session resumes
// without them (the full record stays in the file). It is refused while a
// turn runs, and when the history no longer holds that turn because it
// was compacted since.
func (s *Session) Rewind(turn int) error {
	s.mu.Lock()
	if s.running != nil {
		s.mu.Unlock()
		return ErrBusy
	}
	n, cut := 0, -1
	for i, m := range s.history {
		if m.Role != provider.RoleUser {
			continue
		}
		if n == turn {
			cut = i
			break
		}
		n++
	}
	if cut < 0 {
		s.mu.Unlock()
		if n < turn {
			return fmt.Errorf("the conversation no longer holds turn %d (it was compacted or rewound since)", turn)
		}
		return nil // nothing after that turn
	}
	s.history = s.history[:cut]
	s.mu.Unlock()
	s.persist(Record{Type: RecordRewind, Keep: cut})
	s.flush()
	return nil
}
