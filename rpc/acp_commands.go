package rpc

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// The commands an ACP client offers as slash commands
// (available_commands_update): a prompt that is one of them runs in the
// daemon without the model.

// acpCommands are the commands a prompt can be; run by acpCommand.
var acpCommands = []wire.AvailableCommand{
	{Name: "compact", Description: "Summarise the older part of the conversation to free the context window"},
	{Name: "undo", Description: "Put the files and the conversation back to before the last turn"},
	{Name: "plan", Description: "Switch to plan mode: the agent reads and plans, and does not edit"},
	{Name: "act", Description: "Switch to act mode: the agent edits and runs commands"},
}

// availableCommands are the slash commands ls offers: ours, then its MCP
// servers' prompts (run through runPrompt).
func (s *Server) availableCommands(ls *liveSession) []wire.AvailableCommand {
	return append(slices.Clone(acpCommands), s.mcpCommands(ls)...)
}

// sendAvailableCommands tells every ACP session the commands it offers
// now: an MCP server's prompts come and go as it connects and lists.
func (s *Server) sendAvailableCommands() {
	if s.dialect != DialectACP {
		return
	}
	for _, ls := range s.sess.Sessions() {
		s.sendUpdate(ls.ID(), wire.AvailableCommandsUpdate{AvailableCommands: s.availableCommands(ls)})
	}
}

// acpCommand runs a prompt that is one of acpCommands ("/undo") and
// reports ok; any other prompt is the model's.
func (s *Server) acpCommand(ctx context.Context, ls *liveSession, text string) (res any, ok bool, err error) {
	name, ok := strings.CutPrefix(strings.TrimSpace(text), "/")
	if !ok || s.dialect != DialectACP || !slices.ContainsFunc(acpCommands, func(c wire.AvailableCommand) bool { return c.Name == name }) {
		return nil, false, nil
	}
	if ls.Running() {
		return nil, true, invalidParams("sessionId: %v", session.ErrBusy)
	}
	var msg string
	switch name {
	case "compact":
		before, after, err := ls.Compact(ctx)
		if err != nil {
			return nil, true, jsonrpc2.Errorf(jsonrpc2.InternalError, "compact: %s", s.redact(err.Error()))
		}
		msg = fmt.Sprintf("Compacted the conversation from about %d to %d tokens.", before, after)
	case "undo":
		msg, err = s.undoLastTurn(ctx, ls)
		if err != nil {
			return nil, true, err
		}
	case "plan", "act":
		if err := ls.SetMode(name); err != nil {
			return nil, true, invalidParams("prompt: %v", err)
		}
		s.sendConfigUpdate(ls)
		msg = "Now in " + name + " mode."
	}
	s.sendUpdate(ls.ID(), wire.AgentMessageChunk{Content: wire.TextBlock{Text: msg}})
	return wire.PromptResult{StopReason: string(session.StopEndTurn)}, true, nil
}

// undoLastTurn puts the files and the conversation back to before the
// session's last turn (its checkpoint before the first change; a turn
// that changed no file has none, and only its conversation goes), and
// says what it did.
func (s *Server) undoLastTurn(ctx context.Context, ls *liveSession) (string, error) {
	// Turns are counted as checkpoints count them: by the user messages
	// before their prompt.
	last := -1
	for _, m := range ls.History() {
		if m.Role == provider.RoleUser {
			last++
		}
	}
	if last < 0 {
		return "There is no turn to undo.", nil
	}
	var before string
	if st, err := s.checkpointStore(); err == nil {
		for _, c := range st.List(ls.ID()) {
			if c.ToolCallID == "" && c.Turn == last {
				before = c.ID
			}
		}
	}
	if before == "" {
		if err := ls.Rewind(last); err != nil {
			return "", invalidParams("prompt: the last turn cannot be undone: %v", err)
		}
		return "Undid the last turn; it changed no file.", nil
	}
	out, err := s.restoreFiles(ctx, restoreParams{SessionID: ls.ID(), CheckpointID: before, Scope: "both"})
	if err != nil {
		return "", err
	}
	res := out.(restoreResult)
	var b strings.Builder
	fmt.Fprintf(&b, "Undid the last turn: %d file(s) restored.", len(res.Restored))
	for _, c := range res.Conflicts {
		fmt.Fprintf(&b, "\nKept %s: %s.", c.Path, c.Reason)
	}
	return b.String(), nil
}
