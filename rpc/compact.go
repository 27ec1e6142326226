package rpc

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/session"
)

// Manual compaction (PROTOCOL.md §7): cline/compact in the LSP dialect,
// _cline/compact in ACP's, and the cline.compact command for clients
// with no plugin.
const (
	methodCompact    = "cline/compact"
	methodACPCompact = "_cline/compact"
	commandCompact   = "cline.compact"
)

// compactSession serves cline/compact {sessionId} → {before, after}.
// Summarising asks the model, so it releases the read loop first.
func (t *turns) serveCompact(ctx context.Context, req *jsonrpc2.Request, raw []byte) (any, error) {
	var p sessionParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	ls, err := t.sess.get(p.SessionID)
	if err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	work, release := t.scope(ctx, req.ID())
	defer release()
	before, after, err := ls.Compact(work)
	switch {
	case errors.Is(err, session.ErrBusy):
		return nil, invalidParams("sessionId: %v", err)
	case err != nil:
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "compact: %s", t.redact(err.Error()))
	}
	return compactResult{Before: before, After: after}, nil
}

// compactResult is cline/compact's answer: the history's size in tokens
// before and after.
type compactResult struct {
	Before int `json:"before"`
	After  int `json:"after"`
}
