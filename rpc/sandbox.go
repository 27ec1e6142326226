package rpc

import (
	"path/filepath"
	"slices"
	"strings"

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

// sandboxPolicy is what confines a command of a session whose folder is
// cwd: it may write the workspace folders (and cwd, an ACP session's),
// what sandbox.allowWrite adds, and its private temporary folder; it
// cannot read the secrets under the home folder, the state directory or
// what sandbox.denyRead lists. Asked at each command, so that changed
// settings and folders apply.
func (s *Server) sandboxPolicy(cwd string) sandbox.Policy {
	st := s.CurrentSettings()
	home := s.opts.Getenv("HOME")
	folders := realFolders(s.folders.Paths())
	if cwd != "" && !slices.Contains(folders, cwd) {
		folders = append(folders, realFolders([]string{cwd})...)
	}
	base := cwd
	if base == "" && len(folders) > 0 {
		base = folders[0]
	}
	p := sandbox.Policy{Write: folders, Home: home, StateDir: s.stateDir(), RuntimeDir: s.opts.Getenv("XDG_RUNTIME_DIR")}
	if sb := st.Sandbox; sb != nil {
		p.Backend, _ = sandbox.ParseBackend(sb.Backend) // checked with the settings
		p.Network = sb.Network
		for _, w := range sb.AllowWrite {
			if a := settingPath(w, home, base); a != "" {
				p.Write = append(p.Write, a)
			}
		}
		for _, d := range sb.DenyRead {
			if a := settingPath(d, home, base); a != "" {
				p.DenyRead = append(p.DenyRead, a)
			}
		}
	}
	return p
}

// settingPath makes a path of the sandbox settings absolute: "~/" is the
// home folder, a relative path is under base. "" when it cannot be.
func settingPath(p, home, base string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	case base != "":
		return filepath.Join(base, p)
	}
	return ""
}

// warnNoSandbox tells the user, once per connection, that the settings
// ask for the sandbox level and nothing here can confine commands, so
// they are asked about as at the ask level; where a sandbox confines
// them, the debug log says which.
func (s *Server) warnNoSandbox(st settings.Settings) {
	if !sandboxLevel(st) {
		return
	}
	status := SandboxStatus(st)
	if status.Backend != sandbox.BackendNone {
		s.log.Debug("commands at the sandbox level run confined", "sandbox", status.String())
		return
	}
	s.sandboxWarn.Do(func() {
		msg := "cline-ls: the sandbox approval level is set, but no sandbox is available here (" + status.Detail +
			"); commands will ask for approval instead"
		s.log.Warn(msg)
		s.showMessage(wire.MessageWarning, msg)
	})
}
