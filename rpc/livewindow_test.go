package rpc_test

import (
	"encoding/json"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
)

// TestModelSwitchTakesItsWindow: a model switched in a live session
// brings its context window to that session's next turn (what the
// usage shows and what compaction aims at), not the window of the model
// the session was opened with.
func TestModelSwitchTakesItsWindow(t *testing.T) {
	ctx := testCtx(t)
	ws := newWindowServer(t, 1<<20, func(int) map[string]any { return map[string]any{"content": "Hello."} })
	root, state := t.TempDir(), t.TempDir()
	ed := rpctest.New(t, rpc.Options{Getenv: func(k string) string {
		if k == "TEST_API_KEY" {
			return "sk-test"
		}
		return ""
	}})
	settings := openAISettings(ws.URL, state)
	settings["provider"].(map[string]any)["contextWindow"] = 32768
	if _, err := ed.Initialize(ctx, root, map[string]any{"initializationOptions": settings}); err != nil {
		t.Fatal(err)
	}
	id := newSessionIn(t, ctx, ed, root)
	if _, err := promptText(ctx, ed, id, "hi"); err != nil {
		t.Fatal(err)
	}
	if got := lastWindow(ed, id); got != 32768 {
		t.Fatalf("the first turn's window = %d, want 32768", got)
	}
	settings["provider"].(map[string]any)["model"] = "other-model"
	settings["provider"].(map[string]any)["contextWindow"] = 65536
	ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": settings})
	ed.Sync(ctx)
	if _, err := promptText(ctx, ed, id, "hi again"); err != nil {
		t.Fatal(err)
	}
	if got := lastWindow(ed, id); got != 65536 {
		t.Errorf("the turn after the switch has a window of %d, want the new model's 65536", got)
	}
}

// lastWindow is the context window the latest usage_update of session
// id reports.
func lastWindow(ed *rpctest.Editor, id string) int {
	n := 0
	for _, u := range updates(ed, id) {
		if u["sessionUpdate"] != "usage_update" {
			continue
		}
		b, _ := json.Marshal(u)
		var w struct {
			Size    int
			Context struct{ Size int }
		}
		json.Unmarshal(b, &w)
		n = max(w.Size, w.Context.Size)
	}
	return n
}
