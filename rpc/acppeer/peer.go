package acppeer

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"

	"github.com/cline-ls/cline-ls/wire"
)

// MethodCancelRequest withdraws a request the daemon gave up.
const MethodCancelRequest = "$/cancel_request"

// Caller is the connection to the client.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Caps is what an ACP client declared in initialize's
// clientCapabilities that the peer acts on.
type Caps struct {
	ReadTextFile  bool // fs.readTextFile
	WriteTextFile bool // fs.writeTextFile
	Terminal      bool // terminal: run_commands goes through terminal/*
}

// Peer is an ACP client as the daemon's sessions see it.
type Peer struct {
	c     Caller
	caps  Caps
	o     Options
	terms openTerminals
}

// Options are what a Peer is given besides its Caller.
type Options struct {
	// Reason is the client's own reason for an error answer of its
	// (SDKs put it in the error's data); nil means the error's text.
	Reason func(error) string
	// Log receives what went wrong that nobody waits for; nil discards.
	Log *slog.Logger
	// Locate makes tool-call locations absolute paths, as ACP has them
	// (the tools describe them as the user reads them); nil keeps them.
	Locate func([]wire.Location) []wire.Location
}

// New returns the peer of an ACP client with caps, talking through c.
func New(c Caller, caps Caps, o Options) *Peer {
	if o.Reason == nil {
		o.Reason = func(err error) string { return err.Error() }
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Locate == nil {
		o.Locate = func(l []wire.Location) []wire.Location { return l }
	}
	return &Peer{c: c, caps: caps, o: o}
}

// CancelNotice is the notification that withdraws a request the daemon
// gave up; id is spelled as the request spelled it.
func (p *Peer) CancelNotice(id json.RawMessage) (method string, params any) {
	return MethodCancelRequest, wire.CancelRequestParams{RequestID: id}
}

// Messages is false: ACP has no window/logMessage or showMessage; what
// the user must hear goes into a session's updates.
func (p *Peer) Messages() bool { return false }

// Waiting does nothing: no ACP client is known to strand messages
// behind an answer.
func (p *Peer) Waiting(string) (done func()) { return func() {} }

// BeginTurn reports nothing: an ACP client shows the session's updates
// and the prompt's answer ends the turn.
func (p *Peer) BeginTurn(context.Context, string, string, context.CancelFunc) func(string, error) {
	return func(string, error) {}
}

// Update is u with its tool-call locations absolute.
func (p *Peer) Update(u wire.SessionUpdate) wire.SessionUpdate {
	switch x := u.(type) {
	case wire.ToolCall:
		x.Locations = p.o.Locate(x.Locations)
		return x
	case wire.ToolCallUpdate:
		x.Locations = p.o.Locate(x.Locations)
		return x
	}
	return u
}

// Report has no progress to report to.
func (p *Peer) Report(string, wire.SessionUpdate) {}

// BeginWork reports nothing: ACP has no progress for the daemon's own
// work.
func (p *Peer) BeginWork(context.Context, string) (report, end func(string)) {
	none := func(string) {}
	return none, none
}

// commands are the slash commands the daemon runs itself, without the
// model (rpc's acpCommand).
var commands = []wire.AvailableCommand{
	{Name: "compact", Description: "Summarise the older part of the conversation to free the context window"},
	{Name: "undo", Description: "Put the files and the conversation back to before the last turn"},
	{Name: "plan", Description: "Switch to plan mode: the agent reads and plans, and does not edit"},
	{Name: "act", Description: "Switch to act mode: the agent edits and runs commands"},
}

// Commands are the slash commands the daemon runs itself, a copy the
// caller may append to.
func (p *Peer) Commands() []wire.AvailableCommand { return slices.Clone(commands) }
