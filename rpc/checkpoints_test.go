package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/cline-ls/cline-ls/session"
	"github.com/cline-ls/cline-ls/workspace"
)

// TestCheckpointRestoreTurn runs a turn that reads a file (no checkpoint
// for that), edits a closed file on disk and an open, unsaved buffer,
// then lists the checkpoints the session
// took, previews going back and restores the files: the disk file is
// rewritten, the buffer goes back through applyEdit, the disk copy of the
// open file is left alone.
func TestCheckpointRestoreTurn(t *testing.T) {
	ctx := testCtx(t)
	tr := transcript(t,
		reply(text("Editing."),
			call("c0", "read_files", map[string]any{"files": []any{map[string]any{"path": "a.txt"}}}),
			call("c1", "editor", map[string]any{"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}),
			call("c2", "editor", map[string]any{"path": "b.go", "old_text": "draft", "new_text": "final"})),
		map[string]any{"expect": map[string]any{"last_tool_result_contains": "Edited b.go"}, "events": []any{text("Done.")}},
	)
	opts := map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(),
		"approvals": map[string]any{"edit": "allow"},
	}
	ed, root := editWorkspace(t, map[string]string{"a.txt": "alpha\n", "b.go": "package b\n"}, opts, nil)
	bURI := workspace.PathToURI(filepath.Join(root, "b.go"))
	unsaved := "package b\n\n// draft\n"
	ed.Open(ctx, bURI, unsaved)

	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "act", "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.SessionID
	var res struct{ StopReason string }
	if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "Finalise"}}}, &res); err != nil {
		t.Fatal(err)
	}
	assertBuffer(t, ctx, ed, bURI, "package b\n\n// final\n")
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "ALPHA\n" {
		t.Fatalf("a.txt = %q after the turn", got)
	}

	var list struct {
		Checkpoints []struct {
			CheckpointID, ToolCallID, Title, Time string
			Turn                                  int
			Files                                 []string
		}
	}
	if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &list); err != nil {
		t.Fatal(err)
	}
	cks := list.Checkpoints
	if len(cks) != 3 || cks[0].ToolCallID != "" || cks[1].ToolCallID != "c1" || cks[2].ToolCallID != "c2" {
		t.Fatalf("checkpoints = %+v, want one before the turn and one after each edit", cks)
	}
	if !strings.HasSuffix(strings.Join(cks[1].Files, ","), "a.txt") || !strings.HasSuffix(strings.Join(cks[2].Files, ","), "b.go") {
		t.Errorf("changed files = %v, %v", cks[1].Files, cks[2].Files)
	}
	if cks[0].Turn != 0 || cks[2].Turn != 0 || cks[0].Time == "" || !strings.HasPrefix(cks[0].Title, "Before: Finalise") {
		t.Errorf("first checkpoint = %+v", cks[0])
	}
	before := cks[0].CheckpointID

	var preview struct {
		Files []struct{ Path, Status, Diff string }
	}
	if err := ed.Call(ctx, "cline/checkpointDiff", map[string]any{"sessionId": id, "checkpointId": before}, &preview); err != nil {
		t.Fatal(err)
	}
	if len(preview.Files) != 2 || preview.Files[0].Status != "modified" || !strings.Contains(preview.Files[0].Diff, "+1: alpha") {
		t.Fatalf("checkpointDiff = %+v", preview.Files)
	}

	// The conversation back to before the turn: the turn's messages are
	// gone from the session as it resumes, and the files are untouched.
	if err := ed.Call(ctx, "cline/restore", map[string]any{"sessionId": id, "checkpointId": before, "scope": "conversation"}, nil); err != nil {
		t.Fatalf("restore of the conversation: %v", err)
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "ALPHA\n" {
		t.Errorf("a conversation restore changed a.txt: %q", got)
	}
	st, _ := session.NewStore(opts["stateDir"].(string))
	meta, recs, _ := st.Load(id)
	if h := session.Resume(meta, recs).History; len(h) != 0 {
		t.Errorf("after restoring the conversation to before the first turn, %d messages remain", len(h))
	}

	var restored struct {
		Restored  []string
		Conflicts []struct{ Path, Reason string }
	}
	if err := ed.Call(ctx, "cline/restore", map[string]any{"sessionId": id, "checkpointId": before, "scope": "files"}, &restored); err != nil {
		t.Fatal(err)
	}
	if len(restored.Restored) != 2 || len(restored.Conflicts) != 0 {
		t.Fatalf("restore = %+v", restored)
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "alpha\n" {
		t.Errorf("a.txt = %q after the restore", got)
	}
	assertBuffer(t, ctx, ed, bURI, unsaved)
	if got := readFile(t, filepath.Join(root, "b.go")); got != "package b\n" {
		t.Errorf("b.go on disk = %q: an open file is restored in its buffer only", got)
	}

	// The user edits a.txt on disk; the command form of restore keeps it.
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var cmd struct {
		Restored  []string
		Conflicts []struct{ Path, Reason string }
	}
	if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "cline.restore", "arguments": []any{map[string]any{"sessionId": id, "checkpointId": cks[2].CheckpointID}}}, &cmd); err != nil {
		t.Fatal(err)
	}
	if len(cmd.Conflicts) != 1 || !strings.HasSuffix(cmd.Conflicts[0].Path, "a.txt") {
		t.Errorf("cline.restore = %+v, want a conflict on a.txt", cmd)
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "mine\n" {
		t.Errorf("a.txt = %q: the user's change must be kept", got)
	}
}

// TestACPCheckpointMethods checks that the ACP dialect routes the
// checkpoint methods under their extension names.
func TestACPCheckpointMethods(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	c := &acpClient{files: map[string]string{}}
	conn, _, _, _ := acpDaemon(t, c, "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+t.TempDir())
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := conn.CallExtension(ctx, "_cline/checkpoints", map[string]any{"sessionId": sess.SessionId})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(string(raw)), ""); got != `{"checkpoints":[]}` {
		t.Errorf("_cline/checkpoints = %s", raw)
	}
	_, err = conn.CallExtension(ctx, "_cline/restore", map[string]any{"sessionId": sess.SessionId, "checkpointId": "nope", "scope": "files"})
	if err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("_cline/restore of an unknown checkpoint: err = %v", err)
	}
	_, err = conn.CallExtension(ctx, "_cline/checkpointDiff", map[string]any{"sessionId": sess.SessionId, "checkpointId": "nope"})
	if err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("_cline/checkpointDiff of an unknown checkpoint: err = %v", err)
	}
}
