package rpc

import (
	"context"
	"encoding/json"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/rpc/acppeer"
	"github.com/cline-ls/cline-ls/rpc/lsppeer"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// peer is the client as its dialect makes it: what LSP (lsppeer) and
// ACP (acppeer) do differently, so that the code that serves both asks
// the peer instead of the dialect. The connection's peer is the
// dialect's with no capabilities until initialize chooses it for good.
type peer interface {
	// CancelNotice is the notification that withdraws a request the
	// daemon gave up.
	CancelNotice(id json.RawMessage) (method string, params any)
	// Messages reports whether window/logMessage and
	// window/showMessage reach the client.
	Messages() bool
	// Waiting is told that the daemon waits for the client's answer to
	// method, until done is called (lsppeer: Eglot strands messages).
	Waiting(method string) (done func())
	// BeginTurn reports a turn's start; end reports how it stopped.
	BeginTurn(ctx context.Context, sessionID, title string, cancel context.CancelFunc) (end func(stop string, err error))
	// Update is a session's update as the client takes it.
	Update(u wire.SessionUpdate) wire.SessionUpdate
	// Report shows a session's update in its turn's report.
	Report(sessionID string, u wire.SessionUpdate)
	// BeginWork reports work of the daemon's own (off the read loop).
	BeginWork(ctx context.Context, title string) (report, end func(msg string))
	// Terminal is session's client terminal, nil when there is none.
	Terminal(sessionID string) tools.ClientTerminal
	// ReleaseTerminals releases the client terminals still open, while
	// the connection is up; AbandonTerminals once the input has ended,
	// writing each release with write and waiting for no answer.
	ReleaseTerminals(ctx context.Context)
	AbandonTerminals(write func(method string, params any) error)
	// Commands are the slash commands the daemon runs itself; nil when
	// the dialect has none.
	Commands() []wire.AvailableCommand
}

var (
	_ peer = (*lsppeer.Peer)(nil)
	_ peer = (*acppeer.Peer)(nil)
)

// caller is the connection as every peer package's Caller: requests
// through Server.call ($/cancelRequest when given up, Eglot's stranded
// messages), notifications straight to the connection.
type caller struct {
	call   func(ctx context.Context, method string, params, result any) error
	notify func(ctx context.Context, method string, params any) error
}

func (c caller) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result)
}

func (c caller) Notify(ctx context.Context, method string, params any) error {
	return c.notify(ctx, method, params)
}

// quietPeer stands in for a server that never served (tests that make
// one and call into it): it sends nothing.
var quietPeer peer = lsppeer.New(nil, lsppeer.Caps{}, nil)

// client is the connection's peer.
func (s *Server) client() peer {
	if p := s.peer.Load(); p != nil {
		return *p
	}
	return quietPeer
}

// connCaller is the connection as the one Caller every package is given:
// requests through Server.call (the dialect's cancel notice for one given
// up, output kept flowing to a client that strands messages), and
// notifications straight onto the connection, which Serve makes after the
// parts are built.
func connCaller(s *Server) caller {
	return caller{call: s.call, notify: func(ctx context.Context, method string, params any) error {
		return s.conn.Notify(ctx, method, params)
	}}
}

// choosePeer makes the connection's peer the one of dialect d with
// caps: at Serve with none, then at initialize with the client's.
func choosePeer(s *Server, d Dialect, lsp lsppeer.Caps, acp acppeer.Caps) {
	c := connCaller(s)
	var p peer
	if d == DialectACP {
		p = acppeer.New(c, acp, acppeer.Options{Reason: delivery.ClientError, Log: s.log, Locate: s.delivery.Absolute})
	} else {
		p = lsppeer.New(c, lsp, s.redact)
	}
	s.peer.Store(&p)
}
