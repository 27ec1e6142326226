package rpc

import (
	"github.com/cline-ls/cline-ls/rpc/lsppeer"
)

// Work-done progress (PROTOCOL.md §6) is the LSP peer's (lsppeer): turns
// report through client().BeginTurn and Report, the daemon's own work
// through BeginWork.
const (
	methodProgressCreate = lsppeer.MethodProgressCreate
	methodProgressCancel = lsppeer.MethodProgressCancel
	methodProgress       = lsppeer.MethodProgress
)

// progressCancel serves window/workDoneProgress/cancel.
func progressCancel(s *Server, raw []byte) error {
	var p lsppeer.ProgressCancelParams
	if err := decodeParams(raw, &p); err != nil {
		return err
	}
	if lp, ok := s.client().(*lsppeer.Peer); ok {
		lp.CancelProgress(p)
	}
	return nil
}
