package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

type restoreReply struct {
	Restored  []string
	Conflicts []struct{ Path, Reason string }
}

type checkpointList struct {
	Checkpoints []struct {
		CheckpointID, ToolCallID string
		Turn                     int
	}
}

// TestCheckpointOneTurn: one turn edits an open buffer, edits a file that
// is not open, makes a file with run_commands and deletes one with
// apply_patch (and writes into an ignored folder). A restore to before
// the turn puts all four back, the buffer through one
// workspace/applyEdit and its file on disk untouched, the ignored folder
// left alone. After a daemon restart a restore brings the turn's state
// back from the store; then the user types into the buffer, and a
// restore keeps the typing and reports the conflict. A conversation
// restore drops the turn from the next model request.
func TestCheckpointOneTurn(t *testing.T) {
	ctx := testCtx(t)
	state := t.TempDir()
	patch := "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch"
	// apply_patch is offered (in place of editor) to the models trained
	// on it.
	tr := transcriptFor(t, "gpt-5",
		reply(text("Working."),
			call("c1", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: open.txt\n@@\n-a draft, unsaved\n+a agent, unsaved\n*** End Patch"}),
			call("c2", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: closed.txt\n@@\n-closed\n+edited\n*** End Patch"}),
			call("c3", "run_commands", map[string]any{"commands": []any{"echo made > made.txt && echo out > build/new.bin"}}),
			call("c4", "apply_patch", map[string]any{"input": patch})),
		reply(text("Done.")),
	)
	opts := map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state,
		"approvals": map[string]any{"edit": "allow", "execute": "allow"},
	}
	ed, root := editWorkspace(t, map[string]string{
		"open.txt": "on disk\n", "closed.txt": "closed\n", "gone.txt": "gone\n",
		".gitignore": "build/\n", "build/old.bin": "old\n",
	}, opts, nil)
	abs := func(p string) string { return filepath.Join(root, p) }
	openURI := workspace.PathToURI(abs("open.txt"))
	unsaved := "a draft, unsaved\n"
	ed.Open(ctx, openURI, unsaved)

	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "act", "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.SessionID
	if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "Do four things"}}}, nil); err != nil {
		t.Fatal(err)
	}
	assertBuffer(t, ctx, ed, openURI, "a agent, unsaved\n")
	if got := readFile(t, abs("closed.txt")); got != "edited\n" {
		t.Fatalf("closed.txt = %q after the turn", got)
	}
	if got := readFile(t, abs("made.txt")); got != "made\n" {
		t.Fatalf("made.txt = %q after the turn", got)
	}
	if _, err := os.Stat(abs("gone.txt")); err == nil {
		t.Fatal("gone.txt is still there after the turn")
	}

	var list checkpointList
	if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &list); err != nil {
		t.Fatal(err)
	}
	cks := list.Checkpoints
	if len(cks) < 2 || cks[0].ToolCallID != "" {
		t.Fatalf("checkpoints = %+v", cks)
	}
	before, after := cks[0].CheckpointID, cks[len(cks)-1].CheckpointID

	restore := func(ed *rpctest.Editor, ck string) restoreReply {
		t.Helper()
		var r restoreReply
		if err := ed.Call(ctx, "cline/restore", map[string]any{"sessionId": id, "checkpointId": ck, "scope": "files"}, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	edits := len(ed.Messages("workspace/applyEdit"))
	r := restore(ed, before)
	if len(r.Restored) != 4 || len(r.Conflicts) != 0 {
		t.Fatalf("restore to before the turn = %+v, want the four files", r)
	}
	if n := len(ed.Messages("workspace/applyEdit")) - edits; n != 1 {
		t.Errorf("%d workspace/applyEdit for the restore, want 1", n)
	}
	assertBuffer(t, ctx, ed, openURI, unsaved)
	for p, want := range map[string]string{"open.txt": "on disk\n", "closed.txt": "closed\n", "gone.txt": "gone\n", "build/new.bin": "out\n", "build/old.bin": "old\n"} {
		if got := readFile(t, abs(p)); got != want {
			t.Errorf("%s = %q after the restore, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(abs("made.txt")); err == nil {
		t.Error("made.txt, made by the turn, is still there")
	}
	ed.Shutdown(ctx)

	// A new daemon on the same state: the turn's state comes back from
	// the store, the buffer's text too.
	tr2 := transcript(t, map[string]any{"expect": map[string]any{"last_user_contains": "again", "messages": 1}, "events": []any{text("Fresh.")}})
	opts["provider"] = map[string]any{"name": "replay", "transcript": tr2}
	ed2 := rpctest.New(t, rpc.Options{})
	caps := map[string]any{
		"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}},
		"window":    map[string]any{"showMessage": map[string]any{}},
	}
	if _, err := ed2.Initialize(ctx, root, map[string]any{"initializationOptions": opts, "capabilities": caps}); err != nil {
		t.Fatal(err)
	}
	ed2.Open(ctx, openURI, unsaved)
	r = restore(ed2, after)
	if len(r.Restored) != 4 || len(r.Conflicts) != 0 {
		t.Fatalf("restore after a restart = %+v, want the four files", r)
	}
	assertBuffer(t, ctx, ed2, openURI, "a agent, unsaved\n")
	if got := readFile(t, abs("made.txt")); got != "made\n" {
		t.Errorf("made.txt = %q after restoring the turn's state", got)
	}

	// The user types into the buffer: a restore keeps the typing.
	if err := ed2.Edit(ctx, openURI, workspace.Range{Start: workspace.Position{Line: 1}, End: workspace.Position{Line: 1}}, "typed\n"); err != nil {
		t.Fatal(err)
	}
	r = restore(ed2, before)
	if len(r.Conflicts) != 1 || !strings.HasSuffix(r.Conflicts[0].Path, "open.txt") || len(r.Restored) != 3 {
		t.Errorf("restore over the user's typing = %+v, want a conflict on open.txt and the other three restored", r)
	}
	assertBuffer(t, ctx, ed2, openURI, "a agent, unsaved\ntyped\n")
	if got := readFile(t, abs("closed.txt")); got != "closed\n" {
		t.Errorf("closed.txt = %q", got)
	}

	// The conversation back to before the turn: the next request holds
	// only its own prompt (the replay's expectation fails it otherwise).
	if err := ed2.Call(ctx, "cline/restore", map[string]any{"sessionId": id, "checkpointId": before, "scope": "conversation"}, nil); err != nil {
		t.Fatal(err)
	}
	var res struct{ StopReason string }
	if err := ed2.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "again"}}}, &res); err != nil {
		t.Fatalf("the prompt after the conversation restore: %v", err)
	}
	if res.StopReason != "end_turn" {
		t.Errorf("stopReason = %q", res.StopReason)
	}
}

// transcriptFor writes a replay transcript of model and returns its path.
func transcriptFor(t *testing.T, model string, replies ...any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"model": model, "chunk_size": 5, "replies": replies})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "transcript.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
