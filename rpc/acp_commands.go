package rpc

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/wire"
)

// The commands an ACP client offers as slash commands
// (available_commands_update): a prompt that is one of the ACP peer's
// (acppeer) runs in the daemon without the model.

// availableCommands are the slash commands ls offers: ours, then its MCP
// servers' prompts (run through runPrompt).
func (c *sessionConfig) availableCommands(ls *liveSession) []wire.AvailableCommand {
	return append(c.commands(), c.mcpCommands(ls)...)
}

// sendAvailableCommands tells every session of a client that takes
// commands the commands it offers now: an MCP server's prompts come and
// go as it connects and lists.
func (c *sessionConfig) sendAvailableCommands() {
	if c.commands() == nil {
		return
	}
	for _, ls := range c.sessions() {
		c.sendUpdate(ls.ID(), wire.AvailableCommandsUpdate{AvailableCommands: c.availableCommands(ls)})
	}
}

// acpCommand runs a prompt that is one of the peer's commands ("/undo")
// and reports ok; any other prompt is the model's.
func (c *sessionConfig) acpCommand(ctx context.Context, ls *liveSession, text string) (res any, ok bool, err error) {
	name, ok := strings.CutPrefix(strings.TrimSpace(text), "/")
	if !ok || !slices.ContainsFunc(c.commands(), func(cmd wire.AvailableCommand) bool { return cmd.Name == name }) {
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
			return nil, true, jsonrpc2.Errorf(jsonrpc2.InternalError, "compact: %s", c.redact(err.Error()))
		}
		msg = fmt.Sprintf("Compacted the conversation from about %d to %d tokens.", before, after)
	case "undo":
		msg, err = c.undo(ctx, ls)
		if err != nil {
			return nil, true, err
		}
	case "plan", "act":
		if err := ls.SetMode(name); err != nil {
			return nil, true, invalidParams("prompt: %v", err)
		}
		c.sendConfigUpdate(ls)
		msg = "Now in " + name + " mode."
	}
	c.sendUpdate(ls.ID(), wire.AgentMessageChunk{Content: wire.TextBlock{Text: msg}})
	return wire.PromptResult{StopReason: string(session.StopEndTurn)}, true, nil
}
