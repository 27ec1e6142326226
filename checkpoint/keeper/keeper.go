package keeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cline-ls/cline-ls/checkpoint"
	"github.com/cline-ls/cline-ls/workspace"
)

// Limits is what the settings in force say of checkpoints.
type Limits struct {
	Enabled bool
	// MaxAge and MaxBytes prune the workspace's checkpoints; zero takes
	// the store's defaults.
	MaxAge   time.Duration
	MaxBytes int64
}

// Buffers is the mirror of the editor's open documents
// (*workspace.Buffers): checkpoints hold their text, not the disk's.
type Buffers interface {
	URIs() []string
	Get(uri string) (workspace.Snapshot, bool)
}

// Config is what a Keeper takes from its connection. Every function is
// called afresh each time, so a Keeper follows changes of the settings,
// folders and state directory.
type Config struct {
	// Context is the connection's: checkpoints and the first read stop
	// when it ends, and what fails after it ended is not told.
	Context context.Context
	Log     *slog.Logger
	// StateDir is the state directory in force ("" when there is none).
	StateDir func() string
	// Folders are the workspace folders, symbolic links evaluated.
	Folders func() []string
	// Own are the daemon's own folders, never checkpointed.
	Own    func() *workspace.OwnPaths
	Limits func() Limits
	// Buffers, Editor and Session are what a restore reads and writes:
	// the open buffers, the delivery of their restored text and the
	// conversation of a session by id.
	Buffers Buffers
	Editor  Editor
	Session func(id string) (Conversation, error)
	// Tell puts a warning before the user in the session's conversation.
	Tell func(sessionID, msg string)
	// Go runs fn in the background work the connection waits for when it
	// ends, and reports false, running nothing, once it is ending.
	Go func(fn func()) bool
	// BeginWork shows work the user did not ask for (the first read) as
	// progress, where the editor can show it.
	BeginWork func(ctx context.Context, title string) (report, end func(msg string))
}

// Keeper is one connection's checkpoint service; its methods are safe
// for concurrent use.
type Keeper struct {
	cfg Config

	mu    sync.Mutex
	store *checkpoint.Store // guarded by mu
	key   string            // guarded by mu; the state dir and folders store was opened for

	toldMu sync.Mutex
	told   map[string]bool // guarded by toldMu; sessions told that undo is unavailable

	busyMu sync.Mutex
	busy   map[string]func() // guarded by busyMu; tool calls running, by session and call id (TrackToolCall)
}

// New returns a Keeper that opens no store before it is needed. StateDir,
// Folders and Limits are required; without an Editor an open buffer is
// never restored (a conflict says so), without Session no conversation.
func New(cfg Config) *Keeper {
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Tell == nil {
		cfg.Tell = func(string, string) {}
	}
	if cfg.Editor == nil {
		cfg.Editor = EditorFunc(func(context.Context, []BufferEdit) error {
			return errors.New("no editor to deliver the restored text to")
		})
	}
	if cfg.Session == nil {
		cfg.Session = func(id string) (Conversation, error) {
			return nil, fmt.Errorf("no session %s", id)
		}
	}
	if cfg.Go == nil {
		cfg.Go = func(fn func()) bool { go fn(); return true }
	}
	if cfg.BeginWork == nil {
		cfg.BeginWork = func(context.Context, string) (report, end func(string)) {
			none := func(string) {}
			return none, none
		}
	}
	return &Keeper{cfg: cfg}
}

// Open opens the store for the folders and state directory in force now,
// if it is not open already: a request that reads the workspace later,
// off the connection's read loop, answers for the folders it came with.
func (k *Keeper) Open() error {
	if _, err := k.open(); err != nil {
		return k.failed(err)
	}
	return nil
}

// open returns the store for the current workspace folders, opening it
// again when they (or the state directory) changed.
func (k *Keeper) open() (*checkpoint.Store, error) {
	folders := k.cfg.Folders()
	if len(folders) == 0 {
		return nil, errors.New("no workspace folder is open, so there are no checkpoints")
	}
	dir := k.cfg.StateDir()
	if dir == "" {
		return nil, errors.New("no state directory: set stateDir, XDG_STATE_HOME or HOME")
	}
	key := dir + "\x00" + strings.Join(folders, "\x00")
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.store != nil && k.key == key {
		return k.store, nil
	}
	if k.store != nil {
		k.store.Close()
		k.store = nil
	}
	lim := k.cfg.Limits()
	var own *workspace.OwnPaths
	if k.cfg.Own != nil {
		own = k.cfg.Own()
	}
	st, err := checkpoint.Open(checkpoint.Options{StateDir: dir, Folders: folders, MaxAge: lim.MaxAge, MaxStoreBytes: lim.MaxBytes, Own: own})
	if err != nil {
		return nil, err
	}
	k.store, k.key = st, key
	return st, nil
}

// opened is the store if one is open, without opening one.
func (k *Keeper) opened() *checkpoint.Store {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.store
}

// SettingsChanged brings the pruning limits in force to the open store;
// the next checkpoint of any session prunes by them.
func (k *Keeper) SettingsChanged() {
	lim := k.cfg.Limits()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.store != nil {
		k.store.SetLimits(lim.MaxAge, lim.MaxBytes)
	}
}

// Close releases the store when the connection ends.
func (k *Keeper) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.store != nil {
		k.store.Close()
		k.store = nil
	}
}

// openBuffers returns the editor's open files by path.
func (k *Keeper) openBuffers() map[string]workspace.Snapshot {
	out := make(map[string]workspace.Snapshot)
	if k.cfg.Buffers == nil {
		return out
	}
	for _, uri := range k.cfg.Buffers.URIs() {
		if snap, ok := k.cfg.Buffers.Get(uri); ok && snap.Path != "" {
			out[snap.Path] = snap
		}
	}
	return out
}

func bufferTexts(open map[string]workspace.Snapshot) map[string]string {
	m := make(map[string]string, len(open))
	for p, snap := range open {
		m[p] = snap.Text
	}
	return m
}

// Prime reads the workspace for its first checkpoint in the background,
// so that the first change of the first turn does not wait for a walk of
// every file.
func (k *Keeper) Prime() {
	if !k.cfg.Limits().Enabled {
		return
	}
	st, err := k.open()
	if err != nil {
		return
	}
	ctx, log := k.cfg.Context, k.cfg.Log
	k.cfg.Go(func() {
		// Progress shows only once the scan has run a second: a
		// workspace with checkpoints, or a small one, has none.
		var report, end func(string)
		progress := func(files int64) {
			if report == nil {
				report, end = k.cfg.BeginWork(ctx, "first checkpoint")
				log.Info("checkpoint: reading the workspace for its first checkpoint, at low priority")
			}
			report(fmt.Sprintf("%d files read", files))
		}
		err := st.Prime(ctx, progress)
		switch {
		case err == nil:
			if end != nil {
				end("done")
				log.Info("checkpoint: the workspace is read")
			}
		case errors.Is(err, context.Canceled) && ctx.Err() == nil:
			// A checkpoint took over what was left to read.
			if end != nil {
				end("taken over by the turn's checkpoint")
			}
		default:
			if end != nil {
				end("failed")
			}
			if ctx.Err() == nil {
				log.Warn("checkpoint: reading the workspace failed", "err", err)
			}
		}
	})
}

// Take is a session's checkpoint; the settings can turn it off. A
// failure only costs the undo point, so the turn goes on, but the user is
// told, once per session, that undo is unavailable and why; what the
// store repaired on the way (an index moved aside) is told as it happens.
func (k *Keeper) Take(sessionID string, turn int, callID, title string) {
	if !k.cfg.Limits().Enabled {
		return
	}
	ctx, log := k.cfg.Context, k.cfg.Log
	st, err := k.open()
	if err != nil {
		log.Warn("no checkpoint", "session", sessionID, "err", err)
		k.trouble(sessionID, err)
		return
	}
	info, err := st.Checkpoint(ctx, checkpoint.Request{
		SessionID: sessionID, Turn: turn, ToolCallID: callID, Title: title,
		Overlay: bufferTexts(k.openBuffers()),
	})
	for _, note := range info.Notes {
		log.Warn("checkpoint store repaired", "session", sessionID, "note", note)
		k.cfg.Tell(sessionID, "checkpoints: "+note)
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("checkpoint failed", "session", sessionID, "err", err)
		k.trouble(sessionID, err)
	}
}

// trouble tells the user that the session's changes cannot be undone,
// once per session: every later checkpoint would fail the same way.
func (k *Keeper) trouble(sessionID string, err error) {
	k.toldMu.Lock()
	told := k.told[sessionID]
	if k.told == nil {
		k.told = make(map[string]bool)
	}
	k.told[sessionID] = true
	k.toldMu.Unlock()
	if !told {
		k.cfg.Tell(sessionID, "undo is unavailable: no checkpoint could be taken before this change: "+err.Error())
	}
}
