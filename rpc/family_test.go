package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// TestSessionFamilyFromModel: a session's prompt family follows its model:
// a frontier model gets the next-gen prompt, a small local model the xs
// one, any other the generic one (each told apart by its first line).
func TestSessionFamilyFromModel(t *testing.T) {
	for model, role := range map[string]string{
		"claude-sonnet-4-5": "You are Cline, an expert software engineer",
		"qwen2.5-coder:7b":  "You are Cline, a coding assistant in the user's editor.",
		"replay-test":       "You are Cline, a software engineer working in the user's code editor.",
	} {
		t.Run(model, func(t *testing.T) {
			ctx := testCtx(t)
			b, _ := json.Marshal(map[string]any{"model": model, "replies": []any{map[string]any{
				"expect": map[string]any{"system_contains": role},
				"events": []any{text("ok")},
			}}})
			tr := filepath.Join(t.TempDir(), "transcript.json")
			if err := os.WriteFile(tr, b, 0o644); err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			ed := rpctest.New(t, rpc.Options{})
			opts := map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": t.TempDir()}
			if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": opts}); err != nil {
				t.Fatal(err)
			}
			var created struct{ SessionID string }
			if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "act", "mcpServers": []any{}}, &created); err != nil {
				t.Fatal(err)
			}
			var res struct{ StopReason string }
			err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID,
				"prompt": []any{map[string]any{"type": "text", "text": "hello"}}}, &res)
			if got := agentText(updates(ed, created.SessionID)); err != nil || res.StopReason != "end_turn" || !strings.Contains(got, "ok") {
				t.Fatalf("the system prompt for %s does not start %q: %v, stop %q, text %q", model, role, err, res.StopReason, got)
			}
		})
	}
}
