package keeper

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/internal/testenv"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// host is the connection a Keeper is given: a workspace folder on disk,
// a state directory, the settings, the editor's buffers and what the
// user was told.
type host struct {
	t     *testing.T
	dir   string
	state string

	mu      sync.Mutex
	limits  Limits
	buffers map[string]workspace.Snapshot // by URI
	told    []string                      // "session: message"
	edits   [][]BufferEdit
	editErr error
	convs   map[string]*conv
}

type conv struct{ rewound []int }

func (c *conv) Rewind(turn int) error {
	if turn > 5 {
		return errors.New("no such turn")
	}
	c.rewound = append(c.rewound, turn)
	return nil
}

func newHost(t *testing.T, files map[string]string) *host {
	t.Helper()
	h := &host{t: t, dir: t.TempDir(), state: t.TempDir(), limits: Limits{Enabled: true},
		buffers: map[string]workspace.Snapshot{}, convs: map[string]*conv{"s": {}}}
	for p, text := range files {
		h.write(p, text)
	}
	return h
}

func (h *host) abs(p string) string { return filepath.Join(h.dir, filepath.FromSlash(p)) }

func (h *host) write(p, text string) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(h.abs(p)), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.abs(p), []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) read(p string) string {
	h.t.Helper()
	data, err := os.ReadFile(h.abs(p))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(data)
}

// open puts p in the editor's buffers with text, unsaved.
func (h *host) open(p, text string, version int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	uri := workspace.PathToURI(h.abs(p))
	h.buffers[uri] = workspace.Snapshot{URI: uri, Path: h.abs(p), Version: version, Text: text}
}

func (h *host) URIs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for u := range h.buffers {
		out = append(out, u)
	}
	return out
}

func (h *host) Get(uri string) (workspace.Snapshot, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.buffers[uri]
	return s, ok
}

func (h *host) setLimits(l Limits) {
	h.mu.Lock()
	h.limits = l
	h.mu.Unlock()
}

func (h *host) toldNow() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.told)
}

func (h *host) keeper(stateDir string) *Keeper {
	k := New(Config{
		StateDir: func() string { return stateDir },
		Folders:  func() []string { return []string{h.dir} },
		Limits: func() Limits {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.limits
		},
		Buffers: h,
		Editor: EditorFunc(func(_ context.Context, edits []BufferEdit) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.edits = append(h.edits, edits)
			return h.editErr
		}),
		Session: func(id string) (Conversation, error) {
			if c, ok := h.convs[id]; ok {
				return c, nil
			}
			return nil, errors.New("no session " + id)
		},
		Tell: func(sessionID, msg string) {
			h.mu.Lock()
			h.told = append(h.told, sessionID+": "+msg)
			h.mu.Unlock()
		},
	})
	h.t.Cleanup(k.Close)
	return k
}

func list(t *testing.T, k *Keeper, session string) []wire.Checkpoint {
	t.Helper()
	res, err := k.List(session)
	if err != nil {
		t.Fatal(err)
	}
	return res.Checkpoints
}

// TestTakeListDiffRestore: a turn's checkpoints are listed oldest first;
// the diff and the restore to the first go back to its text, the disk's
// file on disk and the open buffer's through the Editor, against the
// version the restore read; scope "both" also rewinds the conversation.
func TestTakeListDiffRestore(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
	k := h.keeper(h.state)
	h.open("b.txt", "bee\n", 3)

	k.Take("s", 0, "", "Edit a.txt")
	h.write("a.txt", "two two\n")
	h.open("b.txt", "BEE\n", 4)
	k.Take("s", 0, "c1", "")

	cks := list(t, k, "s")
	if len(cks) != 2 || cks[0].ToolCallID != "" || cks[0].Title != "Edit a.txt" || cks[1].ToolCallID != "c1" {
		t.Fatalf("checkpoints = %+v", cks)
	}
	if _, err := time.Parse(time.RFC3339Nano, cks[0].Time); err != nil || !strings.HasSuffix(cks[0].Time, "Z") {
		t.Errorf("time %q: not RFC 3339 in UTC (%v)", cks[0].Time, err)
	}
	if other := list(t, k, "other"); len(other) != 0 {
		t.Errorf("another session's checkpoints = %+v", other)
	}

	diff, err := k.Diff(context.Background(), wire.CheckpointDiffParams{SessionID: "s", CheckpointID: cks[0].CheckpointID})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range diff.Files {
		paths = append(paths, filepath.Base(f.Path))
		if f.Status != "modified" {
			t.Errorf("%s: status %q", f.Path, f.Status)
		}
	}
	if !slices.Equal(paths, []string{"a.txt", "b.txt"}) {
		t.Errorf("diff files = %v", paths)
	}

	res, err := k.Restore(context.Background(), wire.RestoreParams{SessionID: "s", CheckpointID: cks[0].CheckpointID, Scope: "both"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.read("a.txt"); got != "one\n" {
		t.Errorf("a.txt = %q after the restore", got)
	}
	if !slices.Equal(res.Restored, []string{h.abs("a.txt"), h.abs("b.txt")}) || len(res.Conflicts) != 0 {
		t.Errorf("restore = %+v", res)
	}
	if len(h.edits) != 1 || len(h.edits[0]) != 1 {
		t.Fatalf("buffer edits = %+v", h.edits)
	}
	if e := h.edits[0][0]; e.Path != h.abs("b.txt") || e.Text != "bee\n" || e.Base.Version != 4 || e.Base.Text != "BEE\n" {
		t.Errorf("buffer edit = %+v", e)
	}
	if r := h.convs["s"].rewound; !slices.Equal(r, []int{0}) {
		t.Errorf("conversation rewound to %v", r)
	}
}

// TestRestoreEditorRefuses: a buffer the editor did not take is a
// conflict naming why, and the files on disk are restored all the same.
func TestRestoreEditorRefuses(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
	k := h.keeper(h.state)
	h.open("b.txt", "bee\n", 1)
	k.Take("s", 0, "", "t")
	h.write("a.txt", "two two\n")
	h.open("b.txt", "BEE\n", 2)
	k.Take("s", 0, "c1", "")
	h.editErr = errors.New("the buffer moved on")

	res, err := k.Restore(context.Background(), wire.RestoreParams{SessionID: "s", CheckpointID: list(t, k, "s")[0].CheckpointID, Scope: "files"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Restored, []string{h.abs("a.txt")}) {
		t.Errorf("restored = %v", res.Restored)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != h.abs("b.txt") || !strings.Contains(res.Conflicts[0].Reason, "the buffer moved on") {
		t.Errorf("conflicts = %+v", res.Conflicts)
	}
	if len(h.convs["s"].rewound) != 0 {
		t.Errorf("scope files rewound the conversation: %v", h.convs["s"].rewound)
	}
}

// TestRestoreErrors: what the caller got wrong is an InvalidError naming
// the field; no folder to open a store for is a StoreError; a session
// that is not there is the session lookup's own error.
func TestRestoreErrors(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n"})
	k := h.keeper(h.state)
	k.Take("s", 0, "", "t")
	id := list(t, k, "s")[0].CheckpointID
	ctx := context.Background()

	invalidWith := func(err error, prefix string) bool {
		var bad *InvalidError
		return errors.As(err, &bad) && strings.HasPrefix(bad.Msg, prefix)
	}
	if _, err := k.Restore(ctx, wire.RestoreParams{SessionID: "s", CheckpointID: id, Scope: "all"}); !invalidWith(err, "scope: ") {
		t.Errorf("scope all: %v", err)
	}
	if _, err := k.Restore(ctx, wire.RestoreParams{SessionID: "s", CheckpointID: "nope", Scope: "files"}); !invalidWith(err, "checkpointId: ") {
		t.Errorf("unknown checkpoint, files: %v", err)
	}
	if _, err := k.Restore(ctx, wire.RestoreParams{SessionID: "s", CheckpointID: "nope", Scope: "both"}); !invalidWith(err, "checkpointId: ") {
		t.Errorf("unknown checkpoint, both: %v", err)
	}
	if _, err := k.Diff(ctx, wire.CheckpointDiffParams{SessionID: "s", CheckpointID: "nope"}); !invalidWith(err, "checkpointId: ") {
		t.Errorf("diff of an unknown checkpoint: %v", err)
	}
	if _, err := k.Restore(ctx, wire.RestoreParams{SessionID: "gone", CheckpointID: id, Scope: "conversation"}); err == nil || err.Error() != "no session gone" {
		t.Errorf("unknown session: %v", err)
	}

	none := New(Config{StateDir: func() string { return h.state }, Folders: func() []string { return nil }, Limits: func() Limits { return Limits{Enabled: true} }})
	var failed *StoreError
	if _, err := none.List("s"); !errors.As(err, &failed) || !strings.Contains(err.Error(), "no workspace folder") {
		t.Errorf("list with no folder: %v", err)
	}
	if err := none.Open(); !errors.As(err, &failed) {
		t.Errorf("open with no folder: %v", err)
	}
}

// TestTroubleToldOnce: a session whose checkpoints fail is told once that
// undo is unavailable, and why; another session is told too.
func TestTroubleToldOnce(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n"})
	k := h.keeper("")
	k.Take("s", 0, "", "t")
	k.Take("s", 0, "c1", "")
	k.Take("s", 1, "", "t")
	k.Take("s2", 0, "", "t")
	told := h.toldNow()
	if len(told) != 2 || !strings.HasPrefix(told[0], "s: undo is unavailable") || !strings.Contains(told[0], "no state directory") || !strings.HasPrefix(told[1], "s2: ") {
		t.Errorf("told = %q", told)
	}
}

// TestDisabledTakesNone: with checkpoints off a turn takes none and the
// first read does not start; no store is opened for them.
func TestDisabledTakesNone(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n"})
	h.limits.Enabled = false
	k := h.keeper(h.state)
	k.Prime()
	k.Take("s", 0, "", "t")
	if k.opened() != nil {
		t.Error("a store was opened with checkpoints off")
	}
	h.setLimits(Limits{Enabled: true})
	if cks := list(t, k, "s"); len(cks) != 0 {
		t.Errorf("checkpoints taken while off: %+v", cks)
	}
}

// TestSettingsChangedOnOpenStore: limits changed while the store is open
// prune from its next checkpoint on, keeping the newest.
func TestSettingsChangedOnOpenStore(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n"})
	k := h.keeper(h.state)
	k.Take("s", 0, "", "t")
	h.write("a.txt", "two two\n")
	k.Take("s", 0, "c1", "")
	if n := len(list(t, k, "s")); n != 2 {
		t.Fatalf("%d checkpoints under the default limits, want 2", n)
	}
	h.setLimits(Limits{Enabled: true, MaxBytes: 1})
	k.SettingsChanged()
	h.write("a.txt", "three three three\n")
	k.Take("s", 0, "c2", "")
	if cks := list(t, k, "s"); len(cks) != 1 || cks[0].ToolCallID != "c2" {
		t.Errorf("checkpoints under a one-byte cap = %+v, want only the newest (c2)", cks)
	}
}

// TestToolCallPausesFirstRead: while a tool call runs (in progress in the
// session's updates) the first read waits; its end, told once, lets the
// read go on. Nothing is held for a call before a store is open.
func TestToolCallPausesFirstRead(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n", "d/b.txt": "bee\n"})
	k := h.keeper(h.state)
	k.TrackToolCall("s", wire.ToolCall{ToolCallID: "early", Status: wire.StatusInProgress})
	if len(k.busy) != 0 {
		t.Fatalf("busy before any store: %v", k.busy)
	}
	k.ToolCallBusy()() // no store: nothing to hold, and done is harmless

	if err := k.Open(); err != nil {
		t.Fatal(err)
	}
	k.TrackToolCall("s", wire.ToolCall{ToolCallID: "c1", Status: wire.StatusPending})
	k.TrackToolCall("s", wire.ToolCallUpdate{ToolCallID: "c1", Status: wire.StatusInProgress})
	k.TrackToolCall("s", wire.ToolCallUpdate{ToolCallID: "c1", Status: wire.StatusInProgress})
	k.TrackToolCall("s", wire.AgentMessageChunk{Content: wire.TextBlock{Text: "hi"}})
	editorCall := k.ToolCallBusy()

	primed := make(chan error, 1)
	go func() { primed <- k.opened().Prime(context.Background(), nil) }()
	guard := time.After(30 * time.Second) // a failure guard, not a timing assertion
	for !testenv.Parked("checkpoint.(*busyGate).wait") {
		select {
		case err := <-primed:
			t.Fatalf("the first read ended (%v) while a tool call ran", err)
		case <-guard:
			t.Fatal("the first read never paused")
		case <-time.After(time.Millisecond):
		}
	}
	k.TrackToolCall("s", wire.ToolCallUpdate{ToolCallID: "c1", Status: wire.StatusCompleted})
	select {
	case err := <-primed:
		t.Fatalf("the first read ended (%v) while the editor's call ran", err)
	case <-time.After(50 * time.Millisecond):
	}
	editorCall()
	select {
	case err := <-primed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first read did not go on after the calls ended")
	}
	if len(k.busy) != 0 {
		t.Errorf("calls still held: %v", k.busy)
	}
}

// TestUndo: no turn, a turn that changed no file (only its conversation
// goes) and a turn with a checkpoint (files and conversation go back).
func TestUndo(t *testing.T) {
	h := newHost(t, map[string]string{"a.txt": "one\n"})
	k := h.keeper(h.state)
	c := h.convs["s"]
	ctx := context.Background()

	if msg, err := k.Undo(ctx, c, "s", -1); err != nil || msg != "There is no turn to undo." {
		t.Errorf("no turn: %q, %v", msg, err)
	}
	if msg, err := k.Undo(ctx, c, "s", 0); err != nil || !strings.Contains(msg, "changed no file") || !slices.Equal(c.rewound, []int{0}) {
		t.Errorf("a turn with no checkpoint: %q, %v, rewound %v", msg, err, c.rewound)
	}
	if _, err := k.Undo(ctx, c, "s", 9); err == nil || !strings.HasPrefix(err.Error(), "prompt: the last turn cannot be undone") {
		t.Errorf("a turn the conversation cannot go back to: %v", err)
	}

	c.rewound = nil
	k.Take("s", 1, "", "t")
	h.write("a.txt", "two two\n")
	k.Take("s", 1, "c1", "")
	msg, err := k.Undo(ctx, c, "s", 1)
	if err != nil || msg != "Undid the last turn: 1 file(s) restored." {
		t.Errorf("undo = %q, %v", msg, err)
	}
	if got := h.read("a.txt"); got != "one\n" || !slices.Equal(c.rewound, []int{1}) {
		t.Errorf("after undo a.txt = %q, rewound %v", got, c.rewound)
	}
}
