package rpc

import (
	"context"
	"time"

	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/prompt/instructions"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
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
func (s *Server) withInstructions(cfg *session.Config, ls *liveSession) {
	ls.instr = instructions.NewLoader(instructions.Config{
		Folders: func() []string { return realFolders(s.folders.Paths()) },
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
	cfg.Instructions = func() string { return ls.instr.Load().Text }
	cwd := ls.cwd
	cfg.Environment = func(ctx context.Context) prompt.Environment {
		dir := cwd
		if dir == "" {
			if p := realFolders(s.folders.Paths()); len(p) > 0 {
				dir = p[0]
			}
		}
		return instructions.Probe(ctx, dir, time.Now)
	}
}

// sessionInstructions serves cline/instructions: the instruction files a
// session's system prompt holds from its next request on, and their text.
func (s *Server) sessionInstructions(raw []byte) (any, error) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	ls, err := s.getSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	set := ls.instr.Load()
	return instructionsResult{Files: set.Files, Text: set.Text}, nil
}
