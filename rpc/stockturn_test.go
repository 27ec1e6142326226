package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc"
	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

// TestStockTurnShowsTheAnswer: a turn started with cline.prompt (a stock
// client, which shows no session updates) ends with a window/showMessage
// that carries the agent's final answer, bounded, after the stop reason;
// with window/showDocument the client is also shown the turn as a
// read-only markdown file under the state dir, without taking the focus.
func TestStockTurnShowsTheAnswer(t *testing.T) {
	long := strings.Repeat("More detail.\n", 40)
	for _, canShow := range []bool{true, false} {
		t.Run(map[bool]string{true: "showDocument", false: "message only"}[canShow], func(t *testing.T) {
			ctx := testCtx(t)
			root, state := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
			tr := transcript(t,
				reply(text("Let me look."), call("c1", "read_files", map[string]any{"files": []any{map[string]any{"path": "a.txt"}}})),
				reply(text("The file says one.\n"+long)))
			ed := rpctest.New(t, rpc.Options{})
			window := map[string]any{"showMessage": map[string]any{}}
			if canShow {
				window["showDocument"] = map[string]any{"support": true}
			}
			shown := make(chan map[string]any, 4)
			ed.Handle("window/showDocument", func(_ context.Context, raw json.RawMessage) (any, error) {
				var p map[string]any
				json.Unmarshal(raw, &p)
				shown <- p
				return map[string]any{"success": true}, nil
			})
			if _, err := ed.Initialize(ctx, root, map[string]any{"capabilities": map[string]any{"window": window},
				"initializationOptions": map[string]any{"provider": map[string]any{"name": "replay", "transcript": tr}, "stateDir": state}}); err != nil {
				t.Fatal(err)
			}
			if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "cline.prompt",
				"arguments": []any{map[string]any{"text": "what does a.txt say?"}}}, nil); err != nil {
				t.Fatal(err)
			}
			m, err := ed.Await(ctx, "window/showMessage", func(raw json.RawMessage) bool { return strings.Contains(string(raw), "turn ended") })
			if err != nil {
				t.Fatal(err)
			}
			var p struct{ Message string }
			json.Unmarshal(m.Params, &p)
			if !strings.Contains(p.Message, "turn ended (end_turn)") || !strings.Contains(p.Message, "The file says one.") {
				t.Errorf("the end message %q lacks the stop reason or the answer", p.Message)
			}
			if strings.Contains(p.Message, "Let me look.") || strings.Count(p.Message, "More detail.") > 12 || !strings.Contains(p.Message, "…") {
				t.Errorf("the end message is not the final answer's first lines: %q", p.Message)
			}
			if !canShow {
				if n := len(ed.Messages("window/showDocument")); n != 0 {
					t.Errorf("%d showDocument requests to a client without it", n)
				}
				return
			}
			var doc map[string]any
			select {
			case doc = <-shown:
			case <-ctx.Done():
				t.Fatal("no transcript was shown")
			}
			path, _ := workspace.URIToPath(doc["uri"].(string))
			b, err := os.ReadFile(path)
			fi, _ := os.Stat(path)
			if err != nil || !strings.HasPrefix(path, filepath.Join(state, "transcripts")) || !strings.HasSuffix(path, ".md") || fi.Mode().Perm()&0o222 != 0 {
				t.Fatalf("shown %s (%v), want a read-only .md under the state dir's transcripts", path, err)
			}
			if doc["takeFocus"] != false {
				t.Errorf("the transcript takes the focus: %v", doc)
			}
			for _, want := range []string{"# what does a.txt say?", "Let me look.", "- Read files a.txt", "The file says one.", strings.TrimSpace(long)} {
				if !strings.Contains(string(b), want) {
					t.Errorf("the transcript lacks %q:\n%s", want, b)
				}
			}
		})
	}
}
