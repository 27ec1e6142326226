package lsppeer

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// The methods of PROTOCOL.md §6 this peer sends and serves.
const (
	MethodProgressCreate = "window/workDoneProgress/create"
	MethodProgressCancel = "window/workDoneProgress/cancel"
	MethodProgress       = "$/progress"
	MethodCancelRequest  = "$/cancelRequest"
	MethodLogMessage     = "window/logMessage"
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
	// answer until more output comes (Eglot; see Waiting).
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

// WakeInterval is how often Waiting writes while a request waits.
const WakeInterval = 500 * time.Millisecond

// Waiting keeps output flowing to a client that strands messages
// (Caps.StrandsMessages) while the daemon waits for its answer to
// method, until done is called. Emacs's JSON-RPC library ends a
// blocking request (eglot's executeCommand) by a throw out of its
// process filter, and whatever arrived in the same read behind the
// answer stays unread until more output comes; a request the daemon
// sent just after that answer (the turn's approval) would wait for
// ever. A log message, which eglot only records, is that output.
func (p *Peer) Waiting(method string) (done func()) {
	if !p.caps.StrandsMessages {
		return func() {}
	}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(WakeInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.c.Notify(context.Background(), MethodLogMessage, wire.MessageParams{Type: wire.MessageLog,
					Message: "cline-ls: waiting for the editor's answer to " + method})
			}
		}
	}()
	return func() { close(stop) }
}

// Update is u: the LSP dialect's updates are the session's own.
func (p *Peer) Update(u wire.SessionUpdate) wire.SessionUpdate { return u }

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
