package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/wire"
)

// commandRunner is the part that serves workspace/executeCommand: each
// cline.* command forwards to the handler of the method it stands for,
// given here as functions so the part holds nothing of its own.
type commandRunner struct {
	newSession  func(cwd, mode string, mcpServers []json.RawMessage) (wire.NewSessionResult, error)
	prompt      func(reqID jsonrpc2.ID, id, mode, text string) (any, error)
	setMode     func(raw []byte) (any, error)
	cancel      func(raw []byte) error
	compact     func(ctx context.Context, req *jsonrpc2.Request, raw []byte) (any, error)
	fork        func(raw []byte) (any, error)
	checkpoints func(ctx context.Context, req *jsonrpc2.Request, command string, args []json.RawMessage) (any, error)
}

// newCommands gives the part the handlers its commands forward to.
func newCommands(s *Server) *commandRunner {
	return &commandRunner{
		newSession: s.sess.newSession, prompt: s.turns.promptCommand,
		setMode: s.sess.serveSetMode, cancel: s.sess.serveCancel,
		compact: s.turns.serveCompact, fork: s.sess.serveFork,
		checkpoints: func(ctx context.Context, req *jsonrpc2.Request, command string, args []json.RawMessage) (any, error) {
			return checkpointCommand(s, ctx, req, command, args)
		},
	}
}

// commandsRoute makes the commandRunner part's handler a route's.
func commandsRoute(f func(*commandRunner, context.Context, *jsonrpc2.Request) (any, error)) handler {
	return func(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
		return f(s.commands, ctx, req)
	}
}

// serveExecuteCommand serves workspace/executeCommand: the cline.*
// commands let a client with no plugin start and drive sessions
// (PROTOCOL.md §6).
func (c *commandRunner) serveExecuteCommand(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	return c.execute(ctx, req, req.Params())
}

// execute runs the command raw names; req is the request it came in, for
// the commands that answer in its place (cline.prompt, cline.compact).
func (c *commandRunner) execute(ctx context.Context, req *jsonrpc2.Request, raw []byte) (any, error) {
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
		res, err := c.newSession("", arg.Mode, nil)
		if err != nil {
			return nil, err
		}
		return wire.SessionIDResult{SessionID: res.SessionID}, nil
	case commandPrompt:
		return c.prompt(req.ID(), arg.SessionID, arg.Mode, arg.Text)
	case commandSetMode:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID, ModeID: arg.ModeID})
		return c.setMode(b)
	case commandCancel:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID})
		if err := c.cancel(b); err != nil {
			return nil, err
		}
		return wire.Empty{}, nil
	case commandCompact:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID})
		return c.compact(ctx, req, b)
	case commandForkSession:
		b, _ := json.Marshal(commandSession{SessionID: arg.SessionID, AtTurn: arg.AtTurn})
		return c.fork(b)
	case commandCheckpoints, commandRestore:
		return c.checkpoints(ctx, req, p.Command, p.Arguments)
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
