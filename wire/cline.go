package wire

import (
	"encoding/json"
	"time"
)

// The params of the notifications and requests the daemon sends, and the
// results it answers with. Members are declared in sorted order, as the
// maps these types replaced were written.

// DiffParams is the params of cline/diff, sent after an applied edit: the
// compact line diff of the file, with the buffer's version when it is
// open (null when not).
type DiffParams struct {
	Added      int    `json:"added"`
	Diff       string `json:"diff"`
	Removed    int    `json:"removed"`
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
	URI        string `json:"uri"`
	Version    *int32 `json:"version"`
}

// ApprovalRequestParams is the params of cline/approvalRequest.
type ApprovalRequestParams struct {
	ApprovalID string             `json:"approvalId"`
	Command    string             `json:"command,omitzero"`
	Diff       string             `json:"diff,omitzero"`
	Options    []PermissionOption `json:"options"`
	SessionID  string             `json:"sessionId"`
	ToolCall   ApprovalToolCall   `json:"toolCall"`
}

// ApprovalToolCall is the call an approval is asked for.
type ApprovalToolCall struct {
	Kind       ToolKind   `json:"kind"`
	Locations  []Location `json:"locations"`
	RawInput   any        `json:"rawInput"`
	Title      string     `json:"title"`
	ToolCallID string     `json:"toolCallId"`
}

// PermissionOption is one answer offered with an approval request.
type PermissionOption struct {
	OptionID string         `json:"optionId"`
	Name     string         `json:"name"`
	Kind     PermissionKind `json:"kind"`
}

// RequestPermissionParams is the params of ACP's session/request_permission.
type RequestPermissionParams struct {
	Options   []PermissionOption `json:"options"`
	SessionID string             `json:"sessionId"`
	ToolCall  PermissionToolCall `json:"toolCall"`
}

// PermissionToolCall is the call a permission is asked for: a
// ToolCallUpdate's fields, without the sessionUpdate discriminator.
type PermissionToolCall ToolCallUpdate

// UnmarshalJSON decodes c and its content items.
func (c *PermissionToolCall) UnmarshalJSON(data []byte) error {
	var u ToolCallUpdate
	if err := u.UnmarshalJSON(data); err != nil {
		return err
	}
	*c = PermissionToolCall(u)
	return nil
}

// ReadTextFileParams is the params of ACP's fs/read_text_file.
type ReadTextFileParams struct {
	Path      string `json:"path"`
	SessionID string `json:"sessionId"`
}

// WriteTextFileParams is the params of ACP's fs/write_text_file.
type WriteTextFileParams struct {
	Content   string `json:"content"`
	Path      string `json:"path"`
	SessionID string `json:"sessionId"`
}

// AskQuestionParams is the params of cline/askQuestion.
type AskQuestionParams struct {
	Options   []string `json:"options"`
	Question  string   `json:"question"`
	SessionID string   `json:"sessionId"`
}

// MessageType is the type of window/showMessage and window/logMessage.
type MessageType int

// Message types.
const (
	MessageError   MessageType = 1
	MessageWarning MessageType = 2
	MessageInfo    MessageType = 3
	MessageLog     MessageType = 4
)

// MessageParams is the params of window/showMessage and window/logMessage.
type MessageParams struct {
	Message string      `json:"message"`
	Type    MessageType `json:"type"`
}

// ShowMessageRequestParams is the params of window/showMessageRequest.
type ShowMessageRequestParams struct {
	Actions []MessageAction `json:"actions"`
	Message string          `json:"message"`
	Type    MessageType     `json:"type"`
}

// MessageAction is a button of window/showMessageRequest.
type MessageAction struct {
	Title string `json:"title"`
}

// CancelParams is the params of LSP's $/cancelRequest: the id of the
// request given up.
type CancelParams struct {
	ID any `json:"id"`
}

// CancelRequestParams is the params of ACP's $/cancel_request, which
// names the request given up requestId.
type CancelRequestParams struct {
	RequestID any `json:"requestId"`
}

// ProgressCreateParams is the params of window/workDoneProgress/create.
type ProgressCreateParams struct {
	Token string `json:"token"`
}

// ProgressParams is the params of $/progress.
type ProgressParams struct {
	Token string        `json:"token"`
	Value ProgressValue `json:"value"`
}

// ProgressValue is a work-done progress value: ProgressBegin,
// ProgressReport or ProgressEnd, each encoded with its "kind".
type ProgressValue interface {
	json.Marshaler
	progressKind() string
}

// ProgressBegin starts a work-done progress.
type ProgressBegin struct {
	Cancellable bool   `json:"cancellable"`
	Title       string `json:"title"`
}

// ProgressReport reports on a work-done progress.
type ProgressReport struct {
	Message string `json:"message"`
}

// ProgressEnd ends a work-done progress.
type ProgressEnd struct {
	Message string `json:"message"`
}

func (ProgressBegin) progressKind() string  { return "begin" }
func (ProgressReport) progressKind() string { return "report" }
func (ProgressEnd) progressKind() string    { return "end" }

// MarshalJSON encodes p with "kind": "begin".
func (p ProgressBegin) MarshalJSON() ([]byte, error) {
	type plain ProgressBegin
	return tagged("kind", p.progressKind(), plain(p))
}

// MarshalJSON encodes p with "kind": "report".
func (p ProgressReport) MarshalJSON() ([]byte, error) {
	type plain ProgressReport
	return tagged("kind", p.progressKind(), plain(p))
}

// MarshalJSON encodes p with "kind": "end".
func (p ProgressEnd) MarshalJSON() ([]byte, error) {
	type plain ProgressEnd
	return tagged("kind", p.progressKind(), plain(p))
}

// Empty is the result {}.
type Empty struct{}

// PromptResult is the result of session/prompt.
type PromptResult struct {
	StopReason string `json:"stopReason"`
}

// SessionIDResult is the result of the cline.newSession and cline.prompt
// commands.
type SessionIDResult struct {
	SessionID string `json:"sessionId"`
}

// NewSessionResult is the result of session/new.
type NewSessionResult struct {
	Modes     SessionModes `json:"modes"`
	SessionID string       `json:"sessionId"`
}

// ModesResult is the result of session/load and session/set_mode.
type ModesResult struct {
	Modes SessionModes `json:"modes"`
}

// SessionModes is the session's mode and the modes it may switch to.
type SessionModes struct {
	AvailableModes []Mode `json:"availableModes"`
	CurrentModeID  string `json:"currentModeId"`
}

// Mode is a mode a session may be in.
type Mode struct {
	Description string `json:"description"`
	ID          string `json:"id"`
	Name        string `json:"name"`
}

// ListSessionsResult is the result of session/list.
type ListSessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo is a stored session as session/list shows it.
type SessionInfo struct {
	Cwd string `json:"cwd"`
	// HeldBy is the process of another daemon that has the session open
	// (PROTOCOL.md §12): loading it here is refused until it lets go.
	HeldBy int `json:"heldBy,omitempty"`
	// ParentSessionID is the session a fork was made from (PROTOCOL.md
	// §12).
	ParentSessionID string    `json:"parentSessionId,omitempty"`
	SessionID       string    `json:"sessionId"`
	Title           string    `json:"title"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// CallToolResult is the result of cline/callTool.
type CallToolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"isError"`
}

// ToolsResult is the result of cline/tools: the tools as the format's
// provider receives them (a JSON value, or text for "xml").
type ToolsResult struct {
	Format string `json:"format"`
	Tools  any    `json:"tools"`
}

// CommandArgs is the argument of the cline.* commands of
// workspace/executeCommand (each command reads the fields it needs), as
// the daemon reads it and as its code actions send it.
type CommandArgs struct {
	// AtTurn is cline.forkSession's turn (0: all).
	AtTurn    int    `json:"atTurn,omitzero"`
	Mode      string `json:"mode,omitzero"`
	ModeID    string `json:"modeId,omitzero"`
	SessionID string `json:"sessionId,omitzero"`
	Text      string `json:"text,omitzero"`
}

// LSPRequestParams is the params of cline/lspRequest (PROTOCOL.md §11):
// an LSP method of the editor's language servers and its params, in LSP
// shape, for the client to ask them.
type LSPRequestParams struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// LSPRequestResult is the answer to cline/lspRequest: what the editor's
// language servers answered, in LSP shape (null when none answered).
type LSPRequestResult struct {
	Result json.RawMessage `json:"result"`
}
