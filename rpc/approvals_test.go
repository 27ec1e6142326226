package rpc_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

var askEdits = map[string]any{"approvals": map[string]any{"edit": "ask"}}

// TestWaitingWakesAStrandingClient: Eglot 1.9 (no clientInfo) can leave
// a request that arrived just behind the answer to its own blocking
// request unread until more output comes. While the daemon waits for an
// answer, it writes a log message now and then, which is that output: the
// client here answers only once one has come.
func TestWaitingWakesAStrandingClient(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	ed, root := editWorkspace(t, map[string]string{"a.txt": "v1\n"}, askEdits, nil)
	ed.Handle("window/showMessageRequest", func(ctx context.Context, _ json.RawMessage) (any, error) {
		if _, err := ed.Await(ctx, "window/logMessage", func(p json.RawMessage) bool {
			return strings.Contains(string(p), "waiting for the editor's answer to window/showMessageRequest")
		}); err != nil {
			return nil, err
		}
		return map[string]any{"title": "Allow"}, nil
	})
	r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": "v1", "new_text": "v2"})
	if r.IsError || readFile(t, filepath.Join(root, "a.txt")) != "v2\n" {
		t.Fatalf("allowed after the wake: %+v", r)
	}
}
