package rpc_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cline-ls/cline-ls/rpc/rpctest"
	"github.com/cline-ls/cline-ls/workspace"
)

// TestAppliedEditWithLateDidChange: an editor that applies a versioned
// edit and answers applied:true, but reports the change only later (Eglot
// 1.9: "Edit successful!", its didChange once Emacs is idle), is
// believed: the model is told the edit landed, and the buffer's change,
// when it comes, is the edit's. If the buffer it reports is not the edit,
// the user is told so. The edit has two replacements, as in the report.
func TestAppliedEditWithLateDidChange(t *testing.T) {
	const before = "alpha\nbeta\ngamma\ndelta\n"
	const after = "ALPHA\nbeta\ngamma\nDELTA\n"
	for _, c := range []struct {
		name, reported string
		warned         bool
	}{{"the edit comes", "", false}, {"other text comes", "alpha\n", true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t)
			ed, root := editWorkspace(t, map[string]string{"a.txt": before}, nil, nil)
			uri := workspace.PathToURI(filepath.Join(root, "a.txt"))
			ed.Open(ctx, uri, before)
			ed.Sync(ctx)
			ed.Mode = rpctest.ApplyLateChange
			r := callTool(t, ctx, ed, "editor", map[string]any{"path": "a.txt", "old_text": before[:len(before)-1], "new_text": after[:len(after)-1]})
			if r.IsError || strings.Contains(r.Content, "never showed") {
				t.Fatalf("an edit the editor applied was reported as %+v", r)
			}
			if text, _, _ := ed.Text(uri); text != after {
				t.Fatalf("the editor's buffer = %q", text)
			}
			// Before the change comes, a read shows what the editor holds.
			if r := callTool(t, ctx, ed, "read_files", map[string]any{"files": []any{map[string]any{"path": "a.txt"}}}); r.IsError || !strings.Contains(r.Content, "DELTA") {
				t.Errorf("a read before the late change = %+v, want the edited text", r)
			}
			ed.SendLate(ctx, c.reported)
			ed.Sync(ctx)
			if c.warned {
				m, err := ed.Await(ctx, "window/showMessage", func(raw json.RawMessage) bool {
					return strings.Contains(string(raw), "a.txt")
				})
				if err != nil || !strings.Contains(string(m.Params), "does not hold it") {
					t.Errorf("the user was told %s (%v)", m.Params, err)
				}
				return
			}
			assertBuffer(t, ctx, ed, uri, after)
			if n := len(ed.Messages("workspace/applyEdit")); n != 1 {
				t.Errorf("%d workspace/applyEdit requests, want 1", n)
			}
		})
	}
}
