package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/checkpoint/keeper"
	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/provider"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// newCheckpoints is the connection's checkpoint service, given what it
// takes of the server: the workspace and settings in force, the open
// buffers and the delivery of restored text to them, the sessions, and
// the ways to tell the user.
func newCheckpoints(s *Server) *keeper.Keeper {
	return keeper.New(keeper.Config{
		Context:  s.bgCtx,
		Log:      s.log,
		StateDir: s.stateDir,
		Folders:  func() []string { return workspace.RealFolders(s.folders.Paths()) },
		Own:      s.ownPaths,
		Limits: func() keeper.Limits {
			on, maxAge, maxBytes := s.CurrentSettings().CheckpointLimits()
			return keeper.Limits{Enabled: on, MaxAge: maxAge, MaxBytes: maxBytes}
		},
		Buffers: s.buffers,
		Editor:  restoreEditor(s.delivery.EditBuffers),
		Session: func(id string) (keeper.Conversation, error) {
			ls, err := s.sess.get(id)
			if err != nil {
				return nil, err
			}
			return ls, nil
		},
		// A warning goes in the session's conversation (both dialects; ACP
		// has no other place for one) and, in the LSP dialect, to
		// window/showMessage.
		Tell: func(sessionID, msg string) {
			msg = s.redact(msg)
			s.sendUpdate(sessionID, wire.AgentMessageChunk{Content: wire.TextBlock{Text: "\n[" + msg + "]\n"}})
			s.showMessage(wire.MessageWarning, "cline-ls: "+msg)
		},
		Go: s.ws.Go,
		BeginWork: func(ctx context.Context, title string) (func(string), func(string)) {
			return s.client().BeginWork(ctx, title)
		},
	})
}

// restoreEditor delivers a restore's buffer texts as the agent's edits
// to open buffers are delivered: one versioned workspace/applyEdit.
func restoreEditor(edit func(context.Context, []delivery.BufferEdit) error) keeper.Editor {
	return keeper.EditorFunc(func(ctx context.Context, edits []keeper.BufferEdit) error {
		out := make([]delivery.BufferEdit, len(edits))
		for i, e := range edits {
			text := e.Text
			out[i] = delivery.BufferEdit{
				Change: tools.Change{Path: e.Path, NewText: &text},
				Base:   tools.FileText{Text: e.Base.Text, Exists: true, Open: true, Version: e.Base.Version},
			}
		}
		return edit(ctx, out)
	})
}

// checkpointFailed answers for an error of the checkpoint service: the
// caller's mistake as such, the store's trouble as the daemon's, naming
// the method; anything else (a session that is not there, a request
// given up) as it is.
func checkpointFailed(method string, err error) error {
	var bad *keeper.InvalidError
	var failed *keeper.StoreError
	switch {
	case errors.As(err, &bad):
		return invalidParams("%s", bad.Msg)
	case errors.As(err, &failed):
		return jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", method, failed.Err)
	}
	return err
}

// listCheckpoints serves cline/checkpoints.
func listCheckpoints(s *Server, raw []byte) (any, error) {
	var p wire.CheckpointsParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	res, err := s.ckpt.List(p.SessionID)
	if err != nil {
		return nil, checkpointFailed(methodCheckpoints, err)
	}
	return res, nil
}

// checkpointDiff serves cline/checkpointDiff. Its walk of the workspace
// must not hold up text synchronisation, so it releases the read loop,
// once the store of the folders in force is open.
func checkpointDiff(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p wire.CheckpointDiffParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID, "checkpointId", p.CheckpointID); err != nil {
		return nil, err
	}
	if err := s.ckpt.Open(); err != nil {
		return nil, checkpointFailed(methodCheckpointDiff, err)
	}
	jsonrpc2.Async(ctx)
	work, release := s.requestScope(ctx, req.ID())
	defer release()
	res, err := s.ckpt.Diff(work, p)
	if err != nil {
		return nil, checkpointFailed(methodCheckpointDiff, err)
	}
	return res, nil
}

// restore serves cline/restore. Open buffers go to the editor as one
// versioned workspace/applyEdit, so it releases the read loop first.
func restore(s *Server, ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p wire.RestoreParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID, "checkpointId", p.CheckpointID, "scope", p.Scope); err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	work, release := s.requestScope(ctx, req.ID())
	defer release()
	return restoreTo(work, s, p)
}

func restoreTo(ctx context.Context, s *Server, p wire.RestoreParams) (any, error) {
	res, err := s.ckpt.Restore(ctx, p)
	if err != nil {
		return nil, checkpointFailed(methodRestore, err)
	}
	return res, nil
}

// checkpointCommand serves cline.checkpoints and cline.restore for
// clients with no plugin; a restore from a command defaults to the files.
func checkpointCommand(s *Server, ctx context.Context, req *jsonrpc2.Request, command string, args []json.RawMessage) (any, error) {
	var arg json.RawMessage = []byte("{}")
	if len(args) > 0 {
		arg = args[0]
	}
	if command == commandCheckpoints {
		return listCheckpoints(s, arg)
	}
	var p wire.RestoreParams
	if err := decodeParams(arg, &p); err != nil {
		return nil, err
	}
	if p.Scope == "" {
		p.Scope = "files"
	}
	if err := required("arguments[0].sessionId", p.SessionID, "arguments[0].checkpointId", p.CheckpointID); err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	work, release := s.requestScope(ctx, req.ID())
	defer release()
	return restoreTo(work, s, p)
}

// undoLastTurn serves /undo: the files and the conversation back to
// before the session's last turn. Turns are counted as checkpoints count
// them: by the user messages before their prompt.
func undoLastTurn(ctx context.Context, k *keeper.Keeper, ls *liveSession) (string, error) {
	last := -1
	for _, m := range ls.History() {
		if m.Role == provider.RoleUser {
			last++
		}
	}
	msg, err := k.Undo(ctx, ls, ls.ID(), last)
	if err != nil {
		return "", checkpointFailed(methodRestore, err)
	}
	return msg, nil
}
