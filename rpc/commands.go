package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/wire"
)

// executeCommand serves workspace/executeCommand: the cline.* commands let
// a client with no plugin start and drive sessions (PROTOCOL.md §6).
func (s *Server) executeCommand(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	raw := req.Params()
	var p executeCommandParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("command", p.Command); err != nil {
		return nil, err
	}
	var arg wire.CommandArgs
	if len(p.Arguments) > 0 {
		if err := decodeParams(p.Arguments[0], &arg); err != nil {
			var je *jsonrpc2.Error
			if errors.As(err, &je) {
				je.Message = strings.Replace(je.Message, "invalid params: ", "invalid params: arguments[0].", 1)
			}
			return nil, err
		}
	}
	switch p.Command {
	case commandNewSession:
		res, err := s.sess.newSession("", arg.Mode, nil)
		if err != nil {
			return nil, err
		}
		return wire.SessionIDResult{SessionID: res.SessionID}, nil
	case commandPrompt:
		return s.turns.promptCommand(req.ID(), arg.SessionID, arg.Mode, arg.Text)
	case commandSetMode:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID, ModeID: arg.ModeID})
		return s.sess.serveSetMode(b)
	case commandCancel:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID})
		if err := s.sess.serveCancel(b); err != nil {
			return nil, err
		}
		return wire.Empty{}, nil
	case commandCompact:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID})
		return s.turns.serveCompact(ctx, req, b)
	case commandForkSession:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID, AtTurn: arg.AtTurn})
		return s.sess.serveFork(b)
	case commandCheckpoints, commandRestore:
		return checkpointCommand(s, ctx, req, p.Command, p.Arguments)
	}
	return nil, invalidParams("command: unknown command %q (known: %s)", p.Command, strings.Join(commands(), ", "))
}

// commandSession is the params of the session method a command stands
// for (session/set_mode, session/cancel, cline/compact,
// cline/forkSession), in that method's shape.
type commandSession struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId,omitempty"`
	AtTurn    int    `json:"atTurn,omitempty"`
}

func commands() []string {
	return []string{commandNewSession, commandPrompt, commandSetMode, commandCancel, commandCompact, commandCheckpoints, commandRestore, commandForkSession}
}
