package rpc

import (
	"github.com/cline-ls/cline-ls/prompt/instructions"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/workspace"
)

// The instructions method (PROTOCOL.md §9), by dialect.
const (
	methodInstructions    = "cline/instructions"
	methodACPInstructions = "_cline/instructions"
)

// instructionsResult is cline/instructions' answer.
type instructionsResult struct {
	Files []instructions.File `json:"files"`
	Text  string              `json:"text"`
}

// withInstructions gives a session its instruction files (for the
// system prompt) and the facts of the moment (for each turn's context
// block), and keeps the loader for cline/instructions.
func withInstructions(s *Server, h *sessionHost, ls *liveSession) {
	ls.instr = instructions.NewLoader(instructions.Config{
		Folders: func() []string { return workspace.RealFolders(s.folders.Paths()) },
		CWD:     ls.cwd,
		UserDir: tools.ConfigDir(s.opts.Getenv),
		Ignore:  func() instructions.Ignorer { return s.ws.Ignore() },
		Index: func() instructions.Index {
			if w := s.Watcher(); w != nil {
				return w
			}
			return nil
		},
	})
	h.instructions = func() string { return ls.instr.Load().Text }
	h.environment = ls.instr.Environment
}

// instructionsParams is cline/instructions' params.
type instructionsParams struct {
	SessionID string `json:"sessionId"`
}

// serveInstructions serves cline/instructions: the instruction files a
// session's system prompt holds from its next request on, and their text.
func (c *sessions) serveInstructions(raw []byte) (any, error) {
	var p instructionsParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	ls, err := c.get(p.SessionID)
	if err != nil {
		return nil, err
	}
	set := ls.instr.Load()
	return instructionsResult{Files: set.Files, Text: set.Text}, nil
}
