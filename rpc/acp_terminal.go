package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// Commands in the ACP client's terminal are the ACP peer's (acppeer):
// sessions take theirs from client().Terminal, and the connection's end
// releases those still open.

// releaseAtInputEnd releases the terminals still open when the client's
// input ends (the editor closed the daemon's stdin, or went): no answer
// can come any more, but the client may still read, and the commands in
// its terminals would run on. Each release goes straight to the stream,
// ahead of the connection's own end (which closes the output, flushing
// it), and is not waited for; its id is one the connection never uses.
func (s *Server) releaseAtInputEnd() {
	if s.stream == nil {
		return // the input ended before the first message
	}
	n := 0
	s.client().AbandonTerminals(func(method string, params any) error {
		n++
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		call := jsonrpc2.NewCall(jsonrpc2.NewStringID(fmt.Sprintf("cline-ls-release-%d", n)), method, raw)
		_, err = s.stream.Write(context.Background(), call)
		return err
	})
}
