package keeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cline-ls/cline-ls/checkpoint"
	"github.com/cline-ls/cline-ls/prompt"
	"github.com/cline-ls/cline-ls/wire"
	"github.com/cline-ls/cline-ls/workspace"
)

// Editor delivers restored text to the editor's open buffers: one edit
// for all of them, each against the version the restore read, through
// the same path as the agent's edits. The daemon never writes the file of
// an open buffer itself: the editor holds the user's view of it.
type Editor interface {
	EditBuffers(ctx context.Context, edits []BufferEdit) error
}

// EditorFunc is a function as an Editor.
type EditorFunc func(ctx context.Context, edits []BufferEdit) error

// EditBuffers calls f.
func (f EditorFunc) EditBuffers(ctx context.Context, edits []BufferEdit) error { return f(ctx, edits) }

// BufferEdit sets an open buffer back to Text.
type BufferEdit struct {
	Path string
	Text string
	// Base is the buffer as the restore read it; the edit is for that
	// version only.
	Base workspace.Snapshot
}

// Conversation is a session's history, as far as a restore goes back in
// it.
type Conversation interface {
	// Rewind drops the turns from turn on (counted from 0).
	Rewind(turn int) error
}

// InvalidError is a request the caller got wrong (an unknown checkpoint,
// a scope that is none); Msg names the field first.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// StoreError is the checkpoint store failing, or there being none to
// open (no folder, no state directory): the daemon's trouble, not the
// caller's.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// failed sorts an error of the store: a checkpoint it does not know is
// the caller's mistake, anything else is the daemon's.
func (k *Keeper) failed(err error) error {
	if errors.Is(err, checkpoint.ErrNotFound) {
		return invalid("checkpointId: %v", err)
	}
	return &StoreError{Err: err}
}

// List returns the session's checkpoints, oldest first, titled with the
// prompt as the user typed it.
func (k *Keeper) List(sessionID string) (wire.CheckpointsResult, error) {
	st, err := k.open()
	if err != nil {
		return wire.CheckpointsResult{}, k.failed(err)
	}
	res := wire.CheckpointsResult{Checkpoints: []wire.Checkpoint{}}
	for _, c := range st.List(sessionID) {
		res.Checkpoints = append(res.Checkpoints, wire.Checkpoint{
			CheckpointID: c.ID, Turn: c.Turn, ToolCallID: c.ToolCallID,
			Time: c.Time.UTC().Format(time.RFC3339Nano), Title: prompt.UserWords(c.Title), Files: c.Files,
		})
	}
	return res, nil
}

// Diff previews a restore: every file it would change, with the diff
// from its text now (an open buffer's, unsaved text included) to the
// checkpoint's.
func (k *Keeper) Diff(ctx context.Context, p wire.CheckpointDiffParams) (wire.CheckpointDiffResult, error) {
	st, err := k.open()
	if err != nil {
		return wire.CheckpointDiffResult{}, k.failed(err)
	}
	diffs, err := st.Diff(ctx, checkpoint.RestoreRequest{
		SessionID: p.SessionID, CheckpointID: p.CheckpointID, Open: bufferTexts(k.openBuffers()),
	})
	if err != nil {
		return wire.CheckpointDiffResult{}, k.failed(err)
	}
	res := wire.CheckpointDiffResult{Files: []wire.CheckpointFile{}}
	for _, d := range diffs {
		res.Files = append(res.Files, wire.CheckpointFile{Path: d.Path, Status: string(d.Status), Diff: d.Diff})
	}
	return res, nil
}

// Restore puts the files, the conversation or both back to a checkpoint.
// Files on disk are restored by the store; open buffers go to the
// editor through the Editor, and one it does not take is a conflict, not
// a failure of the restore. A file created since the checkpoint and open
// in the editor is kept: the daemon deletes no file the user has open.
func (k *Keeper) Restore(ctx context.Context, p wire.RestoreParams) (wire.RestoreResult, error) {
	switch p.Scope {
	case "files", "conversation", "both":
	default:
		return wire.RestoreResult{}, invalid(`scope: expected "files", "conversation" or "both", got %q`, p.Scope)
	}
	st, err := k.open()
	if err != nil {
		return wire.RestoreResult{}, k.failed(err)
	}
	if p.Scope != "files" {
		conv, err := k.cfg.Session(p.SessionID)
		if err != nil {
			return wire.RestoreResult{}, err
		}
		turn := -1
		for _, c := range st.List(p.SessionID) {
			if c.ID == p.CheckpointID {
				turn = c.Turn
			}
		}
		if turn < 0 {
			return wire.RestoreResult{}, invalid("checkpointId: no checkpoint %q in session %s", p.CheckpointID, p.SessionID)
		}
		if err := conv.Rewind(turn); err != nil {
			return wire.RestoreResult{}, invalid("scope: the conversation cannot be restored: %v", err)
		}
		if p.Scope == "conversation" {
			return wire.RestoreResult{Restored: []string{}, Conflicts: []wire.RestoreConflict{}}, nil
		}
	}
	open := k.openBuffers()
	plan, err := st.Restore(ctx, checkpoint.RestoreRequest{
		SessionID: p.SessionID, CheckpointID: p.CheckpointID, Open: bufferTexts(open), Force: p.Force,
	})
	if err != nil {
		return wire.RestoreResult{}, k.failed(err)
	}
	res := wire.RestoreResult{Restored: []string{}, Conflicts: []wire.RestoreConflict{}}
	for _, d := range plan.Disk {
		res.Restored = append(res.Restored, d.Path)
	}
	for _, c := range append(plan.Conflicts, plan.Failed...) {
		res.Conflicts = append(res.Conflicts, wire.RestoreConflict{Path: c.Path, Reason: c.Reason})
	}
	var edits []BufferEdit
	for _, b := range plan.Buffers {
		if b.Remove {
			res.Conflicts = append(res.Conflicts, wire.RestoreConflict{Path: b.Path, Reason: "the file did not exist at the checkpoint but is open in the editor; close it and restore again to remove it"})
			continue
		}
		edits = append(edits, BufferEdit{Path: b.Path, Text: b.Text, Base: open[b.Path]})
	}
	if len(edits) > 0 {
		if err := k.cfg.Editor.EditBuffers(ctx, edits); err != nil {
			if ctx.Err() != nil {
				return wire.RestoreResult{}, ctx.Err()
			}
			for _, e := range edits {
				res.Conflicts = append(res.Conflicts, wire.RestoreConflict{Path: e.Path, Reason: "the editor did not take the edit: " + err.Error()})
			}
		} else {
			for _, e := range edits {
				res.Restored = append(res.Restored, e.Path)
			}
		}
	}
	slices.Sort(res.Restored)
	return res, nil
}

// Undo puts the files and the conversation back to before the session's
// last turn, its checkpoint before the first change (a turn that changed
// no file has none, and only its conversation goes), and says what it
// did. last is the last turn's number, counted as checkpoints count
// turns (by the user messages before its prompt; -1 for none).
func (k *Keeper) Undo(ctx context.Context, conv Conversation, sessionID string, last int) (string, error) {
	if last < 0 {
		return "There is no turn to undo.", nil
	}
	var before string
	if st, err := k.open(); err == nil {
		for _, c := range st.List(sessionID) {
			if c.ToolCallID == "" && c.Turn == last {
				before = c.ID
			}
		}
	}
	if before == "" {
		if err := conv.Rewind(last); err != nil {
			return "", invalid("prompt: the last turn cannot be undone: %v", err)
		}
		return "Undid the last turn; it changed no file.", nil
	}
	res, err := k.Restore(ctx, wire.RestoreParams{SessionID: sessionID, CheckpointID: before, Scope: "both"})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Undid the last turn: %d file(s) restored.", len(res.Restored))
	for _, c := range res.Conflicts {
		fmt.Fprintf(&b, "\nKept %s: %s.", c.Path, c.Reason)
	}
	return b.String(), nil
}
