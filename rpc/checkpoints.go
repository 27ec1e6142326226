package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/checkpoint"
	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/tools"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// checkpointState holds the checkpoint store of the current folders.
type checkpointState struct {
	mu    sync.Mutex
	store *checkpoint.Store // guarded by mu
	key   string            // guarded by mu; the state dir and folders store was opened for

	toldMu sync.Mutex
	told   map[string]bool // guarded by toldMu; sessions told that undo is unavailable

	busyMu sync.Mutex
	busy   map[string]func() // guarded by busyMu; tool calls running, by session and call id (trackToolCall)
}

// checkpointStore returns the store for the current workspace folders,
// opening it again when they (or the state directory) changed.
func (s *Server) checkpointStore() (*checkpoint.Store, error) {
	folders := realFolders(s.folders.Paths())
	if len(folders) == 0 {
		return nil, errors.New("no workspace folder is open, so there are no checkpoints")
	}
	dir := s.stateDir()
	if dir == "" {
		return nil, errors.New("no state directory: set stateDir, XDG_STATE_HOME or HOME")
	}
	key := dir + "\x00" + strings.Join(folders, "\x00")
	s.ckpt.mu.Lock()
	defer s.ckpt.mu.Unlock()
	if s.ckpt.store != nil && s.ckpt.key == key {
		return s.ckpt.store, nil
	}
	if s.ckpt.store != nil {
		s.ckpt.store.Close()
		s.ckpt.store = nil
	}
	_, maxAge, maxBytes := s.CurrentSettings().CheckpointLimits()
	st, err := checkpoint.Open(checkpoint.Options{StateDir: dir, Folders: folders, MaxAge: maxAge, MaxStoreBytes: maxBytes, Own: s.ownPaths()})
	if err != nil {
		return nil, err
	}
	s.ckpt.store, s.ckpt.key = st, key
	return st, nil
}

// checkpointSettingsChanged brings the pruning limits in force to the
// open store; the next checkpoint of any session prunes by them.
func (s *Server) checkpointSettingsChanged() {
	_, maxAge, maxBytes := s.CurrentSettings().CheckpointLimits()
	s.ckpt.mu.Lock()
	defer s.ckpt.mu.Unlock()
	if s.ckpt.store != nil {
		s.ckpt.store.SetLimits(maxAge, maxBytes)
	}
}

// checkpointsEnabled reports whether the settings in force take checkpoints.
func (s *Server) checkpointsEnabled() bool {
	on, _, _ := s.CurrentSettings().CheckpointLimits()
	return on
}

// closeCheckpoints releases the store when the connection ends.
func (s *Server) closeCheckpoints() {
	s.ckpt.mu.Lock()
	defer s.ckpt.mu.Unlock()
	if s.ckpt.store != nil {
		s.ckpt.store.Close()
		s.ckpt.store = nil
	}
}

// openBuffers returns the editor's open files by path.
func (s *Server) openBuffers() map[string]workspace.Snapshot {
	out := make(map[string]workspace.Snapshot)
	for _, uri := range s.buffers.URIs() {
		if snap, ok := s.buffers.Get(uri); ok && snap.Path != "" {
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

// primeCheckpoints reads the workspace for its first checkpoint in the
// background, so that the first change of the first turn does not wait
// for a walk of every file.
func (s *Server) primeCheckpoints() {
	if !s.checkpointsEnabled() {
		return
	}
	st, err := s.checkpointStore()
	if err != nil {
		return
	}
	s.ws.Go(func() {
		// Progress shows only once the scan has run a second: a
		// workspace with checkpoints, or a small one, has none.
		var report, end func(string)
		progress := func(files int64) {
			if report == nil {
				report, end = s.beginWork(s.bgCtx, "first checkpoint")
				s.log.Info("checkpoint: reading the workspace for its first checkpoint, at low priority")
			}
			report(fmt.Sprintf("%d files read", files))
		}
		err := st.Prime(s.bgCtx, progress)
		switch {
		case err == nil:
			if end != nil {
				end("done")
				s.log.Info("checkpoint: the workspace is read")
			}
		case errors.Is(err, context.Canceled) && s.bgCtx.Err() == nil:
			// A checkpoint took over what was left to read.
			if end != nil {
				end("taken over by the turn's checkpoint")
			}
		default:
			if end != nil {
				end("failed")
			}
			if s.bgCtx.Err() == nil {
				s.log.Warn("checkpoint: reading the workspace failed", "err", err)
			}
		}
	})
}

// trackToolCall tells the checkpoint store when a model's tool call runs
// and when it ends, from the session's updates: the first checkpoint's
// scan pauses meanwhile (checkpoint.Store.Busy). The store is not opened
// for this.
func (s *Server) trackToolCall(sessionID string, u wire.SessionUpdate) {
	id, status, ok := toolCallState(u)
	if !ok {
		return
	}
	key := sessionID + "\x00" + id
	switch status {
	case wire.StatusInProgress:
		s.ckpt.mu.Lock()
		st := s.ckpt.store
		s.ckpt.mu.Unlock()
		if st == nil {
			return
		}
		s.ckpt.busyMu.Lock()
		if s.ckpt.busy == nil {
			s.ckpt.busy = make(map[string]func())
		}
		if _, ok := s.ckpt.busy[key]; !ok {
			s.ckpt.busy[key] = st.Busy()
		}
		s.ckpt.busyMu.Unlock()
	case wire.StatusCompleted, wire.StatusFailed:
		s.ckpt.busyMu.Lock()
		done := s.ckpt.busy[key]
		delete(s.ckpt.busy, key)
		s.ckpt.busyMu.Unlock()
		if done != nil {
			done()
		}
	}
}

// toolCallBusy marks an editor's tool call (cline/callTool) as running
// for the checkpoint store, until the returned function is called.
func (s *Server) toolCallBusy() func() {
	s.ckpt.mu.Lock()
	st := s.ckpt.store
	s.ckpt.mu.Unlock()
	if st == nil {
		return func() {}
	}
	return st.Busy()
}

// takeCheckpoint is the session's checkpoint hook; settings can turn it
// off. A failure only costs the undo point, so the turn goes on, but the
// user is told, once per session, that undo is unavailable and why; what
// the store repaired on the way (an index moved aside) is told as it
// happens.
func (s *Server) takeCheckpoint(sessionID string, turn int, callID, title string) {
	if !s.checkpointsEnabled() {
		return
	}
	st, err := s.checkpointStore()
	if err != nil {
		s.log.Warn("no checkpoint", "session", sessionID, "err", err)
		s.checkpointTrouble(sessionID, err)
		return
	}
	info, err := st.Checkpoint(s.bgCtx, checkpoint.Request{
		SessionID: sessionID, Turn: turn, ToolCallID: callID, Title: title,
		Overlay: bufferTexts(s.openBuffers()),
	})
	for _, note := range info.Notes {
		s.log.Warn("checkpoint store repaired", "session", sessionID, "note", note)
		s.tellSession(sessionID, "checkpoints: "+note)
	}
	if err != nil && s.bgCtx.Err() == nil {
		s.log.Warn("checkpoint failed", "session", sessionID, "err", err)
		s.checkpointTrouble(sessionID, err)
	}
}

// checkpointTrouble tells the user that the session's changes cannot be
// undone, once per session: every later checkpoint would fail the same
// way.
func (s *Server) checkpointTrouble(sessionID string, err error) {
	s.ckpt.toldMu.Lock()
	told := s.ckpt.told[sessionID]
	if s.ckpt.told == nil {
		s.ckpt.told = make(map[string]bool)
	}
	s.ckpt.told[sessionID] = true
	s.ckpt.toldMu.Unlock()
	if !told {
		s.tellSession(sessionID, "undo is unavailable: no checkpoint could be taken before this change: "+err.Error())
	}
}

// tellSession puts a warning in the session's conversation (both
// dialects; ACP has no other place for one) and, in the LSP dialect,
// shows it as window/showMessage.
func (s *Server) tellSession(sessionID, msg string) {
	msg = s.redact(msg)
	s.sendUpdate(sessionID, wire.AgentMessageChunk{Content: wire.TextBlock{Text: "\n[" + msg + "]\n"}})
	s.showMessage(wire.MessageWarning, "cline-ls: "+msg)
}

// Wire shapes of PROTOCOL.md §8.
type (
	checkpointsParams struct {
		SessionID string `json:"sessionId"`
	}
	checkpointWire struct {
		CheckpointID string   `json:"checkpointId"`
		Turn         int      `json:"turn"`
		ToolCallID   string   `json:"toolCallId,omitempty"`
		Time         string   `json:"time"`
		Title        string   `json:"title"`
		Files        []string `json:"files"`
	}
	checkpointsResult struct {
		Checkpoints []checkpointWire `json:"checkpoints"`
	}
	checkpointDiffParams struct {
		SessionID    string `json:"sessionId"`
		CheckpointID string `json:"checkpointId"`
	}
	checkpointFileWire struct {
		Path   string `json:"path"`
		Status string `json:"status"`
		Diff   string `json:"diff"`
	}
	checkpointDiffResult struct {
		Files []checkpointFileWire `json:"files"`
	}
	restoreParams struct {
		SessionID    string `json:"sessionId"`
		CheckpointID string `json:"checkpointId"`
		Scope        string `json:"scope"`
		Force        bool   `json:"force"`
	}
	conflictWire struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	}
	restoreResult struct {
		Restored  []string       `json:"restored"`
		Conflicts []conflictWire `json:"conflicts"`
	}
)

// checkpointFailed reports an unknown checkpoint as the caller's
// mistake, anything else as the daemon's.
func checkpointFailed(method string, err error) error {
	if errors.Is(err, checkpoint.ErrNotFound) {
		return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "invalid params: checkpointId: %v", err)
	}
	return jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", method, err)
}

// listCheckpoints serves cline/checkpoints.
func (s *Server) listCheckpoints(raw []byte) (any, error) {
	var p checkpointsParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID); err != nil {
		return nil, err
	}
	st, err := s.checkpointStore()
	if err != nil {
		return nil, checkpointFailed(methodCheckpoints, err)
	}
	res := checkpointsResult{Checkpoints: []checkpointWire{}}
	for _, c := range st.List(p.SessionID) {
		res.Checkpoints = append(res.Checkpoints, checkpointWire{
			CheckpointID: c.ID, Turn: c.Turn, ToolCallID: c.ToolCallID,
			Time: c.Time.UTC().Format(time.RFC3339Nano), Title: prompt.UserWords(c.Title), Files: c.Files,
		})
	}
	return res, nil
}

// checkpointDiff serves cline/checkpointDiff. Its walk of the workspace
// must not hold up text synchronisation, so it releases the read loop.
func (s *Server) checkpointDiff(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p checkpointDiffParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID, "checkpointId", p.CheckpointID); err != nil {
		return nil, err
	}
	st, err := s.checkpointStore()
	if err != nil {
		return nil, checkpointFailed(methodCheckpointDiff, err)
	}
	jsonrpc2.Async(ctx)
	work, release := s.requestScope(ctx, req.ID())
	defer release()
	diffs, err := st.Diff(work, checkpoint.RestoreRequest{
		SessionID: p.SessionID, CheckpointID: p.CheckpointID, Open: bufferTexts(s.openBuffers()),
	})
	if err != nil {
		return nil, checkpointFailed(methodCheckpointDiff, err)
	}
	res := checkpointDiffResult{Files: []checkpointFileWire{}}
	for _, d := range diffs {
		res.Files = append(res.Files, checkpointFileWire{Path: d.Path, Status: string(d.Status), Diff: d.Diff})
	}
	return res, nil
}

// restore serves cline/restore. Files on disk are restored by the store;
// open buffers go to the editor as one versioned workspace/applyEdit, so
// it releases the read loop first.
func (s *Server) restore(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p restoreParams
	if err := decodeParams(req.Params(), &p); err != nil {
		return nil, err
	}
	if err := required("sessionId", p.SessionID, "checkpointId", p.CheckpointID, "scope", p.Scope); err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	work, release := s.requestScope(ctx, req.ID())
	defer release()
	return s.restoreFiles(work, p)
}

func (s *Server) restoreFiles(ctx context.Context, p restoreParams) (any, error) {
	switch p.Scope {
	case "files", "conversation", "both":
	default:
		return nil, invalidParams(`scope: expected "files", "conversation" or "both", got %q`, p.Scope)
	}
	st, err := s.checkpointStore()
	if err != nil {
		return nil, checkpointFailed(methodRestore, err)
	}
	if p.Scope != "files" {
		ls, err := s.getSession(p.SessionID)
		if err != nil {
			return nil, err
		}
		turn := -1
		for _, c := range st.List(p.SessionID) {
			if c.ID == p.CheckpointID {
				turn = c.Turn
			}
		}
		if turn < 0 {
			return nil, invalidParams("checkpointId: no checkpoint %q in session %s", p.CheckpointID, p.SessionID)
		}
		if err := ls.Rewind(turn); err != nil {
			return nil, invalidParams("scope: the conversation cannot be restored: %v", err)
		}
		if p.Scope == "conversation" {
			return restoreResult{Restored: []string{}, Conflicts: []conflictWire{}}, nil
		}
	}
	open := s.openBuffers()
	plan, err := st.Restore(ctx, checkpoint.RestoreRequest{
		SessionID: p.SessionID, CheckpointID: p.CheckpointID, Open: bufferTexts(open), Force: p.Force,
	})
	if err != nil {
		return nil, checkpointFailed(methodRestore, err)
	}
	res := restoreResult{Restored: []string{}, Conflicts: []conflictWire{}}
	for _, d := range plan.Disk {
		res.Restored = append(res.Restored, d.Path)
	}
	for _, c := range append(plan.Conflicts, plan.Failed...) {
		res.Conflicts = append(res.Conflicts, conflictWire{Path: c.Path, Reason: c.Reason})
	}
	var edits []bufferEdit
	for _, b := range plan.Buffers {
		snap := open[b.Path]
		if b.Remove {
			res.Conflicts = append(res.Conflicts, conflictWire{Path: b.Path, Reason: "the file did not exist at the checkpoint but is open in the editor; close it and restore again to remove it"})
			continue
		}
		text := b.Text
		edits = append(edits, bufferEdit{
			change: tools.Change{Path: b.Path, NewText: &text},
			base:   tools.FileText{Text: snap.Text, Exists: true, Open: true, Version: snap.Version},
		})
	}
	if len(edits) > 0 {
		if err := s.editBuffers(ctx, edits); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			for _, e := range edits {
				res.Conflicts = append(res.Conflicts, conflictWire{Path: e.change.Path, Reason: "the editor did not take the edit: " + err.Error()})
			}
		} else {
			for _, e := range edits {
				res.Restored = append(res.Restored, e.change.Path)
			}
		}
	}
	slices.Sort(res.Restored)
	return res, nil
}

// checkpointCommand serves cline.checkpoints and cline.restore for
// clients with no plugin; a restore from a command defaults to the files.
func (s *Server) checkpointCommand(ctx context.Context, req *jsonrpc2.Request, command string, args []json.RawMessage) (any, error) {
	var arg json.RawMessage = []byte("{}")
	if len(args) > 0 {
		arg = args[0]
	}
	if command == commandCheckpoints {
		return s.listCheckpoints(arg)
	}
	var p restoreParams
	if err := decodeParams(arg, &p); err != nil {
		return nil, err
	}
	if p.Scope == "" {
		p.Scope = "files"
	}
	if err := required("arguments[0].sessionId", p.SessionID, "arguments[0].checkpointId", p.CheckpointID); err != nil {
		return nil, err
	}
	jsonrpc2.Async(ctx)
	work, release := s.requestScope(ctx, req.ID())
	defer release()
	return s.restoreFiles(work, p)
}
