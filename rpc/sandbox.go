package rpc

import (
	"log/slog"
	"sync"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/settings"
	"github.com/cline-ls/cline-ls/wire"
)

// SandboxStatus is which sandbox confines commands under the settings
// (their backend, or CLINE_LS_SANDBOX through them), probed once per
// bubblewrap program: what the policy is told, and what `cline-ls
// doctor` prints.
func SandboxStatus(st settings.Settings) sandbox.Status {
	want := ""
	if st.Sandbox != nil {
		want = st.Sandbox.Backend
	}
	b, err := sandbox.ParseBackend(want)
	if err != nil {
		return sandbox.Status{Backend: sandbox.BackendNone, Detail: err.Error()}
	}
	return sandbox.Detect(b, "")
}

// sandboxLevel reports whether the settings run commands at the sandbox
// level: approvals.level or approvals.execute says so.
func sandboxLevel(st settings.Settings) bool {
	return st.Approvals["level"] == string(session.LevelSandbox) || st.Approvals["execute"] == string(session.Sandbox)
}

// sandboxPolicyFor is what confines a command of a session whose folder
// is cwd, asked at each command, so that changed settings and folders
// apply.
func sandboxPolicyFor(s *Server, cwd string) func() sandbox.Policy {
	return func() sandbox.Policy {
		var st *sandbox.Settings
		if sb := s.CurrentSettings().Sandbox; sb != nil {
			st = &sandbox.Settings{Backend: sb.Backend, Network: sb.Network, AllowWrite: sb.AllowWrite, DenyRead: sb.DenyRead}
		}
		return sandbox.PolicyFor(sandbox.Place{
			Folders: s.folders.Paths(), CWD: cwd,
			Home: s.opts.Getenv("HOME"), StateDir: s.stateDir(), RuntimeDir: s.opts.Getenv("XDG_RUNTIME_DIR"),
		}, st)
	}
}

// sandboxWarning is whether the user was told, once per connection, that
// the settings ask for the sandbox level and nothing here can confine
// commands.
type sandboxWarning struct{ once sync.Once }

// warn tells the user, once, that the settings ask for the sandbox level
// and nothing here can confine commands, so they are asked about as at
// the ask level; where a sandbox confines them, the debug log says which.
func (w *sandboxWarning) warn(st settings.Settings, log *slog.Logger, show func(wire.MessageType, string)) {
	if !sandboxLevel(st) {
		return
	}
	status := SandboxStatus(st)
	if status.Backend != sandbox.BackendNone {
		log.Debug("commands at the sandbox level run confined", "sandbox", status.String())
		return
	}
	w.once.Do(func() {
		msg := "cline-ls: the sandbox approval level is set, but no sandbox is available here (" + status.Detail +
			"); commands will ask for approval instead"
		log.Warn(msg)
		show(wire.MessageWarning, msg)
	})
}
