package rpc

import (
	"context"
	"sync/atomic"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// newDelivery makes the connection's delivery (package delivery: the
// sessions' and checkpoints' tools.Files) from the server's parts. The
// client side is read afresh at each delivery: it is only known once the
// client has initialized.
func newDelivery(s *Server) *delivery.Delivery {
	return delivery.New(delivery.Config{
		Client:    deliveryClient{call: s.call, caps: func() delivery.Caps { return clientDeliveryCaps(s) }},
		Buffers:   s.buffers,
		Folders:   s.folders,
		Workspace: deliveryWorkspace{view: &s.ws.view, ignore: s.ignoreMatcher},
		Locks:     &s.ws.locks,
		Diagnose:  s.editDiagnostics,
		Warn:      func(msg string) { s.showMessage(wire.MessageWarning, msg) },
		Background: func(fn func(context.Context)) bool {
			return s.goBackground(func() { fn(s.bgCtx) })
		},
		Log: s.log,
	})
}

// clientDeliveryCaps is what delivery needs to know of s's client, the
// dialect folded in.
func clientDeliveryCaps(s *Server) delivery.Caps {
	s.mu.Lock()
	defer s.mu.Unlock()
	acp := s.dialect == DialectACP
	return delivery.Caps{
		Encoding:       s.enc,
		ApplyEdit:      s.caps.applyEdit,
		DocChanges:     s.caps.docChanges,
		ChecksVersions: s.caps.checksVersions,
		FSRead:         acp && s.acp.readTextFile,
		FSWrite:        acp && s.acp.writeTextFile,
	}
}

// deliveryClient is the client as delivery asks it: requests through
// Server.call, so a request given up is cancelled on the wire.
type deliveryClient struct {
	call func(ctx context.Context, method string, params, result any) error
	caps func() delivery.Caps
}

func (c deliveryClient) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result)
}

func (c deliveryClient) Caps() delivery.Caps { return c.caps() }

// deliveryWorkspace is the folders' roots and ignore rules as they are
// now (workspace.go rebuilds them when the folders change).
type deliveryWorkspace struct {
	view   *atomic.Pointer[wsView]
	ignore func() *workspace.IgnoreMatcher
}

func (w deliveryWorkspace) Roots() (*workspace.Roots, error) {
	v := w.view.Load()
	if v == nil {
		return nil, nil
	}
	return v.roots, v.rootsErr
}

func (w deliveryWorkspace) Ignore() *workspace.IgnoreMatcher { return w.ignore() }
