package rpctest

import (
	"context"
	"encoding/json"
)

// LSPHandler answers one cline/lspRequest (PROTOCOL.md §11) as the
// editor's language servers would: method and params are the LSP request
// the daemon asks for, result is what the servers answered (nil for
// null). An error is the client's error answer.
type LSPHandler func(ctx context.Context, method string, params json.RawMessage) (result any, err error)

// LSPRequest is one cline/lspRequest as the daemon sent it.
type LSPRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// ServeLSP makes the editor answer cline/lspRequest with h, its result
// sent back as {result}. The requests stay in Messages("cline/lspRequest").
func (e *Editor) ServeLSP(h LSPHandler) {
	e.Handle("cline/lspRequest", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p LSPRequest
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		res, err := h(ctx, p.Method, p.Params)
		if err != nil {
			return nil, err
		}
		return struct {
			Result any `json:"result"`
		}{res}, nil
	})
}

// LSPRequests returns the cline/lspRequest requests the daemon sent, in
// order.
func (e *Editor) LSPRequests() []LSPRequest {
	var out []LSPRequest
	for _, m := range e.Messages("cline/lspRequest") {
		var p LSPRequest
		if json.Unmarshal(m.Params, &p) == nil {
			out = append(out, p)
		}
	}
	return out
}
