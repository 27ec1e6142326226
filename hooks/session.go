package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/workspace"
)

// ProjectSettingsFile is a folder's own settings, of which the daemon
// reads the hooks; projectSettingsMax bounds it.
const (
	ProjectSettingsFile = ".cline/settings.json"
	projectSettingsMax  = 256 << 10
)

// SessionConfig is what a session's hooks take from the daemon. The
// functions are asked at each moment, so that changed settings and a
// changed project file apply from the next.
type SessionConfig struct {
	ID, CWD, Transcript string
	// Settings is the hooks of the settings (the config file's, then the
	// client's).
	Settings func() Config
	// Roots are the workspace folders' roots, through which the
	// project's file is read.
	Roots  func() (*workspace.Roots, error)
	Hidden func() []string
	Redact func(string) string
	Log    *slog.Logger
	// Confined says whether the sandbox confines hooks now; Policy is
	// what it confines each command with.
	Confined func() bool
	Policy   func() sandbox.Policy
	// Trust decides whether the project's hooks may run.
	Trust *Trust
}

// Session is a session's hooks: the settings' and, in a trusted folder,
// the project's.
type Session struct {
	cfg    SessionConfig
	warned sync.Once // an invalid project file is told once per session
}

// NewSession returns the hooks of the session cfg describes.
func NewSession(cfg SessionConfig) *Session {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Session{cfg: cfg}
}

// Run runs the hooks of the moment in, reading them now.
func (h *Session) Run(ctx context.Context, in Input) Outcome {
	c := h.cfg
	var configured Config
	if c.Settings != nil {
		configured = c.Settings()
	}
	project, perr := h.projectHooks()
	var out Outcome
	if perr != nil {
		c.Log.Warn("project hooks ignored", "folder", c.CWD, "err", perr)
		h.warned.Do(func() {
			out.Messages = append(out.Messages, fmt.Sprintf("the hooks of %s are ignored: %v", ProjectSettingsFile, perr))
		})
	}
	if len(configured) == 0 && len(project) == 0 {
		return out
	}
	sources := []Source{{Name: "settings", Config: configured}}
	if len(project) > 0 {
		sources = append(sources, Source{Name: "project", Config: project,
			Trusted: func(ctx context.Context, commands []string, mayAsk bool) bool {
				return c.Trust != nil && c.Trust.Allowed(ctx, c.ID, c.CWD, commands, mayAsk)
			}})
	}
	opts := Options{SessionID: c.ID, TranscriptPath: c.Transcript, CWD: c.CWD, Redact: c.Redact, Log: c.Log}
	if c.Hidden != nil {
		opts.Hidden = c.Hidden()
	}
	if c.Confined != nil && c.Confined() && c.Policy != nil {
		opts.Confine = func(cmd *exec.Cmd) (func(), error) {
			return sandbox.Confine(cmd, c.Policy())
		}
	}
	r, err := New(opts, sources...)
	if err != nil {
		// The settings' hooks were validated when they arrived; this is
		// the project's, checked again here by New.
		c.Log.Warn("hooks not run", "err", err)
		out.Messages = append(out.Messages, "hooks not run: "+err.Error())
		return out
	}
	res := r.Run(ctx, in)
	res.Messages = append(out.Messages, res.Messages...)
	return res
}

// projectSettings is the part of a folder's own settings the daemon reads.
type projectSettings struct {
	Hooks Config `json:"hooks"`
}

// projectHooks reads the hooks of the session's folder's
// .cline/settings.json through the folder's root: a regular file, at most
// projectSettingsMax bytes. None is no error.
func (h *Session) projectHooks() (Config, error) {
	if h.cfg.Roots == nil || h.cfg.CWD == "" {
		return nil, nil
	}
	roots, err := h.cfg.Roots()
	if err != nil || roots == nil {
		return nil, nil
	}
	abs := filepath.Join(h.cfg.CWD, ProjectSettingsFile)
	data, _, err := roots.ReadFile(abs, projectSettingsMax)
	var pe *workspace.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.As(err, &pe) && pe.Kind != workspace.PathSymlinkEscape:
		// Missing, or the session's folder is not a workspace folder.
		return nil, nil
	case err != nil:
		return nil, err
	}
	var ps projectSettings
	if err := json.Unmarshal(data, &ps); err != nil {
		return nil, fmt.Errorf("not valid JSON settings: %v", err)
	}
	if err := ps.Hooks.Validate("hooks."); err != nil {
		return nil, err
	}
	return ps.Hooks, nil
}
