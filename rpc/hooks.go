package rpc

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cline-ls/cline-ls/delivery"
	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
)

// newSessionHooks gives a session's hooks what they read at each moment:
// the settings, the folders' roots, the sandbox and the connection's
// trust store.
func newSessionHooks(s *Server, id, cwd string, f *delivery.Files, transcript string) *hooks.Session {
	return hooks.NewSession(hooks.SessionConfig{
		ID: id, CWD: cwd, Transcript: transcript,
		Settings: func() hooks.Config { c, _ := s.cfg.Hooks(); return c },
		Roots:    f.Disk, Hidden: s.cfg.HiddenEnv, Redact: s.redact, Log: s.log,
		Confined: func() bool { sb := s.CurrentSettings().Sandbox; return sb != nil && sb.Hooks },
		Policy:   sandboxPolicyFor(s, cwd),
		Trust:    s.hookTrust,
	})
}

// newHookTrust is the connection's store of answers about project hooks,
// remembered in the state directory and asked through the approval
// channel.
func newHookTrust(s *Server) *hooks.Trust {
	return hooks.NewTrust(hooks.TrustConfig{
		File:       func() string { return filepath.Join(s.stateDir(), "trusted-hooks.json") },
		Pretrusted: func() []string { _, t := s.cfg.Hooks(); return t },
		Log:        s.log,
		Ask: func(ctx context.Context, sessionID, folder string, commands []string) (hooks.TrustAnswer, error) {
			out, err := s.approvals.Ask(ctx, sessionID, trustQuestion(folder, commands))
			return trustAnswer(out.Choice), err
		},
	})
}

// trustAnswer reads an approval's choice: only the two answers offered
// count; a dismissed question or an option that was not shown is none.
func trustAnswer(c session.ApprovalChoice) hooks.TrustAnswer {
	switch c {
	case session.AllowAlways:
		return hooks.Trusted
	case session.RejectAlways:
		return hooks.Distrusted
	}
	return hooks.NotAnswered
}

// trustQuestion is the question about a folder's hooks: one approval
// whose options are Trust and Don't trust.
func trustQuestion(folder string, commands []string) session.ApprovalRequest {
	return session.ApprovalRequest{
		CallID: "hooks-trust",
		Tool:   "hooks",
		Description: tools.Description{
			Title:   fmt.Sprintf("Trust the hooks of %s? They run these commands on this computer", folder),
			Kind:    tools.KindExecute,
			Command: strings.Join(commands, "\n"),
		},
		Reason: "the folder's " + hooks.ProjectSettingsFile + " configures hooks",
		Options: []wire.PermissionOption{
			{OptionID: string(session.RejectAlways), Name: "Don't trust", Kind: wire.RejectAlways},
			{OptionID: string(session.AllowAlways), Name: "Trust", Kind: wire.AllowAlways},
		},
	}
}
