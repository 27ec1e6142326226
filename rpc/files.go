package rpc

import (
	"context"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/wire"
)

// newDelivery makes the connection's delivery (package delivery: the
// sessions' and checkpoints' tools.Files) from the server's parts. The
// client side is read afresh at each delivery: it is only known once the
// client has initialized.
func newDelivery(s *Server) *delivery.Delivery {
	return delivery.New(delivery.Config{
		Client:    deliveryClient{caller: connCaller(s), caps: func() delivery.Caps { return clientDeliveryCaps(s) }},
		Buffers:   s.buffers,
		Folders:   s.folders,
		Workspace: s.ws,
		Locks:     &s.locks,
		Diagnose:  s.text.editDiagnostics,
		Warn:      func(msg string) { s.showMessage(wire.MessageWarning, msg) },
		Background: func(fn func(context.Context)) bool {
			return s.ws.Go(func() { fn(s.bgCtx) })
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

// deliveryClient is the client as delivery asks it: the connection's
// caller and what the client declared.
type deliveryClient struct {
	caller
	caps func() delivery.Caps
}

func (c deliveryClient) Caps() delivery.Caps { return c.caps() }
