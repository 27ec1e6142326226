package hooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cline-ls/cline-ls/workspace"
)

// trustFileMax bounds the file of remembered trust answers.
const trustFileMax = 1 << 20

// TrustAnswer is the user's answer to whether a folder's hooks may run.
type TrustAnswer int

const (
	// NotAnswered: the question was dismissed, could not be asked, or
	// got an answer it did not offer; no trust, and nothing remembered.
	NotAnswered TrustAnswer = iota
	Trusted
	Distrusted
)

// TrustConfig is what the trust store takes from the daemon, asked at
// each question.
type TrustConfig struct {
	// File is where the answers are remembered.
	File func() string
	// Pretrusted are the config file's trustedFolders: a folder under
	// one runs its hooks without asking.
	Pretrusted func() []string
	// Ask asks the user, for session, whether folder's hooks, which run
	// commands, may run.
	Ask func(ctx context.Context, session, folder string, commands []string) (TrustAnswer, error)
	Log *slog.Logger
}

// Trust remembers, for a connection, the trust questions answered or
// dismissed, and serialises asking: two sessions opening in one folder
// ask once. Answers are kept in a file, for the hooks they were given
// about: new or changed hooks ask again.
type Trust struct {
	cfg TrustConfig
	// turn is held by the one asking (or reading and writing the file); a
	// channel, so that a session cancelled while it waits stops waiting.
	turn      chan struct{}
	dismissed map[string]bool // folder + hooks asked about and not answered; guarded by turn
}

// NewTrust returns a trust store with nothing dismissed yet.
func NewTrust(cfg TrustConfig) *Trust {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Trust{cfg: cfg, turn: make(chan struct{}, 1), dismissed: map[string]bool{}}
}

// trustEntry is one folder's remembered answer.
type trustEntry struct {
	Trusted bool   `json:"trusted"`
	Hooks   string `json:"hooks"` // sha256 of the commands listed
}

type trustFile struct {
	Folders map[string]trustEntry `json:"folders"`
}

// Allowed says whether the project hooks of folder may run: a folder
// under one of the trusted folders may; otherwise the user's remembered
// answer for these hooks decides, and without one the user is asked once
// (when mayAsk), listing the commands. The answer is remembered.
func (t *Trust) Allowed(ctx context.Context, session, folder string, commands []string, mayAsk bool) bool {
	folder = filepath.Clean(folder)
	var pretrusted []string
	if t.cfg.Pretrusted != nil {
		pretrusted = t.cfg.Pretrusted()
	}
	for _, p := range pretrusted {
		p = filepath.Clean(p)
		if folder == p || strings.HasPrefix(folder, p+string(filepath.Separator)) {
			return true
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(commands, "\n")))
	digest := hex.EncodeToString(sum[:])
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-t.turn }()
	name := t.cfg.File()
	tf, err := readTrustFile(name)
	if err != nil {
		t.cfg.Log.Warn("trusted hooks file unreadable; asking again", "err", err)
	}
	if e, ok := tf.Folders[folder]; ok && e.Hooks == digest {
		return e.Trusted
	}
	key := folder + "\x00" + digest
	if !mayAsk || t.dismissed[key] || t.cfg.Ask == nil {
		return false
	}
	answer, err := t.cfg.Ask(ctx, session, folder, commands)
	if err != nil || answer == NotAnswered {
		t.dismissed[key] = true
		if err != nil {
			t.cfg.Log.Warn("asking whether to trust a folder's hooks failed", "folder", folder, "err", err)
		}
		return false
	}
	trusted := answer == Trusted
	if tf.Folders == nil {
		tf.Folders = map[string]trustEntry{}
	}
	tf.Folders[folder] = trustEntry{Trusted: trusted, Hooks: digest}
	if err := writeTrustFile(name, tf); err != nil {
		t.cfg.Log.Warn("the answer about a folder's hooks is not remembered", "err", err)
	}
	return trusted
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
