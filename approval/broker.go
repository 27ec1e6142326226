package approval

import (
	"context"
	"log/slog"
	"sync"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// Caller sends the broker's requests and notifications to the editor.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}

// The methods the broker sends.
const (
	methodApprovalRequest    = "cline/approvalRequest"
	methodShowMessageRequest = "window/showMessageRequest"
	methodRequestPermission  = "session/request_permission"
	methodAskQuestion        = "cline/askQuestion"
)

// Options are what a Broker needs of the connection besides the wire.
type Options struct {
	Caller Caller
	// DiskNote says which of an approval's changes reach the disk at
	// once rather than an open buffer ("" for none); it is added to the
	// title, since the user expects their buffers to change, not files.
	DiskNote func(sessionID string, changes []tools.Change) string
	// AbsLocations resolves locations against the workspace folders, for
	// ACP, whose paths are absolute.
	AbsLocations func([]wire.Location) []wire.Location
	// ShowDiff opens the change an approval asks about as a read-only
	// document ("Show diff" of a window/showMessageRequest approval).
	ShowDiff func(ctx context.Context, req session.ApprovalRequest) error
	Log      *slog.Logger
}

// Broker is a connection's one way of asking its user. It is safe for
// concurrent use by every session of the connection.
type Broker struct {
	opts Options

	mu       sync.Mutex
	channels Channels
	next     int
	pending  map[string]pending // by approval id, until answered or withdrawn

	// msgReq holds a token while a window/showMessageRequest approval is
	// out: stock clients show one prompt at a time, and a session waiting
	// its turn stops waiting when it is cancelled.
	msgReq chan struct{}
}

type pending struct {
	sessionID string
	answer    chan session.ApprovalOutcome
}

// New returns a broker that asks as a client that declared nothing
// would be asked until SetChannels says otherwise.
func New(opts Options) *Broker {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.DiskNote == nil {
		opts.DiskNote = func(string, []tools.Change) string { return "" }
	}
	if opts.AbsLocations == nil {
		opts.AbsLocations = func(l []wire.Location) []wire.Location { return l }
	}
	return &Broker{
		opts:     opts,
		channels: ChannelsFor(Client{}),
		pending:  make(map[string]pending),
		msgReq:   make(chan struct{}, 1),
	}
}

// SetChannels sets how the connection asks, once its client is known.
func (b *Broker) SetChannels(c Channels) {
	b.mu.Lock()
	b.channels = c
	b.mu.Unlock()
}

// Channels is how the connection asks.
func (b *Broker) Channels() Channels {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.channels
}

// Approver returns the session.Approver of sessionID.
func (b *Broker) Approver(sessionID string) session.Approver {
	return approverFunc(func(ctx context.Context, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
		return b.Ask(ctx, sessionID, req)
	})
}

type approverFunc func(context.Context, session.ApprovalRequest) (session.ApprovalOutcome, error)

func (f approverFunc) Approve(ctx context.Context, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	return f(ctx, req)
}

// Ask asks for an approval on behalf of sessionID and waits for the
// answer. A cancelled ctx ends the wait with ApprovalCancelled, not an
// error: the turn is ending, and the call with it.
func (b *Broker) Ask(ctx context.Context, sessionID string, req session.ApprovalRequest) (session.ApprovalOutcome, error) {
	if note := b.opts.DiskNote(sessionID, req.Description.Changes); note != "" {
		req.Description.Title += ": " + note
	}
	ch := b.Channels()
	switch ch.Approval {
	case RequestPermission:
		return b.askACP(ctx, sessionID, req)
	case ClineApproval:
		return b.askCline(ctx, sessionID, req)
	}
	return b.askMessage(ctx, req, ch.ShowDocument)
}

// CancelSession answers every pending approval of sessionID as
// cancelled, withdrawing them: an answer that comes later is for an
// unknown id.
func (b *Broker) CancelSession(sessionID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, p := range b.pending {
		if p.sessionID == sessionID {
			p.answer <- session.ApprovalOutcome{Choice: session.ApprovalCancelled}
			delete(b.pending, id)
		}
	}
}

// options are the answers offered with an approval request, in every
// channel. The "always" ones name what they cover (req.Always, the
// session's scope of the call: "Always allow edits of docs/a.txt"), so
// the user knows what the answer lets through later.
func options(req session.ApprovalRequest) []wire.PermissionOption {
	if len(req.Options) > 0 {
		return req.Options
	}
	return []wire.PermissionOption{
		{OptionID: string(session.AllowOnce), Name: "Allow", Kind: wire.AllowOnce},
		{OptionID: string(session.AllowAlways), Name: alwaysLabel("Always allow", req), Kind: wire.AllowAlways},
		{OptionID: string(session.RejectOnce), Name: "Reject", Kind: wire.RejectOnce},
		{OptionID: string(session.RejectAlways), Name: alwaysLabel("Always reject", req), Kind: wire.RejectAlways},
	}
}

func alwaysLabel(verb string, req session.ApprovalRequest) string {
	if req.Always == "" {
		return verb
	}
	return verb + " " + req.Always
}

// choice is the approval choice an option id names, if it names one.
func choice(optionID string) (session.ApprovalChoice, bool) {
	switch c := session.ApprovalChoice(optionID); c {
	case session.AllowOnce, session.AllowAlways, session.RejectOnce, session.RejectAlways:
		return c, true
	}
	return "", false
}
