package rpc_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cline-ls/cline-ls/workspace"
)

// TestStockApprovalFirstActionNeverApproves: a client without the plugin
// asks through window/showMessageRequest, whose first action stock
// clients pre-select (Eglot) or number 1 (Neovim 0.7's inputlist). The
// first action is never an approval: "Show diff" when the client can show
// a document (it opens the change, read-only, under the state dir, and
// the question comes again), else "Reject" with the change in the
// message. Taking the first action every time never writes the file.
func TestStockApprovalFirstActionNeverApproves(t *testing.T) {
	for _, canShow := range []bool{true, false} {
		name := map[bool]string{true: "showDocument", false: "no showDocument"}[canShow]
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			state := t.TempDir()
			caps := map[string]any{}
			if canShow {
				caps["window"] = map[string]any{"showMessage": map[string]any{}, "showDocument": map[string]any{"support": true}}
			}
			ed, root := editWorkspace(t, map[string]string{"keep": ""},
				map[string]any{"approvals": map[string]any{"edit": "ask"}, "stateDir": state}, caps)
			var mu sync.Mutex
			var asked []string // the first action of each question
			var messages []string
			var shown []string // the text of each document shown
			ed.Handle("window/showDocument", func(_ context.Context, raw json.RawMessage) (any, error) {
				var p struct{ URI string }
				json.Unmarshal(raw, &p)
				path, _ := workspace.URIToPath(p.URI)
				b, err := os.ReadFile(path)
				fi, _ := os.Stat(path)
				mu.Lock()
				defer mu.Unlock()
				if err != nil || !strings.HasPrefix(path, state) || fi.Mode().Perm()&0o222 != 0 {
					t.Errorf("shown %s (%v), want a read-only file under the state dir %s", path, err, state)
				}
				shown = append(shown, string(b))
				return map[string]any{"success": true}, nil
			})
			ed.Handle("window/showMessageRequest", func(_ context.Context, raw json.RawMessage) (any, error) {
				var p struct {
					Message string
					Actions []struct{ Title string }
				}
				json.Unmarshal(raw, &p)
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, p.Actions[0].Title)
				messages = append(messages, p.Message)
				if len(asked) > 3 {
					return nil, nil
				}
				return map[string]any{"title": p.Actions[0].Title}, nil
			})
			r := callTool(t, ctx, ed, "write_to_file", map[string]any{"path": "b.txt", "content": "blue\n"})
			mu.Lock()
			defer mu.Unlock()
			if _, err := os.Stat(filepath.Join(root, "b.txt")); err == nil || !r.IsError {
				t.Fatalf("first actions %q wrote b.txt (%+v)", asked, r)
			}
			for _, a := range asked {
				if strings.Contains(a, "Allow") || strings.Contains(a, "allow") {
					t.Errorf("the first action %q approves", a)
				}
			}
			if canShow {
				if len(asked) < 2 || asked[0] != "Show diff" || len(shown) == 0 || !strings.Contains(shown[0], "+blue") {
					t.Errorf("asked %q, shown %q: want Show diff showing the change, then asked again", asked, shown)
				}
				if strings.Contains(messages[0], "+blue") {
					t.Errorf("the change is in the message as well as the document: %q", messages[0])
				}
				if !strings.Contains(messages[0], "writes b.txt to disk") {
					t.Errorf("the question does not say the file is written to disk: %q", messages[0])
				}
			} else if len(asked) != 1 || asked[0] != "Reject" || !strings.Contains(messages[0], "+blue") {
				t.Errorf("asked %q with %q: want Reject first and the change in the message", asked, messages)
			}
		})
	}
}

// TestApprovalSaysDiskWrites: an edit of a file that is not open goes to
// disk at once, not to a buffer the user saves: its approval says so, in
// the plugin's request as in a stock client's message; an edit of an open
// buffer's file does not.
func TestApprovalSaysDiskWrites(t *testing.T) {
	ctx := testCtx(t)
	caps := map[string]any{"experimental": map[string]any{"cline": map[string]any{"approvals": true}}}
	ed, root := editWorkspace(t, map[string]string{"open.txt": "one\n", "notes.txt": "one\n"},
		map[string]any{"approvals": map[string]any{"edit": "ask"}, "stateDir": t.TempDir()}, caps)
	ed.Open(ctx, workspace.PathToURI(filepath.Join(root, "open.txt")), "one\n")
	ed.Sync(ctx)
	var mu sync.Mutex
	var titles []string
	go func() {
		for i := 0; i < 2; i++ {
			m, err := ed.Await(ctx, "cline/approvalRequest", func(raw json.RawMessage) bool {
				mu.Lock()
				defer mu.Unlock()
				return !slicesContainsRaw(titles, raw)
			})
			if err != nil {
				return
			}
			var req struct {
				ApprovalID string
				ToolCall   struct{ Title string }
			}
			json.Unmarshal(m.Params, &req)
			mu.Lock()
			titles = append(titles, req.ToolCall.Title)
			mu.Unlock()
			ed.Call(ctx, "cline/approvalResponse", map[string]any{"approvalId": req.ApprovalID, "outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil)
		}
	}()
	for _, p := range []string{"notes.txt", "open.txt"} {
		if r := callTool(t, ctx, ed, "editor", map[string]any{"path": p, "old_text": "one", "new_text": "two"}); r.IsError {
			t.Fatalf("%s: %+v", p, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(titles) != 2 || !strings.Contains(titles[0], "writes notes.txt to disk") || strings.Contains(titles[1], "disk") {
		t.Errorf("approval titles %q: want the first to say it writes notes.txt to disk, the second not", titles)
	}
}

// slicesContainsRaw reports whether an approval request's raw params name
// a title already seen.
func slicesContainsRaw(seen []string, raw json.RawMessage) bool {
	var req struct{ ToolCall struct{ Title string } }
	json.Unmarshal(raw, &req)
	for _, s := range seen {
		if s == req.ToolCall.Title {
			return true
		}
	}
	return false
}
