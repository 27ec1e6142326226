package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/wire"
)

// replayEditor is an editor on a daemon whose model replays tr, saving
// sessions under state.
func replayEditor(t *testing.T, root, state, tr string) *rpctest.Editor {
	t.Helper()
	ed := rpctest.New(t, rpc.Options{})
	if _, err := ed.Initialize(testCtx(t), root, map[string]any{"initializationOptions": map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state,
	}}); err != nil {
		t.Fatal(err)
	}
	return ed
}

// letGo ends the daemon behind ed, which lets go of its sessions for
// another daemon to load.
func letGo(t *testing.T, ctx context.Context, ed *rpctest.Editor) {
	t.Helper()
	if _, err := ed.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedNewSessionLeavesNothing: a session/new refused for its MCP
// servers leaves no session in session/list.
func TestRefusedNewSessionLeavesNothing(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	ed := replayEditor(t, root, state, transcript(t))
	err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{map[string]any{"name": "broken"}}}, nil)
	if err == nil {
		t.Fatal("a session with a broken MCP server was accepted")
	}
	if c := codeOf(t, err); c != -32602 || !strings.Contains(err.Error(), "mcpServers[0].command") {
		t.Fatalf("session/new with a broken MCP server: %d %v, want -32602 naming mcpServers[0].command", c, err)
	}
	var list struct {
		Sessions []map[string]any `json:"sessions"`
	}
	if err := ed.Call(ctx, "session/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 0 {
		t.Errorf("session/list shows a refused session: %v", list.Sessions)
	}
	// Session files live under the state folder's sessions/: look at the
	// whole folder (reading only its top level found none ever).
	filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			t.Errorf("a session file was left: %s", p)
		}
		return nil
	})
}

// TestReplaySendsWhatTheLiveSessionSent: a loaded session's tool calls
// come back as the live session sent them, title, kind, arguments and
// results alike (before, replayed titles were raw tool names and every
// kind "other"): the typed values are equal.
func TestReplaySendsWhatTheLiveSessionSent(t *testing.T) {
	ctx := testCtx(t)
	root, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	tr := transcript(t,
		reply(call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "a.txt"}}})),
		reply(text("done")),
	)
	ed := replayEditor(t, root, state, tr)
	id := newSessionIn(t, ctx, ed, root)
	if _, err := promptText(ctx, ed, id, "read it"); err != nil {
		t.Fatal(err)
	}
	pick := func(ups []wire.SessionUpdate) (starts []wire.ToolCall, ends []wire.ToolCallUpdate) {
		for _, u := range ups {
			switch u := u.(type) {
			case wire.ToolCall:
				starts = append(starts, u)
			case wire.ToolCallUpdate:
				if u.Status == wire.StatusCompleted || u.Status == wire.StatusFailed {
					ends = append(ends, u)
				}
			}
		}
		return
	}
	liveStarts, liveEnds := pick(typedUpdates(t, ed, id))
	letGo(t, ctx, ed)
	ed2 := replayEditor(t, root, state, transcript(t))
	if err := ed2.Call(ctx, "session/load", map[string]any{"sessionId": id, "cwd": root, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	gotStarts, gotEnds := pick(typedUpdates(t, ed2, id))
	if !reflect.DeepEqual(gotStarts, liveStarts) {
		t.Errorf("replayed tool calls differ:\n got %+v\nlive %+v", gotStarts, liveStarts)
	}
	if !reflect.DeepEqual(gotEnds, liveEnds) {
		t.Errorf("replayed results differ:\n got %+v\nlive %+v", gotEnds, liveEnds)
	}
	if len(liveStarts) != 1 || liveStarts[0].Kind != wire.KindRead || len(liveEnds) != 1 || liveEnds[0].Status != wire.StatusCompleted {
		t.Errorf("live tool calls: %+v, results %+v", liveStarts, liveEnds)
	}
}

// TestInputEndCancelsTheTurn: when the editor goes away mid-turn (stdin
// closes), the turn stops at once: the running command is killed and the
// model is asked nothing more.
func TestInputEndCancelsTheTurn(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	marker, pidFile := filepath.Join(root, "after-sleep"), filepath.Join(root, "shell.pid")
	fake := newFakeOpenAI(t,
		fakeReply{calls: []fakeCall{{id: "c1", name: "run_commands", args: `{"commands":["echo $$ > ` + pidFile + `; sleep 3 && touch ` + marker + `"]}`}}},
		fakeReply{calls: []fakeCall{{id: "c2", name: "write_to_file", args: `{"path":"late.txt","content":"x"}`}}},
		fakeReply{text: []string{"done"}},
	)
	st := openAISettings(fake.URL, t.TempDir())
	st["approvals"] = map[string]any{"execute": "allow", "edit": "allow"}
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-test"
		}
		return ""
	}})
	ed.Initialize(ctx, root, map[string]any{"initializationOptions": st})
	id := newSessionIn(t, ctx, ed, root)
	go promptText(ctx, ed, id, "go")
	if _, err := ed.Await(ctx, "session/update", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"in_progress"`)
	}); err != nil {
		t.Fatal(err)
	}
	pid := waitPID(t, ctx, pidFile)
	ed.Disconnect()
	if _, err := ed.Wait(ctx); err != nil && ctx.Err() != nil {
		t.Fatalf("the daemon did not stop: %v", err)
	}
	// Once the command's shell is gone it can touch nothing more; had it
	// lived, it would end (touching the marker) after its 3 s sleep.
	for syscall.Kill(pid, 0) == nil {
		select {
		case <-ctx.Done():
			t.Fatalf("the command's shell %d outlived the editor", pid)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command went on after the editor left")
	}
	if _, err := os.Stat(filepath.Join(root, "late.txt")); err == nil {
		t.Errorf("the turn went on after the editor left: a file was written")
	}
	fake.mu.Lock()
	n := len(fake.keys)
	fake.mu.Unlock()
	if n != 1 {
		t.Errorf("the model was asked %d times; the editor left during the first reply's command", n)
	}
}
