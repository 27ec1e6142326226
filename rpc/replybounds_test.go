package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// TestReplyBoundsEndTheTurn: a model reply without end, or one that stops
// coming, ends the turn with the limit named, the daemon serving on, and
// the session file no bigger than the bound allows.
func TestReplyBoundsEndTheTurn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		last    map[string]any
		setting string
		value   float64
	}{
		{"endless", map[string]any{"endless": strings.Repeat("spin ", 100)}, "maxReplyMB", 0.05},
		{"hang", map[string]any{"hang": true}, "streamIdleSeconds", 0.05},
		// The next prompt's reply must fit in the bound too.
		{"hangPastTheRequestTime", map[string]any{"hang": true}, "requestTimeoutSeconds", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			root, state := t.TempDir(), t.TempDir()
			tr := transcript(t, reply(text("Working on it. "), c.last), reply(text("Still here.")))
			ed := rpctest.New(t, rpc.Options{})
			opts := map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr, c.setting: c.value}, "stateDir": state}
			if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": opts}); err != nil {
				t.Fatal(err)
			}
			var created struct{ SessionID string }
			if err := ed.Call(ctx, "session/new", map[string]any{"cwd": root, "mode": "act", "mcpServers": []any{}}, &created); err != nil {
				t.Fatal(err)
			}
			prompt := func(text string) (string, error) {
				var res struct{ StopReason string }
				err := ed.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}, &res)
				return res.StopReason, err
			}
			_, err := prompt("loop")
			shown := agentText(updates(ed, created.SessionID))
			if err == nil && !strings.Contains(shown, "provider."+c.setting) {
				t.Fatalf("turn ended without naming provider.%s; shown %q", c.setting, shown[:min(len(shown), 300)])
			}
			if err != nil && !strings.Contains(err.Error(), "provider."+c.setting) {
				t.Fatalf("turn error %v does not name provider.%s", err, c.setting)
			}
			if stop, err := prompt("again"); err != nil || stop != "end_turn" {
				t.Fatalf("next prompt: %q, %v; want the session serving on", stop, err)
			}
			fi, err := os.Stat(filepath.Join(state, "sessions", created.SessionID+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > 200<<10 {
				t.Errorf("session file is %d bytes, want it bounded by the 50 KiB reply limit", fi.Size())
			}
		})
	}
}

// TestReasoningSettingReachesTheRequest: provider.reasoningEffort set by
// the client is on the wire of the model request a prompt makes.
func TestReasoningSettingReachesTheRequest(t *testing.T) {
	ctx := testCtx(t)
	ws := newWindowServer(t, 1<<20, func(int) map[string]any { return map[string]any{"content": "Thought hard."} })
	root := t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-test"
		}
		return ""
	}})
	opts := openAISettings(ws.URL, t.TempDir())
	opts["provider"].(map[string]any)["reasoningEffort"] = "high"
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": opts}); err != nil {
		t.Fatal(err)
	}
	id := newSessionIn(t, ctx, ed, root)
	if stop, err := promptText(ctx, ed, id, "think"); err != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q, %v", stop, err)
	}
	bodies := ws.chatBodies()
	if len(bodies) != 1 || !strings.Contains(string(bodies[0]), `"reasoning_effort":"high"`) {
		t.Errorf("request bodies %d, first %.300s; want reasoning_effort high", len(bodies), bodies)
	}
}
