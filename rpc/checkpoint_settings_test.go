package rpc_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckpointSettings: checkpoints.enabled false takes none; turning
// them on with a size cap through didChangeConfiguration reaches the
// store already open, which prunes to the newest checkpoint; a negative
// limit is refused naming the field.
func TestCheckpointSettings(t *testing.T) {
	ctx := testCtx(t)
	tr := transcript(t,
		reply(call("c1", "editor", map[string]any{"path": "a.txt", "old_text": "one", "new_text": "two"})),
		reply(text("Done.")),
		reply(call("c2", "editor", map[string]any{"path": "a.txt", "old_text": "two", "new_text": "three"})),
		reply(text("Done.")),
	)
	opts := map[string]any{
		"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir(),
		"approvals": map[string]any{"edit": "allow"}, "checkpoints": map[string]any{"enabled": false},
	}
	ed, root := editWorkspace(t, map[string]string{"a.txt": "one\n", "b.txt": "b\n"}, opts, nil)
	var created struct{ SessionID string }
	if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}}, &created); err != nil {
		t.Fatal(err)
	}
	prompt := func(text string) {
		t.Helper()
		if err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	type list struct {
		Checkpoints []struct{ ToolCallID string }
	}
	checkpoints := func() list {
		t.Helper()
		var l list
		if err := ed.Call(ctx, "cline/checkpoints", map[string]any{"sessionId": created.SessionID}, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	prompt("Edit a.txt")
	if got := readFile(t, root+"/a.txt"); got != "two\n" {
		t.Fatalf("a.txt = %q after the first turn", got)
	}
	if l := checkpoints(); len(l.Checkpoints) != 0 {
		t.Fatalf("checkpoints with checkpoints.enabled false: %+v", l)
	}

	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"checkpoints": map[string]any{"enabled": true, "maxSizeMB": 0.000001}}})
	ed.Sync(ctx)
	prompt("Edit it again")
	if l := checkpoints(); len(l.Checkpoints) != 1 || l.Checkpoints[0].ToolCallID != "c2" {
		t.Errorf("checkpoints under a one-byte cap = %+v, want only the newest (after c2)", l)
	}

	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
		"checkpoints": map[string]any{"maxAgeDays": -1}}})
	if _, err := ed.Await(ctx, "window/logMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "checkpoints.maxAgeDays")
	}); err != nil {
		t.Fatal(err)
	}
}
