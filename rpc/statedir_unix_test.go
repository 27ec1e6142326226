//go:build unix

package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// stateEditor starts an editor on root with the state directory state
// and a replay model whose one reply edits a.txt and b.txt.
func stateEditor(t *testing.T, root, state string) *rpctest.Editor {
	t.Helper()
	tr := transcript(t,
		reply(text("Editing."),
			call("c1", "editor", map[string]any{"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}),
			call("c2", "editor", map[string]any{"path": "b.txt", "old_text": "beta", "new_text": "BETA"})),
		reply(text("Done.")),
	)
	opts := map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state,
		"approvals": map[string]any{"edit": "allow"},
	}
	ed := rpctest.New(t, rpc.Options{})
	caps := map[string]any{"window": map[string]any{"showMessage": map[string]any{}}}
	if _, err := ed.Initialize(testCtx(t), root, map[string]any{"initializationOptions": opts, "capabilities": caps}); err != nil {
		t.Fatal(err)
	}
	return ed
}

func stateWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// editTurn runs a new session's turn of two edits and returns its id.
func editTurn(t *testing.T, ctx context.Context, ed *rpctest.Editor, root string) string {
	t.Helper()
	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "act", "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	var res struct{ StopReason string }
	if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "Edit"}}}, &res); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %v, stop %q", err, res.StopReason)
	}
	return created.SessionID
}

func shown(ed *rpctest.Editor, part string) []string {
	var out []string
	for _, m := range ed.Messages("window/showMessage") {
		var p struct{ Message string }
		json.Unmarshal(m.Params, &p)
		if strings.Contains(p.Message, part) {
			out = append(out, p.Message)
		}
	}
	return out
}

// makeSpecial puts a special file of kind at p.
func makeSpecial(t *testing.T, kind, p string) {
	t.Helper()
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(p, 0o600)
	case "dev-zero":
		err = os.Symlink("/dev/zero", p)
	case "folder":
		err = os.Mkdir(p, 0o700)
	case "not-json":
		err = os.WriteFile(p, []byte("{\"version\":1,\"chec"), 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A session file that is a FIFO, a link to /dev/zero or a folder: its
// session/load is refused at once naming the file, and the daemon goes
// on serving (it hung on the FIFO, and read /dev/zero without end).
func TestSpecialSessionFileIsRefused(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "dev-zero", "folder"} {
		t.Run(kind, func(t *testing.T) {
			ctx := testCtx(t)
			root, state := stateWorkspace(t), t.TempDir()
			ed := stateEditor(t, root, state)
			editTurn(t, ctx, ed, root) // makes the sessions folder
			p := filepath.Join(state, "sessions", "s-special.jsonl")
			makeSpecial(t, kind, p)
			err := ed.Call(ctx, "session/load", map[string]any{"sessionId": "s-special", "cwd": root, "mcpServers": []any{}}, nil)
			var re *jsonrpc2.Error
			if !errors.As(err, &re) || !strings.Contains(re.Message, p) {
				t.Fatalf("session/load of a %s session file: %v, want an error naming %s", kind, err, p)
			}
			var list struct{ Sessions []struct{ SessionID string } }
			if err := ed.Call(ctx, "session/list", map[string]any{}, &list); err != nil || len(list.Sessions) != 1 {
				t.Errorf("session/list: %+v, %v; want the one good session", list.Sessions, err)
			}
			if err := ed.Call(ctx, "cline/tools", map[string]any{"format": "openai"}, nil); err != nil {
				t.Errorf("cline/tools after: %v", err)
			}
		})
	}
}

// A checkpoint index that cannot be read (a FIFO, a link to /dev/zero,
// a folder, damaged JSON) in a fresh daemon: session/new and cline/tools
// answer, the turn's edits go ahead with undo points in a new index, and
// the user is told once that the old one was moved aside.
func TestDamagedCheckpointIndexIsReplaced(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "dev-zero", "folder", "not-json"} {
		t.Run(kind, func(t *testing.T) {
			ctx := testCtx(t)
			root, state := stateWorkspace(t), t.TempDir()
			first := stateEditor(t, root, state)
			editTurn(t, ctx, first, root)
			first.Shutdown(ctx)
			idx, _ := filepath.Glob(filepath.Join(state, "checkpoints", "*", "index.json"))
			if len(idx) != 1 {
				t.Fatalf("index files: %v", idx)
			}
			os.Remove(idx[0])
			makeSpecial(t, kind, idx[0])
			for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
				os.WriteFile(filepath.Join(root, name), []byte(text), 0o644)
			}

			ed := stateEditor(t, root, state)
			if err := ed.Call(ctx, "cline/tools", map[string]any{"format": "openai"}, nil); err != nil {
				t.Fatalf("cline/tools: %v", err)
			}
			id := editTurn(t, ctx, ed, root)
			if got := readFile(t, filepath.Join(root, "b.txt")); got != "BETA\n" {
				t.Errorf("b.txt = %q: the edits did not go ahead", got)
			}
			if got := shown(ed, "index.json.bad-"); len(got) != 1 || !strings.Contains(got[0], idx[0]) {
				t.Errorf("warnings about the index: %q, want one naming %s and where it went", got, idx[0])
			}
			if got := agentText(updates(ed, id)); !strings.Contains(got, "index.json.bad-") {
				t.Errorf("the session's text does not say the index was replaced: %q", got)
			}
			var list struct {
				Checkpoints []struct{ CheckpointID string }
			}
			if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &list); err != nil || len(list.Checkpoints) != 3 {
				t.Errorf("checkpoints after the repair: %+v, %v; want 3", list.Checkpoints, err)
			}
		})
	}
}

// A checkpoint store that cannot be repaired (its lock file made a
// folder): the edits go ahead, and the user is told once per session
// that undo is unavailable and why, not once per edit.
func TestCheckpointFailureIsToldOnce(t *testing.T) {
	ctx := testCtx(t)
	root, state := stateWorkspace(t), t.TempDir()
	first := stateEditor(t, root, state)
	editTurn(t, ctx, first, root)
	first.Shutdown(ctx)
	dirs, _ := filepath.Glob(filepath.Join(state, "checkpoints", "*"))
	if len(dirs) != 1 {
		t.Fatalf("checkpoint stores: %v", dirs)
	}
	lock := filepath.Join(dirs[0], "lock")
	os.Remove(lock)
	makeSpecial(t, "folder", lock)
	for name, text := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		os.WriteFile(filepath.Join(root, name), []byte(text), 0o644)
	}

	ed := stateEditor(t, root, state)
	id := editTurn(t, ctx, ed, root)
	if got := readFile(t, filepath.Join(root, "b.txt")); got != "BETA\n" {
		t.Errorf("b.txt = %q: the edits did not go ahead", got)
	}
	got := shown(ed, "undo is unavailable")
	if len(got) != 1 || !strings.Contains(got[0], lock) {
		t.Errorf("warnings: %q, want one saying why, naming %s", got, lock)
	}
	if text := agentText(updates(ed, id)); strings.Count(text, "undo is unavailable") != 1 {
		t.Errorf("the session's text: %q, want the warning once", text)
	}
}

// The state directory inside the workspace (XDG_STATE_HOME under the
// folder, or a home folder opened as the workspace): its files are not
// listed, searched, readable by a tool, nor part of a checkpoint or a
// restore, though the daemon writes them during the turn.
func TestStateDirInsideWorkspaceIsNotTheWorkspaces(t *testing.T) {
	ctx := testCtx(t)
	root := stateWorkspace(t)
	state := filepath.Join(root, ".local", "state", "cline-ls")
	ed := stateEditor(t, root, state)
	id := editTurn(t, ctx, ed, root)
	session := filepath.Join(state, "sessions", id+".jsonl")
	if _, err := os.Stat(session); err != nil {
		t.Fatalf("the session file is not in the state directory inside the workspace: %v", err)
	}

	list := callTool(t, ctx, ed, "list_files", map[string]any{"path": ".", "recursive": true})
	if strings.Contains(list.Content, "cline-ls") || strings.Contains(list.Content, "sessions") || !strings.Contains(list.Content, "a.txt") {
		t.Errorf("list_files shows the state directory:\n%s", list.Content)
	}
	found := callTool(t, ctx, ed, "search_codebase", map[string]any{"queries": []string{id}})
	if strings.Contains(found.Content, ".jsonl") || strings.Contains(found.Content, "index.json") {
		t.Errorf("search_codebase finds the daemon's own files:\n%s", found.Content)
	}
	for _, p := range []string{".local/state/cline-ls/sessions/" + id + ".jsonl", session} {
		if r := callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": p}}}); !r.IsError && strings.Contains(r.Content, `"type":"meta"`) {
			t.Errorf("read_files %s read the session file:\n%s", p, r.Content)
		}
	}

	var cks struct {
		Checkpoints []struct {
			CheckpointID string
			Files        []string
		}
	}
	if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": id}, &cks); err != nil || len(cks.Checkpoints) == 0 {
		t.Fatalf("checkpoints: %+v, %v", cks, err)
	}
	for _, c := range cks.Checkpoints {
		for _, f := range c.Files {
			if strings.Contains(f, "cline-ls") {
				t.Errorf("checkpoint %s lists the daemon's own %s", c.CheckpointID, f)
			}
		}
	}
	var res struct {
		Restored  []string
		Conflicts []struct{ Path, Reason string }
	}
	if err := ed.Call(ctx, "cline/restore", map[string]any{"sessionId": id, "checkpointId": cks.Checkpoints[0].CheckpointID, "scope": "files"}, &res); err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Restored {
		if strings.Contains(p, "cline-ls") {
			t.Errorf("the restore lists the daemon's own %s as restored", p)
		}
	}
	for _, c := range res.Conflicts {
		t.Errorf("restore conflict %s: %s", c.Path, c.Reason)
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "alpha\n" {
		t.Errorf("a.txt = %q after the restore", got)
	}
}
