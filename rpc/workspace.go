package rpc

import (
	"context"

	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// The folders' roots, ignore rules and watcher, and the connection's
// background work, are a workspace.Live (Server.ws); these are the few
// steps that also reach the connection's other parts.

// newLive makes the connection's workspace state over s.folders, its
// background work ended by s.bgCtx.
func newLive(s *Server) *workspace.Live {
	return workspace.NewLive(s.bgCtx, workspace.LiveOptions{
		Folders:    s.folders,
		Own:        s.ownPaths,
		AllowBroad: func() bool { return s.CurrentSettings().AllowBroadWorkspace },
		Home:       func() string { return s.opts.Getenv("HOME") },
		Refused:    func(err error) { s.showToClient(context.Background(), wire.MessageWarning, "cline-ls: "+err.Error()) },
		Log:        s.log,
	})
}

// Watcher returns the file watcher once its first scan has finished, or
// nil while it is still scanning or when there is no folder.
func (s *Server) Watcher() *workspace.Watcher { return s.ws.Watcher() }

// foldersChanged brings a change of the folders to the roots, the ignore
// rules and the watcher, and to the MCP servers' roots.
func (s *Server) foldersChanged() {
	s.ws.Changed(nil)
	s.mcp.SetRoots(s.folders.Paths())
}

// stopWorkspace stops the watcher and waits for background work.
func (s *Server) stopWorkspace() {
	s.ws.Close()
	s.bgCancel()
	s.mcp.Close()
	s.ws.Wait()
	s.mcp.Close() // any started while the above waited
}

// showToClient sends window/showMessage (type 1 error, 2 warning, 3 info).
func (s *Server) showToClient(ctx context.Context, typ wire.MessageType, msg string) {
	if s.conn == nil || !s.client().Messages() {
		return
	}
	if err := s.conn.Notify(ctx, methodShowMessage, wire.MessageParams{Type: typ, Message: msg}); err != nil {
		s.log.Debug("showMessage not sent", "err", err)
	}
}
