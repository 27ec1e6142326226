package rpc

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/wire"
)

// What the daemon sends the client on its own: requests it waits on,
// messages, and work that must follow an answer on the wire.

// call sends a request to the client and waits for its answer; every
// request the daemon sends goes through it. When ctx ends first (the turn
// was cancelled, the session closed), the client is told with
// $/cancelRequest ($/cancel_request in ACP) naming the request, so that a
// dialog it still shows for a question nobody waits for closes.
func (s *Server) call(ctx context.Context, method string, params, result any) error {
	defer s.client().Waiting(method)()
	id, err := s.conn.Call(ctx, method, params, result)
	if err != nil && ctx.Err() != nil {
		// The id as the request spelled it (jsonrpc2.ID marshals as {}).
		cancel, p := s.client().CancelNotice(json.RawMessage(idKey(id)))
		if nerr := s.conn.Notify(context.Background(), cancel, p); nerr != nil {
			s.log.Debug("cancel not sent", "method", method, "err", nerr)
		}
	}
	return err
}

// showMessage sends window/showMessage (type 1 error, 2 warning, 3 info),
// which an editor shows the user rather than logs.
func (s *Server) showMessage(typ wire.MessageType, msg string) {
	s.showToClient(context.Background(), typ, msg)
}

// logToClient sends window/logMessage (type 1 error, 2 warning, 3 info).
func (s *Server) logToClient(ctx context.Context, typ wire.MessageType, msg string) {
	if s.conn == nil || !s.client().Messages() {
		return
	}
	if err := s.conn.Notify(ctx, methodLogMessage, wire.MessageParams{Type: typ, Message: msg}); err != nil {
		s.log.Debug("logMessage not sent", "err", err)
	}
}

// afterReply runs fn in the background once the answer to reqID is
// queued (or cannot be: the stream runs it then too), so that what fn
// sends follows that answer on the wire. fn's context ends with the
// connection; nothing runs once the connection is closing. Nothing waits
// meanwhile: the goroutine starts with the answer, so the work does not
// compete with the answer it follows. No timer stands in for an answer
// never written: the stream tells of every answer, and the first timer
// of a start would set up the runtime's poller on the way to
// initialize's answer.
func (s *Server) afterReply(reqID jsonrpc2.ID, fn func(context.Context)) {
	run := func() { // once: the stream forgets fn as it runs it
		s.ws.Go(func() {
			ctx, cancel := context.WithCancel(s.bgCtx)
			defer cancel()
			fn(ctx)
		})
	}
	if s.stream == nil {
		run()
		return
	}
	s.stream.onReply(reqID, run)
}
