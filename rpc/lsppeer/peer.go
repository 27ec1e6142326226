package lsppeer

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// The methods of PROTOCOL.md §6 this peer sends and serves.
const (
	MethodProgressCreate = "window/workDoneProgress/create"
	MethodProgressCancel = "window/workDoneProgress/cancel"
	MethodProgress       = "$/progress"
	MethodCancelRequest  = "$/cancelRequest"
)

// Caller is the connection to the client.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}

// Caps is what of an LSP client's capabilities the peer acts on.
type Caps struct {
	// WorkDoneProgress: capabilities.window.workDoneProgress.
	WorkDoneProgress bool
	// StrandsMessages: the client leaves messages unread behind an
	// answer until more output comes (Eglot; see rpc's wakeWhileWaiting).
	StrandsMessages bool
}

// Peer is an LSP client as the daemon's sessions see it.
type Peer struct {
	c      Caller
	caps   Caps
	redact func(string) string

	mu        sync.Mutex                    // guards the fields below
	next      int                           // the last token number used
	cancels   map[string]context.CancelFunc // by token
	bySession map[string]*turnReport        // the turn each session reports now
	// reporting is len(bySession), stored with each change, so that the
	// updates of a connection that reports no turn (most clients) pass
	// without taking mu: every session update asks.
	reporting atomic.Int32
}

// New returns the peer of an LSP client with caps, talking through c;
// redact scrubs an error's text before the client is shown it.
func New(c Caller, caps Caps, redact func(string) string) *Peer {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &Peer{c: c, caps: caps, redact: redact}
}

// CancelNotice is the notification that withdraws a request the daemon
// gave up; id is spelled as the request spelled it.
func (p *Peer) CancelNotice(id json.RawMessage) (method string, params any) {
	return MethodCancelRequest, wire.CancelParams{ID: id}
}

// Messages reports that window/logMessage and window/showMessage reach
// the client.
func (p *Peer) Messages() bool { return true }

// StrandsMessages reports whether output must keep flowing while the
// daemon waits for an answer.
func (p *Peer) StrandsMessages() bool { return p.caps.StrandsMessages }

// Terminal is nil: LSP has no client terminal, commands run as the
// daemon's children.
func (p *Peer) Terminal(string) tools.ClientTerminal { return nil }

// ReleaseTerminals has nothing to release.
func (p *Peer) ReleaseTerminals(context.Context) {}

// AbandonTerminals has nothing to release.
func (p *Peer) AbandonTerminals(func(method string, params any) error) {}

// Commands is nil: an LSP client takes no slash commands from the daemon
// (its plugin has its own).
func (p *Peer) Commands() []wire.AvailableCommand { return nil }
