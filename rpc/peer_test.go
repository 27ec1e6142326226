package rpc

import (
	"encoding/json"
	"testing"

	"github.com/cline-ls/cline-ls/rpc/acppeer"
	"github.com/cline-ls/cline-ls/rpc/lsppeer"
)

// The connection's peer is the dialect's, with the capabilities
// initialize gave it; a server that never served has one that sends
// nothing.
func TestPeerIsTheDialects(t *testing.T) {
	s := NewServer(Options{})
	if s.client() != quietPeer {
		t.Fatal("a server that never served has a peer of its own")
	}
	choosePeer(s, DialectACP, lsppeer.Caps{WorkDoneProgress: true}, acppeer.Caps{Terminal: true})
	p := s.client()
	if _, ok := p.(*acppeer.Peer); !ok || p.Messages() || p.Terminal("s") == nil || len(p.Commands()) == 0 {
		t.Errorf("ACP's peer: %T, messages %v, terminal %v, commands %v", p, p.Messages(), p.Terminal("s"), p.Commands())
	}
	if m, _ := p.CancelNotice(json.RawMessage(`1`)); m != methodACPCancelRequest {
		t.Errorf("ACP withdraws a request with %s", m)
	}
	choosePeer(s, DialectLSP, lsppeer.Caps{}, acppeer.Caps{Terminal: true})
	p = s.client()
	if _, ok := p.(*lsppeer.Peer); !ok || !p.Messages() || p.Terminal("s") != nil || p.Commands() != nil {
		t.Errorf("LSP's peer: %T, messages %v, terminal %v, commands %v", p, p.Messages(), p.Terminal("s"), p.Commands())
	}
	if m, _ := p.CancelNotice(json.RawMessage(`1`)); m != methodCancel {
		t.Errorf("LSP withdraws a request with %s", m)
	}
}
