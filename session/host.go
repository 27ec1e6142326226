package session

import (
	"context"
	"errors"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// Host is what a session needs from its surroundings, one per session:
// the client it reports to and asks, the editor's state and the
// workspace's instructions a turn starts from, the secrets it must not
// show, and the work it hands off (subagents, checkpoints, diffs). A turn
// reaches its host through these methods only, streamed chunks included.
// Embed NopHost for the methods a host has nothing for.
type Host interface {
	// Update receives every session/update; it must not block long.
	Update(u wire.SessionUpdate)
	// Redact scrubs secrets from text before it is shown or stored.
	Redact(text string) string
	// KeyStart reports how many bytes at the end of text could be the
	// start of a secret (0 for none): streamed output holds them back
	// until the next chunk tells, so that a key split between two chunks
	// is redacted whole.
	KeyStart(text string) int
	// Warn tells the user of a problem they must know about that is not
	// the turn's (the history cannot be saved); the session also says it
	// as agent text.
	Warn(msg string)
	// Extra returns the dynamic tools (MCP servers' tools) at each model
	// request, since MCP servers come and go.
	Extra() []tools.Tool
	// OpenBuffers lists the editor's open files for the turn's context
	// block.
	OpenBuffers() []string
	// Instructions returns the project's and the user's instruction
	// files, rendered for the system prompt; asked once per turn and
	// again after each compaction.
	Instructions() string
	// Environment returns the facts of the moment (date, git branch and
	// status) for the turn's context block; asked once per turn.
	Environment(ctx context.Context) prompt.Environment
	// Skills lists the skills use_skill offers, for its description.
	Skills() []string
	// Ask puts a question to the user for ask_question. ErrCannotAsk
	// means there is no way to: the question goes out as message text
	// and the turn ends.
	Ask(ctx context.Context, question string, options []string) (answer string, ok bool, err error)
	// Spawn runs a child session for spawn_agent and the configured
	// subagents and returns its answer; ErrNoSubagents means there are
	// none here.
	Spawn(ctx context.Context, prompt string) (string, error)
	// Edited is told about every file a successful call changed, for
	// cline/diff.
	Edited(callID string, edits []tools.FileEdit)
	// Checkpoint records the workspace so that a turn can be undone: it
	// is called with an empty toolCallID just before the first call of a
	// turn that may change files (a tool not declared ReadOnly, or one
	// the registry does not know, such as an MCP tool) runs, and with the
	// call's id when each such call has ended. turn is the prompt's index
	// in the session (the user messages before it); title says what the
	// checkpoint precedes or follows. It runs on the call's path, so it
	// must be quick.
	Checkpoint(turn int, toolCallID, title string)
}

// ErrCannotAsk is Host.Ask's error when the user cannot be asked.
var ErrCannotAsk = errors.New("no way to ask the user")

// ErrNoSubagents is Host.Spawn's error when no subagent can run.
var ErrNoSubagents = errors.New("subagents are not available here")

// NopHost is a Host with nothing around it: updates go nowhere, nothing
// is secret, there is no editor, no instructions, no one to ask, no
// subagent and no checkpoint. A session made with no Host has it.
type NopHost struct{}

func (NopHost) Update(wire.SessionUpdate)                      {}
func (NopHost) Redact(text string) string                      { return text }
func (NopHost) KeyStart(string) int                            { return 0 }
func (NopHost) Warn(string)                                    {}
func (NopHost) Extra() []tools.Tool                            { return nil }
func (NopHost) OpenBuffers() []string                          { return nil }
func (NopHost) Instructions() string                           { return "" }
func (NopHost) Environment(context.Context) prompt.Environment { return prompt.Environment{} }
func (NopHost) Skills() []string                               { return nil }
func (NopHost) Ask(context.Context, string, []string) (string, bool, error) {
	return "", false, ErrCannotAsk
}
func (NopHost) Spawn(context.Context, string) (string, error) { return "", ErrNoSubagents }
func (NopHost) Edited(string, []tools.FileEdit)               {}
func (NopHost) Checkpoint(int, string, string)                {}
