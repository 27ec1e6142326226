package rpc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cline-ls/cline-ls/hooks"
	"github.com/cline-ls/cline-ls/internal/sandbox"
	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// projectSettingsFile is a folder's own settings, of which the daemon
// reads the hooks; projectSettingsMax bounds it.
const (
	projectSettingsFile = ".cline/settings.json"
	projectSettingsMax  = 256 << 10
)

// trustFileMax bounds the file of remembered trust answers.
const trustFileMax = 1 << 20

// sessionHooks is a session's hooks: the settings' (the config file's,
// then the client's) and, in a trusted folder, the project's. It reads
// them at each moment, so a change of the settings or of the project's
// file applies from the next.
type sessionHooks struct {
	s          *Server
	id, cwd    string
	files      *files
	transcript string

	warned sync.Once // an invalid project file is told once per session
}

// Run implements session.Hooks.
func (h *sessionHooks) Run(ctx context.Context, in hooks.Input) hooks.Outcome {
	configured, _ := h.s.cfg.Hooks()
	project, perr := h.projectHooks()
	var out hooks.Outcome
	if perr != nil {
		h.s.log.Warn("project hooks ignored", "folder", h.cwd, "err", perr)
		h.warned.Do(func() {
			out.Messages = append(out.Messages, fmt.Sprintf("the hooks of %s are ignored: %v", projectSettingsFile, perr))
		})
	}
	if len(configured) == 0 && len(project) == 0 {
		return out
	}
	sources := []hooks.Source{{Name: "settings", Config: configured}}
	if len(project) > 0 {
		sources = append(sources, hooks.Source{Name: "project", Config: project,
			Trusted: func(ctx context.Context, commands []string, mayAsk bool) bool {
				return h.s.trustHooks(ctx, h.id, h.cwd, commands, mayAsk)
			}})
	}
	opts := hooks.Options{
		SessionID: h.id, TranscriptPath: h.transcript, CWD: h.cwd,
		Hidden: h.s.hiddenEnv(), Redact: h.s.redact, Log: h.s.log,
	}
	if sb := h.s.CurrentSettings().Sandbox; sb != nil && sb.Hooks {
		opts.Confine = func(cmd *exec.Cmd) (func(), error) {
			return sandbox.Confine(cmd, h.s.sandboxPolicy(h.cwd))
		}
	}
	r, err := hooks.New(opts, sources...)
	if err != nil {
		// The settings' hooks were validated when they arrived; this is
		// the project's, checked again here by New.
		h.s.log.Warn("hooks not run", "err", err)
		out.Messages = append(out.Messages, "hooks not run: "+err.Error())
		return out
	}
	res := r.Run(ctx, in)
	res.Messages = append(out.Messages, res.Messages...)
	return res
}

// projectHooks reads the hooks of the session's folder's
// .cline/settings.json through the folder's root: a regular file, at most
// projectSettingsMax bytes. None is no error.
func (h *sessionHooks) projectHooks() (hooks.Config, error) {
	roots, err := h.files.roots()
	if err != nil || roots == nil || h.cwd == "" {
		return nil, nil
	}
	abs := filepath.Join(h.cwd, projectSettingsFile)
	data, _, err := roots.ReadFile(abs, projectSettingsMax)
	var pe *workspace.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.As(err, &pe) && pe.Kind != workspace.PathSymlinkEscape:
		// Missing, or the session's folder is not a workspace folder.
		return nil, nil
	case err != nil:
		return nil, err
	}
	var ps struct {
		Hooks hooks.Config `json:"hooks"`
	}
	if err := json.Unmarshal(data, &ps); err != nil {
		return nil, fmt.Errorf("not valid JSON settings: %v", err)
	}
	if err := ps.Hooks.Validate("hooks."); err != nil {
		return nil, err
	}
	return ps.Hooks, nil
}

// hookTrust remembers, for the connection, the trust questions answered
// or dismissed, and serialises asking: two sessions opening in one
// folder ask once.
type hookTrust struct {
	once sync.Once
	// turn is held by the one asking (or reading and writing the file); a
	// channel, so that a session cancelled while it waits stops waiting.
	turn      chan struct{}
	dismissed map[string]bool // folder + hooks asked about and not answered; guarded by turn
}

// acquire waits for the trust questions' turn; false means ctx ended
// first.
func (t *hookTrust) acquire(ctx context.Context) bool {
	t.once.Do(func() { t.turn = make(chan struct{}, 1) })
	select {
	case t.turn <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (t *hookTrust) release() { <-t.turn }

// trustEntry is one folder's remembered answer, for the hooks it was
// asked about: new or changed hooks ask again.
type trustEntry struct {
	Trusted bool   `json:"trusted"`
	Hooks   string `json:"hooks"` // sha256 of the commands listed
}

type trustFile struct {
	Folders map[string]trustEntry `json:"folders"`
}

func (s *Server) trustFilePath() string {
	return filepath.Join(s.stateDir(), "trusted-hooks.json")
}

// trustHooks says whether the project hooks of folder may run: a folder
// under one of the config file's trustedFolders may; otherwise the user's
// remembered answer for these hooks decides, and without one the user is
// asked once (when mayAsk) through the approval channel, listing the
// commands. The answer is remembered in the state directory.
func (s *Server) trustHooks(ctx context.Context, sessionID, folder string, commands []string, mayAsk bool) bool {
	folder = filepath.Clean(folder)
	_, pretrusted := s.cfg.Hooks()
	for _, t := range pretrusted {
		t = filepath.Clean(t)
		if folder == t || strings.HasPrefix(folder, t+string(filepath.Separator)) {
			return true
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(commands, "\n")))
	digest := hex.EncodeToString(sum[:])
	if !s.hookTrust.acquire(ctx) {
		return false
	}
	defer s.hookTrust.release()
	tf, err := readTrustFile(s.trustFilePath())
	if err != nil {
		s.log.Warn("trusted hooks file unreadable; asking again", "err", err)
	}
	if e, ok := tf.Folders[folder]; ok && e.Hooks == digest {
		return e.Trusted
	}
	key := folder + "\x00" + digest
	if !mayAsk || s.hookTrust.dismissed[key] {
		return false
	}
	out, err := s.approvals.ask(ctx, sessionID, trustQuestion(folder, commands))
	// Only the two answers offered are remembered: a dismissed question,
	// one the editor could not ask, or an option that was not shown is
	// no trust, for this connection only.
	if err != nil || out.Choice != session.AllowAlways && out.Choice != session.RejectAlways {
		if s.hookTrust.dismissed == nil {
			s.hookTrust.dismissed = map[string]bool{}
		}
		s.hookTrust.dismissed[key] = true
		if err != nil {
			s.log.Warn("asking whether to trust a folder's hooks failed", "folder", folder, "err", err)
		}
		return false
	}
	trusted := out.Choice == session.AllowAlways
	if tf.Folders == nil {
		tf.Folders = map[string]trustEntry{}
	}
	tf.Folders[folder] = trustEntry{Trusted: trusted, Hooks: digest}
	if err := writeTrustFile(s.trustFilePath(), tf); err != nil {
		s.log.Warn("the answer about a folder's hooks is not remembered", "err", err)
	}
	return trusted
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
		Reason: "the folder's " + projectSettingsFile + " configures hooks",
		Options: []wire.PermissionOption{
			{OptionID: string(session.RejectAlways), Name: "Don't trust", Kind: wire.RejectAlways},
			{OptionID: string(session.AllowAlways), Name: "Trust", Kind: wire.AllowAlways},
		},
	}
}

// readTrustFile reads the remembered answers: a regular file, bounded.
// A missing file is none.
func readTrustFile(name string) (trustFile, error) {
	var tf trustFile
	data, err := workspace.ReadTextFile(name, workspace.ReadOptions{MaxBytes: trustFileMax})
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, err
	}
	if err := json.Unmarshal(data, &tf); err != nil {
		return trustFile{}, fmt.Errorf("%s: %v", name, err)
	}
	return tf, nil
}

func writeTrustFile(name string, tf trustFile) error {
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	return workspace.WriteFileAtomic(name, append(data, '\n'), 0o600)
}
