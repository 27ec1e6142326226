package wire

import (
	"encoding/json"
	"fmt"
)

// SessionUpdate is the "update" of a session/update notification. The set
// of variants is closed (the method is unexported); each encodes with its
// "sessionUpdate" discriminator. Both dialects share the set; a few
// variants are the LSP dialect's own (Compaction, ClineUsageUpdate).
type SessionUpdate interface {
	json.Marshaler
	// UpdateKind is the value of "sessionUpdate".
	UpdateKind() string
	sessionUpdate()
}

// SessionNotification is the params of session/update.
type SessionNotification struct {
	SessionID string        `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
}

// UnmarshalJSON decodes n and its update.
func (n *SessionNotification) UnmarshalJSON(data []byte) error {
	var a struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	u, err := DecodeSessionUpdate(a.Update)
	if err != nil {
		return err
	}
	n.SessionID, n.Update = a.SessionID, u
	return nil
}

// UserMessageChunk is a part of the user's message (a replayed history's).
type UserMessageChunk struct {
	Content ContentBlock `json:"content"`
}

// AgentMessageChunk is a part of the agent's reply.
type AgentMessageChunk struct {
	Content ContentBlock `json:"content"`
}

// AgentThoughtChunk is a part of the model's reasoning.
type AgentThoughtChunk struct {
	Content ContentBlock `json:"content"`
}

// ToolCall announces a tool call. A nil Locations is sent as [].
type ToolCall struct {
	Content    []ToolCallContent `json:"content,omitzero"`
	Kind       ToolKind          `json:"kind"`
	Locations  []Location        `json:"locations"`
	RawInput   any               `json:"rawInput"`
	Status     ToolCallStatus    `json:"status"`
	Title      string            `json:"title"`
	ToolCallID string            `json:"toolCallId"`
}

// ToolCallUpdate is a change of a tool call: only the fields set are
// sent (a nil Locations is left out, an empty one is sent as []).
type ToolCallUpdate struct {
	Content    []ToolCallContent `json:"content,omitzero"`
	Kind       ToolKind          `json:"kind,omitzero"`
	Locations  []Location        `json:"locations,omitzero"`
	RawInput   any               `json:"rawInput,omitzero"`
	RawOutput  *ToolOutput       `json:"rawOutput,omitzero"`
	Status     ToolCallStatus    `json:"status,omitzero"`
	Title      string            `json:"title,omitzero"`
	ToolCallID string            `json:"toolCallId"`
}

// ToolOutput is a finished call's raw output as the daemon reports it.
type ToolOutput struct {
	IsError bool `json:"isError"`
}

// Location is a file a tool call touches, with a line (1-based) when it
// is about one.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// Plan is the session's whole plan, sent on every change (nil Entries as
// []).
type Plan struct {
	Entries []PlanEntry `json:"entries"`
}

// PlanEntry is one item of a plan.
type PlanEntry struct {
	Content  string       `json:"content"`
	Priority PlanPriority `json:"priority"`
	Status   PlanStatus   `json:"status"`
}

// CurrentModeUpdate says the session's mode changed.
type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
}

// AvailableCommandsUpdate lists the commands a client may offer its user.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
}

// AvailableCommand is a command of the agent's.
type AvailableCommand struct {
	Description string        `json:"description"`
	Input       *CommandInput `json:"input,omitzero"`
	Name        string        `json:"name"`
}

// CommandInput is the hint shown for a command's free-form input.
type CommandInput struct {
	Hint string `json:"hint"`
}

// UsageUpdate is the ACP dialect's usage_update: the context in use and
// its size, in tokens, and the session's cost when the model is priced.
type UsageUpdate struct {
	Cost *Cost `json:"cost,omitzero"`
	Size int   `json:"size"`
	Used int   `json:"used"`
}

// Cost is an amount of money.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// ClineUsageUpdate is the LSP dialect's usage_update: a reply's token
// counts, the turn's and the session's totals, and the context window.
type ClineUsageUpdate struct {
	CacheReadTokens int        `json:"cacheReadTokens,omitzero"`
	Context         ContextUse `json:"context"`
	CostUSD         *float64   `json:"costUsd,omitzero"`
	InputTokens     int        `json:"inputTokens"`
	OutputTokens    int        `json:"outputTokens"`
	Session         Tokens     `json:"session"`
	Turn            Tokens     `json:"turn"`
}

// ReplyUsage is the update for a reply's counts r, with the turn's and
// the session's totals and the context.
func ReplyUsage(r, turn, session Tokens, context ContextUse) ClineUsageUpdate {
	return ClineUsageUpdate{CacheReadTokens: r.CacheReadTokens, CostUSD: r.CostUSD, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		Turn: turn, Session: session, Context: context}
}

// Tokens are token counts, with their cost in US dollars when the model is
// priced (CostUSD nil when it is not).
type Tokens struct {
	CacheReadTokens int      `json:"cacheReadTokens,omitzero"`
	CostUSD         *float64 `json:"costUsd,omitzero"`
	InputTokens     int      `json:"inputTokens"`
	OutputTokens    int      `json:"outputTokens"`
}

// ContextUse is how much of the model's context window is in use.
type ContextUse struct {
	Size int `json:"size"`
	Used int `json:"used"`
}

// Compaction (LSP dialect) says the history was compacted: the tokens
// before and after, and the summary that replaced the older turns.
type Compaction struct {
	After  int `json:"after"`
	Before int `json:"before"`
	// HistoryFile is the session file, which keeps the turns the
	// compaction replaced, for the user to open; empty when the session
	// is not saved.
	HistoryFile string `json:"historyFile,omitempty"`
	Summary     string `json:"summary"`
}

func (UserMessageChunk) UpdateKind() string        { return "user_message_chunk" }
func (AgentMessageChunk) UpdateKind() string       { return "agent_message_chunk" }
func (AgentThoughtChunk) UpdateKind() string       { return "agent_thought_chunk" }
func (ToolCall) UpdateKind() string                { return "tool_call" }
func (ToolCallUpdate) UpdateKind() string          { return "tool_call_update" }
func (Plan) UpdateKind() string                    { return "plan" }
func (CurrentModeUpdate) UpdateKind() string       { return "current_mode_update" }
func (AvailableCommandsUpdate) UpdateKind() string { return "available_commands_update" }
func (UsageUpdate) UpdateKind() string             { return "usage_update" }
func (ClineUsageUpdate) UpdateKind() string        { return "usage_update" }
func (Compaction) UpdateKind() string              { return "compaction" }

func (UserMessageChunk) sessionUpdate()        {}
func (AgentMessageChunk) sessionUpdate()       {}
func (AgentThoughtChunk) sessionUpdate()       {}
func (ToolCall) sessionUpdate()                {}
func (ToolCallUpdate) sessionUpdate()          {}
func (Plan) sessionUpdate()                    {}
func (CurrentModeUpdate) sessionUpdate()       {}
func (AvailableCommandsUpdate) sessionUpdate() {}
func (UsageUpdate) sessionUpdate()             {}
func (ClineUsageUpdate) sessionUpdate()        {}
func (Compaction) sessionUpdate()              {}

// MarshalJSON encodes u with its sessionUpdate.
func (u UserMessageChunk) MarshalJSON() ([]byte, error) {
	type plain UserMessageChunk
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u AgentMessageChunk) MarshalJSON() ([]byte, error) {
	type plain AgentMessageChunk
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u AgentThoughtChunk) MarshalJSON() ([]byte, error) {
	type plain AgentThoughtChunk
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u ToolCall) MarshalJSON() ([]byte, error) {
	type plain ToolCall
	if u.Locations == nil {
		u.Locations = []Location{}
	}
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u ToolCallUpdate) MarshalJSON() ([]byte, error) {
	type plain ToolCallUpdate
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	if u.Entries == nil {
		u.Entries = []PlanEntry{}
	}
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u CurrentModeUpdate) MarshalJSON() ([]byte, error) {
	type plain CurrentModeUpdate
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	type plain AvailableCommandsUpdate
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u UsageUpdate) MarshalJSON() ([]byte, error) {
	type plain UsageUpdate
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u ClineUsageUpdate) MarshalJSON() ([]byte, error) {
	type plain ClineUsageUpdate
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// MarshalJSON encodes u with its sessionUpdate.
func (u Compaction) MarshalJSON() ([]byte, error) {
	type plain Compaction
	return tagged("sessionUpdate", u.UpdateKind(), plain(u))
}

// chunk is the shape the three message chunks share, for decoding.
type chunk struct {
	Content json.RawMessage `json:"content"`
}

func decodeChunk(data []byte) (ContentBlock, error) {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return DecodeContentBlock(c.Content)
}

// UnmarshalJSON decodes u and its content block.
func (u *UserMessageChunk) UnmarshalJSON(data []byte) (err error) {
	u.Content, err = decodeChunk(data)
	return err
}

// UnmarshalJSON decodes u and its content block.
func (u *AgentMessageChunk) UnmarshalJSON(data []byte) (err error) {
	u.Content, err = decodeChunk(data)
	return err
}

// UnmarshalJSON decodes u and its content block.
func (u *AgentThoughtChunk) UnmarshalJSON(data []byte) (err error) {
	u.Content, err = decodeChunk(data)
	return err
}

// UnmarshalJSON decodes u and its content items.
func (u *ToolCall) UnmarshalJSON(data []byte) error {
	type plain ToolCall
	var a struct {
		plain
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	c, err := decodeToolCallContents(a.Content)
	if err != nil {
		return err
	}
	*u = ToolCall(a.plain)
	u.Content = c
	return nil
}

// UnmarshalJSON decodes u and its content items.
func (u *ToolCallUpdate) UnmarshalJSON(data []byte) error {
	type plain ToolCallUpdate
	var a struct {
		plain
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	c, err := decodeToolCallContents(a.Content)
	if err != nil {
		return err
	}
	*u = ToolCallUpdate(a.plain)
	u.Content = c
	return nil
}

// DecodeSessionUpdate decodes an update by its "sessionUpdate". A
// usage_update is the ACP dialect's when it has "used", else the LSP
// dialect's.
func DecodeSessionUpdate(data []byte) (SessionUpdate, error) {
	m, tag, err := tagOf(data, "sessionUpdate")
	if err != nil {
		return nil, fmt.Errorf("session update: %w", err)
	}
	switch tag {
	case "user_message_chunk":
		return decodeAs[UserMessageChunk](data)
	case "agent_message_chunk":
		return decodeAs[AgentMessageChunk](data)
	case "agent_thought_chunk":
		return decodeAs[AgentThoughtChunk](data)
	case "tool_call":
		return decodeAs[ToolCall](data)
	case "tool_call_update":
		return decodeAs[ToolCallUpdate](data)
	case "plan":
		return decodeAs[Plan](data)
	case "current_mode_update":
		return decodeAs[CurrentModeUpdate](data)
	case "available_commands_update":
		return decodeAs[AvailableCommandsUpdate](data)
	case "config_option_update":
		return decodeAs[ConfigOptionUpdate](data)
	case "usage_update":
		if _, acp := m["used"]; acp {
			return decodeAs[UsageUpdate](data)
		}
		return decodeAs[ClineUsageUpdate](data)
	case "compaction":
		return decodeAs[Compaction](data)
	}
	return nil, fmt.Errorf("session update: unknown sessionUpdate %q", tag)
}

// ToolCallState is the tool call id and status a session update carries;
// ok is false for an update that is not a tool call's.
func ToolCallState(u SessionUpdate) (id string, status ToolCallStatus, ok bool) {
	switch u := u.(type) {
	case ToolCall:
		return u.ToolCallID, u.Status, true
	case ToolCallUpdate:
		return u.ToolCallID, u.Status, true
	}
	return "", "", false
}
